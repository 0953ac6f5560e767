"""A progress bar for long commands (imports, `evaluate`), on terminals only. Imports no Django: the
`judgeboard` command line draws it too."""

import sys


def progress_bar(
    total: int | None, description: str, *, unit: str = "row", after_seconds: float = 0, file=None
):
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
