import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from metrics.compute.aggregation import (
    AggregationMethod,
    aggregate_grades,
    annotator_reliability,
    dawid_skene,
    majority_grades,
    majority_verdict,
    mean_grades,
    median_grades,
    verdict_counts,
    weighted_grades,
)
from metrics.compute.labels import TaskLabels

SCALE = np.array([0.0, 1.0, 2.0, 3.0])
SCALE_WITH_NEGATIVE = np.array([-1.0, 0.0, 1.0, 2.0, 3.0])


def labels(*rows):
    """(task, annotator, grade) rows as the three columns a selector fetches."""
    task, annotator, grade = zip(*rows, strict=True)
    return np.array(task), np.array(annotator), np.array(grade, dtype=float)


def test_mean_keeps_the_average_fractional():
    task, annotator, grade = labels((0, 0, 3), (0, 1, 2), (0, 2, 2))
    result = aggregate_grades(task, annotator, grade, n_tasks=1, scale=SCALE)
    assert result.method is AggregationMethod.MEAN
    assert result.grade[0] == pytest.approx(7 / 3, abs=1e-15)
    assert round(result.grade[0], 3) == 2.333


def test_a_task_without_labels_is_nan_for_every_method():
    task, annotator, grade = labels((0, 0, 1), (0, 1, 2), (2, 0, 3))
    for method in AggregationMethod:
        result = aggregate_grades(task, annotator, grade, n_tasks=3, scale=SCALE, method=method)
        assert np.isnan(result.grade[1]), method
        assert not np.isnan(result.grade[[0, 2]]).any(), method


def test_median_of_odd_and_even_counts_and_negative_grades():
    task, annotator, grade = labels(
        (0, 0, 3), (0, 1, 0), (0, 2, 1), (1, 0, 2), (1, 1, 3), (2, 0, -1), (2, 1, -1), (2, 2, 3), (2, 3, 0)
    )
    median = median_grades(task, annotator, grade, n_tasks=3, scale=SCALE_WITH_NEGATIVE)
    np.testing.assert_array_equal(median, [1.0, 2.5, -0.5])


def test_majority_picks_the_most_common_grade():
    task, annotator, grade = labels((0, 0, 2), (0, 1, 2), (0, 2, 0), (1, 0, -1), (1, 1, -1), (1, 2, 3))
    np.testing.assert_array_equal(
        majority_grades(task, annotator, grade, n_tasks=2, scale=SCALE_WITH_NEGATIVE), [2.0, -1.0]
    )


def test_majority_tie_goes_to_the_lower_grade():
    task, annotator, grade = labels(
        (0, 0, 3), (0, 1, 3), (0, 2, 1), (0, 3, 1), (1, 0, 2), (1, 1, -1), (2, 0, 0), (2, 1, 2), (2, 2, 3)
    )
    np.testing.assert_array_equal(
        majority_grades(task, annotator, grade, n_tasks=3, scale=SCALE_WITH_NEGATIVE), [1.0, -1.0, 0.0]
    )


@pytest.mark.parametrize("method", list(AggregationMethod))
def test_adjudication_replaces_the_aggregate_and_leaves_raw_labels_alone(method):
    task, annotator, grade = labels((0, 0, 3), (0, 1, 3), (0, 2, 3), (1, 0, 1), (1, 1, 2), (2, 0, 0))
    raw = (task.copy(), annotator.copy(), grade.copy())
    adjudication = TaskLabels(task=np.array([0, 3]), label=np.array([1.0, 2.0]))
    plain = aggregate_grades(task, annotator, grade, n_tasks=4, scale=SCALE, method=method)
    result = aggregate_grades(
        task, annotator, grade, n_tasks=4, scale=SCALE, method=method, adjudication=adjudication
    )
    assert result.grade[0] == 1.0  # three annotators said 3; the reviewer's 1 wins
    assert result.grade[3] == 2.0  # a task nobody labelled still takes the reviewer's grade
    np.testing.assert_array_equal(result.grade[1:3], plain.grade[1:3])
    np.testing.assert_array_equal(result.adjudicated, [True, False, False, True])
    assert not plain.adjudicated.any()
    for before, after in zip(raw, (task, annotator, grade), strict=True):
        np.testing.assert_array_equal(before, after)


