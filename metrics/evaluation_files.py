"""The `evaluate` command's files: TREC qrels and runs read and scored with `metrics.compute.evaluation`, on
every core. Needs no Django."""

import os
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from metrics.compute.evaluation import (
    IntentQrelsIndex,
    QrelsIndex,
    RankedLabels,
    RunEvaluation,
    evaluate_labels,
    evaluate_run,
    run_labels,
    run_queries,
)
from metrics.compute.ranking import RankingSettings
from plumbing.threads import started
from trec.files import Run, read_qrels, read_run
from trec.measures import Measure
from trec.pieces import run_pieces
from trec.tokenizer import Progress, TrecFormatError

QrelsLoader = Callable[[str | Path, Progress | None], QrelsIndex | IntentQrelsIndex]

# A plain run is read and scored in pieces of at least this many bytes, two a worker (fewer for a small run).
PIECE_BYTES = 32 << 20
# Each worker holds a window's temporaries and a piece's join at once; past a few, the qrels' index (one
# thread's work, which every piece waits for) bounds the time, while each more worker adds to the memory.
MAX_WORKERS = 4


def _qrels_index(path: str | Path, progress: Progress | None = None) -> QrelsIndex:
    """TREC qrels read and indexed for scoring runs against them."""
    return QrelsIndex(read_qrels(path, progress))


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
    load = load_qrels or _qrels_index
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


@dataclass(frozen=True)
class ScoredRun:
    """A run's evaluation, and how many documents it ranked (none: the run is empty)."""

    entries: int  # the run's ranked documents, of every query
    evaluation: RunEvaluation


def scored_runs(
    qrels_path: str | Path,
    run_paths: Iterable[str | Path],
    measures: list[str | Measure],
    *,
    settings: RankingSettings | None = None,
    judged_only: bool = False,
    complete: bool = False,
    progress: Progress | None = None,
    workers: int | None = None,
) -> Iterator[QrelsIndex | ScoredRun]:
    """The qrels' index, then each run scored (`evaluate_run`), in turn, on `workers` threads (default: a
    core each, at most MAX_WORKERS). The qrels are read and indexed beside the first run. A plain run of
    two PIECE_BYTES or more is cut where the query id changes (`trec.pieces`) into pieces, two a worker,
    each read and labelled on its own, then scored as one: the same doubles as the run read whole. A run
    whose query's lines lie apart, in two pieces, is read again whole and scored so. Problems come in file
    order with the lines of the whole file: the qrels' first, then the run's reading, then its documents
    listed twice. `progress` is told the bytes read of every file, from every thread."""
    workers = workers or _cores()
    run_paths = list(run_paths)
    with ThreadPoolExecutor(max_workers=workers) as pool:
        indexed = pool.submit(_qrels_index, qrels_path, progress)
        reads = _read_pieces(pool, run_paths[0], workers, progress) if run_paths else []
        index = indexed.result()
        yield index
        for number, path in enumerate(run_paths):
            if number:  # later runs one at a time: one run in memory at once
                reads = _read_pieces(pool, path, workers, progress)
            yield _scored(pool, index, reads, measures, settings, judged_only, complete)
            del reads


def _cores() -> int:
    """This process's cores, at most MAX_WORKERS."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    return min(cores, MAX_WORKERS)


def _read_pieces(
    pool: ThreadPoolExecutor, path: str | Path, workers: int, progress
) -> list[Future[tuple[Run, np.ndarray]]]:
    spans: list[tuple[int, int] | None] = [None]  # the run whole
    if workers > 1:
        spans = list(run_pieces(path, 2 * workers, PIECE_BYTES) or spans)
    return [pool.submit(_read_piece, path, progress, span) for span in spans]


def _read_piece(path, progress, span) -> tuple[Run, np.ndarray]:
    """A piece of a run and its query ids (none looked for in a run read whole)."""
    run = read_run(path, progress, None, span)
    return run, run_queries(run) if span else np.zeros(0, dtype="S1")


def _scored(pool, index, reads, measures, settings, judged_only, complete) -> ScoredRun:
    labelled: list[Future[RankedLabels]] = []
    entries = lines = 0  # of the pieces before
    seen = np.zeros(0, dtype="S1")  # their query ids
    while reads:
        read = reads.pop(0)  # a read piece is let go once labelled: neither list nor future holds it
        try:
            piece, queries = read.result()
        except TrecFormatError as exc:
            raise _moved(exc, lines) from None
        if np.isin(queries, seen).any():
            # A query's lines lie apart, in two pieces: the run is read again, whole, and scored so. The
            # pieces' reads and labels not yet started are dropped.
            for later in (*reads, *labelled):
                later.cancel()
            whole = read_run(piece.path)
            evaluation = evaluate_run(
                index, whole, measures, settings=settings, judged_only=judged_only, complete=complete
            )
            return ScoredRun(whole.query.size, evaluation)
        seen = np.concatenate((seen, queries))
        if lines:
            piece = replace(piece, line=piece.line + lines)
        lines += piece.lines
        entries += piece.query.size
        # Labelled while the later pieces are read.
        labelled.append(pool.submit(run_labels, index, piece, judged_only=judged_only))
        del piece, read
    evaluation = evaluate_labels(
        index, [future.result() for future in labelled], measures, settings=settings, complete=complete
    )
    return ScoredRun(entries, evaluation)


def _moved(error: TrecFormatError, lines: int) -> TrecFormatError:
    """A piece's error with the line of the whole file, `lines` lines after the piece's first."""
    line = error.line + lines if error.line else error.line
    return type(error)(error.path, line, error.template, **error.values)
