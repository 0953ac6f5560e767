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
from metrics.compute.ranking import RankingSettings, evaluate_ranked, weighted_mean
from trec.files import Qrels, Run, id_words, ranked_order
from trec.intents import IntentQrels
from trec.measures import DEFAULT_ALPHA, Measure, parse_measure
from trec.tokenizer import TrecFormatError

_DOCUMENT_BITS = 40
MAX_QUERIES = 1 << (64 - _DOCUMENT_BITS)
_CHECK_BYTES = 8 << 20
_BLOCK = 1 << 16
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
            raise TrecFormatError(self.path, None, "more than %(max)d queries", max=MAX_QUERIES)
        self._layout: RowLayout | None = RowLayout.of(self.codes, len(self.query_ids))
        self.judged = np.full((len(self.query_ids), self._layout.width), np.nan)
        self.judged[self.codes, self._layout.positions] = qrels.label
        self._sorted: dict[int, tuple[np.ndarray, np.ndarray]] = {}
        # Sorting the keys once up front refuses duplicate judgments before any run is read.
        for seed in _SEEDS:
            try:
                self.sorted_keys(seed)
                break
            except _Collision:
                continue
        # Only another seed (after a hash collision) needs it again: recomputed then, not kept.
        self._layout = None

    def sorted_keys(self, seed: int) -> tuple[np.ndarray, np.ndarray]:
        """The qrels' pair keys sorted, and the entry of each; duplicates refused."""
        if seed not in self._sorted:
            layout = self._layout or RowLayout.of(self.codes, len(self.query_ids))
            keys, order = _sorted_pairs(self.codes, layout, self.document, seed)
            _check_duplicates(keys, order, self.document, self.line, self.path)
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
    evaluation = evaluate_labels(qrels, [labels], measures, settings=settings, complete=complete)
    assert evaluation is not None  # one piece: no query in two
    return evaluation


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
    return np.unique(run.query[_block_heads(run.query)])


def evaluate_labels(
    qrels: QrelsIndex,
    pieces: Sequence[RankedLabels],
    measures: Iterable[str | Measure],
    *,
    settings: RankingSettings | None = None,
    complete: bool = False,
) -> RunEvaluation | None:
    """Scores one run from the labels of its pieces, as `evaluate_run` scores it whole, to the bit: each
    query's row laid out as wide as the widest piece's, as the whole run's would be. None when a query has
    labels in two pieces (its lines were apart in the file): then the run is scored whole."""
    measures = [measure if isinstance(measure, Measure) else parse_measure(measure) for measure in measures]
    scored = np.zeros(len(qrels.query_ids), bool)
    for piece in pieces:
        if (scored & piece.scored).any():
            return None
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


def _block_heads(values: np.ndarray) -> np.ndarray:
    """Where each block of equal neighbouring values starts (files list a query's lines together)."""
    words = _as_words(values)
    if words is None:
        differ = values[1:] != values[:-1]
    else:
        differ = words[1:, 0] != words[:-1, 0]
        for column in range(1, words.shape[1]):
            differ |= words[1:, column] != words[:-1, column]
    return np.flatnonzero(np.concatenate(([True], differ)))


