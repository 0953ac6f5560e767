"""The launch report's arithmetic without a database: labels in rank order, one model's verdicts, the
intervals of mean measures and the labels' fingerprint."""

import math

import numpy as np
import pytest

from metrics.compute.gsb import model_verdicts
from metrics.compute.labels import columns_sha256
from metrics.compute.layout import ranked_labels
from metrics.compute.ranking import Z95, Negative, RankingSettings, mean_intervals, measure_range


def test_ranked_labels_put_each_models_grades_in_rank_order_and_skip_unlabelled_queries():
    # Queries 0 and 2 have grades, query 1 none; documents 0..3.
    layout = ranked_labels(
        n_queries=3,
        n_models=2,
        task_query=np.array([0, 0, 0, 1, 2]),
        task_document=np.array([0, 1, 2, 0, 3]),
        grades=np.array([3.0, 1.0, np.nan, np.nan, 2.0]),
        ranking_model=np.array([0, 0, 0, 1, 1, 0, 1]),
        ranking_query=np.array([0, 0, 0, 0, 0, 2, 2]),
        ranking_document=np.array([1, 0, 2, 0, 1, 3, 0]),
        ranking_rank=np.array([1, 2, 3, 1, 2, 1, 1]),
    )
    assert layout.evaluated.tolist() == [0, 2]
    np.testing.assert_array_equal(layout.judged, [[3.0, 1.0], [2.0, np.nan]])
    np.testing.assert_array_equal(layout.ranked[0], [[1.0, 3.0, np.nan], [2.0, np.nan, np.nan]])
    np.testing.assert_array_equal(layout.ranked[1], [[3.0, 1.0, np.nan], [np.nan, np.nan, np.nan]])
    # The documents at the same places: the judged ones of each query, each model's in rank order.
    np.testing.assert_array_equal(layout.judged_documents, [[0, 1], [3, -1]])
    np.testing.assert_array_equal(layout.ranked_documents[0], [[1, 0, 2], [3, -1, -1]])
    np.testing.assert_array_equal(layout.ranked_documents[1], [[0, 1, -1], [0, -1, -1]])


def test_model_verdicts_adjudication_replaces_and_identical_lists_count_as_same():
    # Tasks: 0 (query 0, model 0), 1 (query 1, model 0, identical lists), 2 (query 2, model 0, adjudicated,
    # no verdicts), 3 (query 0, model 1).
    arguments = {
        "n_queries": 3,
        "model": 0,
        "task_query": np.array([0, 1, 2, 0]),
        "task_model": np.array([0, 0, 0, 1]),
        "task_identical": np.array([False, True, False, False]),
        "preference_task": np.array([0, 0, 3]),
        "preference_verdict": np.array([1.0, -1.0, 1.0]),
        "preference_strength": np.array([2.0, np.nan, 1.0]),
        "adjudication_task": np.array([2]),
        "adjudication_verdict": np.array([-1.0]),
    }
    query, verdict, strength, changed = model_verdicts(**arguments, auto_same_identical=True)
    assert query.tolist() == [0, 0, 1, 2] and verdict.tolist() == [1.0, -1.0, 0.0, -1.0]
    np.testing.assert_array_equal(strength, [2.0, np.nan, np.nan, np.nan])
    assert changed.tolist() == [True, False, True]
    query, verdict, _, _ = model_verdicts(**arguments, auto_same_identical=False)
    assert query.tolist() == [0, 0, 2] and verdict.tolist() == [1.0, -1.0, -1.0]
    arguments["adjudication_task"], arguments["adjudication_verdict"] = np.array([0]), np.array([0.0])
    query, verdict, strength, _ = model_verdicts(**arguments, auto_same_identical=False)
    assert verdict.tolist() == [0.0, 0.0] and np.isnan(strength).all()  # both verdicts of task 0 replaced


def test_mean_intervals_by_hand():
    values, weights = np.array([0.2, 0.4, 0.9]), np.array([1.0, 1.0, 2.0])
    mean = (0.2 + 0.4 + 1.8) / 4
    se = math.sqrt(3 / 2 * ((0.2 - mean) ** 2 + (0.4 - mean) ** 2 + 4 * (0.9 - mean) ** 2)) / 4
    low, high = mean_intervals({"DCG@10": values}, weights)["DCG@10"]
    assert (low, high) == pytest.approx((mean - Z95 * se, mean + Z95 * se))
    assert all(math.isnan(x) for x in mean_intervals({"AP": np.array([0.5])}, np.array([1.0]))["AP"])


def test_mean_intervals_stay_in_each_measures_range():
    # Twelve queries, RR 1 on eleven and 0.5 on one: the normal interval's top passes 1.
    values, weights = np.array([1.0] * 11 + [0.5]), np.ones(12)
    mean = values.mean()
    se = math.sqrt(12 / 11 * np.sum((values - mean) ** 2)) / 12
    assert mean + Z95 * se > 1
    per_query = {"RR": values, "DCG@10": values - 0.9, "nDCG@10": values - 0.9}
    intervals = mean_intervals(per_query, weights)
    assert intervals["RR"] == pytest.approx((mean - Z95 * se, 1.0))
    assert intervals["DCG@10"][0] == 0.0 and intervals["nDCG@10"][0] == 0.0
    assert intervals["DCG@10"][1] == pytest.approx(mean - 0.9 + Z95 * se)  # DCG has no upper bound
    penalized = mean_intervals(per_query, weights, RankingSettings(negative=Negative.PENALIZE))
    assert penalized["nDCG@10"][0] == pytest.approx(mean - 0.9 - Z95 * se)
    assert penalized["nDCG@10"][0] < 0
    assert penalized["RR"][1] == 1.0  # binary measures stay in [0, 1] whatever negatives gain
    assert measure_range("map") == (0.0, 1.0) and measure_range("CG@5") == (0.0, math.inf)


def test_the_fingerprint_changes_with_any_label_and_with_how_columns_split():
    base = columns_sha256([np.array([1, 2]), np.array([3.0])])
    assert base == columns_sha256([[1.0, 2.0], [3]])
    assert base != columns_sha256([np.array([1, 2]), np.array([4.0])])
    assert base != columns_sha256([np.array([1]), np.array([2, 3.0])])
