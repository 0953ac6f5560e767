"""TREC qrels and run files, read into NumPy columns (`trec.tokenizer`) without a Python loop per line.

qrels: `qid iter docid label` (label a number, may be fractional or negative). run: `qid Q0 docid rank score
tag`; the rank column is ignored, as trec_eval does. Comment lines are skipped as trec_eval 10.0 skips them:
in qrels a line whose first byte is `#`, in runs a line whose first non-blank byte is `#`; a `#` anywhere
else is text (`CR#93E-1860` is a document id).
"""

import math
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

import numpy as np

from trec.tokenizer import Comments, Progress, TrecFormatError, read_columns, read_columns_counted


@dataclass(frozen=True)
class Qrels:
    """One entry per judgment, in file order."""

    query: np.ndarray  # S: query id
    document: np.ndarray  # S: document id
    label: np.ndarray  # float64
    line: np.ndarray  # int32: 1-based line of each entry, for error messages
    path: str


@dataclass(frozen=True)
class Run:
    """One entry per retrieved document, in file order."""

    query: np.ndarray  # S: query id
    document: np.ndarray  # S: document id
    score: np.ndarray  # float64
    line: np.ndarray
    path: str
    lines: int = 0  # the lines read (blank and comment lines too): a later piece's lines follow them


def read_qrels(path: str | Path, progress: Progress | None = None, max_bytes: int | None = None) -> Qrels:
    """Reads `qid iter docid label`; `progress` is told the bytes read as they are; more than `max_bytes`
    (once gunzipped) is refused with `TrecTooLargeError`."""
    query, document, label, line = read_columns(
        str(path),
        n_fields=4,
        keep=(0, 2, 3),
        names=("query id", "document id", "label"),
        progress=progress,
        comments=Comments.FIRST_BYTE,
        max_bytes=max_bytes,
    )
    return Qrels(query, document, label, line, str(path))


def read_run(
    path: str | Path,
    progress: Progress | None = None,
    max_bytes: int | None = None,
    span: tuple[int, int] | None = None,
) -> Run:
    """Reads `qid Q0 docid rank score tag`; `progress` is told the bytes read as they are; more than
    `max_bytes` (once gunzipped) is refused with `TrecTooLargeError`. With `span` (start, stop), only those
    bytes of a plain file, whole lines (`trec.pieces`), their lines numbered from 1 as if a file of their own.
    """
    # trec_eval ignores text after a run line's sixth field (its own test/results.trunc has some).
    (query, document, score, line), lines = read_columns_counted(
        str(path),
        n_fields=6,
        keep=(0, 2, 4),
        names=("query id", "document id", "score"),
        trailing=True,
        progress=progress,
        comments=Comments.FIRST_TEXT,
        max_bytes=max_bytes,
        span=span,
    )
    return Run(query, document, score, line, str(path), lines)


@dataclass(frozen=True)
class RankedRun:
    """A run as ranked lists, in columns: entry i puts `documents[document[i]]` at `rank[i]` in the list
    of `queries[query[i]]`. Entries are grouped by query, each list in rank order; ids distinct, sorted."""

    queries: list[str]
    documents: list[str]
    query: np.ndarray  # int32 index into queries
    document: np.ndarray  # int32 index into documents
    rank: np.ndarray  # int32, from 1

    @classmethod
    def from_lists(cls, rankings: dict[str, list[str]]) -> "RankedRun":
        queries = sorted(rankings)
        documents = sorted({doc for docs in rankings.values() for doc in docs})
        query_at = {query: index for index, query in enumerate(queries)}
        document_at = {doc: index for index, doc in enumerate(documents)}
        pairs = [(query_at[query], document_at[doc]) for query, docs in rankings.items() for doc in docs]
        ranks = [rank for docs in rankings.values() for rank in range(1, len(docs) + 1)]
        query, document = np.array(pairs, dtype=np.int32).reshape(-1, 2).T
        return cls(queries, documents, query, document, np.array(ranks, dtype=np.int32))

    def lists(self) -> dict[str, list[str]]:
        """query id → document ids in rank order."""
        rankings: dict[str, list[str]] = {}
        for query, document in zip(self.query.tolist(), self.document.tolist(), strict=True):
            rankings.setdefault(self.queries[query], []).append(self.documents[document])
        return rankings


