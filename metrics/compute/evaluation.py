"""Scoring TREC runs against qrels: join the files' columns, lay them out per query, apply the measures.

Conventions (trec_eval's): documents are ranked by score descending, ties broken by document id descending
(byte order); a run query without qrels is ignored; a qrels query missing from the run is ignored unless
`complete=True`, which scores it 0 (trec_eval `-c`); `judged_only=True` drops unjudged documents before
ranking (trec_eval `-J`): documents without a label and those with a negative label (trec_eval reads a
negative relevance as unjudged), while a query left with no documents still counts, scoring 0. A document
listed twice for a query, in the run or in the qrels, is an error.

Intent qrels (ndeval's, `trec.intents`) are scored with the intent-aware measures of `diversity`, the run
ordered and the query sets handled as above (ndeval's `-traditional` order, and its `-c` for `complete`): a
(document, intent) is relevant when its judgment reaches the threshold; `judged_only` drops documents
without a line in the qrels for the query (ir_measures' `judged_only`); a (query, intent, document) judged
twice is an error.

The join hashes (query, document) pairs to 64 bits and checks every match byte for byte; on the rare hash
collision it hashes again with another seed, so results never depend on a hash.
"""

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from metrics.compute.diversity import evaluate_intents
from metrics.compute.pairs import (
    MAX_QUERIES,
    SEEDS,
    Collision,
    RowLayout,
    as_words,
    block_heads,
    check_duplicates,
    matches,
    sorted_pairs,
)
from metrics.compute.ranking import RankingSettings, evaluate_ranked, weighted_mean
from trec.files import Qrels, Run, ranked_order
from trec.intents import IntentQrels
from trec.measures import DEFAULT_ALPHA, Measure, parse_measure
from trec.tokenizer import TrecFormatError

_CHECK_BYTES = 8 << 20


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
            raise TrecFormatError(self.path, None, "more than %(max)d queries", max=MAX_QUERIES)
        self._layout: RowLayout | None = RowLayout.of(self.codes, len(self.query_ids))
        self.judged = np.full((len(self.query_ids), self._layout.width), np.nan)
        self.judged[self.codes, self._layout.positions] = qrels.label
        self._sorted: dict[int, tuple[np.ndarray, np.ndarray]] = {}
        # Sorting the keys once up front refuses duplicate judgments before any run is read.
        for seed in SEEDS:
            try:
                self.sorted_keys(seed)
                break
            except Collision:
                continue
        # Only another seed (after a hash collision) needs it again: recomputed then, not kept.
        self._layout = None

    def sorted_keys(self, seed: int) -> tuple[np.ndarray, np.ndarray]:
        """The qrels' pair keys sorted, and the entry of each; duplicates refused."""
        if seed not in self._sorted:
            layout = self._layout or RowLayout.of(self.codes, len(self.query_ids))
            keys, order = sorted_pairs(self.codes, layout, self.document, seed)
            check_duplicates(keys, order, self.document, self.line, self.path)
            self._sorted[seed] = (keys, order)
        return self._sorted[seed]


class IntentQrelsIndex:
    """Intent qrels prepared once for scoring any number of runs: each judged (query, document) pair's
    relevance to its query's intents, the pairs indexed for the join as plain qrels whose label is the
    pair's number, and every query's judged pairs that serve an intent, by document id (the ideal's)."""

    def __init__(self, qrels: IntentQrels, rel_threshold: float = 1.0):
        # By query, then document, then intent: a pair's entries sit together, a repeated judgment beside
        # its twin.
        order = np.lexsort((qrels.intent, qrels.document, qrels.query))
        query, document, intent = qrels.query[order], qrels.document[order], qrels.intent[order]
        same_pair = (query[1:] == query[:-1]) & (document[1:] == document[:-1])
        _refuse_repeated_judgments(same_pair & (intent[1:] == intent[:-1]), qrels, order)
        pair_head = np.concatenate(([True], ~same_pair)) if order.size else np.zeros(0, bool)
        heads = np.flatnonzero(pair_head)
        pair_of = np.empty(order.size, dtype=np.int64)
        pair_of[order] = np.cumsum(pair_head) - 1
        self.pairs = QrelsIndex(
            Qrels(
                query[heads],
                document[heads],
                np.arange(heads.size, dtype=float),  # each pair's label is its number
                qrels.line[order][heads],
                qrels.path,
            )
        )
        self.query_ids = self.pairs.query_ids
        codes, columns = _intent_columns(qrels, self.query_ids)
        self.relevance = np.zeros((heads.size, int(columns.max(initial=-1)) + 1), dtype=bool)
        self.relevance[pair_of, columns] = qrels.judgment >= rel_threshold
        serving = np.flatnonzero(self.relevance.any(axis=1))
        pair_query = codes[order][heads][serving]
        layout = RowLayout.of(pair_query, len(self.query_ids))
        self.judged = np.zeros((len(self.query_ids), layout.width, self.relevance.shape[1]), dtype=bool)
        self.judged[pair_query, layout.positions] = self.relevance[serving]


