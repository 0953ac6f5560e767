"""Whitespace-separated text files (TREC's qrels and runs, ndeval's intent qrels, a weights file) read into
NumPy columns without a Python loop per line.

Fields are separated by any run of spaces or tabs; blank lines are skipped; gzipped files are read as such.
Errors name the file and line; a NUL byte is one. The file is tokenized in windows of whole lines with
vectorized byte comparisons; the identifier columns come out as NumPy bytes arrays (`S` dtype), gathered as
8-byte words; the number columns as float64, plain decimals parsed in bulk by `decimals` (the same doubles as
`float()`). A plain file may be read a byte span at a time (`trec.pieces` cuts them).
"""

import gzip
import math
import os
import zlib
from collections.abc import Callable, Iterator
from enum import Enum

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
    columns, _ = read_columns_counted(
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


def read_columns_counted(
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
    stored = span[1] - span[0] if span else os.path.getsize(path) if is_plain(path) else None
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


def is_plain(path: str | os.PathLike) -> bool:
    """Whether `path` is a regular file, not gzipped: one whose size is its text's, which can be read from
    any byte on. False for one that cannot be opened (its reader names the problem)."""
    try:
        with open(path, "rb") as file:
            return file.read(2) != b"\x1f\x8b" and os.path.isfile(path)
    except OSError:
        return False


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
