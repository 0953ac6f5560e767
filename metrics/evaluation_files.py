"""The `evaluate` command's files: TREC qrels and runs read for `metrics.compute.evaluation`, the qrels on a
second thread. Needs no Django."""

from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

from metrics.compute.evaluation import IntentQrelsIndex, QrelsIndex
from plumbing.threads import started
from trec.files import Progress, Run, TrecFormatError, read_qrels, read_run

QrelsLoader = Callable[[str | Path, Progress | None], QrelsIndex | IntentQrelsIndex]


def read_files(
    qrels_path: str | Path,
    run_paths: Iterable[str | Path],
    progress: Progress | None = None,
    load_qrels: QrelsLoader | None = None,
) -> Iterator[QrelsIndex | IntentQrelsIndex | Run]:
    """The qrels' index, then each run in turn. The qrels are read and indexed on a second thread while the
    first run is read (NumPy lets go of the interpreter lock in its loops, so this uses two cores); a
    problem in the qrels is reported before one in that run, as when reading one after the other.
    `progress` is told the bytes read of every file, from both threads. `load_qrels` reads and indexes the
    qrels (default: TREC qrels into a `QrelsIndex`)."""
    run_paths = list(run_paths)
    load = load_qrels or (lambda path, told: QrelsIndex(read_qrels(path, told)))
    pending = started(load, qrels_path, progress)
    try:
        first = read_run(run_paths[0], progress) if run_paths else None
    except TrecFormatError:
        pending.result()
        raise
    yield pending.result()
    if first is not None:
        yield first
    # Later runs one at a time: not holding on to the one before lets the caller drop it first.
    del first
    for path in run_paths[1:]:
        yield read_run(path, progress)