def test_method_is_accepted_by_its_stored_name_and_recorded():
    task, annotator, grade = labels((0, 0, 1), (0, 1, 3))
    for method in AggregationMethod:
        result = aggregate_grades(task, annotator, grade, n_tasks=1, scale=SCALE, method=method.value)
        assert result.method is method


def test_method_names_are_the_ones_the_platform_stores():
    from annotation.models import Aggregation

    assert [method.value for method in AggregationMethod] == list(Aggregation.values)


def test_dispatcher_matches_the_per_method_functions():
    rng = np.random.default_rng(3)
    task = np.repeat(np.arange(40), 3)
    annotator = np.concatenate([rng.choice(6, 3, replace=False) for _ in range(40)])
    grade = rng.choice(SCALE, task.size)
    expected = {
        AggregationMethod.MEAN: mean_grades(task, annotator, grade, n_tasks=41, scale=SCALE),
        AggregationMethod.MEDIAN: median_grades(task, annotator, grade, n_tasks=41, scale=SCALE),
        AggregationMethod.MAJORITY: majority_grades(task, annotator, grade, n_tasks=41, scale=SCALE),
        AggregationMethod.WEIGHTED: weighted_grades(task, annotator, grade, n_tasks=41, scale=SCALE),
        AggregationMethod.DAWID_SKENE: dawid_skene(task, annotator, grade, n_tasks=41, scale=SCALE).grade,
    }
    for method, grades in expected.items():
        result = aggregate_grades(task, annotator, grade, n_tasks=41, scale=SCALE, method=method)
        np.testing.assert_array_equal(result.grade, grades)


def test_mean_and_median_match_a_per_task_loop():
    rng = np.random.default_rng(5)
    n_tasks = 50
    task = rng.integers(0, n_tasks, 400)
    annotator = np.zeros_like(task)
    for index in range(n_tasks):  # a distinct annotator for every label of a task
        annotator[task == index] = np.arange((task == index).sum())
    grade = rng.choice(SCALE_WITH_NEGATIVE, task.size)
    mean = mean_grades(task, annotator, grade, n_tasks=n_tasks, scale=SCALE_WITH_NEGATIVE)
    median = median_grades(task, annotator, grade, n_tasks=n_tasks, scale=SCALE_WITH_NEGATIVE)
    for index in range(n_tasks):
        own = grade[task == index]
        expected_mean = own.mean() if own.size else np.nan
        expected_median = np.median(own) if own.size else np.nan
        np.testing.assert_allclose(mean[index], expected_mean, rtol=0, atol=1e-12)
        np.testing.assert_allclose(median[index], expected_median, rtol=0, atol=0)


@pytest.mark.parametrize("method", list(AggregationMethod))
def test_the_order_of_the_labels_does_not_matter(method):
    rng = np.random.default_rng(11)
    task = np.repeat(np.arange(30), 4)
    annotator = np.tile(np.arange(4), 30)
    grade = rng.choice(SCALE, task.size)
    shuffle = rng.permutation(task.size)
    result = aggregate_grades(task, annotator, grade, n_tasks=30, scale=SCALE, method=method)
    shuffled = aggregate_grades(
        task[shuffle], annotator[shuffle], grade[shuffle], n_tasks=30, scale=SCALE, method=method
    )
    np.testing.assert_allclose(result.grade, shuffled.grade, rtol=0, atol=1e-12)


def test_reliability_falls_back_to_leave_one_out_consensus():
    # Task 0: 2, 2, 0. Task 1: 1, 1, 1. Task 2: annotator 3 alone.
    task, annotator, grade = labels(
        (0, 0, 2), (0, 1, 2), (0, 2, 0), (1, 0, 1), (1, 1, 1), (1, 2, 1), (2, 3, 3)
    )
    reliability = annotator_reliability(task, annotator, grade, n_tasks=3, scale=SCALE)
    # Annotators 0 and 1 on task 0 see the others tie (2 and 0): half credit; annotator 2 sees 2, 2: none.
    # Annotator 3 never shares a task: the mean of the others.
    np.testing.assert_allclose(reliability, [0.75, 0.75, 0.5, 2 / 3], rtol=0, atol=1e-15)
    weighted = weighted_grades(task, annotator, grade, n_tasks=3, scale=SCALE)
    np.testing.assert_allclose(weighted, [(0.75 * 2 + 0.75 * 2) / 2.0, 1.0, 3.0], rtol=0, atol=1e-15)


