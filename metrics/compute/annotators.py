"""Per-annotator quality: volume, speed, agreement with the others, gold accuracy, grade use, side bias.

One result per annotator index 0..n_annotators-1, including annotators without labels (their figures NaN).
"""

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike
from scipy.stats import binomtest

from metrics.compute.labels import (
    TaskLabels,
    as_float,
    as_index,
    as_judgments,
    as_scale,
    as_task_labels,
    as_verdict_positions,
    check_count,
    check_same_length,
    consensus_credit,
    divide_or_nan,
    gold_position_of_tasks,
    grouped_median,
    position_counts,
    scale_positions,
)
from metrics.compute.wording import Phrase, phrase


@dataclass(frozen=True)
class AnnotatorQuality:
    """One annotator's figures on graded relevance.

    `consensus_agreement`: mean agreement with the leave-one-out consensus over their `n_consensus` labels on
    tasks someone else labelled too (see `metrics.compute.labels.consensus_credit`). `gold_accuracy`: the
    share of their `n_gold` labels on gold tasks equal to the gold grade; `gold_within_one`: at most one step
    of the scale away. `grade_shares`: the share of their labels on each grade of the scale, in scale order.
    """

    annotator: int
    n_judgments: int
    median_seconds: float
    n_consensus: int
    consensus_agreement: float
    n_gold: int
    gold_accuracy: float
    gold_within_one: float
    grade_shares: tuple[float, ...]


@dataclass(frozen=True)
class SideBias:
    """How often an annotator's decisive side-by-side verdicts favour the list shown on the left.

    `p_value`: two-sided exact binomial test of `left_better_share` against 0.5 over the `n_decisive`
    (good or bad) verdicts; NaN, like the share, when they gave none.
    """

    annotator: int
    n_verdicts: int
    n_decisive: int
    left_better_share: float
    p_value: float


def annotator_quality(
    task: ArrayLike,
    annotator: ArrayLike,
    grade: ArrayLike,
    *,
    n_tasks: int,
    n_annotators: int,
    scale: ArrayLike,
    seconds: ArrayLike | None = None,
    gold: TaskLabels | None = None,
) -> list[AnnotatorQuality]:
    """The quality figures of every annotator, in annotator order.

    `seconds`, aligned with the labels, is the time spent on each (NaN where not recorded);
    `median_seconds` is the median over an annotator's recorded times. `gold` holds the gold grade of some
    tasks. Figures without data (no labels, no recorded time, no shared task, no gold task) are NaN.
    """
    judgments = as_judgments(task, annotator, grade, n_tasks=n_tasks, scale=scale, n_annotators=n_annotators)
    n_annotators = judgments.n_annotators
    who = judgments.annotator
    if seconds is None:
        seconds = np.full(who.size, np.nan)
    seconds = as_float(seconds, "seconds", allow_nan=True)
    check_same_length(task=judgments.task, seconds=seconds)
    if np.any(seconds < 0):
        raise ValueError(f"seconds must not be negative, found {seconds[seconds < 0][0]}")

    n_judgments = np.bincount(who, minlength=n_annotators)
    timed = ~np.isnan(seconds)
    median_seconds = grouped_median(who[timed], seconds[timed], n_groups=n_annotators)

    credit, has_consensus = consensus_credit(judgments)
    n_consensus = np.bincount(who[has_consensus], minlength=n_annotators)
    consensus_agreement = divide_or_nan(np.bincount(who, weights=credit, minlength=n_annotators), n_consensus)

    gold_position = np.full(who.size, -1)
    if gold is not None:
        gold_task, gold_grade_position = as_task_labels(
            gold, "gold", n_tasks=judgments.n_tasks, scale=judgments.scale
        )
        by_task = gold_position_of_tasks(gold_task, gold_grade_position, n_tasks=judgments.n_tasks)
        gold_position = by_task[judgments.task]
    on_gold = gold_position >= 0
    steps_from_gold = np.abs(judgments.position - gold_position)[on_gold]
    n_gold = np.bincount(who[on_gold], minlength=n_annotators)
    gold_accuracy = divide_or_nan(
        np.bincount(who[on_gold], weights=(steps_from_gold == 0).astype(float), minlength=n_annotators),
        n_gold,
    )
    gold_within_one = divide_or_nan(
        np.bincount(who[on_gold], weights=(steps_from_gold <= 1).astype(float), minlength=n_annotators),
        n_gold,
    )

    grade_counts = position_counts(
        who, judgments.position, n_tasks=n_annotators, n_values=judgments.scale.size
    )
    grade_shares = divide_or_nan(grade_counts, n_judgments[:, None])
    return [
        AnnotatorQuality(
            annotator=index,
            n_judgments=int(n_judgments[index]),
            median_seconds=float(median_seconds[index]),
            n_consensus=int(n_consensus[index]),
            consensus_agreement=float(consensus_agreement[index]),
            n_gold=int(n_gold[index]),
            gold_accuracy=float(gold_accuracy[index]),
            gold_within_one=float(gold_within_one[index]),
            grade_shares=tuple(float(share) for share in grade_shares[index]),
        )
        for index in range(n_annotators)
    ]