def _intent_columns(qrels: IntentQrels, query_ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each entry's query code (index into the sorted `query_ids`) and its intent's column among its
    query's intents, which go in the order the file first names them (pyndeval's order, and ndeval's when
    the file lists intents in order): the order the gains are added in."""
    codes = np.searchsorted(query_ids, qrels.query)
    intents, first, intent_code = np.unique(qrels.intent, return_index=True, return_inverse=True)
    by_appearance = np.empty(intents.size, dtype=np.int64)
    by_appearance[np.argsort(first)] = np.arange(intents.size)
    keys, key_of = np.unique(codes * max(intents.size, 1) + by_appearance[intent_code], return_inverse=True)
    key_query = keys // max(intents.size, 1)
    column_of_key = np.arange(keys.size) - np.searchsorted(key_query, key_query)
    return codes, column_of_key[key_of]


def _refuse_repeated_judgments(repeated: np.ndarray, qrels: IntentQrels, order: np.ndarray) -> None:
    """A (query, intent, document) judged on two lines is an error naming both."""
    if not repeated.any():
        return
    at = int(np.flatnonzero(repeated)[0])
    first, second = order[at], order[at + 1]
    a, b = sorted((int(qrels.line[first]), int(qrels.line[second])))
    raise TrecFormatError(
        qrels.path,
        b,
        "document %(document)s is judged twice for intent %(intent)s of query %(query)s"
        " (also line %(other)d)",
        document=repr(qrels.document[first].decode()),
        intent=repr(qrels.intent[first].decode()),
        query=repr(qrels.query[first].decode()),
        other=a,
    )


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
    labels = run_labels(qrels, run, judged_only=judged_only)
    return evaluate_labels(qrels, [labels], measures, settings=settings, complete=complete)


@dataclass(frozen=True)
class RankedLabels:
    """A run's labels in rank order (`run_labels`): `matrix[i]` holds those of the i-th query of the qrels
    that `scored` marks, NaN where unjudged and past the end of its list."""

    scored: np.ndarray  # bool, one per query of the qrels
    matrix: np.ndarray  # [scored queries × the longest list]


def run_labels(qrels: QrelsIndex, run: Run, *, judged_only: bool = False) -> RankedLabels:
    """The qrels' labels of `run`'s documents in rank order, for `evaluate_labels`: of a whole run, or of a
    piece of one (`trec.pieces`) scored apart from the others."""
    matrix, scored = _ranked_labels(qrels, run, judged_only=judged_only, complete=False)
    return RankedLabels(scored, matrix)


def run_queries(run: Run) -> np.ndarray:
    """The distinct query ids of `run`, sorted (one per block of a query's lines)."""
    if run.query.size == 0:
        return np.zeros(0, dtype="S1")
    return np.unique(run.query[block_heads(run.query)])


def evaluate_labels(
    qrels: QrelsIndex,
    pieces: Sequence[RankedLabels],
    measures: Iterable[str | Measure],
    *,
    settings: RankingSettings | None = None,
    complete: bool = False,
) -> RunEvaluation:
    """Scores one run from the labels of its pieces, as `evaluate_run` scores it whole, to the bit: each
    query's row laid out as wide as the widest piece's, as the whole run's would be. No query may have
    labels in two pieces (ValueError): a run whose query's lines lie apart is scored whole."""
    measures = [measure if isinstance(measure, Measure) else parse_measure(measure) for measure in measures]
    scored = np.zeros(len(qrels.query_ids), bool)
    for piece in pieces:
        if (scored & piece.scored).any():
            raise ValueError("a query has labels in two pieces: score the run whole")
        scored |= piece.scored
    if len(pieces) == 1 and not complete:
        matrix = pieces[0].matrix
    else:
        if complete:
            scored[:] = True
        width = max(piece.matrix.shape[1] for piece in pieces)
        matrix = np.full((int(scored.sum()), width), np.nan)
        # The row of each scored query among the scored ones.
        position = np.cumsum(scored) - 1
        for piece in pieces:
            matrix[position[piece.scored], : piece.matrix.shape[1]] = piece.matrix
    judged_labels = qrels.judged if scored.all() else qrels.judged[scored]
    per_query = evaluate_ranked(matrix, measures, judged_labels=judged_labels, settings=settings)
    return RunEvaluation([query.decode() for query in qrels.query_ids[scored].tolist()], per_query)


def evaluate_intent_run(
    qrels: IntentQrelsIndex,
    run: Run,
    measures: Iterable[str | Measure],
    *,
    alpha: float = DEFAULT_ALPHA,
    judged_only: bool = False,
    complete: bool = False,
) -> RunEvaluation:
    """Scores one run with intent-aware measures; the module docstring and `diversity` for conventions."""
    parsed = [
        measure if isinstance(measure, Measure) else parse_measure(measure, intents=True)
        for measure in measures
    ]
    depth = max((measure.k or 0 for measure in parsed), default=0)
    pairs, scored = _ranked_labels(qrels.pairs, run, judged_only=judged_only, complete=complete)
    pairs = pairs[:, :depth]
    judged = ~np.isnan(pairs)
    relevance = np.zeros((*pairs.shape, qrels.relevance.shape[1]), dtype=bool)
    relevance[judged] = qrels.relevance[pairs[judged].astype(np.int64)]
    per_query = evaluate_intents(relevance, qrels.judged[scored], parsed, alpha=alpha)
    return RunEvaluation([query.decode() for query in qrels.query_ids[scored].tolist()], per_query)


def _ranked_labels(
    qrels: QrelsIndex, run: Run, *, judged_only: bool, complete: bool
) -> tuple[np.ndarray, np.ndarray]:
    """`[scored queries × depth]` the qrels label of each query's documents in rank order (NaN where
    unjudged and past the end of a list), and which of the qrels' queries are scored."""
    row_of_query = _rows_of(qrels.query_ids, run.query)
    known = row_of_query >= 0
    if not known.all():
        run = Run(run.query[known], run.document[known], run.score[known], run.line[known], run.path)
        row_of_query = row_of_query[known]
    layout = RowLayout.of(row_of_query, len(qrels.query_ids))
    labels = _labels_of(qrels, row_of_query, layout, run)
    ranked = ranked_order(row_of_query, run.score, run.document)
    if ranked is not None:
        row_of_query, labels, layout = row_of_query[ranked], labels[ranked], None
    scored = np.ones(len(qrels.query_ids), bool) if complete else np.zeros(len(qrels.query_ids), bool)
    scored[row_of_query] = True  # before -J: a query whose documents are all unjudged scores 0, and counts
    if judged_only:
        judged = labels >= 0  # NaN (unjudged) and negative labels both compare False, as in trec_eval
        row_of_query, labels, layout = row_of_query[judged], labels[judged], None
    if layout is None:
        layout = RowLayout.of(row_of_query, len(qrels.query_ids))

    matrix = np.full((len(qrels.query_ids), layout.width), np.nan)
    matrix[row_of_query, layout.positions] = labels
    return (matrix if scored.all() else matrix[scored]), scored


def _same_ids(a: np.ndarray, b: np.ndarray) -> bool:
    """Whether two `S` columns hold the same ids, entry by entry."""
    words_a, words_b = as_words(a), as_words(b)
    if words_a is None or words_b is None or words_a.shape != words_b.shape:
        return bool((a == b).all())
    return bool((words_a == words_b).all())


def _query_codes(query: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The sorted distinct query ids, and each entry's index among them (via the blocks of equal ids)."""
    if query.size == 0:
        return np.zeros(0, dtype="S1"), np.zeros(0, dtype=np.int64)
    heads = block_heads(query)
    query_ids, block_codes = np.unique(query[heads], return_inverse=True)
    lengths = np.diff(heads, append=query.size)
    return query_ids, np.repeat(block_codes, lengths)


def _rows_of(query_ids: np.ndarray, query: np.ndarray) -> np.ndarray:
    """Each entry's index in the sorted `query_ids`, -1 where its query is not there (looked up per block)."""
    if query.size == 0:
        return np.zeros(0, dtype=np.int64)
    heads = block_heads(query)
    found = np.searchsorted(query_ids, query[heads]) if len(query_ids) else np.zeros(heads.size, np.int64)
    found = np.minimum(found, max(len(query_ids) - 1, 0))
    present = query_ids[found] == query[heads] if len(query_ids) else np.zeros(heads.size, bool)
    return np.repeat(np.where(present, found, -1).astype(np.int32), np.diff(heads, append=query.size))


def _labels_of(qrels: QrelsIndex, row_of_query: np.ndarray, layout: RowLayout, run: Run) -> np.ndarray:
    """The qrels label of each run entry, NaN where unjudged."""
    for seed in SEEDS:
        try:
            return _join(qrels, row_of_query, layout, run, seed)
        except Collision:
            continue
    raise RuntimeError("hash collisions under every seed; the input is adversarial")


def _join(qrels: QrelsIndex, row_of_query: np.ndarray, layout: RowLayout, run: Run, seed: int) -> np.ndarray:
    qrels_keys, qrels_entry = qrels.sorted_keys(seed)
    run_keys, order = sorted_pairs(row_of_query, layout, run.document, seed)
    check_duplicates(run_keys, order, run.document, run.line, run.path)
    labels = np.full(run.document.size, np.nan)
    run_at, qrels_at = matches(run_keys, qrels_keys)
    # Equal keys mean the same query row (its bits are exact); the document ids must match byte for byte.
    # A slice at a time, the ids compared a few MiB at a time whatever their width.
    step = max(1, _CHECK_BYTES // max(qrels.document.itemsize, run.document.itemsize, 1))
    for begin in range(0, run_at.size, step):
        part = slice(begin, begin + step)
        entry, matched = qrels_entry[qrels_at[part]], order[run_at[part]]
        if not _same_ids(qrels.document[entry], run.document[matched]):
            raise Collision
        labels[matched] = qrels.label[entry]
    return labels
