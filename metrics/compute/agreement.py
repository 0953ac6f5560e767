"""Inter-annotator agreement, each coefficient with a bootstrap interval over tasks.

Krippendorff's alpha (nominal, ordinal, interval) on columnar labels; Fleiss' kappa on a
[tasks × categories] count matrix (e.g. `aggregation.verdict_counts`); quadratic-weighted Cohen's kappa for
every pair of annotators on the tasks they share, and between two raters of the same items (`weighted_kappa`,
e.g. behaviour grades against human grades, with a bootstrap over clusters of items).

Every coefficient here is a function of a sum over tasks of a per-task statistic (a coincidence matrix, a
confusion matrix, category counts), and that statistic depends only on the task's label counts (for a pair of
annotators, on the cell of the two grades). Tasks with equal counts are one kind: there are few kinds
(three annotators on four grades: at most 20), so the statistic is computed once per kind and the bootstrap,
n_tasks tasks drawn with replacement `n_resamples` times, draws how many tasks of each kind as
multinomial(n_tasks, share of the kind) (`resampling.bootstrap_sums`): the same distribution, at a cost of
n_resamples × kinds × (number of grades)², whatever the number of tasks.
"""

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import StrEnum

import numpy as np
from numpy.typing import ArrayLike

from metrics.compute.labels import (
    as_float,
    as_index,
    as_judgments,
    as_scale,
    check_count,
    check_same_length,
    divide_or_nan,
    position_counts,
    scale_positions,
)
from metrics.compute.resampling import Resampling, bootstrap_sums, item_kinds
from metrics.compute.wording import phrase


class Undefined(StrEnum):
    """Why a coefficient has no value (its `reason` says it in words)."""

    NO_TASKS = "no_tasks"
    ONE_TASK = "one_task"
    NO_VARIATION = "no_variation"

    @property
    def reason(self) -> str:
        return _UNDEFINED_REASONS[self]


_UNDEFINED_REASONS = {
    Undefined.NO_TASKS: phrase("no task has two labels"),
    Undefined.ONE_TASK: phrase("one task only: agreement needs at least two"),
    Undefined.NO_VARIATION: phrase("no variation: chance explains every agreement"),
}


class MeasurementLevel(StrEnum):
    """How Krippendorff's alpha measures the distance between two grades."""

    NOMINAL = "nominal"
    ORDINAL = "ordinal"
    INTERVAL = "interval"


@dataclass(frozen=True)
class Agreement:
    """A coefficient, its percentile bootstrap interval, the tasks it used, and the resamples behind it.

    `value` is NaN when the coefficient is undefined, and `undefined` says why: no task with two labels, a
    single task (on one task every coefficient here is 0 or below by construction, whatever the labels), or
    no variation to agree on. The interval is taken over the `n_resamples` resamples in which the
    coefficient was defined (NaN if none).
    """

    value: float
    ci_low: float
    ci_high: float
    n_tasks: int
    n_resamples: int
    undefined: Undefined | None = None


@dataclass(frozen=True)
class PairAgreement:
    """The agreement of two annotators (`annotator_a` < `annotator_b`) on the tasks both labelled."""

    annotator_a: int
    annotator_b: int
    kappa: Agreement


def krippendorff_alpha(
    task: ArrayLike,
    grade: ArrayLike,
    *,
    n_tasks: int,
    scale: ArrayLike,
    level: MeasurementLevel | str = MeasurementLevel.INTERVAL,
    n_resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
) -> Agreement:
    """Krippendorff's alpha = 1 - D_o / D_e over the pairable labels.

    Only tasks with at least two labels count (the others have nothing to pair with). The coincidence
    matrix o[c, k] sums, over tasks with m >= 2 labels, the number of ordered pairs of labels (c, k) divided
    by m - 1; n_c = sum_k o[c, k]; n = sum_c n_c; e[c, k] = (n_c · n_k - [c = k] · n_c) / (n - 1);
    D_o = sum o·δ², D_e = sum e·δ². The distance δ²(c, k): nominal [c ≠ k]; interval (c - k)² on the grade
    values; ordinal (sum of n_g for g from c to k - (n_c + n_k) / 2)². The same as the `krippendorff` package
    with `value_domain=scale`. Side-by-side verdicts: nominal alpha with scale (-1, 0, 1).
    """
    (alpha,) = krippendorff_alphas(
        task,
        grade,
        n_tasks=n_tasks,
        scale=scale,
        levels=(level,),
        n_resamples=n_resamples,
        confidence=confidence,
        seed=seed,
    )
    return alpha


