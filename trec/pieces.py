"""A plain run file cut into pieces of whole lines at query boundaries, so that each piece can be read and
scored on its own (`metrics.evaluation_files` does, a piece a core). A cut falls where a line's first field,
its query id, differs from the line's before: a run lists each query's lines together, as trec_eval's do.
A run that does not may have a query's lines in two pieces: the caller (`metrics.evaluation_files`) finds
that out from each piece's query ids and reads the run whole."""

import os
from pathlib import Path

from trec.tokenizer import is_plain

LOOK_BYTES = 1 << 20  # how far past a cut's place a query boundary is looked for


def query_pieces(path: str | Path, count: int) -> list[tuple[int, int]]:
    """(start, stop) byte spans that tile the plain file at `path` in about `count` pieces of about equal
    size, each cut at the start of a line whose query id differs from the line's before; fewer where no
    such line is found within LOOK_BYTES of a cut's place (one query's lines spanning a megabyte)."""
    size = os.path.getsize(path)
    cuts = [0]
    with open(path, "rb") as file:
        for piece in range(1, count):
            cut = _query_boundary(file, max(size * piece // count, cuts[-1]))
            if cut is not None and cuts[-1] < cut < size:
                cuts.append(cut)
    cuts.append(size)
    return list(zip(cuts[:-1], cuts[1:], strict=True))


def _query_boundary(file, near: int) -> int | None:
    """The offset of the first line after the one holding byte `near` whose first field differs from the
    line's before, within LOOK_BYTES; None when there is none."""
    file.seek(near)
    block = file.read(LOOK_BYTES)
    start = block.find(b"\n") + 1  # the first whole line
    if start == 0:
        return None
    before = None
    while True:
        end = block.find(b"\n", start)
        if end < 0:
            return None  # the block ends inside this line: no whole line to compare
        fields = block[start:end].split(None, 1)
        query = fields[0] if fields else b""
        if before is not None and query != before:
            return near + start
        before, start = query, end + 1


def run_pieces(path: str | Path, count: int, piece_bytes: int) -> list[tuple[int, int]] | None:
    """`query_pieces` of a plain run file, at most `count` of at least `piece_bytes` each; None for a file
    too small to cut in two, or one that is not plain (gzipped, a pipe: read whole)."""
    if not is_plain(path):
        return None
    count = min(count, os.path.getsize(path) // piece_bytes)
    return query_pieces(path, count) if count >= 2 else None
