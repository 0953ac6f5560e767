import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from metrics.compute.gsb import gsb_by_segment, gsb_summary
from metrics.compute.significance import exact_sign_flip_p_value

NAN = float("nan")


def judgments(*rows):
    """(query, verdict) rows as the two columns a selector fetches."""
    query, verdict = zip(*rows, strict=True)
    return np.array(query), np.array(verdict)


@st.composite
def verdict_data(draw, min_queries=1):
    n_queries = draw(st.integers(min_queries, 12))
    query = np.array(draw(st.lists(st.integers(0, n_queries - 1), min_size=1, max_size=40)))
    verdict = np.array(draw(st.lists(st.sampled_from([-1, 0, 1]), min_size=query.size, max_size=query.size)))
    return query, verdict, n_queries


def test_good_same_bad_bad_on_four_queries_is_minus_a_quarter():
    result = gsb_summary([0, 1, 2, 3], [1, 0, -1, -1], n_queries=4)
    assert result.score == -0.25
    assert (result.good, result.same, result.bad) == (1, 1, 2)
    assert (result.n_judgments, result.n_queries) == (4, 4)
    assert (result.majority_good, result.majority_same, result.majority_bad) == (1, 1, 2)
    assert result.majority_score == -0.25
    assert result.p_value == pytest.approx(stats.binomtest(1, 3, 0.5).pvalue) == 1.0
    assert result.ci_low <= result.score <= result.ci_high
    assert result.weighted_score is None


def test_sign_test_matches_scipy_and_leaves_same_out():
    query = np.arange(30)
    verdict = np.r_[np.ones(14), -np.ones(3), np.zeros(13)].astype(int)
    result = gsb_summary(query, verdict, n_queries=30)
    assert result.p_value == pytest.approx(stats.binomtest(14, 17, 0.5).pvalue, rel=1e-12)
    # 2 * P(X >= 14), X ~ Binomial(17, 1/2): 2 * (680 + 136 + 17 + 1) / 2^17.
    assert result.p_value == pytest.approx(2 * 834 / 2**17, rel=1e-12)
    assert result.score == pytest.approx(11 / 30)


def test_p_value_counts_queries_not_judgments():
    # 24 queries with 3 unanimous judges: 15 all Good, 9 all Bad. The judgments' sign test (45 against 27)
    # gave p 0.044 while the query-level interval reaches below 0; by query it is 15 against 9.
    query = np.repeat(np.arange(24), 3)
    verdict = np.repeat(np.r_[np.ones(15), -np.ones(9)].astype(int), 3)
    result = gsb_summary(query, verdict, n_queries=24)
    assert result.score == 0.25
    assert (result.ci_low, result.ci_high) == pytest.approx((-1 / 6, 7 / 12))
    assert result.p_value == pytest.approx(stats.binomtest(15, 24, 0.5).pvalue, rel=1e-12)
    assert result.p_value == pytest.approx(0.3075, abs=1e-4)


def test_query_level_p_value_enumerates_every_sign_flip():
    # Net good - bad per query 3, -1, 2, 2, 1 (sum 7): 6 of the 32 sign vectors reach |sum| >= 7.
    rows = [(0, 1), (0, 1), (0, 1), (1, -1), (2, 1), (2, 1), (2, 0), (3, 1), (3, 1), (4, 1), (4, 1), (4, -1)]
    result = gsb_summary(*judgments(*rows), n_queries=6)
    assert result.p_value == pytest.approx(6 / 32, rel=1e-12)
    assert exact_sign_flip_p_value(np.array([3, -1, 2, 2, 1])) == pytest.approx(6 / 32, rel=1e-12)
    assert exact_sign_flip_p_value(np.array([], dtype=int)) == 1.0
    with pytest.raises(ValueError, match="integers"):
        exact_sign_flip_p_value(np.array([0.5, 1.0]))


@pytest.mark.parametrize(
    ("n_queries", "lean"),
    [(30, 0.0), (100, 0.0), (30, 0.8), (100, 1.0)],
    ids=["30-same", "100-same", "30-heterogeneous", "100-heterogeneous"],
)
def test_false_positive_rate_at_5_percent_stays_near_5_percent(n_queries, lean):
    # Null: Good and Bad equally likely overall, 3 judges per query. With `lean`, each query leans towards
    # Good or Bad (judges of a query agree more), which made the judgment-level sign test reject 8.5-10%.
    rng = np.random.default_rng(13)
    n_runs = 3000
    query_lean = rng.choice([-1, 1], (n_runs, n_queries)) * rng.uniform(0, lean, (n_runs, n_queries))
    draw = rng.random((n_runs, n_queries, 3))
    p_good, p_bad = 0.35 * (1 + query_lean[..., None]), 0.35 * (1 - query_lean[..., None])
    verdict = np.where(draw < p_good, 1, np.where(draw > 1 - p_bad, -1, 0))
    p_values = [exact_sign_flip_p_value(net) for net in verdict.sum(axis=2)]
    assert 0.03 <= np.mean(np.array(p_values) < 0.05) <= 0.07
    query = np.repeat(np.arange(n_queries), 3)
    assert gsb_summary(query, verdict[0].ravel(), n_queries=n_queries, n_resamples=10).p_value == p_values[0]


