"""Columnar label data shared by aggregation, agreement and annotator quality.

A selector fetches labels as parallel arrays, one entry per label: `task` (an index 0..n_tasks-1),
`annotator` (an index 0..n_annotators-1) and `grade` (a value on the campaign's scale). Side-by-side
verdicts use the same layout with the verdict (+1 good, 0 same, -1 bad, relative to the experimental model)
as the grade on the scale (-1, 0, 1).

The `check_*` / `as_*` functions validate public inputs (raising ValueError naming the argument); the others
work on already validated arrays.
"""

import hashlib
from dataclasses import dataclass
from numbers import Integral

import numpy as np
from numpy.typing import ArrayLike

VERDICT_SCALE = np.array([-1.0, 0.0, 1.0])


@dataclass(frozen=True)
class TaskLabels:
    """One fixed label for each of some tasks: gold grades, or a reviewer's adjudicated grades or verdicts."""

    task: np.ndarray
    label: np.ndarray


@dataclass(frozen=True)
class Judgments:
    """Validated columnar labels; `position` is each grade's index on the scale."""

    task: np.ndarray
    annotator: np.ndarray
    grade: np.ndarray
    position: np.ndarray
    n_tasks: int
    n_annotators: int
    scale: np.ndarray


def check_count(value: object, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, Integral) or value < 0:
        raise ValueError(f"{name} must be a non-negative integer, got {value!r}")
    return int(value)


def as_index(values: ArrayLike, name: str, *, size: int | None = None, size_name: str = "") -> np.ndarray:
    """A 1-D array of integer indices, each in [0, size) when `size` is given."""
    array = np.asarray(values)
    if array.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional, got shape {array.shape}")
    if array.size == 0:
        return array.astype(np.int64)
    if array.dtype.kind not in "iu":
        raise ValueError(f"{name} must hold integers, got dtype {array.dtype}")
    array = array.astype(np.int64)
    if array.min() < 0:
        raise ValueError(f"{name} must be non-negative, found {array.min()}")
    if size is not None and array.max() >= size:
        raise ValueError(f"{name} must be less than {size_name} ({size}), found {array.max()}")
    return array


def as_float(values: ArrayLike, name: str, *, allow_nan: bool = False) -> np.ndarray:
    array = np.asarray(values, dtype=float)
    if array.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional, got shape {array.shape}")
    bad = np.isinf(array) if allow_nan else ~np.isfinite(array)
    if bad.any():
        raise ValueError(f"{name} must be finite, found {array[bad][0]}")
    return array


def as_scale(scale: ArrayLike) -> np.ndarray:
    """The campaign's allowed grades: finite, strictly increasing, at least one."""
    values = as_float(scale, "scale")
    if values.size == 0:
        raise ValueError("scale must hold at least one grade")
    if np.any(np.diff(values) <= 0):
        raise ValueError(f"scale must be strictly increasing, got {values.tolist()}")
    return values


