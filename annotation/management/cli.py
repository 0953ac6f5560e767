"""What the import and export commands share: reading files (gzip too) and a progress bar on terminals."""

import gzip
import sys
import zlib
from pathlib import Path

from django.core.management.base import CommandError

from annotation.errors import InputError


def read_text(path: str) -> str:
    try:
        raw = Path(path).read_bytes()
    except OSError as exc:
        raise CommandError(f"{path}: cannot read: {exc.strerror}") from None
    if raw[:2] == b"\x1f\x8b":
        try:
            raw = gzip.decompress(raw)
        except (EOFError, gzip.BadGzipFile, zlib.error) as exc:
            raise CommandError(f"{path}: not a valid gzip file: {exc or 'truncated'}") from None
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise CommandError(f"{path}: not UTF-8 text (byte {exc.start})") from None


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
