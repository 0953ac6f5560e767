"""What the import and export commands share: reading files (gzip too), their errors and the language of
what they tell a person (the progress bar is `plumbing.progress`)."""

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError
from django.utils import translation

from annotation.bundle.reading import read_text_file
from annotation.errors import InputError, TaskError


def read_text(path: str) -> str:
    try:
        return read_text_file(path, path)
    except InputError as error:
        raise command_error(error) from None


def command_error(error: InputError | TaskError) -> CommandError:
    return CommandError(str(error))


class SpokenCommand(BaseCommand):
    """A command whose words for a person (progress, summaries, warnings, errors) are in `--language`, by
    default settings.LANGUAGE_CODE, as `launch_report --language` words its report; what programs read (ids,
    JSON, CSV, TREC) is the same in every language."""

    language_help = "the language of the messages for people"

    def create_parser(self, prog_name, subcommand, **kwargs):
        parser = super().create_parser(prog_name, subcommand, **kwargs)
        parser.add_argument(
            "--language",
            choices=[code for code, _ in settings.LANGUAGES],
            default=settings.LANGUAGE_CODE,
            help=self.language_help,
        )
        return parser

    def execute(self, *args, **options):
        # A CommandError is worded inside: `command_error` says it while the language is active.
        with translation.override(options["language"]):
            return super().execute(*args, **options)
