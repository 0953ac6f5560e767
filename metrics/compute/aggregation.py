"""From many annotators' labels to one label per task.

Relevance grades: `aggregate_grades` applies the campaign's `AggregationMethod`, then the reviewers'
adjudications; raw labels are inputs only and never changed. Side-by-side verdicts: `verdict_counts` and
`majority_verdict`. Inputs are columnar (see `metrics.compute.labels`); every task index 0..n_tasks-1 gets one
output, NaN where the task has no label.
"""

from dataclasses import dataclass
from enum import StrEnum

import numpy as np
from numpy.typing import ArrayLike
from scipy import sparse

from metrics.compute.labels import (
    VERDICT_SCALE,
    Judgments,
    TaskLabels,
    as_index,
    as_judgments,
    as_task_labels,
    as_verdict_positions,
    check_count,
    check_same_length,
    consensus_credit,
    divide_or_nan,
    gold_position_of_tasks,
    grouped_median,
    position_counts,
)

DAWID_SKENE_MAX_ITER = 500
DAWID_SKENE_TOL = 1e-6
DAWID_SKENE_SMOOTHING = 0.01
# Converged once the grades it reports have not changed for this many rounds in a row: on real crowds the
# posteriors keep creeping for hundreds of rounds after the grades settle.
DAWID_SKENE_STABLE_ROUNDS = 50
# Below this share of labelled tasks with two labels or more, confusions are learnt from too few tasks and
# Dawid–Skene does worse than majority (0.644 against 0.691 on a real crowd with most tasks labelled once):
# it falls back to majority.
DAWID_SKENE_MIN_OVERLAP_SHARE = 0.5


class AggregationMethod(StrEnum):
    MEAN = "mean"
    MEDIAN = "median"
    MAJORITY = "majority"
    WEIGHTED = "weighted"
    DAWID_SKENE = "dawid_skene"


@dataclass(frozen=True)
class AggregatedGrades:
    """One grade per task, the method that produced it, and which tasks a reviewer's grade decided.

    For Dawid–Skene, `converged` says whether its fit converged and `fell_back` whether it fell back to
    majority (see `dawid_skene`); both None for the other methods."""

    grade: np.ndarray
    method: AggregationMethod
    adjudicated: np.ndarray
    converged: bool | None = None
    fell_back: bool | None = None


@dataclass(frozen=True)
class DawidSkeneFit:
    """The fitted Dawid–Skene model.

    `grade`: each task's most probable grade (NaN without labels); `posterior`: [n_tasks × scale] the
    probability of each true grade (NaN rows without labels); `class_prior`: [scale] the share of each true
    grade; `confusion`: [n_annotators × true grade × given grade] the probability that an annotator gives
    each grade when the true grade is each grade. `converged`: whether EM stopped before `max_iter`, its
    grades unchanged for `stable_rounds` rounds or its posteriors by at most `tol`. `fell_back`:
    too few tasks had two labels (under `DAWID_SKENE_MIN_OVERLAP_SHARE` of the labelled ones), so the
    confusions could not be learnt and the fit is majority's.
    """

    grade: np.ndarray
    posterior: np.ndarray
    class_prior: np.ndarray
    confusion: np.ndarray
    n_iterations: int
    converged: bool
    fell_back: bool = False


