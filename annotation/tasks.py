"""Background work on Django's Tasks framework (a `manage.py db_worker` runs it): the steps of a campaign
created in the browser. The `_start`/`_confirm` functions are what the pages call: a service's write, then
its task queued once that commits; each task loads its import and hands it to a service."""

from django.core.files.uploadedfile import UploadedFile
from django.db import transaction
from django.tasks import task

from annotation.models import CampaignImport
from annotation.services.imports import import_check, import_confirm, import_run, import_stage
from plumbing.memory import free_memory_eagerly


@task()
def campaign_import_check(import_id: int) -> None:
    import_check(staged=CampaignImport.objects.get(pk=import_id))


@task()
def campaign_import_run(import_id: int) -> None:
    free_memory_eagerly()
    import_run(staged=CampaignImport.objects.get(pk=import_id))


@transaction.atomic
def campaign_import_start(
    *, user, bundle: UploadedFile, runs: list[tuple[str, UploadedFile]]
) -> CampaignImport:
    """Stage the uploaded files and queue their check."""
    staged = import_stage(user=user, bundle=bundle, runs=runs)
    transaction.on_commit(lambda: campaign_import_check.enqueue(staged.pk))
    return staged


@transaction.atomic
def campaign_import_confirm(*, staged: CampaignImport) -> None:
    """Confirm a checked import and queue it."""
    import_confirm(staged=staged)
    transaction.on_commit(lambda: campaign_import_run.enqueue(staged.pk))