def read_run_rankings(path: str | Path) -> dict[str, list[str]]:
    """A run as rankings: query id → document ids, by score descending, ties by document id descending."""
    return read_run_ranked(path).lists()


def read_run_ranked(path: str | Path, max_bytes: int | None = None) -> RankedRun:
    """A run as ranked lists (by score descending, ties by document id descending), kept in columns: a
    million lines stay a few arrays, not a million strings. Ids are decoded as UTF-8 (UnicodeDecodeError).
    More than `max_bytes` (once gunzipped) is refused with `TrecTooLargeError`."""
    run = read_run(path, max_bytes=max_bytes)
    query_ids, document_ids, score, line = run.query, run.document, run.score, run.line
    del run
    # Each column of ids let go once coded as indexes: an import reads two runs at once, their peaks add up.
    queries, rows = _coded(query_ids)
    del query_ids
    documents, document = _coded(document_ids)
    del document_ids
    # Sorted by query and document, a document listed twice for a query sits beside its twin. The stable
    # sort merges the file's blocks of one query each (a million lines: 0.025 s against the default's 0.053).
    pairs = rows.astype(np.int64) * documents.size + document
    pairs.sort(kind="stable")
    listed_twice = bool((pairs[1:] == pairs[:-1]).any())
    del pairs
    if listed_twice:
        _refuse_listed_twice(rows, document, queries, documents, line, str(path))
    order = ranked_order(rows, score, document)
    if order is not None:
        rows, document = rows[order], document[order]
    del score, line, order
    # Each query's entries are one block: rank = position in the block.
    starts = np.flatnonzero(np.diff(rows, prepend=-1))
    rank = np.arange(1, rows.size + 1, dtype=np.int32)
    rank -= np.repeat(starts, np.diff(np.append(starts, rows.size))).astype(np.int32)
    return RankedRun(
        [query.decode() for query in queries.tolist()],
        [doc.decode() for doc in documents.tolist()],
        rows,
        document,
        rank,
    )