def aggregate_grades(
    task: ArrayLike,
    annotator: ArrayLike,
    grade: ArrayLike,
    *,
    n_tasks: int,
    scale: ArrayLike,
    method: AggregationMethod | str = AggregationMethod.MEAN,
    gold: TaskLabels | None = None,
    adjudication: TaskLabels | None = None,
    min_gold: int = 5,
) -> AggregatedGrades:
    """Each task's grade by `method`, replaced by the reviewer's grade where `adjudication` has one.

    `gold` and `min_gold` matter to `weighted` only (see `annotator_reliability`). Dawid–Skene runs with the
    defaults of `dawid_skene`. A task without labels is NaN unless it was adjudicated.
    """
    try:
        method = AggregationMethod(method)
    except ValueError:
        choices = ", ".join(repr(choice.value) for choice in AggregationMethod)
        raise ValueError(f"method must be one of {choices}, got {method!r}") from None
    judgments = as_judgments(task, annotator, grade, n_tasks=n_tasks, scale=scale)
    gold_labels = _as_gold(gold, judgments)
    min_gold = _as_min_gold(min_gold)
    if adjudication is not None:
        adjudicated_task, adjudicated_position = as_task_labels(
            adjudication, "adjudication", n_tasks=judgments.n_tasks, scale=judgments.scale
        )
    else:
        adjudicated_task = adjudicated_position = np.zeros(0, dtype=np.int64)

    fit_state = {}
    if method is AggregationMethod.MEAN:
        aggregate = _mean_grades(judgments)
    elif method is AggregationMethod.MEDIAN:
        aggregate = grouped_median(judgments.task, judgments.grade, n_groups=judgments.n_tasks)
    elif method is AggregationMethod.MAJORITY:
        aggregate = _majority_grades(judgments)
    elif method is AggregationMethod.WEIGHTED:
        aggregate = _weighted_grades(judgments, _reliability(judgments, gold_labels, min_gold))
    else:
        fit = _dawid_skene(
            judgments, max_iter=DAWID_SKENE_MAX_ITER, tol=DAWID_SKENE_TOL, smoothing=DAWID_SKENE_SMOOTHING
        )
        aggregate, fit_state = fit.grade, {"converged": fit.converged, "fell_back": fit.fell_back}

    adjudicated = np.zeros(judgments.n_tasks, dtype=bool)
    adjudicated[adjudicated_task] = True
    aggregate[adjudicated_task] = judgments.scale[adjudicated_position]
    return AggregatedGrades(grade=aggregate, method=method, adjudicated=adjudicated, **fit_state)


def mean_grades(
    task: ArrayLike, annotator: ArrayLike, grade: ArrayLike, *, n_tasks: int, scale: ArrayLike
) -> np.ndarray:
    """The average of each task's grades, kept fractional: grades 3, 2, 2 give 7/3 ≈ 2.333."""
    return _mean_grades(as_judgments(task, annotator, grade, n_tasks=n_tasks, scale=scale))


def median_grades(
    task: ArrayLike, annotator: ArrayLike, grade: ArrayLike, *, n_tasks: int, scale: ArrayLike
) -> np.ndarray:
    """The median of each task's grades; with an even number, the midpoint of the middle two (2, 3 → 2.5)."""
    judgments = as_judgments(task, annotator, grade, n_tasks=n_tasks, scale=scale)
    return grouped_median(judgments.task, judgments.grade, n_groups=judgments.n_tasks)


def majority_grades(
    task: ArrayLike, annotator: ArrayLike, grade: ArrayLike, *, n_tasks: int, scale: ArrayLike
) -> np.ndarray:
    """The most common grade of each task; a tie goes to the lowest of the tied grades (3, 3, 1, 1 → 1)."""
    return _majority_grades(as_judgments(task, annotator, grade, n_tasks=n_tasks, scale=scale))


def weighted_grades(
    task: ArrayLike,
    annotator: ArrayLike,
    grade: ArrayLike,
    *,
    n_tasks: int,
    scale: ArrayLike,
    gold: TaskLabels | None = None,
    min_gold: int = 5,
) -> np.ndarray:
    """Each task's mean grade with every annotator weighted by `annotator_reliability`.

    sum_a(w_a · grade_a) / sum_a(w_a) over the task's annotators; a task whose annotators all weigh 0 gets
    the plain mean.
    """
    judgments = as_judgments(task, annotator, grade, n_tasks=n_tasks, scale=scale)
    reliability = _reliability(judgments, _as_gold(gold, judgments), _as_min_gold(min_gold))
    return _weighted_grades(judgments, reliability)


