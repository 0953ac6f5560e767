from pathlib import Path

from django.core.management.base import CommandError
from django.utils.translation import gettext as _

from annotation.errors import InputError
from annotation.management.cli import SpokenCommand
from annotation.selectors.campaigns import campaign_get
from metrics.reports import REPORT_FORMATS, report_file, report_render
from metrics.selectors.launch import launch_report_build


class Command(SpokenCommand):
    help = "A campaign's launch report: measures, comparisons, GSB and the decision (see docs/launch.md)."
    language_help = (
        "the language of the messages and of the HTML and Markdown reports (JSON and CSV stay English)"
    )

    def add_arguments(self, parser):
        parser.add_argument("campaign", help="campaign id or exact name")
        parser.add_argument("--model", help="the experimental model to decide on (default: the first)")
        parser.add_argument("--format", choices=REPORT_FORMATS, default="json")
        parser.add_argument("-o", "--output", metavar="FILE", help="write here instead of standard output")

    def handle(self, *args, **options):
        try:
            campaign = campaign_get(identifier=options["campaign"])
            report = launch_report_build(campaign=campaign, model=options["model"])
        except InputError as exc:
            raise CommandError(str(exc)) from None
        if not options["output"]:
            text = report_render(report, options["format"])
            self.stdout.write(text, ending="" if text.endswith("\n") else "\n")
            return
        Path(options["output"]).write_text(report_file(report, options["format"]), encoding="utf-8")
        self.stderr.write(_("wrote %(file)s") % {"file": options["output"]})
