"""A progress bar for long commands (imports, `evaluate`), on terminals only. Imports no Django: the
`judgeboard` command line draws it too."""

import sys


class _NoBar:
    """The bar when output is piped or logged: it counts nothing. A disabled tqdm bar still imports tqdm and
    makes its default lock (which imports `multiprocessing`): 70–85 ms of a command's start-up."""

    disable = True

    def __enter__(self):
        return self

    def __exit__(self, *exc_info) -> None:
        return None

    def update(self, n: float = 1) -> None:
        return None


def progress_bar(
    total: int | None, description: str, *, unit: str = "row", after_seconds: float = 0, file=None
):
    """A tqdm bar on a terminal (`file`, else standard error), shown once `after_seconds` passed (short work
    shows none); nothing when output is piped or logged. With unit "B", counts show as KB, MB..."""
    file = file or sys.stderr
    if not file.isatty():
        return _NoBar()
    from tqdm import tqdm

    return tqdm(
        total=total,
        desc=description,
        unit=unit,
        unit_scale=unit == "B",
        delay=after_seconds,
        file=file,
    )
