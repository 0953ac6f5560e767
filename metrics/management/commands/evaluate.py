from django.core.management.base import BaseCommand, CommandError

from judgeboard import evaluate
from judgeboard.errors import CommandFailed
from plumbing.memory import keep_freed_memory


class Command(BaseCommand):
    """`judgeboard evaluate` under manage.py: the same arguments, code and output."""

    help = evaluate.DESCRIPTION
    # Files in, numbers out: no database, so no system checks (they import every URLconf and view).
    requires_system_checks = []

    def add_arguments(self, parser):
        evaluate.add_arguments(parser)

    def handle(self, *args, **options):
        keep_freed_memory()
        try:
            evaluate.evaluate(options, self.stdout)
        except CommandFailed as error:
            raise CommandError(str(error)) from None
