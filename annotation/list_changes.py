"""What changed between two ranked lists of one query (the online model's, then an experimental one's):
which documents moved up or down, entered or left. Shown to reviewers and in the results' drill-down, never
to annotators, who judge the lists blind. Pure: lists of ids in, plain values out."""

from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from enum import StrEnum


class Change(StrEnum):
    SAME = "same"  # at the same rank
    UP = "up"
    DOWN = "down"
    NEW = "new"  # not in the earlier list: it entered
    LEFT = "left"  # of the earlier list, not in the later one


@dataclass(frozen=True)
class Move:
    change: Change
    by: int = 0  # ranks moved up or down
    before: int | None = None  # its rank in the earlier list (1 first)


def list_changes(before: Sequence[Hashable], after: Sequence[Hashable]) -> tuple[list[Move], list[Move]]:
    """Each document of `after` against its rank in `before` (up by 2: it stood two ranks lower), and each
    document of `before` as kept (its move in `after`) or left. A document listed twice counts at its first
    rank."""
    rank_before = {item: rank for rank, item in reversed(list(enumerate(before, start=1)))}
    rank_after = {item: rank for rank, item in reversed(list(enumerate(after, start=1)))}
    moves = [rank_move(rank_before.get(item), rank) for rank, item in enumerate(after, start=1)]
    kept = [
        Move(Change.LEFT, before=rank) if item not in rank_after else rank_move(rank, rank_after[item])
        for rank, item in enumerate(before, start=1)
    ]
    return moves, kept


def rank_move(before: int | None, after: int) -> Move:
    """A document's move from rank `before` (None: it was not listed) to rank `after`."""
    if before is None:
        return Move(Change.NEW)
    if before == after:
        return Move(Change.SAME, before=before)
    return Move(Change.UP if after < before else Change.DOWN, abs(after - before), before)