def test_reliability_is_gold_accuracy_with_enough_gold():
    # Five gold tasks (all grade 2): annotator 0 right on all, annotator 1 on one. Task 5 is not gold.
    rows = [(t, 0, 2) for t in range(5)] + [(t, 1, 2 if t == 0 else 0) for t in range(5)]
    task, annotator, grade = labels(*rows, (5, 0, 3), (5, 1, 0))
    gold = TaskLabels(task=np.arange(5), label=np.full(5, 2.0))
    reliability = annotator_reliability(task, annotator, grade, n_tasks=6, scale=SCALE, gold=gold, min_gold=5)
    np.testing.assert_allclose(reliability, [1.0, 0.2], rtol=0, atol=1e-15)
    weighted = aggregate_grades(
        task, annotator, grade, n_tasks=6, scale=SCALE, method="weighted", gold=gold, min_gold=5
    )
    assert weighted.grade[5] == pytest.approx((1.0 * 3 + 0.2 * 0) / 1.2, abs=1e-15)
    # With too little gold both fall back to agreement with each other: 1/6 each, an unweighted mean.
    too_little = annotator_reliability(task, annotator, grade, n_tasks=6, scale=SCALE, gold=gold, min_gold=6)
    np.testing.assert_allclose(too_little, [1 / 6, 1 / 6], rtol=0, atol=1e-15)


def test_weighted_falls_back_to_the_mean_when_every_weight_is_zero():
    task, annotator, grade = labels((0, 0, 0), (0, 1, 3))
    np.testing.assert_array_equal(
        annotator_reliability(task, annotator, grade, n_tasks=1, scale=SCALE), [0, 0]
    )
    np.testing.assert_array_equal(weighted_grades(task, annotator, grade, n_tasks=1, scale=SCALE), [1.5])


def simulated_annotators(seed: int, n_tasks: int, accuracy: np.ndarray):
    """Every annotator grades every task: right with their accuracy, otherwise a uniformly wrong grade."""
    rng = np.random.default_rng(seed)
    truth = rng.choice(SCALE.size, size=n_tasks, p=[0.4, 0.3, 0.2, 0.1])
    task = np.repeat(np.arange(n_tasks), accuracy.size)
    annotator = np.tile(np.arange(accuracy.size), n_tasks)
    right = rng.random(task.size) < accuracy[annotator]
    wrong = (truth[task] + rng.integers(1, SCALE.size, task.size)) % SCALE.size
    return SCALE[truth], task, annotator, SCALE[np.where(right, truth[task], wrong)]


def test_dawid_skene_beats_majority_on_annotators_of_known_accuracy():
    accuracy = np.array([0.9, 0.7, 0.55, 0.55, 0.55])
    truth, task, annotator, grade = simulated_annotators(7, 1000, accuracy)
    fit = dawid_skene(task, annotator, grade, n_tasks=1000, scale=SCALE)
    majority = majority_grades(task, annotator, grade, n_tasks=1000, scale=SCALE)
    assert fit.converged
    dawid_skene_accuracy = (fit.grade == truth).mean()
    majority_accuracy = (majority == truth).mean()
    assert dawid_skene_accuracy > majority_accuracy + 0.02, (dawid_skene_accuracy, majority_accuracy)
    # The confusion matrices recover each annotator's accuracy.
    recovered = np.einsum("k,akk->a", fit.class_prior, fit.confusion)
    np.testing.assert_allclose(recovered, accuracy, atol=0.04)


def test_dawid_skene_outputs_are_distributions():
    truth, task, annotator, grade = simulated_annotators(1, 200, np.array([0.8, 0.6, 0.6]))
    fit = dawid_skene(task, annotator, grade, n_tasks=201, scale=SCALE)
    np.testing.assert_allclose(fit.posterior[:200].sum(axis=1), 1.0, atol=1e-12)
    assert np.isnan(fit.posterior[200]).all() and np.isnan(fit.grade[200])
    np.testing.assert_allclose(fit.confusion.sum(axis=2), 1.0, atol=1e-12)
    assert fit.class_prior.sum() == pytest.approx(1.0, abs=1e-12)
    np.testing.assert_array_equal(fit.grade[:200], SCALE[fit.posterior[:200].argmax(axis=1)])


