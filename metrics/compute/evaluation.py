"""Scoring TREC runs against qrels: join the files' columns, lay them out per query, apply the measures.

Conventions (trec_eval's): documents are ranked by score descending, ties broken by document id descending
(byte order); a run query without qrels is ignored; a qrels query missing from the run is ignored unless
`complete=True`, which scores it 0 (trec_eval `-c`); `judged_only=True` drops unjudged documents before
ranking. A document listed twice for a query, in the run or in the qrels, is an error.

The join hashes (query, document) pairs to 64 bits and checks every match byte for byte; on the rare hash
collision it hashes again with another seed, so results never depend on a hash.
"""

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from metrics.compute.ranking import Measure, RankingSettings, evaluate_ranked, parse_measure, weighted_mean
from metrics.compute.trec import Qrels, Run, TrecFormatError, ranked_order

_DOCUMENT_BITS = 40
MAX_QUERIES = 1 << (64 - _DOCUMENT_BITS)
_CHECK_SLICE = 1 << 20
_SEEDS = (0x243F6A8885A308D3, 0x13198A2E03707344, 0xA4093822299F31D0, 0x082EFA98EC4E6C89)


class _Collision(Exception):
    """Two different (query, document) pairs hashed alike: hash again with the next seed."""


@dataclass(frozen=True)
class RunEvaluation:
    """Per-query values of every measure, over `query_ids` (sorted byte-wise)."""

    query_ids: list[str]
    per_query: dict[str, np.ndarray]

    def mean(self, measure: str) -> float:
        return weighted_mean(self.per_query[measure])

    def aggregate(self) -> dict[str, float]:
        return {name: self.mean(name) for name in self.per_query}


class QrelsIndex:
    """Qrels prepared once for scoring any number of runs."""

    def __init__(self, qrels: Qrels):
        # The query column is not kept: codes into `query_ids` stand for it.
        self.document, self.label, self.line, self.path = qrels.document, qrels.label, qrels.line, qrels.path
        self.query_ids, codes = _query_codes(qrels.query)
        self.codes = codes.astype(np.int32)
        if len(self.query_ids) > MAX_QUERIES:
            raise TrecFormatError(self.path, None, f"more than {MAX_QUERIES} queries")
        rows, positions, width = _positions_within(self.codes, len(self.query_ids))
        self.judged = np.full((len(self.query_ids), width), np.nan)
        self.judged[rows, positions] = qrels.label
        self._sorted: dict[int, tuple[np.ndarray, np.ndarray]] = {}
        # Sorting the keys once up front refuses duplicate judgments before any run is read.
        for seed in _SEEDS:
            try:
                self.sorted_keys(seed)
                break
            except _Collision:
                continue

    def sorted_keys(self, seed: int) -> tuple[np.ndarray, np.ndarray]:
        """The qrels' pair keys sorted, and the entry of each; duplicates refused."""
        if seed not in self._sorted:
            keys = _pair_keys(self.codes, self.document, seed)
            order = np.argsort(keys)
            keys = keys[order]
            _check_duplicates(keys, order, self.document, self.line, self.path)
            self._sorted[seed] = (keys, order)
        return self._sorted[seed]


def evaluate_run(
    qrels: QrelsIndex,
    run: Run,
    measures: Iterable[str | Measure],
    *,
    settings: RankingSettings | None = None,
    judged_only: bool = False,
    complete: bool = False,
) -> RunEvaluation:
    """Scores one run; see the module docstring for the conventions and `ranking` for the measures."""
    measures = [measure if isinstance(measure, Measure) else parse_measure(measure) for measure in measures]
    row_of_query = _rows_of(qrels.query_ids, run.query)
    known = row_of_query >= 0
    if not known.all():
        run = Run(run.query[known], run.document[known], run.score[known], run.line[known], run.path)
        row_of_query = row_of_query[known]
    labels = _labels_of(qrels, row_of_query, run)
    ranked = ranked_order(row_of_query, run.score, run.document)
    if ranked is not None:
        row_of_query, labels = row_of_query[ranked], labels[ranked]
    if judged_only:
        judged = ~np.isnan(labels)
        row_of_query, labels = row_of_query[judged], labels[judged]

    scored = np.ones(len(qrels.query_ids), bool) if complete else np.zeros(len(qrels.query_ids), bool)
    scored[row_of_query] = True
    rows, positions, width = _positions_within(row_of_query, len(qrels.query_ids))
    matrix = np.full((len(qrels.query_ids), width), np.nan)
    matrix[rows, positions] = labels
    judged_labels = qrels.judged
    if not scored.all():
        matrix, judged_labels = matrix[scored], judged_labels[scored]
    per_query = evaluate_ranked(matrix, measures, judged_labels=judged_labels, settings=settings)
    return RunEvaluation([query.decode() for query in qrels.query_ids[scored].tolist()], per_query)


def _block_heads(values: np.ndarray) -> np.ndarray:
    """Where each block of equal neighbouring values starts (files list a query's lines together)."""
    return np.flatnonzero(np.concatenate(([True], values[1:] != values[:-1])))