def annotator_reliability(
    task: ArrayLike,
    annotator: ArrayLike,
    grade: ArrayLike,
    *,
    n_tasks: int,
    scale: ArrayLike,
    gold: TaskLabels | None = None,
    min_gold: int = 5,
) -> np.ndarray:
    """[n_annotators] the weight of each annotator in `weighted`, in [0, 1].

    Gold accuracy (the share of their gold tasks graded exactly the gold grade) for annotators with at least
    `min_gold` gold tasks; otherwise their agreement with the leave-one-out consensus (see
    `metrics.compute.labels.consensus_credit`). An annotator with neither (no gold, never sharing a task)
    weighs the mean reliability of the others, or 1 when nobody has one.
    """
    judgments = as_judgments(task, annotator, grade, n_tasks=n_tasks, scale=scale)
    return _reliability(judgments, _as_gold(gold, judgments), _as_min_gold(min_gold))


def dawid_skene(
    task: ArrayLike,
    annotator: ArrayLike,
    grade: ArrayLike,
    *,
    n_tasks: int,
    scale: ArrayLike,
    max_iter: int = DAWID_SKENE_MAX_ITER,
    tol: float = DAWID_SKENE_TOL,
    smoothing: float = DAWID_SKENE_SMOOTHING,
    stable_rounds: int = DAWID_SKENE_STABLE_ROUNDS,
) -> DawidSkeneFit:
    """Dawid & Skene (1979): EM over a class prior and one confusion matrix per annotator.

    Starts from each task's vote shares (soft majority). M-step: prior_k ∝ sum_i P(true_i = k) and
    confusion_a[k, l] ∝ sum of P(true_i = k) over tasks i that annotator a graded l, each cell plus
    `smoothing` so that a confusion never seen keeps a small probability. E-step: P(true_i = k) ∝ prior_k ·
    prod_a confusion_a[k, grade_ai]. A task's grade is its most probable true grade (ties to the lower
    grade). It converges on what it reports: it stops when no grade has changed for `stable_rounds` rounds
    in a row (0: never), or no posterior moves by more than `tol`; else after `max_iter` rounds, not
    converged. (On a hard crowd EM may still move a grade or two of thousands long after; the posteriors
    themselves creep for hundreds of rounds more.)

    Confusions are learnt from tasks that several annotators graded. When fewer than
    `DAWID_SKENE_MIN_OVERLAP_SHARE` of the labelled tasks have two labels there is too little to learn from
    (with none, EM would only pull every label towards the commonest grade; with a few, it does worse than
    majority), so the fit falls back to majority, with `fell_back` set, the vote shares as posterior, the
    labels' shares as prior and identity confusions, and `converged` True (nothing to iterate).
    """
    judgments = as_judgments(task, annotator, grade, n_tasks=n_tasks, scale=scale)
    max_iter = check_count(max_iter, "max_iter")
    if max_iter < 1:
        raise ValueError("max_iter must be at least 1")
    if not np.isfinite(tol) or tol <= 0:
        raise ValueError(f"tol must be positive, got {tol!r}")
    if not np.isfinite(smoothing) or smoothing <= 0:
        raise ValueError(f"smoothing must be positive, got {smoothing!r}")
    stable_rounds = check_count(stable_rounds, "stable_rounds")
    return _dawid_skene(
        judgments, max_iter=max_iter, tol=float(tol), smoothing=float(smoothing), stable_rounds=stable_rounds
    )


def verdict_counts(task: ArrayLike, verdict: ArrayLike, *, n_tasks: int) -> np.ndarray:
    """[n_tasks × 3] each task's number of bad (-1), same (0) and good (+1) verdicts, in that column order."""
    task, position, n_tasks = _as_verdicts(task, verdict, n_tasks)
    return position_counts(task, position, n_tasks=n_tasks, n_values=VERDICT_SCALE.size)


