"""Campaigns created in the browser. The uploaded files are staged under IMPORTS_DIR and checked in the
background into a preview (what would be created, errors, warnings); a manager confirms, and the import runs
in the background in one transaction, as `import_campaign` does; the files are removed once it is over.
Cancelling, an invalid file or a failed import write nothing.

Each queueing of the check or the import is an attempt (`CampaignImport.attempt`). The worker takes its
attempt under the import's row lock, beats the attempt's heartbeat file while it works and records the end
only if the attempt is still the import's; an import whose worker died (`selectors.imports.import_worker`)
may be retried (the next attempt) or cancelled."""

import json
import shutil
import time
import uuid
from contextlib import contextmanager, suppress
from pathlib import Path

import numpy as np
from django.conf import settings
from django.core.files.uploadedfile import UploadedFile
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from annotation.bundle import CampaignBundle, ranking_rows
from annotation.campaign_files import CampaignFile, campaign_files_read
from annotation.errors import InputError
from annotation.errors import InputErrorCode as Code
from annotation.models import CampaignImport, JudgingStandard
from annotation.previews import import_preview
from annotation.selectors.imports import (
    Worker,
    heartbeat_path,
    import_cancellable,
    import_folder,
    import_worker,
    progress_path,
)
from annotation.selectors.labels import campaign_reuse_summary
from annotation.services.campaigns import campaign_import, campaign_import_check
from plumbing.threads import repeating
from trec.files import RankedRun

Status = CampaignImport.Status
# Six beats to a timeout: a beat late by a few seconds (a long statement, a busy machine) is no death.
BEATS_PER_TIMEOUT = 6


def _save(upload, path: Path) -> None:
    with path.open("wb") as out:
        for chunk in upload.chunks():
            out.write(chunk)


@transaction.atomic
def import_stage(*, user, bundle: UploadedFile, runs: list[tuple[str, UploadedFile]]) -> CampaignImport:
    """Keep the uploaded bundle and (model, run file) pairs under IMPORTS_DIR, to be checked
    (`annotation.tasks.campaign_import_start` queues the check)."""
    folder = uuid.uuid4().hex
    path = Path(settings.IMPORTS_DIR) / folder
    path.mkdir(parents=True)
    _save(bundle, path / "bundle")
    staged_runs = []
    for index, (model, upload) in enumerate(runs):
        _save(upload, path / f"run-{index}")
        staged_runs.append({"model": model, "file": upload.name, "path": f"run-{index}"})
    return CampaignImport.objects.create(
        created_by=user,
        folder=folder,
        bundle_file=bundle.name or "bundle",
        runs=staged_runs,
        queued_at=timezone.now(),
    )


def import_queued(*, staged: CampaignImport, task_id: str) -> None:
    """Record the task queued for the import's current attempt (called once the queueing committed)."""
    CampaignImport.objects.filter(pk=staged.pk, attempt=staged.attempt, task_id="").update(task_id=task_id)


def _read(staged: CampaignImport, kept: bool = False) -> tuple[CampaignBundle, dict[str, RankedRun]]:
    """The staged files read and checked; with `kept`, the runs the check kept (`_runs_keep`) are not read
    from their files again."""
    folder = import_folder(staged)
    runs = [(run["model"], CampaignFile(folder / run["path"], run["file"])) for run in staged.runs]
    bundle = CampaignFile(folder / "bundle", staged.bundle_file)
    read = {}
    for run in staged.runs if kept else []:
        path = _kept_path(staged, run)
        if path.exists():
            with np.load(path) as arrays:
                read[run["model"]] = RankedRun(
                    arrays["queries"].tolist(),
                    arrays["documents"].tolist(),
                    *(arrays[name] for name in KEPT_COLUMNS),
                )
    return campaign_files_read(bundle, runs, max_bytes=settings.IMPORT_UPLOAD_MAX_BYTES, read=read)


# A run's integer columns, kept by the check beside its ids.
KEPT_COLUMNS = ["query", "document", "rank"]


def _kept_path(staged: CampaignImport, run: dict) -> Path:
    return import_folder(staged) / f"{run['path']}.npz"


def _runs_keep(staged: CampaignImport, runs: dict[str, RankedRun]) -> None:
    """The runs the check read, beside their files in NumPy's format (written whole, then renamed): the
    import reads them back instead of parsing the same files again (nothing changes a staged file)."""
    for run in staged.runs:
        ranked, path = runs[run["model"]], _kept_path(staged, run)
        partial = path.with_name(f"{path.stem}-partial.npz")
        np.savez(
            partial,
            queries=np.array(ranked.queries, dtype=str),
            documents=np.array(ranked.documents, dtype=str),
            **{name: getattr(ranked, name) for name in KEPT_COLUMNS},
        )
        partial.replace(path)


def _beat(staged: CampaignImport) -> None:
    # A folder gone (the check was cancelled) is no reason to stop: the work's own end will find it.
    with suppress(OSError):
        heartbeat_path(staged).touch()


@contextmanager
def _taken(staged: CampaignImport, status: str, attempt: int):
    """The import, if `attempt` is still its attempt at `status` (else None: it was cancelled or retried
    meanwhile); its heartbeat is written under the row lock, so a cancel sees either no worker or this one,
    and beaten while the block runs."""
    with transaction.atomic():
        taken = CampaignImport.objects.select_for_update().filter(pk=staged.pk).first()
        if taken is None or taken.status != status or taken.attempt != attempt:
            taken = None
        else:
            _beat(taken)
    if taken is None:
        yield None
        return
    every = max(settings.IMPORT_WORKER_TIMEOUT_SECONDS / BEATS_PER_TIMEOUT, 0.05)
    with repeating(lambda: _beat(taken), every):
        yield taken