def side_bias(
    annotator: ArrayLike, verdict: ArrayLike, experimental_on_left: ArrayLike, *, n_annotators: int
) -> list[SideBias]:
    """Each annotator's share of decisive verdicts that favour the left list, with a binomial test.

    A verdict favours the left list when it is good (+1) with the experimental list on the left, or bad (-1)
    with it on the right. Same (0) verdicts are not decisive and are left out. An annotator blind to the side
    favours the left about half the time; a small p-value says the side, not the lists, drives their verdicts.
    """
    n_annotators = check_count(n_annotators, "n_annotators")
    annotator = as_index(annotator, "annotator", size=n_annotators, size_name="n_annotators")
    position = as_verdict_positions(verdict)
    experimental_on_left = np.asarray(experimental_on_left)
    if experimental_on_left.ndim != 1 or (experimental_on_left.size and experimental_on_left.dtype != bool):
        raise ValueError("experimental_on_left must be a one-dimensional array of booleans")
    check_same_length(annotator=annotator, verdict=position, experimental_on_left=experimental_on_left)

    verdict = position - 1
    decisive = verdict != 0
    left_better = (verdict == 1) == experimental_on_left
    n_verdicts = np.bincount(annotator, minlength=n_annotators)
    n_decisive = np.bincount(annotator[decisive], minlength=n_annotators)
    n_left_better = np.bincount(annotator[decisive & left_better], minlength=n_annotators)
    left_better_share = divide_or_nan(n_left_better, n_decisive)
    p_value = [
        binomtest(int(k), int(n), p=0.5).pvalue if n else np.nan
        for k, n in zip(n_left_better, n_decisive, strict=True)
    ]
    return [
        SideBias(
            annotator=index,
            n_verdicts=int(n_verdicts[index]),
            n_decisive=int(n_decisive[index]),
            left_better_share=float(left_better_share[index]),
            p_value=float(p_value[index]),
        )
        for index in range(n_annotators)
    ]


@dataclass(frozen=True)
class FlagRule:
    """When the quality page flags an annotator. A flag needs `min_labels` grades (speed, consensus) or
    `min_gold` gold items (gold accuracy) to be raised at all."""

    min_seconds: float = 2.0  # median seconds a grade
    min_gold_accuracy: float = 0.5  # exact gold accuracy
    alpha: float = 0.05  # side bias: family-wise, Bonferroni over the annotators tested
    consensus_gap: float = 0.25  # consensus agreement this far below the median annotator's
    min_labels: int = 10
    min_gold: int = 5
    min_self_agreement: float = 0.5  # exact repeat agreement (grades) or consistency (verdicts)
    min_repeats: int = 5


