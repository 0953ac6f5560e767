"""What the import and export commands share: reading files (gzip too) and a progress bar on terminals."""

import sys

from django.core.management.base import CommandError

from annotation.bundle.reading import read_text_file
from annotation.errors import InputError


def read_text(path: str) -> str:
    try:
        return read_text_file(path, path)
    except InputError as error:
        raise command_error(error) from None


def command_error(error: InputError) -> CommandError:
    return CommandError(str(error))


def progress_bar(total: int, description: str, *, unit: str = "row", after_seconds: float = 0, file=None):
    """A tqdm bar on a terminal (`file`, else standard error), shown once `after_seconds` passed (short work
    shows none); nothing when output is piped or logged. With unit "B", counts show as KB, MB..."""
    from tqdm import tqdm

    file = file or sys.stderr
    return tqdm(
        total=total,
        desc=description,
        unit=unit,
        unit_scale=unit == "B",
        delay=after_seconds,
        disable=not file.isatty(),
        file=file,
    )
