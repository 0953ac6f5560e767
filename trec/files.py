"""TREC qrels and run files, read into NumPy columns without a Python loop per line.

qrels: `qid iter docid label` (label a number, may be fractional or negative). run: `qid Q0 docid rank score
tag`; the rank column is ignored, as trec_eval does. Fields are separated by any run of spaces or tabs;
blank lines are skipped; gzipped files are read as such. Errors name the file and line; a NUL byte is one.
Comment lines are skipped as trec_eval 10.0 skips them: in qrels a line whose first byte is `#`, in runs a
line whose first non-blank byte is `#`; a `#` anywhere else is text (`CR#93E-1860` is a document id).

The file is tokenized in windows of whole lines with vectorized byte comparisons; the identifier columns come
out as NumPy bytes arrays (`S` dtype), gathered as 8-byte words; the number columns as float64, plain
decimals parsed in bulk by `decimals` (the same doubles as `float()`).
"""

import gzip
import math
import os
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import TextIO

import numpy as np
import numpy.typing as npt

from trec.decimals import KEEP_BYTES, PADDING, parse_decimals

WINDOW_BYTES = 8 << 20
# The read buffer grows to hold a line longer than a window, up to this: a gzipped line of nothing but blanks
# would otherwise take memory as large as the file inflates to before any field is found.
MAX_LINE_BYTES = 64 << 20
GZIP_STEP_BYTES = 1 << 20
Progress = Callable[[int], object]  # told a number of bytes read (a progress bar's `update`)
MAX_TOKEN_BYTES = 255
NEWLINE = 10
COMMENT = ord("#")
SPACE = ord(" ")
# Space and every control byte below it (tab, newline, carriage return...) separate fields.
LAST_BLANK = 32
assert MAX_TOKEN_BYTES + 1 >= PADDING


class TrecFormatError(ValueError):
    """A TREC file that cannot be read: `path:line: message`. The message is the English `template % values`;
    both are kept, so that an application can say it in its reader's language: `make messages` gathers the
    templates (`%(name)s` placeholders) of every `TrecFormatError(path, line, "...")` into the catalogue."""

    def __init__(self, path: str, line: int | None, template: str, **values: object):
        self.path, self.line, self.template, self.values = path, line, template, values
        self.message = template % values if values else template
        super().__init__(f"{path}:{line}: {self.message}" if line else f"{path}: {self.message}")


