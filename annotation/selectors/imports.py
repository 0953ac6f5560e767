"""A campaign created in the browser, as its page shows it, and whether the worker on it is alive."""

import json
from dataclasses import dataclass
from datetime import UTC, datetime
from enum import StrEnum
from pathlib import Path

from django.conf import settings
from django.tasks import TaskResultStatus, default_task_backend
from django.tasks.exceptions import TaskResultDoesNotExist
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from annotation.models import CampaignImport

Status = CampaignImport.Status
IN_PROGRESS = (Status.CHECKING, Status.IMPORTING)
# What the page calls an import in progress whose worker stopped: not a stored status, it is found.
STOPPED = "stopped"
STOPPED_LABEL = _("Stopped: nothing was written")
STOPPED_CHECKING = _(
    "The background worker stopped while checking these files: it was stopped, or its machine restarted. "
    "Retry to check them again, or cancel to remove them."
)
STOPPED_IMPORTING = _(
    "The background worker stopped while importing these files: it was stopped, or its machine restarted. "
    "Nothing was written. Retry to import them again, or cancel to remove them."
)
STOPPED_IMPORTING_AFTER = _(
    "The background worker stopped while importing these files, after %(rows)s of %(total)s ranking rows: it "
    "was stopped, or its machine restarted. Nothing was written. Retry to import them again, or cancel to "
    "remove them."
)


class Worker(StrEnum):
    """The worker of an import in progress, as its heartbeat and its task's state say."""

    WAITING = "waiting"  # queued; no worker has taken it yet
    WORKING = "working"  # taken, and its heartbeat is recent
    STOPPED = "stopped"  # taken, then silent for longer than the timeout; or its task ended without it


def worker_state(
    *,
    task_status: str | None,
    task_started_at: datetime | None,
    beat_at: datetime | None,
    queued_at: datetime | None,
    now: datetime,
    timeout: float,
) -> Worker:
    """The staleness rule. A task the Tasks framework says ended (its worker was stopped in the middle, or
    failed to record the end) has stopped; a queued one waits. Otherwise the last sign of life is the later
    of the task's start and the attempt's heartbeat: older than `timeout` seconds, the worker stopped (a
    killed worker leaves its task "running" forever; only the silence tells). With neither a task nor a
    heartbeat, the task was never recorded: the import waits, until `timeout` after it was queued (the
    queueing itself failed)."""
    if task_status in (TaskResultStatus.SUCCESSFUL, TaskResultStatus.FAILED):
        return Worker.STOPPED
    if task_status == TaskResultStatus.READY:
        return Worker.WAITING
    signs = [at for at in (task_started_at, beat_at) if at is not None]
    since = max(signs) if signs else queued_at
    if since is not None and (now - since).total_seconds() <= timeout:
        return Worker.WORKING if signs else Worker.WAITING
    return Worker.STOPPED


def import_folder(staged: CampaignImport) -> Path:
    """Where an import's uploaded files wait, under IMPORTS_DIR."""
    return Path(settings.IMPORTS_DIR) / staged.folder


def heartbeat_path(staged: CampaignImport) -> Path:
    """The file whose modification time is the current attempt's heartbeat."""
    return import_folder(staged) / f"heartbeat-{staged.attempt}"


def progress_path(staged: CampaignImport) -> Path:
    """Ranking rows the current attempt wrote so far, in a file beside the uploads: the import's own
    transaction hides its rows from the page, a file does not."""
    return import_folder(staged) / f"progress-{staged.attempt}.json"


@dataclass(frozen=True)
class ImportProgress:
    rows: int  # ranking rows written so far
    total: int


def import_progress(*, staged: CampaignImport) -> ImportProgress | None:
    """How far a running import got, None before it started writing."""
    try:
        written = json.loads(progress_path(staged).read_text())
    except (OSError, ValueError):
        return None
    return ImportProgress(rows=written["rows"], total=written["total"])


def import_worker(*, staged: CampaignImport, now: datetime | None = None) -> Worker | None:
    """The state of the worker on an import in progress (None for one that is not): its task's state in
    the Tasks framework and its heartbeat file, by `worker_state`."""
    if staged.status not in IN_PROGRESS:
        return None
    task_status = task_started_at = None
    if staged.task_id:
        try:
            task = default_task_backend.get_result(staged.task_id)
        except TaskResultDoesNotExist:
            pass  # pruned: the heartbeat alone tells
        else:
            task_status, task_started_at = task.status, task.started_at
    try:
        beat_at = datetime.fromtimestamp(heartbeat_path(staged).stat().st_mtime, tz=UTC)
    except OSError:
        beat_at = None
    return worker_state(
        task_status=task_status,
        task_started_at=task_started_at,
        beat_at=beat_at,
        queued_at=staged.queued_at,
        now=now or timezone.now(),
        timeout=settings.IMPORT_WORKER_TIMEOUT_SECONDS,
    )


@dataclass(frozen=True)
class ImportView:
    """Status (or STOPPED), preview, error and, while importing, how far it got; what may be done."""

    staged: CampaignImport
    status: str
    status_label: str
    preview: dict | None
    error: str
    progress: ImportProgress | None
    waiting: bool  # the page polls for news
    can_confirm: bool
    can_cancel: bool
    can_retry: bool

    @property
    def actions(self) -> list[str]:
        """What the page offers; the polling page reloads when it changes (a worker took the import: no
        Cancel any more)."""
        offered = (("confirm", self.can_confirm), ("retry", self.can_retry), ("cancel", self.can_cancel))
        return [action for action, offer in offered if offer]


def import_view(*, staged: CampaignImport) -> ImportView:
    worker = import_worker(staged=staged)
    if worker == Worker.STOPPED:
        # Its worker may have ended it between the reads of the import and of its task: read it again.
        staged.refresh_from_db()
        worker = import_worker(staged=staged)
    importing = staged.status == Status.IMPORTING
    progress = import_progress(staged=staged) if importing else None
    status, label, error = staged.status, staged.get_status_display(), staged.error
    if worker == Worker.STOPPED:
        status, label = STOPPED, str(STOPPED_LABEL)
        if not importing:
            error = str(STOPPED_CHECKING)
        elif progress:
            error = str(STOPPED_IMPORTING_AFTER) % {"rows": progress.rows, "total": progress.total}
        else:
            error = str(STOPPED_IMPORTING)
    return ImportView(
        staged=staged,
        status=status,
        status_label=label,
        preview=staged.preview,
        error=error,
        progress=progress,
        waiting=worker in (Worker.WAITING, Worker.WORKING),
        can_confirm=staged.status == Status.READY,
        can_cancel=import_cancellable(staged=staged, worker=worker),
        can_retry=worker == Worker.STOPPED,
    )


def import_cancellable(*, staged: CampaignImport, worker: Worker | None) -> bool:
    """Cancel while the files are checked, once they are, or before a worker takes the import or after it
    stopped: never while a worker writes the campaign."""
    if staged.status in (Status.CHECKING, Status.READY, Status.INVALID):
        return True
    return staged.status == Status.IMPORTING and worker in (Worker.WAITING, Worker.STOPPED)
