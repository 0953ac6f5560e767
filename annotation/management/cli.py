"""What the import and export commands share: reading files (gzip too) and their errors (the progress bar
is `plumbing.progress`)."""

from django.core.management.base import CommandError

from annotation.bundle.reading import read_text_file
from annotation.errors import InputError, TaskError


def read_text(path: str) -> str:
    try:
        return read_text_file(path, path)
    except InputError as error:
        raise command_error(error) from None


def command_error(error: InputError | TaskError) -> CommandError:
    return CommandError(str(error))