def test_only_same_verdicts_give_p_one():
    result = gsb_summary([0, 1], [0, 0], n_queries=2)
    assert (result.score, result.p_value, result.ci_low, result.ci_high) == (0.0, 1.0, 0.0, 0.0)


def test_one_judged_query_gives_a_degenerate_interval():
    result = gsb_summary([2, 2, 2], [1, 1, -1], n_queries=5)
    assert result.score == pytest.approx(1 / 3)
    assert result.ci_low == pytest.approx(1 / 3) and result.ci_high == pytest.approx(1 / 3)
    assert result.std_error == pytest.approx(0, abs=1e-15)
    assert result.n_queries == 1


def loop_scores(query, verdict, drawn_queries):
    """GSB of each resample, listed as the queries drawn (with repeats), by a plain loop."""
    scores = []
    for drawn in drawn_queries:
        rows = np.concatenate([np.flatnonzero(query == q) for q in drawn])
        scores.append(verdict[rows].sum() / rows.size)
    return np.array(scores)


def test_cluster_bootstrap_matches_a_loop_over_resampled_queries():
    rng = np.random.default_rng(2)
    query = rng.integers(0, 15, 60)
    verdict = rng.choice([-1, 0, 1], 60, p=[0.2, 0.3, 0.5])
    result = gsb_summary(query, verdict, n_queries=20, n_resamples=500, confidence=0.9, seed=3)

    # The documented draw: judged queries with the same (bad, same, good) counts are one kind, kinds in the
    # order of their first query; default_rng(seed) draws how many queries of each kind, multinomially.
    judged = np.unique(query)
    counts = np.array([[(verdict[query == q] == v).sum() for v in (-1, 0, 1)] for q in judged])
    _, first, inverse = np.unique(counts, axis=0, return_index=True, return_inverse=True)
    order = np.argsort(first)
    kinds = [judged[inverse.ravel() == kind] for kind in order]
    shares = [kind.size / judged.size for kind in kinds]
    draws = np.random.default_rng(3).multinomial(judged.size, shares, size=500)
    # Any query of a kind stands for all of them: their judgments count the same.
    drawn = [
        np.concatenate([np.repeat(kind[0], n) for kind, n in zip(kinds, row, strict=True)]) for row in draws
    ]
    scores = loop_scores(query, verdict, drawn)
    low, high = np.quantile(scores, [0.05, 0.95])
    assert result.ci_low == pytest.approx(low, abs=1e-12)
    assert result.ci_high == pytest.approx(high, abs=1e-12)
    assert result.std_error == pytest.approx(np.std(scores), abs=1e-12)


def test_cluster_bootstrap_agrees_with_resampling_queries_one_by_one():
    rng = np.random.default_rng(6)
    query = np.repeat(np.arange(200), 3)
    verdict = np.where(rng.random(600) < 0.6, 1, rng.choice([-1, 0], 600))
    result = gsb_summary(query, verdict, n_queries=200, n_resamples=20_000)
    drawn = np.random.default_rng(1).integers(0, 200, size=(4_000, 200))
    net = np.bincount(query, weights=verdict)  # good - bad of each query, over its 3 judgments
    scores = net[drawn].sum(axis=1) / (3 * 200)
    low, high = np.quantile(scores, [0.025, 0.975])
    spread = np.std(scores)
    assert result.std_error == pytest.approx(spread, rel=0.05)
    assert result.ci_low == pytest.approx(low, abs=0.1 * spread)
    assert result.ci_high == pytest.approx(high, abs=0.1 * spread)


def test_majority_ties_count_as_same():
    query, verdict = judgments((0, 1), (0, -1), (1, 1), (1, 1), (1, 0), (2, -1), (2, 0), (2, 0))
    result = gsb_summary(query, verdict, n_queries=3)
    assert (result.majority_good, result.majority_same, result.majority_bad) == (1, 2, 0)
    assert result.majority_score == pytest.approx(1 / 3)
    assert result.score == pytest.approx((3 - 2) / 8)


def test_changed_queries_and_their_score():
    # Query 1's lists are identical, so it was recorded as Same; query 4 has no judgments.
    query, verdict = judgments((0, 1), (0, 1), (1, 0), (1, 0), (2, -1), (3, 0))
    changed = np.array([True, False, True, True, True])
    result = gsb_summary(query, verdict, n_queries=5, changed=changed)
    assert (result.changed_queries, result.identical_queries) == (3, 1)
    assert result.changed_share == 0.75
    assert result.changed_score == pytest.approx((2 - 1) / 4)
    assert result.score == pytest.approx((2 - 1) / 6)


def test_without_changed_every_judged_query_counts_as_changed():
    result = gsb_summary([0, 1, 3], [1, 0, -1], n_queries=4)
    assert (result.changed_queries, result.identical_queries, result.changed_share) == (3, 0, 1.0)
    assert result.changed_score == result.score


