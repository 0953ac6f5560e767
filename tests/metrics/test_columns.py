"""`fetch_columns`: the same columns from PostgreSQL's aggregated arrays as from plain rows (SQLite)."""

import math

import numpy as np
import pytest
from django.db import connection

from annotation.models import Judgment, Query, RelevanceTask
from metrics.columns import fetch_columns


@pytest.fixture
def judged(campaign, make_user):
    tasks = list(RelevanceTask.objects.filter(campaign=campaign).order_by("pk")[:3])
    alice, bob = make_user("alice"), make_user("bob")
    Judgment.objects.create(task=tasks[0], annotator=alice, grade=3, seconds_spent=12.5)
    Judgment.objects.create(task=tasks[0], annotator=bob, grade=0)
    Judgment.objects.create(task=tasks[2], annotator=alice, grade=2, seconds_spent=0.0)
    return tasks, alice, bob


def test_integer_and_float_columns_in_row_order(judged):
    tasks, alice, bob = judged
    queryset = Judgment.objects.order_by("task_id", "annotator__username").values_list(
        "task_id", "annotator_id", "grade", "seconds_spent"
    )
    task, annotator, grade, seconds = fetch_columns(queryset, "iiif")
    assert task.dtype == annotator.dtype == grade.dtype == np.int64
    assert seconds.dtype == np.float64
    rows = sorted(zip(task.tolist(), annotator.tolist(), grade.tolist(), seconds.tolist(), strict=True))
    assert rows[:2] == [(tasks[0].pk, alice.pk, 3, 12.5), (tasks[0].pk, bob.pk, 0, rows[1][3])]
    assert math.isnan(rows[1][3])  # NULL seconds
    assert rows[2] == (tasks[2].pk, alice.pk, 2, 0.0)


def test_no_rows_give_empty_columns(campaign):
    columns = fetch_columns(Query.objects.filter(pk=-1).values_list("pk", "weight"), "if")
    assert [column.size for column in columns] == [0, 0]
    assert [column.dtype for column in columns] == [np.int64, np.float64]


def test_filters_and_parameters_are_kept(campaign):
    pks = list(Query.objects.filter(campaign=campaign).order_by("pk").values_list("pk", flat=True))
    (selected,) = fetch_columns(Query.objects.filter(pk__in=pks[1:], external_id="q2").values_list("pk"), "i")
    assert selected.tolist() == pks[1:2]


def test_reads_the_backend_it_runs_on(campaign):
    # The suite runs on SQLite and, with DATABASE_URL, on PostgreSQL: both paths are exercised.
    (weights,) = fetch_columns(Query.objects.filter(campaign=campaign).values_list("weight"), "f")
    assert weights.tolist() == [1.0, 1.0], connection.vendor