def test_dawid_skene_keeps_a_unanimous_grade():
    task, annotator, grade = labels((0, 0, 2), (0, 1, 2), (0, 2, 2), (1, 0, 0), (1, 1, 0), (1, 2, 0))
    np.testing.assert_array_equal(dawid_skene(task, annotator, grade, n_tasks=2, scale=SCALE).grade, [2, 0])


def test_dawid_skene_with_one_label_per_task_keeps_the_labels():
    # Overlap 1: nothing to learn confusions from. EM used to pull grades to the commonest (0,1,0,0,0,1) and
    # never converge.
    task, annotator, grade = np.arange(6), np.zeros(6, dtype=int), np.array([0, 1, 2, 3, 0, 1])
    fit = dawid_skene(task, annotator, grade, n_tasks=7, scale=SCALE)
    np.testing.assert_array_equal(fit.grade[:6], grade)
    assert np.isnan(fit.grade[6])
    assert (fit.converged, fit.fell_back, fit.n_iterations) == (True, True, 0)
    np.testing.assert_allclose(fit.class_prior, [2 / 6, 2 / 6, 1 / 6, 1 / 6])
    result = aggregate_grades(task, annotator, grade, n_tasks=6, scale=SCALE, method="dawid_skene")
    np.testing.assert_array_equal(result.grade, grade)
    assert (result.converged, result.fell_back) == (True, True)
    assert aggregate_grades(task, annotator, grade, n_tasks=6, scale=SCALE).converged is None


def test_dawid_skene_reports_a_fit_stopped_by_max_iter():
    rng = np.random.default_rng(3)
    task = np.repeat(np.arange(50), 3)
    annotator = np.tile(np.arange(3), 50)
    grade = rng.choice(SCALE, task.size)
    assert not dawid_skene(task, annotator, grade, n_tasks=50, scale=SCALE, max_iter=1).converged
    fit = dawid_skene(task, annotator, grade, n_tasks=50, scale=SCALE)
    assert fit.converged and not fit.fell_back


def test_empty_labels_give_nan_everywhere():
    empty = np.array([], dtype=np.int64)
    for method in AggregationMethod:
        result = aggregate_grades(empty, empty, np.array([]), n_tasks=2, scale=SCALE, method=method)
        assert np.isnan(result.grade).all()
    assert np.isnan(majority_verdict(empty, empty, n_tasks=2)).all()


def test_verdict_counts_columns_are_bad_same_good():
    counts = verdict_counts([0, 0, 0, 1, 2, 2], [1, 1, -1, 0, -1, -1], n_tasks=4)
    np.testing.assert_array_equal(counts, [[1, 0, 2], [0, 1, 0], [2, 0, 0], [0, 0, 0]])


def test_majority_verdict_ties_are_same():
    task = [0, 0, 0, 1, 1, 2, 2, 2, 2, 3, 3, 3]
    verdict = [1, 1, -1, 1, -1, 1, 1, 0, 0, -1, -1, 0]
    np.testing.assert_array_equal(majority_verdict(task, verdict, n_tasks=5), [1.0, 0.0, 0.0, -1.0, np.nan])


def test_adjudicated_verdict_replaces_the_majority():
    adjudication = TaskLabels(task=[0, 2], label=[-1, 1])
    np.testing.assert_array_equal(
        majority_verdict([0, 0, 1], [1, 1, 0], n_tasks=3, adjudication=adjudication), [-1.0, 0.0, 1.0]
    )


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"grade": [1.0, 5.0]}, "grade holds 5.0, which is not on the scale"),
        ({"task": [0, 3]}, "task must be less than n_tasks"),
        ({"task": [0.0, 1.0]}, "task must hold integers"),
        ({"annotator": [0, -1]}, "annotator must be non-negative"),
        ({"grade": [1.0]}, "same length"),
        ({"annotator": [0, 0], "task": [1, 1]}, "annotator 0 labels task 1 more than once"),
        ({"n_tasks": -1}, "n_tasks must be a non-negative integer"),
        ({"scale": [0, 2, 1]}, "scale must be strictly increasing"),
        ({"method": "trimmed"}, "method must be one of"),
        ({"min_gold": 0}, "min_gold must be at least 1"),
        ({"adjudication": TaskLabels([1, 1], [0, 2])}, "adjudication.task lists a task more than once"),
        ({"adjudication": TaskLabels([1], [0.5])}, "adjudication.label holds 0.5"),
        ({"gold": ([0], [1])}, "gold must be a TaskLabels"),
    ],
)
def test_invalid_input_is_refused_naming_the_argument(change, message):
    arguments = {
        "task": [0, 1],
        "annotator": [0, 1],
        "grade": [1.0, 2.0],
        "n_tasks": 3,
        "scale": SCALE,
        **change,
    }
    task, annotator, grade = arguments.pop("task"), arguments.pop("annotator"), arguments.pop("grade")
    with pytest.raises(ValueError, match=message):
        aggregate_grades(task, annotator, grade, **arguments)