def _as_words(ids: np.ndarray) -> np.ndarray | None:
    """An `S` column of whole 8-byte words (as the reader makes them) viewed as `[entries × words]` uint64,
    else None. NumPy compares `S` items as strings, ten times slower than it compares integers; ids hold no
    NUL, so equal words are equal ids."""
    if ids.dtype.kind != "S" or ids.dtype.itemsize % 8 or not ids.flags.c_contiguous:
        return None
    return ids.view("<u8").reshape(ids.size, ids.dtype.itemsize // 8)


def _same_ids(a: np.ndarray, b: np.ndarray) -> bool:
    """Whether two `S` columns hold the same ids, entry by entry."""
    words_a, words_b = _as_words(a), _as_words(b)
    if words_a is None or words_b is None or words_a.shape != words_b.shape:
        return bool((a == b).all())
    return bool((words_a == words_b).all())


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


@dataclass(frozen=True)
class RowLayout:
    """Each entry's 0-based position among the entries of its row (keeping their order), the widest row,
    and the way back from (row, position) to the entry: `by_row[base[row] + position]`, or without
    `by_row` (each row one contiguous block, the usual file layout) `base[row] + position`."""

    positions: np.ndarray
    width: int
    base: np.ndarray
    by_row: np.ndarray | None

    @classmethod
    def of(cls, rows: np.ndarray, n_rows: int) -> "RowLayout":
        index = _index_type(rows.size)
        if rows.size == 0:
            return cls(rows.astype(index), 0, np.zeros(n_rows, index), None)
        sizes = np.bincount(rows, minlength=n_rows)
        heads = _block_heads(rows)
        if heads.size == np.count_nonzero(sizes):
            # Each row is one contiguous block: no sort needed.
            base: np.ndarray = np.zeros(n_rows, index)
            base[rows[heads]] = heads
            positions: np.ndarray = np.arange(rows.size, dtype=index)
            positions -= np.repeat(heads.astype(index), np.diff(heads, append=rows.size))
            return cls(positions, int(sizes.max()), base, None)
        by_row: np.ndarray = np.argsort(rows, kind="stable").astype(index)
        base = (np.cumsum(sizes) - sizes).astype(index)
        positions = np.empty(rows.size, dtype=index)
        positions[by_row] = np.arange(rows.size, dtype=index) - base[rows[by_row]]
        return cls(positions, int(sizes.max()), base, by_row)

    def entries(self, rows: np.ndarray, positions: np.ndarray) -> np.ndarray:
        index = self.base[rows]
        index += positions
        return index if self.by_row is None else self.by_row[index]


def _index_type(size: int) -> type:
    """int32 indices while they fit: half the memory of int64."""
    return np.int32 if size < 1 << 31 else np.int64


def _pair_keys(
    rows: np.ndarray,
    document: np.ndarray,
    seed: int,
    positions: np.ndarray | None = None,
    position_bits: int = 0,
) -> np.ndarray:
    """64-bit keys of (query row, document): the row in the top bits, so sorted keys keep each query's
    entries together (the lookups that follow stay in cache), then 40 bits of the document's hash (its
    bytes in 8-byte words, each folded in and mixed), then, when given, the entry's position in its row.
    Computed a block at a time so that the temporaries stay in cache. The hash does not depend on the
    column's width: a word past an id's end (all NUL, as ids hold no NUL byte) is not folded in, so the run
    and the qrels, whose longest ids differ, hash an id alike."""
    # The reader's columns are whole words (`S48` for MS MARCO's ids), read in place; any other width is
    # padded once (a copy a block at a time, 65,536 rows of a few words each, took an eighth of the hashing).
    words = id_words(document, "<u8")
    n_words = words.shape[1]
    keys = np.empty(document.size, dtype=np.uint64)
    scratch = np.empty(_BLOCK, dtype=np.uint64)
    for begin in range(0, document.size, _BLOCK):
        part = slice(begin, begin + _BLOCK)
        count = min(_BLOCK, document.size - begin)
        hashed, spare = keys[part], scratch[:count]
        hashed.fill(seed)
        hashed ^= words[part, 0]
        _mix(hashed, spare)
        for column in range(1, n_words):
            word = words[part, column]
            longer = word != 0
            if longer.all():
                hashed ^= word
                _mix(hashed, spare)
            elif longer.any():
                folded = hashed[longer]
                folded ^= word[longer]
                _mix(folded, spare[: folded.size])
                hashed[longer] = folded
        hashed >>= np.uint64(64 - _DOCUMENT_BITS)
        np.copyto(spare, rows[part], casting="unsafe")
        spare <<= np.uint64(_DOCUMENT_BITS)
        hashed |= spare
        if positions is not None:
            hashed <<= np.uint64(position_bits)
            np.copyto(spare, positions[part], casting="unsafe")
            hashed |= spare
    return keys


def _mix(values: np.ndarray, scratch: np.ndarray) -> None:
    """splitmix64's finalizer, in place: every input bit moves every output bit."""
    np.right_shift(values, np.uint64(30), out=scratch)
    values ^= scratch
    values *= np.uint64(0xBF58476D1CE4E5B9)
    np.right_shift(values, np.uint64(27), out=scratch)
    values ^= scratch
    values *= np.uint64(0x94D049BB133111EB)
    np.right_shift(values, np.uint64(31), out=scratch)
    values ^= scratch


def _sorted_pairs(rows: np.ndarray, layout: RowLayout, document: np.ndarray, seed: int):
    """The pair keys sorted, and the entry of each. When the row, hash and position within the row fit in
    64 bits together, the keys carry their entry's position and a plain sort (several times faster than an
    argsort) suffices; otherwise an argsort.

    Both sorts are NumPy's stable one, a merge sort (Timsort): a file lists each query's entries together,
    so the keys come in blocks of one row each, which it merges instead of sorting anew. At 10 million keys
    in blocks of 100 the sort took 0.23 s (the blocks in row order) or 0.39 s (shuffled) against the
    default's 0.74, and 0.85 against 0.79 s on keys in no order; the argsort 0.5–0.9 against 1.1–1.3 s in
    blocks, and less in no order too."""
    position_bits = max(layout.width - 1, 0).bit_length()
    row_bits = int(rows.max()).bit_length() if rows.size else 0
    if row_bits + _DOCUMENT_BITS + position_bits > 64:
        keys = _pair_keys(rows, document, seed)
        order = np.argsort(keys, kind="stable")
        return keys[order], order
    keys = _pair_keys(rows, document, seed, layout.positions, position_bits)
    keys.sort(kind="stable")
    order = np.empty(keys.size, dtype=_index_type(keys.size))
    position_mask, row_shift = np.uint64((1 << position_bits) - 1), np.uint64(_DOCUMENT_BITS + position_bits)
    # Decoded a block at a time: small temporaries.
    for begin in range(0, keys.size, _BLOCK):
        part = keys[begin : begin + _BLOCK]
        order[begin : begin + _BLOCK] = layout.entries(
            (part >> row_shift).astype(np.intp), (part & position_mask).astype(np.intp)
        )
    keys >>= np.uint64(position_bits)
    return keys, order


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
        path,
        b,
        "document %(document)s is listed twice for its query (also line %(other)d)",
        document=repr(document[first[0]].decode()),
        other=a,
    )


