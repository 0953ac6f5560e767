"""TREC qrels and run files, read into NumPy columns without a Python loop per line.

qrels: `qid iter docid label` (label a number, may be fractional or negative). run: `qid Q0 docid rank score
tag`; the rank column is ignored, as trec_eval does. Fields are separated by any run of spaces or tabs;
blank lines are skipped; gzipped files are read as such. Errors name the file and line.

The file is tokenized in windows of whole lines with vectorized byte comparisons; the identifier columns come
out as NumPy bytes arrays (`S` dtype), the number columns as float64.
"""

import gzip
import math
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

import numpy as np

WINDOW_BYTES = 32 << 20
MAX_TOKEN_BYTES = 255
_SPACE, _TAB, _NEWLINE, _RETURN = 32, 9, 10, 13


class TrecFormatError(ValueError):
    """A TREC file that cannot be read: `path:line: message`."""

    def __init__(self, path: str, line: int | None, message: str):
        self.path, self.line, self.message = path, line, message
        super().__init__(f"{path}:{line}: {message}" if line else f"{path}: {message}")


@dataclass(frozen=True)
class Qrels:
    """One entry per judgment, in file order."""

    query: np.ndarray  # S: query id
    document: np.ndarray  # S: document id
    label: np.ndarray  # float64
    line: np.ndarray  # int64: 1-based line of each entry, for error messages
    path: str


@dataclass(frozen=True)
class Run:
    """One entry per retrieved document, in file order."""

    query: np.ndarray  # S: query id
    document: np.ndarray  # S: document id
    score: np.ndarray  # float64
    line: np.ndarray
    path: str


def read_qrels(path: str | Path) -> Qrels:
    """Reads `qid iter docid label`."""
    columns = _read_columns(str(path), n_fields=4, keep=(0, 2, 3), names=("query id", "document id", "label"))
    query, document, label, line = columns
    return Qrels(query, document, _as_numbers(label, line, str(path), "label"), line, str(path))


def read_run(path: str | Path) -> Run:
    """Reads `qid Q0 docid rank score tag`."""
    columns = _read_columns(str(path), n_fields=6, keep=(0, 2, 4), names=("query id", "document id", "score"))
    query, document, score, line = columns
    return Run(query, document, _as_numbers(score, line, str(path), "score"), line, str(path))


def read_run_rankings(path: str | Path) -> dict[str, dict[str, list[str]]]:
    """A run as rankings: query id → document ids, by score descending, ties by document id descending."""
    run = read_run(path)
    order = np.lexsort((run.document, run.score, _descending_codes(run.query)))[::-1]
    if run.query.size:
        _refuse_duplicates(run.query[order], run.document[order], run.line[order], run.path, "document")
    rankings: dict[str, dict[str, list[str]]] = {}
    for query, document in zip(run.query[order].tolist(), run.document[order].tolist(), strict=True):
        rankings.setdefault(query.decode(), []).append(document.decode())
    return rankings


def write_qrels(out: TextIO, query_ids, document_ids, labels) -> None:
    """Writes `qid 0 docid label`; whole-number labels without a decimal point, others as needed exactly."""
    for query, document, label in zip(query_ids, document_ids, labels, strict=True):
        label = float(label)
        text = str(int(label)) if label.is_integer() else repr(label)
        out.write(f"{query} 0 {document} {text}\n")


def _descending_codes(values: np.ndarray) -> np.ndarray:
    """Integer codes that sort in the reverse order of `values`, so one `[::-1]` makes them ascending."""
    _, codes = np.unique(values, return_inverse=True)
    return -codes


def _refuse_duplicates(query, document, line, path: str, what: str) -> None:
    """Adjacent equal (query, document) pairs of sorted columns are a duplicate entry."""
    same = (query[1:] == query[:-1]) & (document[1:] == document[:-1])
    if same.any():
        first = int(np.flatnonzero(same)[0])
        where = sorted((int(line[first]), int(line[first + 1])))
        raise TrecFormatError(
            path,
            where[1],
            f"{what} {document[first].decode()!r} appears twice for query {query[first].decode()!r}"
            f" (also on line {where[0]})",
        )


def _read_bytes(path: str) -> bytes:
    try:
        raw = Path(path).read_bytes()
    except OSError as exc:
        raise TrecFormatError(path, None, f"cannot read: {exc.strerror or exc}") from None
    if raw[:2] == b"\x1f\x8b":
        try:
            raw = gzip.decompress(raw)
        except (OSError, EOFError) as exc:
            raise TrecFormatError(path, None, f"not a valid gzip file: {exc}") from None
    return raw