def test_invalid_verdicts_are_refused():
    with pytest.raises(ValueError, match="verdict"):
        verdict_counts([0], [2], n_tasks=1)
    with pytest.raises(ValueError, match="same length"):
        majority_verdict([0, 1], [1], n_tasks=2)
    with pytest.raises(ValueError, match="smoothing must be positive"):
        dawid_skene([0], [0], [1.0], n_tasks=1, scale=SCALE, smoothing=0.0)


def test_compute_modules_import_no_django():
    code = (
        "import sys; import metrics.compute.aggregation, metrics.compute.agreement, "
        "metrics.compute.annotators; "
        "assert not any(name == 'django' or name.startswith('django.') for name in sys.modules), 'django'"
    )
    project = Path(__file__).resolve().parents[2]
    completed = subprocess.run([sys.executable, "-c", code], cwd=project, capture_output=True, text=True)
    assert completed.returncode == 0, completed.stderr


def _crowd(seed: int, n_tasks: int, n_workers: int, labels_per_task: list[float]):
    """A seeded crowd: binary truth, workers right with probability 0.45 to 0.95, tasks labelled 1, 2 or 3
    times with the given shares, each worker at most once a task."""
    rng = np.random.default_rng(seed)
    truth = rng.integers(0, 2, n_tasks)
    accuracy = rng.uniform(0.45, 0.95, n_workers)
    task = np.repeat(np.arange(n_tasks), rng.choice([1, 2, 3], n_tasks, p=labels_per_task))
    pairs = np.unique(np.c_[task, rng.integers(0, n_workers, task.size)], axis=0)
    task, worker = pairs[:, 0], pairs[:, 1]
    grade = np.where(rng.random(task.size) < accuracy[worker], truth[task], 1 - truth[task])
    return task, worker, grade


def test_dawid_skene_converges_on_the_grades_it_reports():
    # A hard crowd: its posteriors still move by more than 1e-6 after 500 rounds, its grades settle.
    task, worker, grade = _crowd(1, 3000, 300, [0.4, 0.4, 0.2])
    by_posteriors = dawid_skene(task, worker, grade, n_tasks=3000, scale=[0, 1], stable_rounds=0)
    assert (by_posteriors.n_iterations, by_posteriors.converged) == (500, False)
    fit = dawid_skene(task, worker, grade, n_tasks=3000, scale=[0, 1])
    assert fit.converged and fit.n_iterations < 300
    # Fifty more rounds change no grade: that is what converged means.
    longer = dawid_skene(task, worker, grade, n_tasks=3000, scale=[0, 1], max_iter=fit.n_iterations + 50)
    assert np.array_equal(fit.grade, longer.grade)


@pytest.mark.parametrize(("shares", "fell_back"), [([0.6, 0.3, 0.1], True), ([0.3, 0.5, 0.2], False)])
def test_dawid_skene_falls_back_to_majority_when_overlap_is_thin(shares, fell_back):
    # Under half of the tasks labelled twice or more (DAWID_SKENE_MIN_OVERLAP_SHARE): majority's grades.
    task, worker, grade = _crowd(4, 2000, 100, shares)
    fit = dawid_skene(task, worker, grade, n_tasks=2000, scale=[0, 1])
    assert fit.fell_back is fell_back
    if fell_back:
        assert fit.converged and np.array_equal(
            fit.grade, majority_grades(task, worker, grade, n_tasks=2000, scale=[0, 1])
        )
    aggregated = aggregate_grades(task, worker, grade, n_tasks=2000, scale=[0, 1], method="dawid_skene")
    assert aggregated.fell_back is fell_back
