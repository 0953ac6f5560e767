from django.utils.translation import gettext as _

from annotation.bundle import parse_judgment_lines
from annotation.errors import InputError, TaskError
from annotation.management.cli import SpokenCommand, command_error, read_text
from annotation.selectors.campaigns import campaign_get
from annotation.services.label_import import labels_import


class Command(SpokenCommand):
    help = "Load human labels from a JSONL file into a campaign (all or nothing)."

    def add_arguments(self, parser):
        parser.add_argument("campaign", help="the campaign's id or name")
        parser.add_argument("file", help="JSONL: one grade or side-by-side verdict per line (may be gzipped)")

    def handle(self, *args, campaign, file, **options):
        try:
            target = campaign_get(identifier=campaign)
            lines = read_text(file).splitlines()
            judgments, preferences = parse_judgment_lines(lines, file, scale_values=set(target.grade_values))
            grades, verdicts = labels_import(
                campaign=target, judgments=judgments, preferences=preferences, source=file
            )
        except (InputError, TaskError) as exc:
            raise command_error(exc) from None
        summary = _("imported %(grades)d relevance grades and %(verdicts)d side-by-side verdicts")
        self.stdout.write(summary % {"grades": grades, "verdicts": verdicts})