def _labels_of(qrels: QrelsIndex, row_of_query: np.ndarray, layout: RowLayout, run: Run) -> np.ndarray:
    """The qrels label of each run entry, NaN where unjudged."""
    for seed in _SEEDS:
        try:
            return _join(qrels, row_of_query, layout, run, seed)
        except _Collision:
            continue
    raise RuntimeError("hash collisions under every seed; the input is adversarial")


def _join(qrels: QrelsIndex, row_of_query: np.ndarray, layout: RowLayout, run: Run, seed: int) -> np.ndarray:
    qrels_keys, qrels_entry = qrels.sorted_keys(seed)
    run_keys, order = _sorted_pairs(row_of_query, layout, run.document, seed)
    _check_duplicates(run_keys, order, run.document, run.line, run.path)
    labels = np.full(run.document.size, np.nan)
    run_at, qrels_at = _matches(run_keys, qrels_keys)
    # Equal keys mean the same query row (its bits are exact); the document ids must match byte for byte.
    # A slice at a time, the ids compared a few MiB at a time whatever their width.
    step = max(1, _CHECK_BYTES // max(qrels.document.itemsize, run.document.itemsize, 1))
    for begin in range(0, run_at.size, step):
        part = slice(begin, begin + step)
        entry, matched = qrels_entry[qrels_at[part]], order[run_at[part]]
        if not _same_ids(qrels.document[entry], run.document[matched]):
            raise _Collision
        labels[matched] = qrels.label[entry]
    return labels


def _matches(left: np.ndarray, right: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The positions i in `left` and j in `right` where left[i] == right[j], for two sorted arrays of
    distinct keys. The shorter is looked up in the longer: a binary search per key of the shorter (a run
    four times as long as its qrels took four times the searches the other way round)."""
    if left.size > right.size:
        right_at, left_at = _matches(right, left)
        return left_at, right_at
    if left.size == 0:
        return np.zeros(0, np.intp), np.zeros(0, np.intp)
    found = np.searchsorted(right, left)
    np.minimum(found, right.size - 1, out=found)
    hit = right[found] == left
    return np.flatnonzero(hit), found[hit]
