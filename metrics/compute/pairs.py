"""(query row, document) pairs as 64-bit keys, for the join of a run with its qrels (`evaluation`): the row in
the top bits, then 40 bits of the document id's hash, then, when it fits, the entry's position in its row.
Sorted, the keys of each side keep each query's entries together; equal keys are looked up by binary search
and every match is checked byte for byte by the caller (`Collision` when two pairs hash alike: hash again
with the next of `SEEDS`). Ids are read as whole 8-byte words, as `trec.tokenizer` makes them.
"""

from dataclasses import dataclass

import numpy as np

from trec.files import id_words
from trec.tokenizer import TrecFormatError

_DOCUMENT_BITS = 40
MAX_QUERIES = 1 << (64 - _DOCUMENT_BITS)
_BLOCK = 1 << 16
SEEDS = (0x243F6A8885A308D3, 0x13198A2E03707344, 0xA4093822299F31D0, 0x082EFA98EC4E6C89)


class Collision(Exception):
    """Two different (query, document) pairs hashed alike: hash again with the next seed."""


def block_heads(values: np.ndarray) -> np.ndarray:
    """Where each block of equal neighbouring values starts (files list a query's lines together)."""
    words = as_words(values)
    if words is None:
        differ = values[1:] != values[:-1]
    else:
        differ = words[1:, 0] != words[:-1, 0]
        for column in range(1, words.shape[1]):
            differ |= words[1:, column] != words[:-1, column]
    return np.flatnonzero(np.concatenate(([True], differ)))


def as_words(ids: np.ndarray) -> np.ndarray | None:
    """An `S` column of whole 8-byte words (as the reader makes them) viewed as `[entries × words]` uint64,
    else None. NumPy compares `S` items as strings, ten times slower than it compares integers; ids hold no
    NUL, so equal words are equal ids."""
    if ids.dtype.kind != "S" or ids.dtype.itemsize % 8 or not ids.flags.c_contiguous:
        return None
    return ids.view("<u8").reshape(ids.size, ids.dtype.itemsize // 8)


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
        heads = block_heads(rows)
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


def sorted_pairs(rows: np.ndarray, layout: RowLayout, document: np.ndarray, seed: int):
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


def check_duplicates(keys, order, document, line, path) -> None:
    """Refuses a (query, document) pair listed twice; an equal key of different pairs is a collision."""
    same = np.flatnonzero(keys[1:] == keys[:-1])
    if same.size == 0:
        return
    first, second = order[same], order[same + 1]
    exact = document[first] == document[second]
    if not exact.all():
        raise Collision
    a, b = sorted((int(line[first[0]]), int(line[second[0]])))
    raise TrecFormatError(
        path,
        b,
        "document %(document)s is listed twice for its query (also line %(other)d)",
        document=repr(document[first[0]].decode()),
        other=a,
    )


def matches(left: np.ndarray, right: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The positions i in `left` and j in `right` where left[i] == right[j], for two sorted arrays of
    distinct keys. The shorter is looked up in the longer: a binary search per key of the shorter (a run
    four times as long as its qrels took four times the searches the other way round)."""
    if left.size > right.size:
        right_at, left_at = matches(right, left)
        return left_at, right_at
    if left.size == 0:
        return np.zeros(0, np.intp), np.zeros(0, np.intp)
    found = np.searchsorted(right, left)
    np.minimum(found, right.size - 1, out=found)
    hit = right[found] == left
    return np.flatnonzero(hit), found[hit]