def test_weighted_score_by_hand():
    # Much better (+1), slightly worse (-1/2), same (0), better without a strength (+1/2): mean 1/4.
    result = gsb_summary([0, 1, 2, 3], [1, -1, 0, 1], n_queries=4, strength=[2, 1, NAN, NAN])
    assert result.weighted_score == pytest.approx(0.25)
    assert result.score == 0.25


def test_no_judgments():
    result = gsb_summary([], [], n_queries=3, strength=[], changed=np.array([True, False, True]))
    assert (result.good, result.same, result.bad, result.n_judgments, result.n_queries) == (0, 0, 0, 0, 0)
    for value in (result.score, result.ci_low, result.ci_high, result.majority_score, result.changed_share):
        assert math.isnan(value)
    assert math.isnan(result.changed_score) and math.isnan(result.weighted_score)
    assert result.p_value == 1.0
    assert (result.changed_queries, result.identical_queries) == (0, 0)


def test_the_seed_makes_results_reproducible():
    rng = np.random.default_rng(8)
    query, verdict = rng.integers(0, 30, 90), rng.choice([-1, 0, 1], 90)
    first = gsb_summary(query, verdict, n_queries=30, seed=4)
    assert gsb_summary(query, verdict, n_queries=30, seed=4) == first
    assert gsb_summary(query, verdict, n_queries=30, seed=5) != first


@given(verdict_data())
@settings(max_examples=60, deadline=None)
def test_scores_are_in_range_and_swapping_good_and_bad_negates_them(data):
    query, verdict, n_queries = data
    result = gsb_summary(query, verdict, n_queries=n_queries, n_resamples=200)
    swapped = gsb_summary(query, -verdict, n_queries=n_queries, n_resamples=200)
    for value in (result.score, result.ci_low, result.ci_high, result.majority_score, result.changed_score):
        assert -1 <= value <= 1
    assert swapped.score == -result.score
    assert swapped.majority_score == -result.majority_score
    assert (swapped.good, swapped.bad) == (result.bad, result.good)
    assert swapped.ci_low == pytest.approx(-result.ci_high, abs=1e-12)
    assert swapped.p_value == pytest.approx(result.p_value, rel=1e-12)
    assert 0 < result.p_value <= 1


@given(verdict_data(min_queries=3))
@settings(max_examples=60, deadline=None)
def test_the_interval_contains_the_score(data):
    query, verdict, n_queries = data
    result = gsb_summary(query, verdict, n_queries=n_queries, n_resamples=500)
    assert result.ci_low - 1e-12 <= result.score <= result.ci_high + 1e-12


def test_segments_are_summaries_of_their_judgments():
    query, verdict = judgments((0, 1), (1, 1), (1, 0), (2, -1), (3, -1), (3, 1))
    segment = np.array(["head", "tail", "head", "tail", "torso"])
    changed = np.array([True, True, False, True, True])
    strength = np.array([2, 1, NAN, 1, 2, NAN])
    result = gsb_by_segment(
        query,
        verdict,
        segment_of_query=segment,
        n_queries=5,
        changed=changed,
        strength=strength,
        n_resamples=300,
    )
    assert list(result) == ["head", "tail", "torso"]
    head = gsb_summary([0, 2], [1, -1], n_queries=5, changed=changed, strength=[2, 1], n_resamples=300)
    assert result["head"] == head
    assert result["tail"].score == pytest.approx((2 - 1) / 4) and result["tail"].n_queries == 2
    assert result["tail"].weighted_score == pytest.approx((1 / 2 + 0 - 1 + 1 / 2) / 4)
    assert result["torso"].n_judgments == 0 and math.isnan(result["torso"].score)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"verdict": [2, 0]}, "not on the scale"),
        ({"query": [0, 3]}, "less than n_queries"),
        ({"query": [0]}, "same length"),
        ({"strength": [3, NAN]}, "strength must be 1"),
        ({"strength": [1]}, "one entry per judgment"),
        ({"changed": np.array([1, 0, 1])}, "changed must hold booleans"),
        ({"changed": np.array([True])}, "changed must have one entry per query"),
        ({"n_queries": -1}, "n_queries"),
        ({"confidence": 0}, "confidence"),
    ],
)
def test_gsb_summary_rejects_bad_input(kwargs, message):
    arguments = {"query": [0, 1], "verdict": [1, 0], "n_queries": 3} | kwargs
    with pytest.raises(ValueError, match=message):
        gsb_summary(arguments.pop("query"), arguments.pop("verdict"), **arguments)


def test_gsb_by_segment_rejects_bad_segments():
    with pytest.raises(ValueError, match="segment_of_query must have one entry per query"):
        gsb_by_segment([0], [1], segment_of_query=["a"], n_queries=2)
    with pytest.raises(ValueError, match="segment_of_query must hold strings"):
        gsb_by_segment([0], [1], segment_of_query=["a", None], n_queries=2)
