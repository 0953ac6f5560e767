from django.core.management.base import BaseCommand

from annotation.bundle.reading import text_lines
from annotation.errors import InputError, TaskError
from annotation.management.cli import command_error
from annotation.selectors.campaigns import campaign_get
from annotation.services.interactions import interaction_log_import
from plumbing.progress import progress_bar


class Command(BaseCommand):
    help = (
        "Add an interaction log (JSONL, one impression a line, may be gzipped; docs/interactions.md) to a "
        "campaign, all or nothing."
    )
    requires_system_checks = []

    def add_arguments(self, parser):
        parser.add_argument("campaign", help="the campaign's id or name")
        parser.add_argument("file", help="the log: one impression a line (may be gzipped)")

    def handle(self, *args, campaign, file, **options):
        try:
            target = campaign_get(identifier=campaign)
            with progress_bar(None, "impressions", unit="impression", after_seconds=2) as bar:
                log = interaction_log_import(
                    campaign=target, lines=text_lines(file, file), source=file, progress=bar.update
                )
        except (InputError, TaskError) as exc:
            raise command_error(exc) from None
        self.stdout.write(
            f"imported {log.impressions} impressions ({log.requests} lists, {log.clicks} clicks); "
            f"{log.documents_added} documents added"
        )