def _read_columns(
    path: str, *, n_fields: int, keep: tuple[int, ...], names: tuple[str, ...]
) -> list[np.ndarray]:
    """The kept fields of every non-blank line as `S` arrays, then the 1-based line number of each."""
    data = _read_bytes(path)
    buffer = np.frombuffer(data, dtype=np.uint8)
    pieces: list[list[np.ndarray]] = [[] for _ in range(len(keep) + 1)]
    start, first_line = 0, 1
    while start < buffer.size:
        stop = min(start + WINDOW_BYTES, buffer.size)
        if stop < buffer.size:
            newline = data.rfind(b"\n", start, stop)
            stop = newline + 1 if newline >= start else data.find(b"\n", stop) + 1 or buffer.size
        window = buffer[start:stop]
        columns, n_lines = _tokenize(window, n_fields, keep, names, path, first_line)
        for piece, column in zip(pieces, columns, strict=True):
            piece.append(column)
        start, first_line = stop, first_line + n_lines
    if not pieces[0]:
        return [np.zeros(0, dtype="S1")] * len(keep) + [np.zeros(0, dtype=np.int64)]
    return [np.concatenate(piece) for piece in pieces]


def _tokenize(
    window: np.ndarray,
    n_fields: int,
    keep: tuple[int, ...],
    names: tuple[str, ...],
    path: str,
    first_line: int,
) -> tuple[list[np.ndarray], int]:
    """Splits a window of whole lines; returns the kept fields, line numbers, and the window's line count."""
    newline = window == _NEWLINE
    blank = newline | (window == _SPACE) | (window == _TAB) | (window == _RETURN)
    # A token starts where a non-blank byte follows a blank one (or the window's start).
    previous_blank = np.empty_like(blank)
    previous_blank[0] = True
    previous_blank[1:] = blank[:-1]
    starts = np.flatnonzero(~blank & previous_blank)
    next_blank = np.empty_like(blank)
    next_blank[-1] = True
    next_blank[:-1] = blank[1:]
    ends = np.flatnonzero(~blank & next_blank) + 1
    newlines = np.flatnonzero(newline)
    n_lines = newlines.size + (0 if window.size and window[-1] == _NEWLINE else 1)
    # The 0-based line of each token within the window; it never decreases.
    token_line = np.searchsorted(newlines, starts)
    first_token = np.flatnonzero(np.diff(token_line, prepend=-1))
    line_of_entry = token_line[first_token]
    per_line = np.diff(first_token, append=token_line.size)
    wrong = per_line != n_fields
    if wrong.any():
        bad = int(np.flatnonzero(wrong)[0])
        raise TrecFormatError(
            path,
            first_line + int(line_of_entry[bad]),
            f"expected {n_fields} fields, found {per_line[bad]}",
        )
    columns = []
    for field, name in zip(keep, names, strict=True):
        field_starts, field_ends = starts[field::n_fields], ends[field::n_fields]
        too_long = np.flatnonzero(field_ends - field_starts > MAX_TOKEN_BYTES)
        if too_long.size:
            line = first_line + int(line_of_entry[too_long[0]])
            raise TrecFormatError(path, line, f"the {name} is longer than {MAX_TOKEN_BYTES} bytes")
        columns.append(_token_bytes(window, field_starts, field_ends))
    return [*columns, first_line + line_of_entry.astype(np.int64)], n_lines


def _token_bytes(window: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """The tokens [start, end) of a window as an `S` array, padded with NUL to the longest."""
    lengths = ends - starts
    width = int(lengths.max()) if lengths.size else 1
    offsets = np.arange(width)
    index = np.minimum(starts[:, None] + offsets, window.size - 1)
    matrix = np.where(offsets < lengths[:, None], window[index], 0).astype(np.uint8)
    return matrix.view(f"S{width}").ravel()


def _as_numbers(tokens: np.ndarray, line: np.ndarray, path: str, name: str) -> np.ndarray:
    """Parses number tokens; single digits (most labels) are read straight from their byte."""
    if tokens.size == 0:
        return np.zeros(0)
    if tokens.dtype.itemsize == 1:
        digits = tokens.view(np.uint8).astype(np.int16) - ord("0")
        if ((digits >= 0) & (digits <= 9)).all():
            return digits.astype(float)
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
            raise TrecFormatError(
                path, int(line[index]), f"{name} {token.decode(errors='replace')!r} is not a number"
            )
    raise AssertionError("unreachable: astype failed but every token parsed")