def krippendorff_alphas(
    task: ArrayLike,
    grade: ArrayLike,
    *,
    n_tasks: int,
    scale: ArrayLike,
    levels: Sequence[MeasurementLevel | str],
    n_resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
) -> list[Agreement]:
    """`krippendorff_alpha` at each of `levels`, from one bootstrap: the resampled coincidence matrices do not
    depend on the level, so each result is the one `krippendorff_alpha` gives at that level, for the cost
    of one."""
    n_tasks = check_count(n_tasks, "n_tasks")
    scale = as_scale(scale)
    measurement_levels = [_as_level(level) for level in levels]
    task = as_index(task, "task", size=n_tasks, size_name="n_tasks")
    grade = as_float(grade, "grade")
    check_same_length(task=task, grade=grade)
    position = scale_positions(grade, scale, "grade")
    resampling = Resampling.of(n_resamples, confidence, seed)

    counts = position_counts(task, position, n_tasks=n_tasks, n_values=scale.size)
    counts = counts[counts.sum(axis=1) >= 2]
    first, multiplicity = item_kinds(counts)
    counts = counts[first].astype(float)
    n_labels = counts.sum(axis=1)
    diagonal = counts[:, :, None] * np.eye(scale.size)
    coincidences = (counts[:, :, None] * counts[:, None, :] - diagonal) / (n_labels - 1)[:, None, None]

    def alpha_at(level: MeasurementLevel) -> Callable[[np.ndarray], np.ndarray]:
        def alpha(coincidence_sums: np.ndarray) -> np.ndarray:
            observed = coincidence_sums.reshape(*coincidence_sums.shape[:-1], scale.size, scale.size)
            n_value = observed.sum(axis=-1)
            n_pairable = n_value.sum(axis=-1)[..., None, None]
            expected = divide_or_nan(
                n_value[..., :, None] * n_value[..., None, :] - n_value[..., :, None] * np.eye(scale.size),
                n_pairable - 1,
            )
            distance = _alpha_distance(level, scale, n_value)
            disagreement = (observed * distance).sum(axis=(-2, -1))
            return 1 - divide_or_nan(disagreement, (expected * distance).sum(axis=(-2, -1)))

        return alpha

    statistics = coincidences.reshape(len(counts), scale.size**2)
    return _agreements(
        statistics, multiplicity, [alpha_at(level) for level in measurement_levels], resampling
    )


def fleiss_kappa(
    counts: ArrayLike, *, n_resamples: int = 1000, confidence: float = 0.95, seed: int = 0
) -> Agreement:
    """Fleiss' kappa of a [tasks × categories] matrix of how many raters chose each category.

    kappa = (P̄ - P_e) / (1 - P_e) with P_i = (sum_j n_ij² - m) / (m (m - 1)), P̄ the mean of P_i,
    p_j = sum_i n_ij / (N m) and P_e = sum_j p_j². Fleiss' formula needs the same number m of raters on every
    task: tasks with fewer than two raters are dropped, then only the tasks with the most common number of
    raters are kept (a tie between two numbers keeps the larger). `n_tasks` in the result says how many were
    used. The same as `statsmodels.stats.inter_rater.fleiss_kappa` on the kept rows.
    """
    counts = np.asarray(counts)
    if counts.ndim != 2 or counts.shape[1] < 1:
        raise ValueError(f"counts must be a [tasks × categories] matrix, got shape {counts.shape}")
    if counts.size and (counts.dtype.kind not in "iu" or counts.min() < 0):
        raise ValueError("counts must hold non-negative integers")
    resampling = Resampling.of(n_resamples, confidence, seed)

    n_raters = counts.sum(axis=1)
    rater_numbers, frequency = np.unique(n_raters[n_raters >= 2], return_counts=True)
    if rater_numbers.size == 0:
        return Agreement(np.nan, np.nan, np.nan, 0, 0, Undefined.NO_TASKS)
    n_rater = float(rater_numbers[frequency == frequency.max()].max())
    counts = counts[n_raters == n_rater]
    n_used = len(counts)
    first, multiplicity = item_kinds(counts)
    counts = counts[first].astype(float)
    task_agreement = ((counts**2).sum(axis=1) - n_rater) / (n_rater * (n_rater - 1))

    def kappa(sums: np.ndarray) -> np.ndarray:
        mean_agreement = sums[..., 0] / n_used
        chance = ((sums[..., 1:] / (n_used * n_rater)) ** 2).sum(axis=-1)
        return divide_or_nan(mean_agreement - chance, 1 - chance)

    (agreement,) = _agreements(np.column_stack([task_agreement, counts]), multiplicity, [kappa], resampling)
    return agreement