def sorted_find(sorted_values: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each value's index in the ascending `sorted_values` (kept in range where it is missing), and whether
    it is there."""
    if sorted_values.size == 0:
        return np.zeros(values.shape, dtype=np.int64), np.zeros(values.shape, dtype=bool)
    position = np.minimum(np.searchsorted(sorted_values, values), sorted_values.size - 1)
    return position, sorted_values[position] == values


def scale_positions(values: np.ndarray, scale: np.ndarray, name: str) -> np.ndarray:
    """Each value's index on the scale; every value must be one of the scale's grades."""
    position, on_scale = sorted_find(scale, values)
    if not on_scale.all():
        raise ValueError(f"{name} holds {values[~on_scale][0]}, which is not on the scale {scale.tolist()}")
    return position


def as_verdict_positions(verdict: ArrayLike) -> np.ndarray:
    """Each side-by-side verdict's index on VERDICT_SCALE (0 bad, 1 same, 2 good)."""
    return scale_positions(as_float(verdict, "verdict"), VERDICT_SCALE, "verdict (+1 good, 0 same, -1 bad)")


def as_segments(values: ArrayLike, name: str, *, n: int, unit: str) -> np.ndarray:
    """An object array of n segment names (strings), one per `unit` (e.g. "query")."""
    segments = np.asarray(values, dtype=object)
    if segments.shape != (n,):
        raise ValueError(f"{name} must have one entry per {unit} ({n}), got shape {segments.shape}")
    if not all(isinstance(segment, str) for segment in segments):
        raise ValueError(f"{name} must hold strings")
    return segments


def check_same_length(**arrays: np.ndarray) -> None:
    lengths = {name: array.shape[0] for name, array in arrays.items()}
    if len(set(lengths.values())) > 1:
        described = ", ".join(f"{name} has {length}" for name, length in lengths.items())
        raise ValueError(f"the label arrays must have the same length: {described}")


def as_judgments(
    task: ArrayLike,
    annotator: ArrayLike,
    grade: ArrayLike,
    *,
    n_tasks: object,
    scale: ArrayLike,
    n_annotators: object = None,
) -> Judgments:
    """Validates columnar labels: indices in range, grades on the scale, one label per (task, annotator)."""
    n_tasks = check_count(n_tasks, "n_tasks")
    scale = as_scale(scale)
    task = as_index(task, "task", size=n_tasks, size_name="n_tasks")
    if n_annotators is not None:
        n_annotators = check_count(n_annotators, "n_annotators")
    annotator = as_index(annotator, "annotator", size=n_annotators, size_name="n_annotators")
    grade = as_float(grade, "grade")
    check_same_length(task=task, annotator=annotator, grade=grade)
    if n_annotators is None:
        n_annotators = int(annotator.max()) + 1 if annotator.size else 0
    position = scale_positions(grade, scale, "grade")
    sorted_pair = np.sort(task * n_annotators + annotator)
    repeated = sorted_pair[1:][sorted_pair[1:] == sorted_pair[:-1]]
    if repeated.size:
        twice = repeated[0]
        raise ValueError(
            f"annotator {twice % n_annotators} labels task {twice // n_annotators} more than once; "
            "keep one label per (task, annotator)"
        )
    return Judgments(task, annotator, grade, position, n_tasks, n_annotators, scale)


def as_task_labels(
    labels: TaskLabels, name: str, *, n_tasks: int, scale: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """(task, position on the scale) of fixed labels, each task at most once."""
    if not isinstance(labels, TaskLabels):
        raise ValueError(f"{name} must be a TaskLabels, got {type(labels).__name__}")
    task = as_index(labels.task, f"{name}.task", size=n_tasks, size_name="n_tasks")
    label = as_float(labels.label, f"{name}.label")
    check_same_length(**{f"{name}.task": task, f"{name}.label": label})
    sorted_task = np.sort(task)
    if np.any(sorted_task[1:] == sorted_task[:-1]):
        raise ValueError(f"{name}.task lists a task more than once")
    return task, scale_positions(label, scale, f"{name}.label")


def position_counts(task: np.ndarray, position: np.ndarray, *, n_tasks: int, n_values: int) -> np.ndarray:
    """[n_tasks × n_values] how many labels of each scale value each task has."""
    flat = np.bincount(task * n_values + position, minlength=n_tasks * n_values)
    return flat.reshape(n_tasks, n_values)


def grouped_median(group: np.ndarray, values: np.ndarray, *, n_groups: int) -> np.ndarray:
    """The median of each group's values (midpoint of the middle two for an even count), NaN if empty."""
    order = np.lexsort((values, group))
    ordered = values[order]
    size = np.bincount(group, minlength=n_groups)
    start = np.cumsum(size) - size
    median = np.full(n_groups, np.nan)
    filled = size > 0
    low = start[filled] + (size[filled] - 1) // 2
    high = start[filled] + size[filled] // 2
    median[filled] = (ordered[low] + ordered[high]) / 2
    return median


def row_kinds(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(kind of each row, index of the first row of each kind) of [rows × k] integers: equal rows are one
    kind, and kinds are numbered in the order of their first row."""
    if rows.shape[0] == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    rows = rows - rows.min(axis=0)
    radix = rows.max(axis=0).astype(float) + 1
    if np.prod(radix) < 2**62:
        # One integer per row (mixed radix): np.unique on rows (axis=0) sorts them as bytes, far slower.
        place = np.concatenate([[1], np.cumprod(radix[:-1])]).astype(np.int64)
        _, first, kind = np.unique(rows @ place, return_index=True, return_inverse=True)
    else:
        _, first, kind = np.unique(rows, axis=0, return_index=True, return_inverse=True)
    order = np.argsort(first)
    renumber = np.empty_like(order)
    renumber[order] = np.arange(order.size)
    return renumber[kind.ravel()], first[order]


def consensus_credit(judgments: Judgments) -> tuple[np.ndarray, np.ndarray]:
    """Each label's agreement with the leave-one-out consensus, and whether it has one.

    The consensus of a label is the most common grade among the *other* labels of its task. The label earns 1
    when its grade is that grade, 1/k when k grades tie for most common and its grade is one of them, 0
    otherwise. Labels alone on their task have no consensus (credit 0, `has_consensus` False).

    The credit depends only on the task's grade counts and the label's own grade, so it is worked out once
    per kind of task (tasks with equal counts; few, whatever the number of tasks) and grade.
    """
    n_values = judgments.scale.size
    counts = position_counts(judgments.task, judgments.position, n_tasks=judgments.n_tasks, n_values=n_values)
    kind_of_task, first = row_kinds(counts)
    # [kinds × own grade × grades]: the other labels' counts of a label of each grade on each kind of task
    others = counts[first][:, None, :] - np.eye(n_values, dtype=counts.dtype)
    has_consensus = others.sum(axis=2) > 0
    top = others.max(axis=2, keepdims=True)
    n_tied = (others == top).sum(axis=2)
    is_top = np.diagonal(others, axis1=1, axis2=2) == top[:, :, 0]
    credit = np.where(has_consensus & is_top, 1.0 / n_tied, 0.0)
    kind = kind_of_task[judgments.task]
    return credit[kind, judgments.position], has_consensus[kind, judgments.position]


def gold_position_of_tasks(gold_task: np.ndarray, gold_position: np.ndarray, *, n_tasks: int) -> np.ndarray:
    """[n_tasks] each task's gold grade position, -1 where the task has no gold grade."""
    by_task = np.full(n_tasks, -1, dtype=np.int64)
    by_task[gold_task] = gold_position
    return by_task


def divide_or_nan(numerator: ArrayLike, denominator: ArrayLike) -> np.ndarray:
    """numerator / denominator, NaN where the denominator is 0 (a share or coefficient of nothing)."""
    numerator, denominator = np.broadcast_arrays(numerator, denominator)
    quotient = np.full(numerator.shape, np.nan)
    np.divide(numerator, denominator, out=quotient, where=denominator != 0)
    return quotient


def columns_sha256(columns) -> str:
    """SHA-256 over columns of numbers, each as its length and float64 values: equal columns, equal digest."""
    digest = hashlib.sha256()
    for column in columns:
        array = np.ascontiguousarray(np.asarray(column, dtype=float))
        digest.update(np.int64(array.size).tobytes() + array.tobytes())
    return digest.hexdigest()


def disputed_tasks(task: np.ndarray, value: np.ndarray, *, n_tasks: int) -> tuple[np.ndarray, np.ndarray]:
    """Per task index: whether it has a label, and whether its labels differ (lowest below highest)."""
    low = np.full(n_tasks, np.inf)
    high = np.full(n_tasks, -np.inf)
    np.minimum.at(low, task, value)
    np.maximum.at(high, task, value)
    labelled = np.bincount(task, minlength=n_tasks) > 0
    return labelled, labelled & (high > low)


def overridden_labels(label_task: ArrayLike, label_value: ArrayLike, final: TaskLabels) -> int:
    """How many raw labels a reviewer's final labels overrode: those of an adjudicated task whose value
    differs from its final one (`label_task` indexes tasks, as `final.task` does)."""
    label_task, label_value = np.asarray(label_task, dtype=np.int64), np.asarray(label_value, dtype=float)
    task, value = np.asarray(final.task, dtype=np.int64), np.asarray(final.label, dtype=float)
    if task.size == 0 or label_task.size == 0:
        return 0
    order = np.argsort(task)
    where, found = sorted_find(task[order], label_task)
    return int((found & (label_value != value[order][where])).sum())