def majority_verdict(
    task: ArrayLike, verdict: ArrayLike, *, n_tasks: int, adjudication: TaskLabels | None = None
) -> np.ndarray:
    """Each task's most common verdict (+1, 0, -1); any tie for most common gives 0 (same).

    A reviewer's verdict in `adjudication` replaces the majority. NaN where a task has neither.
    """
    task, position, n_tasks = _as_verdicts(task, verdict, n_tasks)
    counts = position_counts(task, position, n_tasks=n_tasks, n_values=VERDICT_SCALE.size)
    top = counts.max(axis=1, keepdims=True)
    unique_top = (counts == top).sum(axis=1) == 1
    majority = np.where(unique_top, VERDICT_SCALE[counts.argmax(axis=1)], 0.0)
    majority[counts.sum(axis=1) == 0] = np.nan
    if adjudication is not None:
        adjudicated_task, adjudicated_position = as_task_labels(
            adjudication, "adjudication", n_tasks=n_tasks, scale=VERDICT_SCALE
        )
        majority[adjudicated_task] = VERDICT_SCALE[adjudicated_position]
    return majority


def _as_verdicts(task: ArrayLike, verdict: ArrayLike, n_tasks: object) -> tuple[np.ndarray, np.ndarray, int]:
    n_tasks = check_count(n_tasks, "n_tasks")
    task = as_index(task, "task", size=n_tasks, size_name="n_tasks")
    position = as_verdict_positions(verdict)
    check_same_length(task=task, verdict=position)
    return task, position, n_tasks


def _as_gold(gold: TaskLabels | None, judgments: Judgments) -> tuple[np.ndarray, np.ndarray] | None:
    if gold is None:
        return None
    return as_task_labels(gold, "gold", n_tasks=judgments.n_tasks, scale=judgments.scale)


def _as_min_gold(min_gold: object) -> int:
    min_gold = check_count(min_gold, "min_gold")
    if min_gold < 1:
        raise ValueError("min_gold must be at least 1")
    return min_gold


def _mean_grades(judgments: Judgments) -> np.ndarray:
    n_labels = np.bincount(judgments.task, minlength=judgments.n_tasks)
    return divide_or_nan(
        np.bincount(judgments.task, weights=judgments.grade, minlength=judgments.n_tasks), n_labels
    )


def _majority_grades(judgments: Judgments) -> np.ndarray:
    counts = position_counts(
        judgments.task, judgments.position, n_tasks=judgments.n_tasks, n_values=judgments.scale.size
    )
    # argmax returns the first of tied maxima: the lowest grade, since the scale is increasing.
    majority = judgments.scale[counts.argmax(axis=1)]
    majority[counts.sum(axis=1) == 0] = np.nan
    return majority


def _reliability(
    judgments: Judgments, gold: tuple[np.ndarray, np.ndarray] | None, min_gold: int
) -> np.ndarray:
    n_annotators = judgments.n_annotators
    credit, has_consensus = consensus_credit(judgments)
    n_shared = np.bincount(judgments.annotator[has_consensus], minlength=n_annotators)
    reliability = divide_or_nan(
        np.bincount(judgments.annotator, weights=credit, minlength=n_annotators), n_shared
    )
    if gold is not None:
        gold_position = gold_position_of_tasks(*gold, n_tasks=judgments.n_tasks)[judgments.task]
        on_gold = gold_position >= 0
        n_gold = np.bincount(judgments.annotator[on_gold], minlength=n_annotators)
        n_correct = np.bincount(
            judgments.annotator[on_gold],
            weights=(judgments.position[on_gold] == gold_position[on_gold]).astype(float),
            minlength=n_annotators,
        )
        enough_gold = n_gold >= min_gold
        reliability[enough_gold] = n_correct[enough_gold] / n_gold[enough_gold]
    known = ~np.isnan(reliability)
    reliability[~known] = reliability[known].mean() if known.any() else 1.0
    return reliability


