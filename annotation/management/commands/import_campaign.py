import time

from django.core.management.base import CommandError
from django.utils.translation import gettext, pgettext

from annotation.bundle import ranking_rows
from annotation.campaign_files import CampaignFile, campaign_files_read
from annotation.errors import InputError
from annotation.management.cli import SpokenCommand, command_error
from annotation.previews import import_warnings
from annotation.services.campaigns import campaign_import
from plumbing.memory import free_memory_eagerly
from plumbing.progress import progress_bar
from plumbing.threads import started


class Command(SpokenCommand):
    help = "Create a campaign from a JSON bundle (and TREC runs), all in one transaction; prints its id."
    # The system checks import every URLconf and view, a second or more before any work: `migrate` and
    # `runserver` run them.
    requires_system_checks = []

    def add_arguments(self, parser):
        parser.add_argument("bundle", help="the campaign bundle (JSON, may be gzipped)")
        parser.add_argument(
            "--run",
            action="append",
            default=[],
            metavar="MODEL=PATH",
            help="a TREC run (qid Q0 docid rank score tag) giving MODEL's rankings; repeatable",
        )

    def handle(self, *args, bundle, run, **options):
        free_memory_eagerly()
        specs = []
        for spec in run:
            model, _, path = spec.partition("=")
            if not model or not path:
                raise CommandError(gettext("--run %(spec)s: write it as MODEL=PATH") % {"spec": repr(spec)})
            specs.append((model, CampaignFile(path, path)))
        reading = time.perf_counter()
        try:
            parsed, runs = campaign_files_read(CampaignFile(bundle, bundle), specs)
            read = time.perf_counter()
            # The warnings are worked out on a second thread beside the import, which mostly waits for the
            # database (its COPYs and the keys' checks, once a statement: COMMIT has no checks left to wait).
            warnings = started(import_warnings, parsed, runs)
            with progress_bar(
                ranking_rows(parsed, runs), pgettext("a progress bar's count", "rankings")
            ) as bar:
                campaign = campaign_import(bundle=parsed, runs=runs, progress=bar.update)
        except InputError as exc:
            raise command_error(exc) from None
        if options["verbosity"] >= 2:
            message = gettext("files read and checked in %(read).2f s, imported in %(imported).2f s")
            self.stderr.write(message % {"read": read - reading, "imported": time.perf_counter() - read})
        for warning in warnings.result():
            self.stderr.write(gettext("warning: %(warning)s") % {"warning": warning})
        self.stdout.write(str(campaign.pk))
