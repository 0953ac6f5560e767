from django.utils.translation import gettext as _
from django.utils.translation import pgettext

from annotation.bundle.reading import text_lines
from annotation.errors import InputError, TaskError
from annotation.management.cli import SpokenCommand, command_error
from annotation.selectors.campaigns import campaign_get
from annotation.services.interactions import interaction_log_import
from plumbing.progress import progress_bar

BAR = "a progress bar's count"


class Command(SpokenCommand):
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
            counted, unit = pgettext(BAR, "impressions"), pgettext(BAR, "impression")
            with progress_bar(None, counted, unit=unit, after_seconds=2) as bar:
                log = interaction_log_import(
                    campaign=target, lines=text_lines(file, file), source=file, progress=bar.update
                )
        except (InputError, TaskError) as exc:
            raise command_error(exc) from None
        summary = _(
            "imported %(impressions)d impressions (%(lists)d lists, %(clicks)d clicks); "
            "%(documents)d documents added"
        )
        self.stdout.write(
            summary
            % {
                "impressions": log.impressions,
                "lists": log.requests,
                "clicks": log.clicks,
                "documents": log.documents_added,
            }
        )
