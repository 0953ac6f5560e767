"""How far apart a task's labels are, from 0 (all agree) to 1 (the scale's two ends): the review queue's
order. Pure functions of label counts, so the rule is tested without a database."""

from collections.abc import Sequence


def grade_dispute(low: int, high: int, scale: Sequence[int]) -> float:
    """The spread of a task's grades over the scale's range."""
    return (high - low) / ((max(scale) - min(scale)) or 1)


def verdict_dispute(n_good: int, n_same: int, n_bad: int) -> float:
    """The spread of a task's verdicts on Bad (-1), Same (0), Good (+1), over that range of 2."""
    used = [value for value, n in ((1, n_good), (0, n_same), (-1, n_bad)) if n]
    return (max(used) - min(used)) / 2 if used else 0.0


def queue_rank(*, dispute: float, failed_gold: bool, kind: str, task_pk: int) -> tuple:
    """Most disputed first, then failed gold, then by kind and id."""
    return (-dispute, not failed_gold, kind, task_pk)