def annotator_flags(
    quality: list[AnnotatorQuality],
    bias: list[SideBias],
    rule: FlagRule = FlagRule(),
    selves: list["SelfAgreement"] | None = None,
) -> list[list[Phrase]]:
    """Each annotator's flags (reasons as sentences; empty when none), from their figures:

    - speed: median seconds per grade below `rule.min_seconds`;
    - gold: exact gold accuracy below `rule.min_gold_accuracy`;
    - side bias: the binomial test's p-value below `rule.alpha / m`, m the annotators with a decisive
      verdict (Bonferroni: under no bias at all, the chance of any such flag in a campaign is at most alpha);
    - consensus: agreement with the consensus more than `rule.consensus_gap` below the median annotator's
      (among those with `min_labels` grades; needs three such annotators);
    - self-agreement (with `selves`): over `min_repeats` repeats, even the Wilson interval's high end of their
      exact agreement with themselves (grades) or consistency (verdicts) is below `min_self_agreement`.
    """
    if len(quality) != len(bias):
        raise ValueError("quality and bias must have one entry per annotator")
    tested = sum(1 for side in bias if side.n_decisive)
    enough = [row for row in quality if row.n_judgments >= rule.min_labels and row.n_consensus]
    typical = float(np.median([row.consensus_agreement for row in enough])) if len(enough) >= 3 else np.nan
    flags: list[list[Phrase]] = []
    for row, side in zip(quality, bias, strict=True):
        reasons = []
        if row.n_judgments >= rule.min_labels and row.median_seconds < rule.min_seconds:
            reasons.append(
                phrase(
                    "median %(seconds)s s a grade (under %(limit)s s)",
                    seconds=f"{row.median_seconds:.1f}",
                    limit=f"{rule.min_seconds:g}",
                )
            )
        if row.n_gold >= rule.min_gold and row.gold_accuracy < rule.min_gold_accuracy:
            reasons.append(
                phrase(
                    "gold accuracy %(accuracy)s on %(items)s items (under %(limit)s)",
                    accuracy=f"{row.gold_accuracy:.2f}",
                    items=row.n_gold,
                    limit=f"{rule.min_gold_accuracy:g}",
                )
            )
        if side.n_decisive and side.p_value < rule.alpha / tested:
            reasons.append(
                phrase(
                    "side bias: the left list favoured in %(share)s of %(verdicts)s decisive verdicts "
                    "(p = %(p)s)",
                    share=f"{side.left_better_share:.0%}",
                    verdicts=side.n_decisive,
                    p=f"{side.p_value:.2g}",
                )
            )
        if row in enough and row.consensus_agreement < typical - rule.consensus_gap:
            reasons.append(
                phrase(
                    "agreement with consensus %(agreement)s, the median annotator's %(typical)s",
                    agreement=f"{row.consensus_agreement:.2f}",
                    typical=f"{typical:.2f}",
                )
            )
        own = selves[row.annotator] if selves is not None else None
        repeats = (
            [
                (
                    phrase("repeats: %(share)s of %(n)s grades the same as the first time"),
                    own.n_grades,
                    own.exact,
                ),
                (
                    phrase("repeats: %(share)s of %(n)s verdicts the same as the first time"),
                    own.n_verdicts,
                    own.consistent,
                ),
            ]
            if own
            else []
        )
        for template, n, (share, _, high) in repeats:
            if n >= rule.min_repeats and high < rule.min_self_agreement:
                reasons.append(Phrase(template, {"share": f"{share:.0%}", "n": n}))
        flags.append(reasons)
    return flags