def _coded(ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct values of `ids`, sorted, and each entry's index among them as int32: `np.unique` with
    `return_inverse`, in about two thirds of its temporary memory."""
    order = _bytes_order(ids)
    ordered = ids[order]
    first = np.empty(ids.size, dtype=bool)  # the first of each run of equal values
    first[:1] = True
    np.not_equal(ordered[1:], ordered[:-1], out=first[1:])
    distinct = ordered[first]
    del ordered
    codes = np.empty(ids.size, dtype=np.int32)
    codes[order] = np.cumsum(first, dtype=np.int32) - 1
    return distinct, codes


def id_words(ids: np.ndarray, dtype: str) -> np.ndarray:
    """An `S` column as `[entries × words]` of 8-byte integers of `dtype` (`"<u8"`, `">u8"`): a view of its
    bytes when they are whole words, contiguous (as the reader makes them), else a copy padded with NUL, as
    the values are."""
    n_words = -(-max(ids.dtype.itemsize, 1) // 8)
    return np.ascontiguousarray(ids, dtype=f"S{8 * n_words}").view(dtype).reshape(ids.size, n_words)


def _bytes_order(ids: np.ndarray) -> np.ndarray:
    """`np.argsort(ids)` of a bytes (`S`) column, by its values' 8-byte words as big-endian integers (padded
    with NULs, as the values are): a stable sort per word, the last word first. Comparing whole words orders
    the values as their bytes do, in less than half the time of sorting the strings."""
    # Each word is made a native integer only while it is sorted on.
    words = id_words(ids, ">u8")
    order = np.argsort(words[:, -1].astype(np.uint64), kind="stable")
    for word in range(words.shape[1] - 2, -1, -1):
        order = order[np.argsort(words[order, word].astype(np.uint64), kind="stable")]
    return order


def _refuse_listed_twice(rows, document, queries, documents, line, path: str) -> None:
    """Name the first (by query, then document) document a run lists twice for a query, with both lines."""
    pairs = rows.astype(np.int64) * documents.size + document
    by_pair = np.argsort(pairs, kind="stable")  # twins in file order
    sorted_pairs = pairs[by_pair]
    twin = by_pair[np.flatnonzero(sorted_pairs[1:] == sorted_pairs[:-1])[:1] + [0, 1]]
    _refuse_duplicates(queries[rows[twin]], documents[document[twin]], line[twin], path)


def ranked_order(rows: np.ndarray, score: np.ndarray, document: np.ndarray) -> np.ndarray | None:
    """The order that groups entries by row, each row by score descending, ties by document id descending
    (trec_eval's); None when they are in that order already, as runs nearly always are (one pass checks).
    Entries are sorted by their numbers; only tied ones are then ordered by their ids, among themselves
    (a sort of every id, 40 bytes each in MS MARCO's, took most of an evaluation's time)."""
    if rows.size < 2:
        return None
    order = None if _grouped_by_score(rows, score) else np.lexsort((-score, rows))
    in_order_rows = rows if order is None else rows[order]
    in_order_score = score if order is None else score[order]
    tied = (in_order_rows[1:] == in_order_rows[:-1]) & (in_order_score[1:] == in_order_score[:-1])
    del in_order_rows, in_order_score
    if not tied.any():
        return order
    # The positions in a run of ties, each run numbered; its entries then in document order, descending.
    starts = np.flatnonzero(tied)
    members = np.union1d(starts, starts + 1)
    continued = np.zeros(members.size, dtype=bool)
    continued[members > 0] = tied[members[members > 0] - 1]
    runs = np.cumsum(~continued)
    entries = members if order is None else order[members]
    _, rank = np.unique(document[entries], return_inverse=True)
    resorted = entries[np.lexsort((-rank, runs))]
    if order is None:
        if (resorted == entries).all():
            return None
        order = np.arange(rows.size, dtype=np.intp)
    order[members] = resorted
    return order


def _grouped_by_score(rows: np.ndarray, score: np.ndarray) -> bool:
    """Each row's entries one contiguous block, by score descending (ties in any order)."""
    same_row = rows[1:] == rows[:-1]
    if np.count_nonzero(~same_row) + 1 != np.count_nonzero(np.bincount(rows)):
        return False
    return bool((~same_row | (score[1:] <= score[:-1])).all())


QRELS_INTEGER = ("round", "floor")


def write_qrels(out: TextIO, query_ids, document_ids, labels, integer: str | None = None) -> None:
    """Writes `qid 0 docid label`; whole-number labels without a decimal point, others as needed exactly.

    trec_eval reads a label as an integer (1.667 becomes 1): `integer="round"` writes the nearest integer,
    halves rounded up (1.5 → 2, −0.5 → 0), `"floor"` the one below, as trec_eval itself would."""
    if integer not in (None, *QRELS_INTEGER):
        raise ValueError(f"integer must be one of {', '.join(QRELS_INTEGER)}, got {integer!r}")
    for query, document, label in zip(query_ids, document_ids, labels, strict=True):
        label = float(label)
        if integer is not None:
            label = float(math.floor(label + 0.5) if integer == "round" else math.floor(label))
        text = str(int(label)) if label.is_integer() else repr(label)
        out.write(f"{query} 0 {document} {text}\n")


def _refuse_duplicates(query, document, line, path: str) -> None:
    """Adjacent equal (query, document) pairs of sorted columns are a duplicate entry."""
    same = (query[1:] == query[:-1]) & (document[1:] == document[:-1])
    if same.any():
        first = int(np.flatnonzero(same)[0])
        where = sorted((int(line[first]), int(line[first + 1])))
        raise TrecFormatError(
            path,
            where[1],
            "document %(document)s appears twice for query %(query)s (also on line %(other)d)",
            document=repr(document[first].decode()),
            query=repr(query[first].decode()),
            other=where[0],
        )
