"""Background work on Django's Tasks framework (a `manage.py db_worker` runs it): the steps of a campaign
created in the browser. The `_start`/`_confirm`/`_retry` functions are what the pages call: a service's
write, then its task queued once that commits (and the task's id recorded on the import); each task loads
its import and hands it to a service with the attempt it was queued for, in the language of the page that
queued it (so the preview's errors read as the manager's pages do)."""

from django.conf import settings
from django.core.files.uploadedfile import UploadedFile
from django.db import transaction
from django.tasks import Task, task
from django.utils import translation

from annotation.models import CampaignImport
from annotation.services.imports import (
    import_cancel,
    import_check,
    import_confirm,
    import_queued,
    import_retry,
    import_run,
    import_stage,
)
from plumbing.memory import free_memory_eagerly


@task()
def campaign_import_check(import_id: int, attempt: int, language: str = settings.LANGUAGE_CODE) -> None:
    with translation.override(language):
        import_check(staged=CampaignImport.objects.get(pk=import_id), attempt=attempt)


@task()
def campaign_import_run(import_id: int, attempt: int, language: str = settings.LANGUAGE_CODE) -> None:
    free_memory_eagerly()
    with translation.override(language):
        import_run(staged=CampaignImport.objects.get(pk=import_id), attempt=attempt)


def _queue_on_commit(work: Task, staged: CampaignImport) -> None:
    language = translation.get_language() or settings.LANGUAGE_CODE  # the page's, read before the commit

    def queue() -> None:
        queued = work.enqueue(staged.pk, staged.attempt, language)
        import_queued(staged=staged, task_id=str(queued.id))

    transaction.on_commit(queue)


@transaction.atomic
def campaign_import_start(
    *, user, bundle: UploadedFile, runs: list[tuple[str, UploadedFile]]
) -> CampaignImport:
    """Stage the uploaded files and queue their check."""
    staged = import_stage(user=user, bundle=bundle, runs=runs)
    _queue_on_commit(campaign_import_check, staged)
    return staged


@transaction.atomic
def campaign_import_confirm(*, staged: CampaignImport) -> None:
    """Confirm a checked import and queue it."""
    _queue_on_commit(campaign_import_run, import_confirm(staged=staged))


@transaction.atomic
def campaign_import_retry(*, staged: CampaignImport) -> None:
    """Queue again the check or the import whose worker stopped."""
    staged = import_retry(staged=staged)
    work = campaign_import_check if staged.status == CampaignImport.Status.CHECKING else campaign_import_run
    _queue_on_commit(work, staged)


# The import page's buttons (and the API's routes) and what each calls.
IMPORT_ACTIONS = {"confirm": campaign_import_confirm, "cancel": import_cancel, "retry": campaign_import_retry}
