"""Background work on Django's Tasks framework (a `manage.py db_worker` runs it): the steps of a campaign
created in the browser. Each task loads its import and hands it to the service."""

from django.tasks import task

from annotation.models import CampaignImport
from annotation.services.imports import import_check, import_run
from config.memory import free_memory_eagerly


@task()
def campaign_import_check(import_id: int) -> None:
    import_check(staged=CampaignImport.objects.get(pk=import_id))


@task()
def campaign_import_run(import_id: int) -> None:
    free_memory_eagerly()
    import_run(staged=CampaignImport.objects.get(pk=import_id))
