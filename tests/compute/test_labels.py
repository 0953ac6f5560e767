"""Shared label helpers: kinds of rows, lookups in sorted ids, and the leave-one-out consensus worked out per
kind of task."""

import numpy as np
import pytest

from metrics.compute.labels import (
    TaskLabels,
    as_judgments,
    consensus_credit,
    overridden_labels,
    row_kinds,
    sorted_find,
)
from metrics.compute.resampling import item_kinds

SCALE = [0.0, 1.0, 2.0, 3.0]


def test_sorted_find_says_what_is_missing_rather_than_matching_a_neighbour():
    # e.g. judgments whose task was not in the tasks read: left out, not given to the next task
    position, known = sorted_find(np.array([10, 20, 30]), np.array([20, 25, 30, 31, 5]))
    assert known.tolist() == [True, False, True, False, False]
    assert position[known].tolist() == [1, 2]
    position, known = sorted_find(np.zeros(0, dtype=np.int64), np.array([1, 2]))
    assert known.tolist() == [False, False]


def test_row_kinds_number_kinds_by_their_first_row():
    rows = np.array([[2, 0], [1, 1], [2, 0], [0, 5], [1, 1]])
    kind, first = row_kinds(rows)
    assert kind.tolist() == [0, 1, 0, 2, 1]
    assert first.tolist() == [0, 1, 3]
    first, multiplicity = item_kinds(rows)
    assert (first.tolist(), multiplicity.tolist()) == ([0, 1, 3], [2, 2, 1])


def test_row_kinds_of_rows_too_wide_for_one_integer():
    # 2^40 possible values in each of two columns: the rows are compared as rows, with the same kinds.
    rows = np.array([[2**40, 0], [0, 2**40], [2**40, 0]])
    kind, first = row_kinds(rows)
    assert (kind.tolist(), first.tolist()) == ([0, 1, 0], [0, 1])
    assert [size.size for size in row_kinds(np.zeros((0, 3), dtype=np.int64))] == [0, 0]


def brute_force_credit(task, grade):
    """Each label against the most common grades among the other labels of its task, one label at a time."""
    credit, has_consensus = [], []
    for i in range(len(task)):
        others = [grade[j] for j in range(len(task)) if task[j] == task[i] and j != i]
        counts = {value: others.count(value) for value in SCALE}
        top = max(counts.values())
        tied = [value for value, count in counts.items() if count == top]
        has_consensus.append(bool(others))
        credit.append(1 / len(tied) if others and grade[i] in tied else 0.0)
    return np.array(credit), np.array(has_consensus)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_consensus_credit_matches_label_by_label(seed):
    rng = np.random.default_rng(seed)
    n_tasks = 40
    task = np.concatenate([np.full(rng.integers(1, 6), t) for t in range(n_tasks)])
    annotator = np.concatenate([np.arange((task == t).sum()) for t in range(n_tasks)])
    grade = rng.choice(SCALE, task.size)
    shuffle = rng.permutation(task.size)
    task, annotator, grade = task[shuffle], annotator[shuffle], grade[shuffle]
    judgments = as_judgments(task, annotator, grade, n_tasks=n_tasks, scale=SCALE)
    credit, has_consensus = consensus_credit(judgments)
    expected_credit, expected_has = brute_force_credit(task.tolist(), grade.tolist())
    np.testing.assert_allclose(credit, expected_credit, rtol=0, atol=1e-15)
    assert has_consensus.tolist() == expected_has.tolist()


def test_overridden_labels_by_hand():
    # Tasks 0..3; final labels for tasks 2 (grade 1) and 0 (grade 3), unsorted.
    final = TaskLabels(np.array([2, 0]), np.array([1.0, 3.0]))
    label_task, label_value = np.array([0, 0, 1, 2, 2, 3]), np.array([3.0, 2.0, 0.0, 0.0, 2.0, 1.0])
    assert overridden_labels(label_task, label_value, final) == 3  # task 0's 2, task 2's 0 and 2
    assert overridden_labels(label_task, label_value, TaskLabels(np.array([]), np.array([]))) == 0