def _weighted_grades(judgments: Judgments, reliability: np.ndarray) -> np.ndarray:
    weight = reliability[judgments.annotator]
    total_weight = np.bincount(judgments.task, weights=weight, minlength=judgments.n_tasks)
    weighted_total = np.bincount(
        judgments.task, weights=weight * judgments.grade, minlength=judgments.n_tasks
    )
    aggregate = _mean_grades(judgments)
    np.divide(weighted_total, total_weight, out=aggregate, where=total_weight > 0)
    return aggregate


def _dawid_skene(
    judgments: Judgments,
    *,
    max_iter: int,
    tol: float,
    smoothing: float,
    stable_rounds: int = DAWID_SKENE_STABLE_ROUNDS,
) -> DawidSkeneFit:
    n_tasks, n_annotators, n_values = judgments.n_tasks, judgments.n_annotators, judgments.scale.size
    labelled = np.bincount(judgments.task, minlength=n_tasks) > 0
    compact_task = (np.cumsum(labelled) - 1)[judgments.task]
    # graded[i, a·V + l] = 1 when annotator a gave labelled task i the grade l: each EM step becomes one
    # sparse product, with no per-label arrays.
    graded = sparse.csr_array(
        (np.ones(judgments.task.size), (compact_task, judgments.annotator * n_values + judgments.position)),
        shape=(int(labelled.sum()), n_annotators * n_values),
    )
    graded_by_annotator = graded.T.tocsr()
    counts = position_counts(compact_task, judgments.position, n_tasks=graded.shape[0], n_values=n_values)
    posterior = counts / counts.sum(axis=1, keepdims=True)
    overlapped = (counts.sum(axis=1) >= 2).mean() if judgments.task.size else 1.0
    if overlapped < DAWID_SKENE_MIN_OVERLAP_SHARE:
        class_prior = counts.sum(axis=0) / counts.sum()
        confusion = np.broadcast_to(np.eye(n_values), (n_annotators, n_values, n_values)).copy()
        full_posterior = np.full((n_tasks, n_values), np.nan)
        full_posterior[labelled] = posterior
        grade = _majority_grades(judgments)
        return DawidSkeneFit(grade, full_posterior, class_prior, confusion, 0, True, fell_back=True)

    converged = False
    class_prior = np.full(n_values, 1.0 / n_values)
    confusion = np.full((n_annotators, n_values, n_values), 1.0 / n_values)
    n_iterations = stable = 0
    reported = posterior.argmax(axis=1)
    while judgments.task.size and n_iterations < max_iter:
        n_iterations += 1
        class_prior = (posterior.sum(axis=0) + smoothing) / (len(posterior) + n_values * smoothing)
        given_by_true = (graded_by_annotator @ posterior).reshape(n_annotators, n_values, n_values)
        confusion = given_by_true.transpose(0, 2, 1) + smoothing
        confusion /= confusion.sum(axis=2, keepdims=True)

        log_confusion_by_given = (
            np.log(confusion).transpose(0, 2, 1).reshape(n_annotators * n_values, n_values)
        )
        log_joint = np.log(class_prior) + graded @ log_confusion_by_given
        updated = np.exp(log_joint - log_joint.max(axis=1, keepdims=True))
        updated /= updated.sum(axis=1, keepdims=True)
        change = np.abs(updated - posterior).max()
        posterior = updated
        grades = posterior.argmax(axis=1)
        stable = stable + 1 if np.array_equal(grades, reported) else 0
        reported = grades
        if change <= tol or (stable_rounds and stable >= stable_rounds):
            converged = True
            break

    full_posterior = np.full((n_tasks, n_values), np.nan)
    full_posterior[labelled] = posterior
    grade = np.full(n_tasks, np.nan)
    grade[labelled] = judgments.scale[posterior.argmax(axis=1)]
    return DawidSkeneFit(grade, full_posterior, class_prior, confusion, n_iterations, converged)