def wilson_interval(
    successes: np.ndarray, n: np.ndarray, z: float = 1.959963984540054
) -> tuple[np.ndarray, ...]:
    """Wilson score 95% interval of a share k/n, per entry; NaN where n is 0. It stays inside [0, 1] and
    keeps its coverage at the handful of repeats an annotator has, where the normal interval does not."""
    k, n = np.asarray(successes, dtype=float), np.asarray(n, dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        share = k / n
        centre = (share + z**2 / (2 * n)) / (1 + z**2 / n)
        half = z * np.sqrt(share * (1 - share) / n + z**2 / (4 * n**2)) / (1 + z**2 / n)
    return centre - half, centre + half


@dataclass(frozen=True)
class SelfAgreement:
    """An annotator's answers to repeats against their first answers to the same tasks.

    Grades: `exact` and `within_one` (at most one step of the scale apart) shares of `n_grades` pairs.
    Verdicts (the lists shown with sides swapped the second time): `consistent` share of `n_verdicts` pairs
    with the same verdict for the experimental list; `same_side` the share of pairs decisive both times in
    which they pressed the same side both times, which only a side, not the lists, explains. Each share with
    its Wilson 95% interval; NaN without pairs.
    """

    annotator: int
    n_grades: int
    exact: tuple[float, float, float]  # share, low, high
    within_one: tuple[float, float, float]
    n_verdicts: int
    consistent: tuple[float, float, float]
    n_decisive: int
    same_side: tuple[float, float, float]


def self_agreement(
    grade_annotator: ArrayLike,
    first_grade: ArrayLike,
    second_grade: ArrayLike,
    verdict_annotator: ArrayLike,
    first_verdict: ArrayLike,
    second_verdict: ArrayLike,
    *,
    n_annotators: int,
    scale: ArrayLike,
) -> list[SelfAgreement]:
    """Each annotator's self-agreement over repeat pairs: one entry per pair of (first, second) grade or
    verdict (verdicts as -1 bad, 0 same, +1 good for the experimental list)."""
    n_annotators = check_count(n_annotators, "n_annotators")
    scale = as_scale(scale)
    grade_annotator = as_index(
        grade_annotator, "grade_annotator", size=n_annotators, size_name="n_annotators"
    )
    first = scale_positions(as_float(first_grade, "first_grade"), scale, "first_grade")
    second = scale_positions(as_float(second_grade, "second_grade"), scale, "second_grade")
    check_same_length(grade_annotator=grade_annotator, first_grade=first, second_grade=second)
    verdict_annotator = as_index(
        verdict_annotator, "verdict_annotator", size=n_annotators, size_name="n_annotators"
    )
    before, after = as_verdict_positions(first_verdict) - 1, as_verdict_positions(second_verdict) - 1
    check_same_length(verdict_annotator=verdict_annotator, first_verdict=before, second_verdict=after)

    def shares(who: np.ndarray, hits: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        n = np.bincount(who, minlength=n_annotators)
        return np.bincount(who[hits], minlength=n_annotators), n

    exact, n_grades = shares(grade_annotator, first == second)
    within, _ = shares(grade_annotator, np.abs(first - second) <= 1)
    consistent, n_verdicts = shares(verdict_annotator, before == after)
    decisive = (before != 0) & (after != 0)
    same_side, n_decisive = shares(verdict_annotator[decisive], (before != after)[decisive])

    def figure(k: np.ndarray, n: np.ndarray, index: int) -> tuple[float, float, float]:
        if not n[index]:
            return (np.nan, np.nan, np.nan)
        low, high = wilson_interval(k[index], n[index])
        return (float(k[index] / n[index]), float(low), float(high))

    return [
        SelfAgreement(
            annotator=index,
            n_grades=int(n_grades[index]),
            exact=figure(exact, n_grades, index),
            within_one=figure(within, n_grades, index),
            n_verdicts=int(n_verdicts[index]),
            consistent=figure(consistent, n_verdicts, index),
            n_decisive=int(n_decisive[index]),
            same_side=figure(same_side, n_decisive, index),
        )
        for index in range(n_annotators)
    ]