def pairwise_weighted_kappa(
    task: ArrayLike,
    annotator: ArrayLike,
    grade: ArrayLike,
    *,
    n_tasks: int,
    scale: ArrayLike,
    n_resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
) -> list[PairAgreement]:
    """Quadratic-weighted Cohen's kappa for every pair of annotators who share at least one task.

    On the shared tasks, O[i, j] counts the tasks that annotator a graded the i-th and b the j-th grade of the
    scale; E = outer(row sums, column sums) / n; w[i, j] = (i - j)², on positions on the scale (the scale is
    treated as evenly spaced); kappa = 1 - sum(w·O) / sum(w·E). The same as
    `sklearn.metrics.cohen_kappa_score(a, b, labels=scale, weights="quadratic")`. Pairs come ordered by
    (annotator_a, annotator_b); each pair's bootstrap is seeded by (seed, a, b), so it does not change when
    other annotators come or go.
    """
    judgments = as_judgments(task, annotator, grade, n_tasks=n_tasks, scale=scale)
    resampling = Resampling.of(n_resamples, confidence, seed)
    n_values = judgments.scale.size
    first, second = _shared_label_pairs(judgments.task, judgments.annotator)
    if first.size == 0:
        return []
    pair_key = judgments.annotator[first] * judgments.n_annotators + judgments.annotator[second]
    by_pair = np.argsort(pair_key, kind="stable")
    keys, starts = np.unique(pair_key[by_pair], return_index=True)
    cells = (judgments.position[first] * n_values + judgments.position[second])[by_pair]
    kappa = _quadratic_kappa(n_values)
    pairs = []
    for key, pair_cells in zip(keys, np.split(cells, starts[1:]), strict=True):
        annotator_a, annotator_b = divmod(int(key), judgments.n_annotators)
        # A task's statistic is the one-hot of its cell: the cells are the kinds.
        multiplicity = np.bincount(pair_cells, minlength=n_values * n_values)
        cells_used = np.flatnonzero(multiplicity)
        one_hot = np.eye(n_values * n_values)[cells_used]
        (kappa_of_pair,) = _agreements(
            one_hot, multiplicity[cells_used], [kappa], resampling, rng_key=(annotator_a, annotator_b)
        )
        pairs.append(PairAgreement(annotator_a, annotator_b, kappa_of_pair))
    return pairs


def weighted_kappa(
    grade_a: ArrayLike,
    grade_b: ArrayLike,
    *,
    scale: ArrayLike,
    cluster: ArrayLike | None = None,
    n_resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
) -> Agreement:
    """Quadratic-weighted Cohen's kappa of two raters who graded the same items (`grade_a[i]`,
    `grade_b[i]`: item i), e.g. behaviour grades and aggregated human grades per (query, document).

    The formula of `pairwise_weighted_kappa`, the same as `sklearn.metrics.cohen_kappa_score(a, b,
    labels=scale, weights="quadratic")`. Interval: percentile bootstrap over clusters (`cluster[i]`: item i's
    cluster, e.g. its query; default each item its own), all items of a drawn cluster counted together;
    clusters with the same confusion counts are one kind, drawn as multinomial counts
    (`resampling.bootstrap_sums`). `n_tasks` in the result counts the clusters. Undefined (NaN) with fewer
    than two clusters, or when a rater used fewer than two grades.
    """
    scale = as_scale(scale)
    position_a = scale_positions(as_float(grade_a, "grade_a"), scale, "grade_a")
    position_b = scale_positions(as_float(grade_b, "grade_b"), scale, "grade_b")
    check_same_length(grade_a=position_a, grade_b=position_b)
    cluster = np.arange(position_a.size) if cluster is None else as_index(cluster, "cluster")
    check_same_length(grade_a=position_a, cluster=cluster)
    resampling = Resampling.of(n_resamples, confidence, seed)
    n_values = scale.size
    _, cluster = np.unique(cluster, return_inverse=True)
    n_clusters = int(cluster.max()) + 1 if cluster.size else 0
    counts = position_counts(
        cluster.ravel(), position_a * n_values + position_b, n_tasks=n_clusters, n_values=n_values**2
    )
    first, multiplicity = item_kinds(counts)
    (kappa,) = _agreements(
        counts[first].astype(float), multiplicity, [_quadratic_kappa(n_values)], resampling
    )
    return kappa


