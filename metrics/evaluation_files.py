"""The `evaluate` command's files: TREC qrels and runs read for `metrics.compute.evaluation`, the qrels on a
second thread. Needs no Django."""

from collections.abc import Iterable, Iterator
from pathlib import Path

from metrics.compute.evaluation import QrelsIndex
from plumbing.threads import started
from trec.files import Progress, Run, TrecFormatError, read_qrels, read_run


def read_files(
    qrels_path: str | Path, run_paths: Iterable[str | Path], progress: Progress | None = None
) -> Iterator[QrelsIndex | Run]:
    """The qrels' index, then each run in turn. The qrels are read and indexed on a second thread while the
    first run is read (NumPy lets go of the interpreter lock in its loops, so this uses two cores); a
    problem in the qrels is reported before one in that run, as when reading one after the other.
    `progress` is told the bytes read of every file, from both threads."""
    run_paths = list(run_paths)
    pending = started(lambda: QrelsIndex(read_qrels(qrels_path, progress)))
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