class TrecTooLargeError(TrecFormatError):
    """A file larger than the reader was allowed to read (inflated, when gzipped)."""


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
    (query, document, score, line), lines = _read_columns(
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


class Comments(Enum):
    """Which lines are comments: those whose first byte is `#` (trec_eval 10.0's qrels), or whose first
    non-blank byte is (its runs; ndeval's qrels)."""

    FIRST_BYTE = "first byte"
    FIRST_TEXT = "first non-blank byte"


def _blank_comments(window: np.ndarray, *, indented: bool) -> None:
    """Turns every comment line of a window of whole lines into blanks, in place: the tokenizer then skips
    it as a blank line, and the line numbers of the others stay right."""
    hashes = np.flatnonzero(window == COMMENT)
    if not hashes.size:
        return
    # Most files have no `#` at all, and ids holding one (`msmarco_v2.1_doc_00_880019750#4_1633802806`) have
    # text before it: only a `#` after a newline, or after a blank, may start a comment.
    before = window[hashes - 1]
    before[hashes == 0] = NEWLINE
    first = before == NEWLINE
    if indented:
        after_blank = np.flatnonzero(~first & (before <= LAST_BLANK))
        if after_blank.size:
            at = hashes[after_blank]
            line_starts = np.flatnonzero(window[: at[-1]] == NEWLINE) + 1
            starts = np.concatenate(([0], line_starts))[np.searchsorted(line_starts, at, side="right")]
            text = window > LAST_BLANK
            first[after_blank] = ~np.logical_or.reduceat(text, np.column_stack((starts, at)).ravel())[::2]
    comments = hashes[first]
    if not comments.size:
        return
    newlines = np.flatnonzero(window[comments[0] :] == NEWLINE) + comments[0]
    ends = np.append(newlines, window.size)[np.searchsorted(newlines, comments)]
    # Blank each comment from its `#` to its newline: +1 where one starts and -1 where it ends, summed.
    marks = np.zeros(window.size + 1, dtype=np.int8)
    marks[comments] = 1
    marks[ends] -= 1
    window[np.cumsum(marks[:-1], dtype=np.int8).astype(bool)] = SPACE


def _windows(
    path: str,
    progress: Progress | None = None,
    max_bytes: int | None = None,
    span: tuple[int, int] | None = None,
) -> Iterator[np.ndarray]:
    """The file (gunzipped) in windows of whole lines, each followed by NUL bytes so that any token's bytes
    can be viewed past its end; read a window at a time into one reused buffer, never the whole file.
    Each window is only valid until the next is asked for. `progress` is told the bytes of the file (as
    stored: gzipped or not) read since it was last told. Past `max_bytes` read (gunzipped) the file is
    refused, as is a line longer than MAX_LINE_BYTES (`_LineTooLong`): memory stays bounded whatever the
    file inflates to. With `span` (start, stop) only those bytes of a plain file are read."""
    padding = MAX_TOKEN_BYTES + 1
    capacity = WINDOW_BYTES
    buffer = np.empty(capacity + padding, dtype=np.uint8)
    filled = 0
    gzipped = False
    inflated = 0  # bytes read so far, after gunzipping
    try:
        with open(path, "rb") as raw:
            gzipped = span is None and raw.read(2) == b"\x1f\x8b"
            start, stop = span or (0, None)
            raw.seek(start)
            file = gzip.GzipFile(fileobj=raw) if gzipped else raw
            # gzip inflates each call into a new bytes object before copying it: small calls, small copies.
            step = GZIP_STEP_BYTES if gzipped else None
            told = start
            while True:
                # A span's reads end at its stop: the next piece's first line is not this one's.
                room = capacity if stop is None else min(capacity, filled + stop - raw.tell())
                end = _fill(file, buffer, filled, room, step)
                inflated += end - filled
                if max_bytes is not None and inflated > max_bytes:
                    if gzipped:
                        raise TrecTooLargeError(
                            path, None, "inflates to more than %(max)d bytes", max=max_bytes
                        )
                    raise TrecTooLargeError(path, None, "is more than %(max)d bytes", max=max_bytes)
                if progress is not None:
                    position = raw.tell()
                    progress(position - told)
                    told = position
                at_end = end < capacity or (stop is not None and raw.tell() >= stop)
                cut = end if at_end else _after_last_newline(buffer, end)
                if cut == 0 and not at_end:
                    # A line longer than the buffer: grow it and read on.
                    if capacity >= MAX_LINE_BYTES:
                        raise _LineTooLong
                    capacity *= 2
                    buffer = np.concatenate((buffer[:end], np.empty(capacity + padding - end, np.uint8)))
                    filled = end
                    continue
                carry = buffer[cut:end].copy()
                buffer[cut : cut + padding] = 0
                if cut:
                    yield buffer[: cut + padding]
                if at_end:
                    return
                filled = carry.size
                buffer[:filled] = carry
    except (gzip.BadGzipFile, EOFError, zlib.error) as exc:
        raise TrecFormatError(path, None, "not a valid gzip file: %(problem)s", problem=str(exc)) from None
    except OSError as exc:
        problem = exc.strerror or str(exc)
        raise TrecFormatError(path, None, "cannot read: %(problem)s", problem=problem) from None


class _LineTooLong(Exception):
    """Raised by `_windows`; the caller, which counts lines, names the line."""


def _fill(file, buffer: np.ndarray, start: int, stop: int, step: int | None = None) -> int:
    """Reads into buffer[start:stop] (at most `step` bytes a call) until it is full or the file ends;
    returns where the data ends."""
    view = memoryview(buffer)
    while start < stop:
        count = file.readinto(view[start : min(start + step, stop) if step else stop])
        if not count:
            break
        start += count
    return start


def _after_last_newline(buffer: np.ndarray, end: int) -> int:
    """The index after the last newline in buffer[:end], 0 when there is none (searched back in steps)."""
    step = 1 << 16
    for stop in range(end, 0, -step):
        found = np.flatnonzero(buffer[max(stop - step, 0) : stop] == NEWLINE)
        if found.size:
            return max(stop - step, 0) + int(found[-1]) + 1
    return 0


def read_columns(
    path: str,
    *,
    n_fields: int,
    keep: tuple[int, ...],
    names: tuple[str, ...],
    trailing: bool = False,
    progress: Progress | None = None,
    comments: Comments | None = None,
    max_bytes: int | None = None,
) -> list[np.ndarray]:
    """The kept fields of every non-blank line, the last one parsed as numbers and the others as `S`
    arrays, then the 1-based line number of each. With `trailing`, a line may have more than `n_fields`
    fields; the rest is ignored. `comments` says which lines are comments (skipped; none without it).
    More than `max_bytes` read (gunzipped) is refused with `TrecTooLargeError`."""
    columns, _ = _read_columns(
        path,
        n_fields=n_fields,
        keep=keep,
        names=names,
        trailing=trailing,
        progress=progress,
        comments=comments,
        max_bytes=max_bytes,
    )
    return columns


def _read_columns(
    path: str,
    *,
    n_fields: int,
    keep: tuple[int, ...],
    names: tuple[str, ...],
    trailing: bool,
    progress: Progress | None,
    comments: Comments | None,
    max_bytes: int | None,
    span: tuple[int, int] | None = None,
) -> tuple[list[np.ndarray], int]:
    """`read_columns` of the file, or of the `span` of it, and the number of lines read."""
    # A plain file of B bytes holds at most B / (2 × fields) entries (a byte and a separator a field).
    stored = span[1] - span[0] if span else os.path.getsize(path) if _plain(path) else None
    bound = None if stored is None else stored // (2 * n_fields) + 1
    columns = [_Column(bound) for _ in range(len(keep) + 1)]
    first_line = 1
    try:
        for window in _windows(path, progress, max_bytes, span):
            size = window.size - (MAX_TOKEN_BYTES + 1)
            first_line += _tokenize(
                window, size, n_fields, keep, names, path, first_line, columns, trailing, comments
            )
    except _LineTooLong:
        # The windows so far held `first_line - 1` whole lines: the long one is the next.
        raise TrecFormatError(
            path, first_line, "the line is longer than %(max)d bytes", max=MAX_LINE_BYTES
        ) from None
    if not columns[0].size:
        empty = [np.zeros(0, dtype="S1")] * (len(keep) - 1) + [np.zeros(0), np.zeros(0, dtype=np.int32)]
        return empty, first_line - 1
    return [column.values() for column in columns], first_line - 1


def _plain(path: str) -> bool:
    try:
        with open(path, "rb") as file:
            return file.read(2) != b"\x1f\x8b" and os.path.isfile(path)
    except OSError:
        return False  # `_windows` names the problem


class _Column:
    """A column written a window at a time into one array, each window's values written in place (`slot`)
    rather than made apart and copied in. Joining per-window pieces at the end would write every value
    twice, each time into fresh memory the kernel must zero (a third of the reading's CPU). With a `bound`
    on the entries (a plain file's size tells one), the array is made that large at once: its pages cost
    nothing until written, and what is returned is a view of the part written. Without one it grows by
    doubling; an `S` column widens when a window holds a longer id."""

    def __init__(self, bound: int | None):
        self.bound, self.size = bound, 0
        self.array: np.ndarray | None = None

    def slot(self, count: int, dtype: npt.DTypeLike) -> np.ndarray:
        """The column's next `count` entries, to be written now; `dtype` (a wider `S`) widens it."""
        needed = self.size + count
        if self.array is None:
            self.array = np.empty(self.bound or max(count * 4, 1024), dtype=dtype)
        elif needed > self.array.size or np.dtype(dtype).itemsize > self.array.dtype.itemsize:
            dtype = np.promote_types(self.array.dtype, dtype)
            grown = np.empty(
                max(needed, self.array.size * (2 if needed > self.array.size else 1)), dtype=dtype
            )
            grown[: self.size] = self.array[: self.size]
            self.array = grown
        written = self.array[self.size : needed]
        self.size = needed
        return written

    def values(self) -> np.ndarray:
        assert self.array is not None
        return self.array[: self.size]


def _tokenize(
    tail: np.ndarray,
    size: int,
    n_fields: int,
    keep: tuple[int, ...],
    names: tuple[str, ...],
    path: str,
    first_line: int,
    columns: list[_Column],
    trailing: bool = False,
    comments: Comments | None = None,
) -> int:
    """Splits the first `size` bytes of `tail` (whole lines) and writes the kept fields, then their line
    numbers, to `columns`; returns the number of lines. The bytes of `tail` past `size` are only viewed,
    never parsed; comment lines are blanked in place."""
    window = tail[:size]
    # NumPy 2's nonzero is vectorized: 2.5× faster here than indexing an arange by the mask.
    blanks = np.flatnonzero(window <= LAST_BLANK)
    # A NUL and a newline are blanks: looked for among the blanks, not in every byte.
    blank_bytes = window[blanks]
    if blank_bytes.size and blank_bytes.min() == 0:
        _refuse_nul(window, path, first_line)
    simple = _split_single_separated(window, blanks, blank_bytes, n_fields)
    # In the usual layout a comment's `#` starts a line's first token: one look per line, not per byte.
    if comments is not None and (
        (window == COMMENT).any() if simple is None else (window[simple[0][::n_fields]] == COMMENT).any()
    ):
        _blank_comments(window, indented=comments is Comments.FIRST_TEXT)
        blanks = np.flatnonzero(window <= LAST_BLANK)
        simple = _split_single_separated(window, blanks, window[blanks], n_fields)
    if simple is not None:
        starts, ends, n_lines = simple
        lines = np.arange(first_line, first_line + n_lines, dtype=np.int32)
    else:
        starts, ends, line_of_entry, n_lines = _split_any(window, n_fields, path, first_line, trailing)
        lines = (first_line + line_of_entry).astype(np.int32)
    for index, (field, name) in enumerate(zip(keep, names, strict=True)):
        # As intp once: NumPy converts any other index type on every gather.
        field_starts = starts[field::n_fields].astype(np.intp)
        lengths = ends[field::n_fields] - field_starts
        too_long = np.flatnonzero(lengths > MAX_TOKEN_BYTES)
        if too_long.size:
            raise TrecFormatError(
                path,
                int(lines[too_long[0]]),
                "the %(name)s is longer than %(max)d bytes",
                name=name,
                max=MAX_TOKEN_BYTES,
            )
        if index == len(keep) - 1:
            values = columns[index].slot(lengths.size, np.float64)
            _numbers(tail, field_starts, lengths, lines, path, name, values)
        else:
            width = _words_wide(lengths)
            _token_bytes(tail, field_starts, lengths, columns[index].slot(lengths.size, f"S{8 * width}"))
    columns[-1].slot(lines.size, np.int32)[:] = lines
    return n_lines


def _refuse_nul(window: np.ndarray, path: str, first_line: int) -> None:
    """Refuses the window's first NUL byte at its line: a blank to the tokenizer, it would cut an id in two
    (`d\\x001` read as `d`), and no database stores it."""
    first = int(np.argmax(window == 0))
    line = first_line + int(np.count_nonzero(window[:first] == NEWLINE))
    raise TrecFormatError(path, line, "the line holds a NUL byte (\\x00), which no id or number may contain")


def _split_single_separated(
    window: np.ndarray, separators: np.ndarray, separator_bytes: np.ndarray, n_fields: int
) -> tuple[np.ndarray, np.ndarray, int] | None:
    """Token starts and ends of the usual layout, each field followed by exactly one space, tab or newline
    and every line ending in a newline, from the separators alone (the positions of the window's blanks,
    and those bytes); None for anything else."""
    if window[-1] != NEWLINE or separators.size % n_fields:
        return None
    n_lines = separators.size // n_fields
    # Every line's last separator is a newline, and there is no other newline.
    newlines = separator_bytes == NEWLINE
    if not newlines[n_fields - 1 :: n_fields].all() or np.count_nonzero(newlines) != n_lines:
        return None
    starts = np.empty_like(separators)
    starts[0] = 0
    np.add(separators[:-1], 1, out=starts[1:])
    # An empty token (a blank at the window's start, or two separators in a row) starts where it ends.
    if (starts == separators).any():
        return None
    return starts, separators, n_lines


def _split_any(
    window: np.ndarray, n_fields: int, path: str, first_line: int, trailing: bool = False
) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """Token starts and ends for any run of blanks between fields, blank lines, a last line without a
    newline (with `trailing`, of each line's first `n_fields` tokens); also the window's line of each
    entry and its number of lines."""
    size = window.size
    # Token boundaries alternate: a start where blank turns to text, an end where text turns to blank.
    blank = np.empty(size + 2, dtype=np.int8)
    blank[0] = blank[-1] = 1
    np.less_equal(window, LAST_BLANK, out=blank[1:-1], casting="unsafe")
    boundaries = np.flatnonzero(np.diff(blank))
    starts, ends = boundaries[0::2], boundaries[1::2]
    newlines = np.flatnonzero(window == NEWLINE)
    if window[-1] != NEWLINE:
        newlines = np.append(newlines, size)
    # Tokens per line, from how many tokens start before each line's end.
    per_line = np.diff(np.searchsorted(starts, newlines), prepend=0)
    line_of_entry = np.flatnonzero(per_line)
    counts = per_line[line_of_entry]
    wrong = np.flatnonzero(counts < n_fields if trailing else counts != n_fields)
    if wrong.size:
        bad = line_of_entry[wrong[0]]
        line, found = first_line + int(bad), int(per_line[bad])
        if trailing:
            raise TrecFormatError(
                path,
                line,
                "expected at least %(expected)d fields, found %(found)d",
                expected=n_fields,
                found=found,
            )
        raise TrecFormatError(
            path, line, "expected %(expected)d fields, found %(found)d", expected=n_fields, found=found
        )
    if trailing and (counts > n_fields).any():
        first = np.cumsum(counts) - counts
        kept = (first[:, None] + np.arange(n_fields)).ravel()
        starts, ends = starts[kept], ends[kept]
    return starts, ends, line_of_entry, newlines.size


def _words_wide(lengths: np.ndarray) -> int:
    """The 8-byte words the longest token needs (1 when there is none)."""
    return -(-int(lengths.max()) // 8) if lengths.size else 1


def _token_bytes(
    tail: np.ndarray, starts: np.ndarray, lengths: np.ndarray, out: np.ndarray | None = None
) -> np.ndarray:
    """The tokens at `starts` as an `S` array, padded with NUL to whole words, written to `out` (a
    contiguous `S` array of whole words, at least as wide) when given; `tail` is the buffer, which extends
    past every token. Each token's words are copied as one row, then the words holding its end masked."""
    n_words = _words_wide(lengths)
    if out is None:
        out = np.empty(starts.size, dtype=f"S{8 * n_words}")
    matrix = out.view("<u8").reshape(starts.size, out.dtype.itemsize // 8)
    # An opaque item of n_words words at every byte of the buffer: each token's gathered in one copy. A word
    # at a time (a column of `matrix` each) took five times as long for MS MARCO's 6-word ids, and rows of a
    # 2-D view of words twice as long (NumPy copies a short row slowly).
    rows = np.ndarray((tail.size - 8 * n_words + 1,), dtype=f"V{8 * n_words}", buffer=tail, strides=(1,))
    matrix[:, :n_words] = rows[starts].view("<u8").reshape(starts.size, n_words)
    # Words every token fills need no mask; a column at a time (NumPy loops over a row of two words slowly).
    filled = int(lengths.min()) // 8 if lengths.size else 0
    for word in range(filled, n_words):
        kept = lengths - 8 * word
        np.clip(kept, 0, 8, out=kept)
        matrix[:, word] &= KEEP_BYTES[kept]
    # Whole words, NUL-padded: S16 holds a 13-byte id as S13 would, without a copy to trim it.
    matrix[:, n_words:] = 0
    return out


def _numbers(tail, starts, lengths, lines, path: str, name: str, out: np.ndarray) -> None:
    """Parses number tokens into `out`: single digits (most labels) from their byte, plain decimals in
    bulk (`decimals`), anything else with NumPy's parser; a token that is no finite number is an error."""
    if lengths.size and (lengths == 1).all():
        digits = tail[starts].astype(np.int16) - ord("0")
        if ((digits >= 0) & (digits <= 9)).all():
            out[:] = digits
            return
    parsed = parse_decimals(tail, starts, lengths, out)[1]
    rest = np.flatnonzero(~parsed)
    if rest.size:
        out[rest] = _as_numbers(_token_bytes(tail, starts[rest], lengths[rest]), lines[rest], path, name)


def _as_numbers(tokens: np.ndarray, line: np.ndarray, path: str, name: str) -> np.ndarray:
    """Parses number tokens with NumPy; names the first that is not a finite number."""
    try:
        values = tokens.astype(np.float64)
    except ValueError:
        values = None
    if values is not None and np.isfinite(values).all():
        return values
    for index, token in enumerate(tokens.tolist()):
        try:
            value = float(token)
        except ValueError:
            value = math.nan
        if not math.isfinite(value):
            value = repr(token.decode(errors="replace"))
            raise TrecFormatError(
                path, int(line[index]), "%(name)s %(value)s is not a number", name=name, value=value
            )
    raise AssertionError("unreachable: astype failed but every token parsed")