def _quadratic_kappa(n_values: int) -> Callable[[np.ndarray], np.ndarray]:
    """Quadratic-weighted kappa of [..., n_values²] summed confusion counts (NaN when a rater used fewer than
    two grades)."""
    weight = (np.arange(n_values)[:, None] - np.arange(n_values)[None, :]) ** 2.0

    def kappa(cell_sums: np.ndarray) -> np.ndarray:
        observed = cell_sums.reshape(*cell_sums.shape[:-1], n_values, n_values)
        n_shared = observed.sum(axis=(-2, -1))[..., None, None]
        expected = observed.sum(axis=-1)[..., :, None] * observed.sum(axis=-2)[..., None, :] / n_shared
        disagreement = (weight * observed).sum(axis=(-2, -1))
        value = 1 - divide_or_nan(disagreement, (weight * expected).sum(axis=(-2, -1)))
        grades_a = (observed.sum(axis=-1) > 0).sum(axis=-1)
        grades_b = (observed.sum(axis=-2) > 0).sum(axis=-1)
        return np.where((grades_a < 2) | (grades_b < 2), np.nan, value)

    return kappa


def _agreements(
    kind_statistics: np.ndarray,
    multiplicity: np.ndarray,
    coefficients: list[Callable[[np.ndarray], np.ndarray]],
    resampling: Resampling,
    rng_key: tuple[int, ...] = (),
) -> list[Agreement]:
    """Each coefficient of the tasks' summed statistics ([kinds × k], `multiplicity` tasks of each kind),
    with its percentile bootstrap interval over tasks; the coefficients share the resamples, drawn once from
    `np.random.default_rng([seed, *rng_key])`. Undefined under two tasks."""
    n_tasks = int(multiplicity.sum())
    if n_tasks < 2:
        why = Undefined.ONE_TASK if n_tasks else Undefined.NO_TASKS
        return [Agreement(np.nan, np.nan, np.nan, n_tasks, 0, why) for _ in coefficients]
    values = [float(coefficient(multiplicity @ kind_statistics)) for coefficient in coefficients]
    if all(np.isnan(values)):
        return [_resampled(value, None, n_tasks, resampling) for value in values]
    rng = np.random.default_rng([resampling.seed, *rng_key])
    sums = bootstrap_sums(kind_statistics, resampling, rng, multiplicity=multiplicity)
    return [
        _resampled(value, coefficient(sums), n_tasks, resampling)
        for coefficient, value in zip(coefficients, values, strict=True)
    ]


def _resampled(value: float, resampled: np.ndarray | None, n_tasks: int, resampling: Resampling) -> Agreement:
    """A coefficient's value with the percentile interval of its resampled values (where it is defined)."""
    if np.isnan(value) or resampled is None:
        return Agreement(np.nan, np.nan, np.nan, n_tasks, 0, Undefined.NO_VARIATION)
    resampled = resampled[np.isfinite(resampled)]
    if resampled.size == 0:
        return Agreement(value, np.nan, np.nan, n_tasks, 0)
    low, high = resampling.interval(resampled)
    return Agreement(value, float(low), float(high), n_tasks, int(resampled.size))


def _as_level(level: object) -> MeasurementLevel:
    try:
        return MeasurementLevel(str(level))
    except ValueError:
        choices = ", ".join(repr(choice.value) for choice in MeasurementLevel)
        raise ValueError(f"level must be one of {choices}, got {level!r}") from None


def _alpha_distance(level: MeasurementLevel, scale: np.ndarray, n_value: np.ndarray) -> np.ndarray:
    """δ²(c, k) between every two grades of the scale; the ordinal one depends on the pairable counts."""
    if level is MeasurementLevel.NOMINAL:
        return 1.0 - np.eye(scale.size)
    if level is MeasurementLevel.INTERVAL:
        return (scale[:, None] - scale[None, :]) ** 2
    index = np.arange(scale.size)
    low, high = np.minimum.outer(index, index), np.maximum.outer(index, index)
    cumulative = np.cumsum(n_value, axis=-1)
    between = cumulative[..., high] - cumulative[..., low] + n_value[..., low]
    return (between - (n_value[..., :, None] + n_value[..., None, :]) / 2) ** 2


def _shared_label_pairs(task: np.ndarray, annotator: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Indices (i, j) of every two labels of the same task, with annotator[i] < annotator[j]."""
    order = np.lexsort((annotator, task))
    ordered_task = task[order]
    largest = np.bincount(task).max() if task.size else 0
    first, second = [], []
    for offset in range(1, largest):
        same_task = ordered_task[offset:] == ordered_task[:-offset]
        first.append(order[:-offset][same_task])
        second.append(order[offset:][same_task])
    if not first:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    return np.concatenate(first), np.concatenate(second)
