"""Campaigns created in the browser. The uploaded files are staged under IMPORTS_DIR and checked in the
background into a preview (what would be created, errors, warnings); a manager confirms, and the import runs
in the background in one transaction, as `import_campaign` does; the files are removed once it is over.
Cancelling, an invalid file or a failed import write nothing."""

import json
import shutil
import time
import uuid
from pathlib import Path

from django.conf import settings
from django.core.files.uploadedfile import UploadedFile
from django.db import transaction
from django.utils import timezone

from annotation.bundle import CampaignBundle, ranking_rows
from annotation.campaign_files import CampaignFile, campaign_files_read
from annotation.errors import InputError
from annotation.errors import InputErrorCode as Code
from annotation.models import CampaignImport, JudgingStandard
from annotation.previews import import_preview
from annotation.selectors.imports import PROGRESS_FILE, import_folder
from annotation.selectors.labels import campaign_reuse_summary
from annotation.services.campaigns import campaign_import, campaign_import_check
from trec.files import RankedRun

Status = CampaignImport.Status


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
        created_by=user, folder=folder, bundle_file=bundle.name or "bundle", runs=staged_runs
    )


def _read(staged: CampaignImport) -> tuple[CampaignBundle, dict[str, RankedRun]]:
    folder = import_folder(staged)
    runs = [(run["model"], CampaignFile(folder / run["path"], run["file"])) for run in staged.runs]
    bundle = CampaignFile(folder / "bundle", staged.bundle_file)
    return campaign_files_read(bundle, runs, max_bytes=settings.IMPORT_UPLOAD_MAX_BYTES)


def _finish(staged: CampaignImport, status: str, **fields) -> None:
    CampaignImport.objects.filter(pk=staged.pk).update(status=status, finished_at=timezone.now(), **fields)
    if status != Status.READY:
        shutil.rmtree(import_folder(staged), ignore_errors=True)


def import_check(*, staged: CampaignImport) -> None:
    """The preview of a staged import, or the first error (file, line, field) that refuses it: every check
    Create runs (`import_run`), on the same code, so a Ready import is one Create takes."""
    try:
        bundle, runs = _read(staged)
        campaign_import_check(bundle=bundle)
        preview = import_preview(bundle, runs)
        preview.reuse = _reuse_preview(bundle, runs)
    except InputError as error:
        _finish(staged, Status.INVALID, error=error.for_page())
        return
    except Exception:
        _finish(staged, Status.INVALID, error="the files could not be checked (see the worker's log)")
        raise
    CampaignImport.objects.filter(pk=staged.pk).update(status=Status.READY, preview=preview.as_dict())


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


@transaction.atomic
def import_confirm(*, staged: CampaignImport) -> None:
    """Mark a checked import as importing (`annotation.tasks.campaign_import_confirm` queues the import)."""
    staged = CampaignImport.objects.select_for_update().get(pk=staged.pk)
    if staged.status != Status.READY:
        raise InputError(Code.INVALID_VALUE, f"this import is {staged.get_status_display().lower()}")
    CampaignImport.objects.filter(pk=staged.pk).update(status=Status.IMPORTING)


@transaction.atomic
def import_cancel(*, staged: CampaignImport) -> None:
    staged = CampaignImport.objects.select_for_update().get(pk=staged.pk)
    if staged.status not in (Status.CHECKING, Status.READY, Status.INVALID):
        raise InputError(Code.INVALID_VALUE, f"this import is {staged.get_status_display().lower()}")
    _finish(staged, Status.CANCELLED)


class _ProgressFile:
    """Ranking rows written so far, in a file beside the uploads: the import's own transaction hides its
    rows from the page, a file does not. Written at most twice a second, and when the last row is."""

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


def import_run(*, staged: CampaignImport) -> None:
    """Import a confirmed campaign in one transaction; on an error nothing is written, the error is kept."""
    try:
        bundle, runs = _read(staged)
        progress = _ProgressFile(import_folder(staged) / PROGRESS_FILE, ranking_rows(bundle, runs))
        campaign = campaign_import(bundle=bundle, runs=runs, progress=progress.update)
    except InputError as error:
        _finish(staged, Status.FAILED, error=error.for_page())
        return
    except Exception:
        _finish(staged, Status.FAILED, error="the import failed unexpectedly (see the worker's log)")
        raise
    _finish(staged, Status.DONE, campaign=campaign)