def _finish(staged: CampaignImport, before: str, status: str, **fields) -> None:
    """`before` → `status`, if the import is still at this attempt and status; once it is over (any status
    but READY), its files go."""
    over = status != Status.READY
    ended = CampaignImport.objects.filter(pk=staged.pk, status=before, attempt=staged.attempt).update(
        status=status, **fields, **({"finished_at": timezone.now()} if over else {})
    )
    if ended and over:
        shutil.rmtree(import_folder(staged), ignore_errors=True)


def import_check(*, staged: CampaignImport, attempt: int) -> None:
    """The preview of a staged import, or the first error (file, line, field) that refuses it: every check
    Create runs (`import_run`), on the same code, so a Ready import is one Create takes."""
    with _taken(staged, Status.CHECKING, attempt) as taken:
        if taken is None:
            return
        try:
            bundle, runs = _read(taken)
            campaign_import_check(bundle=bundle)
            preview = import_preview(bundle, runs)
            preview.reuse = _reuse_preview(bundle, runs)
            _runs_keep(taken, runs)
        except InputError as error:
            _finish(taken, Status.CHECKING, Status.INVALID, error=error.for_page())
            return
        except Exception:
            _finish(
                taken,
                Status.CHECKING,
                Status.INVALID,
                error="the files could not be checked (see the worker's log)",
            )
            raise
        _finish(taken, Status.CHECKING, Status.READY, preview=preview.as_dict())


def _reuse_preview(bundle: CampaignBundle, runs: dict[str, RankedRun]) -> dict | None:
    """What the label pool would give the campaign: the import run in a transaction rolled back, only when
    its standard already has a version (else nothing can be reused and the check stays cheap)."""
    if not bundle.standard or not JudgingStandard.objects.filter(name=bundle.standard).exists():
        return None
    with transaction.atomic():
        campaign = campaign_import(bundle=bundle, runs=runs)
        summary = campaign_reuse_summary(campaign=campaign)
        transaction.set_rollback(True)
    return summary.as_dict()


def _requeue(staged: CampaignImport, status: str) -> None:
    """The next attempt at `status`: no task, no heartbeat yet (the caller queues the task on commit)."""
    staged.attempt += 1
    staged.status, staged.queued_at, staged.task_id, staged.error = status, timezone.now(), "", ""
    staged.save(update_fields=["attempt", "status", "queued_at", "task_id", "error"])


def _status_refused(staged: CampaignImport) -> InputError:
    return InputError(
        Code.INVALID_VALUE, _("this import is %(status)s") % {"status": staged.get_status_display().lower()}
    )


@transaction.atomic
def import_confirm(*, staged: CampaignImport) -> CampaignImport:
    """Mark a checked import as importing (`annotation.tasks.campaign_import_confirm` queues the import)."""
    staged = CampaignImport.objects.select_for_update().get(pk=staged.pk)
    if staged.status != Status.READY:
        raise _status_refused(staged)
    _requeue(staged, Status.IMPORTING)
    return staged


@transaction.atomic
def import_retry(*, staged: CampaignImport) -> CampaignImport:
    """Queue again the check or the import whose worker stopped (`annotation.tasks.campaign_import_retry`
    queues it); the stopped attempt's heartbeat and progress files go."""
    staged = CampaignImport.objects.select_for_update().get(pk=staged.pk)
    if import_worker(staged=staged) != Worker.STOPPED:
        raise InputError(Code.INVALID_VALUE, _("only an import whose worker stopped can be retried"))
    for path in (heartbeat_path(staged), progress_path(staged)):
        path.unlink(missing_ok=True)
    _requeue(staged, staged.status)
    return staged


@transaction.atomic
def import_cancel(*, staged: CampaignImport) -> None:
    """Cancel an import and remove its files: while its files are checked or once they are, and while it
    waits for a worker or after its worker stopped; never while a worker writes the campaign."""
    staged = CampaignImport.objects.select_for_update().get(pk=staged.pk)
    if not import_cancellable(staged=staged, worker=import_worker(staged=staged)):
        if staged.status == Status.IMPORTING:
            raise InputError(Code.INVALID_VALUE, _("a worker is importing it: it can no longer be cancelled"))
        raise _status_refused(staged)
    _finish(staged, staged.status, Status.CANCELLED)


class _ProgressFile:
    """Ranking rows written so far, in a file beside the uploads (`progress_path`). Written at most twice a
    second, and when the last row is."""

    def __init__(self, path: Path, total: int):
        self.path, self.total, self.rows, self.written_at = path, total, 0, 0.0
        self._write()

    def _write(self) -> None:
        self.path.write_text(json.dumps({"rows": self.rows, "total": self.total}))
        self.written_at = time.monotonic()

    def update(self, rows: int) -> None:
        self.rows += rows
        if self.rows >= self.total or time.monotonic() - self.written_at > 0.5:
            self._write()


def import_run(*, staged: CampaignImport, attempt: int) -> None:
    """Import a confirmed campaign in one transaction; on an error nothing is written, the error is kept."""
    with _taken(staged, Status.IMPORTING, attempt) as taken:
        if taken is None:
            return
        try:
            bundle, runs = _read(taken, kept=True)
            progress = _ProgressFile(progress_path(taken), ranking_rows(bundle, runs))
            campaign = campaign_import(bundle=bundle, runs=runs, progress=progress.update)
        except InputError as error:
            _finish(taken, Status.IMPORTING, Status.FAILED, error=error.for_page())
            return
        except Exception:
            _finish(
                taken,
                Status.IMPORTING,
                Status.FAILED,
                error="the import failed unexpectedly (see the worker's log)",
            )
            raise
        _finish(taken, Status.IMPORTING, Status.DONE, campaign=campaign)