def _query_codes(query: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The sorted distinct query ids, and each entry's index among them (via the blocks of equal ids)."""
    if query.size == 0:
        return np.zeros(0, dtype="S1"), np.zeros(0, dtype=np.int64)
    heads = _block_heads(query)
    query_ids, block_codes = np.unique(query[heads], return_inverse=True)
    lengths = np.diff(heads, append=query.size)
    return query_ids, np.repeat(block_codes, lengths)


def _rows_of(query_ids: np.ndarray, query: np.ndarray) -> np.ndarray:
    """Each entry's index in the sorted `query_ids`, -1 where its query is not there (looked up per block)."""
    if query.size == 0:
        return np.zeros(0, dtype=np.int64)
    heads = _block_heads(query)
    found = np.searchsorted(query_ids, query[heads]) if len(query_ids) else np.zeros(heads.size, np.int64)
    found = np.minimum(found, max(len(query_ids) - 1, 0))
    present = query_ids[found] == query[heads] if len(query_ids) else np.zeros(heads.size, bool)
    return np.repeat(np.where(present, found, -1).astype(np.int32), np.diff(heads, append=query.size))


def _positions_within(rows: np.ndarray, n_rows: int) -> tuple[np.ndarray, np.ndarray, int]:
    """Each entry's 0-based position among the entries of its row, keeping their order."""
    if rows.size == 0:
        return rows, rows, 0
    sizes = np.bincount(rows, minlength=n_rows)
    heads = _block_heads(rows)
    if heads.size == np.count_nonzero(sizes):
        # Each row is one contiguous block (the usual file layout): no sort needed.
        return (
            rows,
            np.arange(rows.size) - np.repeat(heads, np.diff(heads, append=rows.size)),
            int(sizes.max()),
        )
    order = np.argsort(rows, kind="stable")
    starts = np.cumsum(sizes) - sizes
    positions = np.empty(rows.size, dtype=np.int64)
    positions[order] = np.arange(rows.size) - starts[rows[order]]
    return rows, positions, int(sizes.max())


def _hash_bytes(values: np.ndarray, seed: int) -> np.ndarray:
    """A 64-bit hash of each `S` value (its bytes in 8-byte words, folded and mixed)."""
    width = values.dtype.itemsize
    padded_width = -(-width // 8) * 8
    matrix = np.zeros((values.size, padded_width), dtype=np.uint8)
    matrix[:, :width] = values.view(np.uint8).reshape(values.size, width)
    words = matrix.view(np.uint64)
    hashed = np.full(values.size, seed, dtype=np.uint64)
    for column in range(words.shape[1]):
        hashed ^= words[:, column]
        hashed = _mix(hashed)
    return hashed


def _mix(values: np.ndarray) -> np.ndarray:
    """splitmix64's finalizer: every input bit moves every output bit."""
    values = values ^ (values >> np.uint64(30))
    values *= np.uint64(0xBF58476D1CE4E5B9)
    values ^= values >> np.uint64(27)
    values *= np.uint64(0x94D049BB133111EB)
    return values ^ (values >> np.uint64(31))


def _pair_keys(rows: np.ndarray, document: np.ndarray, seed: int) -> np.ndarray:
    """64-bit keys of (query row, document): the row in the top 24 bits, so sorted keys keep each query's
    entries together (the lookups that follow stay in cache), and 40 bits of the document's hash."""
    document_hash = _hash_bytes(document, seed) >> np.uint64(64 - _DOCUMENT_BITS)
    return (rows.astype(np.uint64) << np.uint64(_DOCUMENT_BITS)) | document_hash


def _check_duplicates(keys, order, document, line, path) -> None:
    """Refuses a (query, document) pair listed twice; an equal key of different pairs is a collision."""
    same = np.flatnonzero(keys[1:] == keys[:-1])
    if same.size == 0:
        return
    first, second = order[same], order[same + 1]
    exact = document[first] == document[second]
    if not exact.all():
        raise _Collision
    a, b = sorted((int(line[first[0]]), int(line[second[0]])))
    raise TrecFormatError(
        path, b, f"document {document[first[0]].decode()!r} is listed twice for its query (also line {a})"
    )


def _labels_of(qrels: QrelsIndex, row_of_query: np.ndarray, run: Run) -> np.ndarray:
    """The qrels label of each run entry, NaN where unjudged."""
    for seed in _SEEDS:
        try:
            return _join(qrels, row_of_query, run, seed)
        except _Collision:
            continue
    raise RuntimeError("hash collisions under every seed; the input is adversarial")


def _join(qrels: QrelsIndex, row_of_query: np.ndarray, run: Run, seed: int) -> np.ndarray:
    qrels_keys, qrels_entry = qrels.sorted_keys(seed)
    run_keys = _pair_keys(row_of_query, run.document, seed)
    order = np.argsort(run_keys)
    run_keys = run_keys[order]
    _check_duplicates(run_keys, order, run.document, run.line, run.path)
    labels = np.full(run.document.size, np.nan)
    if qrels_keys.size == 0:
        return labels
    found_at = np.minimum(np.searchsorted(qrels_keys, run_keys), qrels_keys.size - 1)
    hit = qrels_keys[found_at] == run_keys
    del run_keys
    entry, matched = qrels_entry[found_at[hit]], order[hit]
    del found_at, hit, order
    # Equal keys mean the same query row (its bits are exact); the document ids must match byte for byte,
    # checked a slice at a time to keep the copies small.
    for start in range(0, entry.size, _CHECK_SLICE):
        part = slice(start, start + _CHECK_SLICE)
        if not (qrels.document[entry[part]] == run.document[matched[part]]).all():
            raise _Collision
    labels[matched] = qrels.label[entry]
    return labels
