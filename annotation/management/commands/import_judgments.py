from django.core.management.base import BaseCommand

from annotation.bundle import parse_judgment_lines
from annotation.errors import InputError, TaskError
from annotation.management.cli import command_error, read_text
from annotation.selectors.campaigns import campaign_get
from annotation.services.label_import import labels_import


class Command(BaseCommand):
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
        self.stdout.write(f"imported {grades} relevance grades and {verdicts} side-by-side verdicts")
