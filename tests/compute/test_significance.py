import dataclasses
import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from scipy import stats

from metrics.compute import resampling
from metrics.compute.significance import (
    additional_queries,
    paired_comparison,
    paired_comparisons,
    queries_to_significance,
)

scores = arrays(float, st.integers(1, 30), elements=st.floats(0, 1))


def exact_sign_flip_p_value(delta: np.ndarray) -> float:
    """The randomization p-value over all 2^n sign flips (what the sampled test estimates)."""
    flips = np.array(list(itertools.product([1.0, -1.0], repeat=delta.size)))
    flipped = np.abs(flips @ delta) / delta.size
    return float((flipped >= abs(delta.mean()) - 1e-12).mean())


def test_means_and_win_tie_loss_by_hand():
    result = paired_comparison([0.2, 0.4, 0.6, 0.5], [0.3, 0.4, 0.5, 0.9])
    assert result.n == 4
    assert result.mean_baseline == pytest.approx(0.425)
    assert result.mean_candidate == pytest.approx(0.525)
    assert result.mean_delta == pytest.approx(0.1)
    assert (result.wins, result.ties, result.losses) == (2, 1, 1)


def test_rounding_noise_counts_as_a_tie():
    result = paired_comparison([0.1 + 0.2, 0.5], [0.3, 0.5])
    assert (result.wins, result.ties, result.losses) == (0, 2, 0)


def test_weighted_means():
    result = paired_comparison([0.5, 0.5], [0.6, 0.4], weights=[3, 1])
    assert result.mean_delta == pytest.approx((3 * 0.1 - 0.1) / 4)
    assert result.mean_baseline == pytest.approx(0.5)
    assert result.mean_candidate == pytest.approx((3 * 0.6 + 0.4) / 4)


def test_a_single_query_gives_a_degenerate_interval_and_p_one():
    result = paired_comparison([0.25], [0.75])
    assert result.mean_delta == result.ci_low == result.ci_high == 0.5
    assert result.std_error == 0
    # Flipping the only delta's sign keeps |mean| = 0.5, as extreme as observed every time.
    assert result.p_value == 1.0
    unchanged = paired_comparison([0.25], [0.25])
    assert (unchanged.mean_delta, unchanged.p_value, unchanged.ties) == (0.0, 1.0, 1)


def test_constant_deltas_give_a_degenerate_interval_and_the_exact_p_value():
    result = paired_comparison(np.zeros(3), np.full(3, 0.25), n_resamples=20_000)
    assert result.ci_low == pytest.approx(0.25) and result.ci_high == pytest.approx(0.25)
    # Only the all-plus and all-minus flips (2 of 8) are as extreme as observed.
    assert result.p_value == pytest.approx(0.25, abs=0.01)


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_randomization_p_value_agrees_with_exact_enumeration_of_all_sign_flips(seed):
    rng = np.random.default_rng(seed)
    baseline = rng.random(10)
    candidate = baseline + rng.normal(0.08 * seed, 0.2, 10)
    exact = exact_sign_flip_p_value(candidate - baseline)
    result = paired_comparison(baseline, candidate, n_resamples=10_000, seed=seed)
    assert result.p_value == pytest.approx(exact, abs=0.02)


def test_the_p_value_is_never_below_one_over_resamples_plus_one():
    result = paired_comparison(np.zeros(40), np.ones(40), n_resamples=99)
    assert result.p_value == 1 / 100


def test_bootstrap_interval_is_close_to_scipys_percentile_bootstrap():
    rng = np.random.default_rng(7)
    baseline = rng.random(60)
    candidate = np.clip(baseline + rng.normal(0.03, 0.15, 60), 0, 1)
    delta = candidate - baseline
    reference = stats.bootstrap(
        (delta,), np.mean, n_resamples=20_000, method="percentile", confidence_level=0.9, random_state=1
    )
    result = paired_comparison(baseline, candidate, n_resamples=20_000, confidence=0.9)
    spread = delta.std() / math.sqrt(delta.size)
    assert result.ci_low == pytest.approx(reference.confidence_interval.low, abs=0.05 * spread)
    assert result.ci_high == pytest.approx(reference.confidence_interval.high, abs=0.05 * spread)
    assert result.std_error == pytest.approx(spread, rel=0.03)


def test_several_measures_use_the_same_resamples_as_one_measure_at_a_time():
    rng = np.random.default_rng(3)
    baseline = rng.random((25, 3))
    candidate = rng.random((25, 3))
    together = paired_comparisons(baseline, candidate, n_resamples=2_000, seed=5)
    for j, comparison in enumerate(together):
        alone = paired_comparison(baseline[:, j], candidate[:, j], n_resamples=2_000, seed=5)
        assert dataclasses.astuple(comparison) == pytest.approx(dataclasses.astuple(alone), rel=1e-12)


def test_results_do_not_depend_on_the_chunk_size(monkeypatch):
    rng = np.random.default_rng(4)
    baseline, candidate = rng.random(50), rng.random(50)
    whole = paired_comparison(baseline, candidate, n_resamples=4_000)
    monkeypatch.setattr(resampling, "_ENTRIES_PER_CHUNK", 50 * 7)
    chunked = paired_comparison(baseline, candidate, n_resamples=4_000)
    assert chunked.ci_low == pytest.approx(whole.ci_low, abs=0.01)
    assert chunked.ci_high == pytest.approx(whole.ci_high, abs=0.01)
    assert chunked.p_value == pytest.approx(whole.p_value, abs=0.03)


def test_the_seed_makes_results_reproducible():
    rng = np.random.default_rng(5)
    baseline, candidate = rng.random(30), rng.random(30)
    assert paired_comparison(baseline, candidate, seed=11) == paired_comparison(baseline, candidate, seed=11)
    assert paired_comparison(baseline, candidate, seed=11) != paired_comparison(baseline, candidate, seed=12)


def test_no_measures_gives_no_comparisons():
    assert paired_comparisons(np.zeros((4, 0)), np.zeros((4, 0))) == []


@given(scores)
@settings(max_examples=50, deadline=None)
def test_identical_scores_give_no_delta_and_p_one(values):
    result = paired_comparison(values, values, n_resamples=200)
    assert result.mean_delta == 0 and result.ci_low == 0 and result.ci_high == 0
    assert result.p_value == 1.0
    assert result.ties == values.size


@given(st.integers(1, 30).flatmap(lambda n: st.tuples(*[arrays(float, n, elements=st.floats(0, 1))] * 2)))
@settings(max_examples=50, deadline=None)
def test_swapping_the_rankers_negates_the_delta_and_keeps_the_p_value(pair):
    baseline, candidate = pair
    forward = paired_comparison(baseline, candidate, n_resamples=300)
    backward = paired_comparison(candidate, baseline, n_resamples=300)
    assert backward.mean_delta == pytest.approx(-forward.mean_delta, abs=1e-12)
    assert backward.ci_low == pytest.approx(-forward.ci_high, abs=1e-12)
    assert backward.ci_high == pytest.approx(-forward.ci_low, abs=1e-12)
    assert backward.p_value == forward.p_value
    assert (backward.wins, backward.ties, backward.losses) == (forward.losses, forward.ties, forward.wins)
    assert forward.ci_low <= forward.ci_high
    assert 0 < forward.p_value <= 1


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"baseline": [], "candidate": []}, "at least one query"),
        ({"baseline": [0.1, np.nan], "candidate": [0.1, 0.2]}, "baseline must be finite"),
        ({"baseline": [0.1, 0.2], "candidate": [np.inf, 0.2]}, "candidate must be finite"),
        ({"baseline": [0.1, 0.2], "candidate": [0.1]}, "same length"),
        ({"baseline": [[0.1]], "candidate": [[0.1]]}, "baseline must be one-dimensional"),
        ({"baseline": [0.1, 0.2], "candidate": [0.1, 0.2], "weights": [1, 0]}, "weights must be positive"),
        ({"baseline": [0.1, 0.2], "candidate": [0.1, 0.2], "weights": [1]}, "one entry per query"),
        ({"baseline": [0.1, 0.2], "candidate": [0.1, 0.2], "weights": [1, np.nan]}, "weights must be finite"),
        ({"baseline": [0.1], "candidate": [0.1], "confidence": 1.0}, "confidence"),
        ({"baseline": [0.1], "candidate": [0.1], "n_resamples": 0}, "n_resamples"),
        ({"baseline": [0.1], "candidate": [0.1], "seed": -1}, "seed"),
    ],
)
def test_paired_comparison_rejects_bad_input(kwargs, message):
    with pytest.raises(ValueError, match=message):
        paired_comparison(**kwargs)


def test_paired_comparisons_rejects_bad_shapes():
    with pytest.raises(ValueError, match="baseline must be two-dimensional"):
        paired_comparisons([0.1, 0.2], [[0.1], [0.2]])
    with pytest.raises(ValueError, match="same shape"):
        paired_comparisons(np.zeros((3, 2)), np.zeros((3, 1)))
    with pytest.raises(ValueError, match="candidate must be finite"):
        paired_comparisons(np.zeros((2, 2)), [[0.0, np.nan], [0.0, 0.0]])


def test_queries_to_significance_by_hand():
    # mean 1, sd sqrt(2): ((1.959964 + 0.841621) * sqrt(2))^2 = 15.70, so 16 queries, 14 more than 2.
    assert queries_to_significance([0.0, 2.0]) == 14
    z = stats.norm.ppf(0.995) + stats.norm.ppf(0.9)
    deltas = np.array([0.1, 0.3, -0.1, 0.2, 0.0])
    expected = math.ceil((z * deltas.std(ddof=1) / deltas.mean()) ** 2) - deltas.size
    assert queries_to_significance(deltas, alpha=0.01, power=0.9) == expected


def test_queries_to_significance_is_zero_when_there_are_enough_and_none_when_undefined():
    assert queries_to_significance(np.r_[np.full(50, 1.0), np.full(50, 1.1)]) == 0
    assert queries_to_significance([0.3]) is None
    assert queries_to_significance([0.2, 0.2, 0.2]) is None
    assert queries_to_significance([0.1, -0.1]) is None


def test_additional_queries_scales_with_the_standard_error():
    # 100 queries with standard error |effect| / 2: needs 100 * (2.8016 / 2)^2 = 196.2, so 197 in all.
    assert additional_queries(0.02, 0.01, 100) == 97
    assert additional_queries(0.02, 0.0, 100) is None
    assert additional_queries(0.0, 0.01, 100) is None
    assert additional_queries(0.02, float("nan"), 100) is None


@pytest.mark.parametrize(("kwargs", "message"), [({"alpha": 0}, "alpha"), ({"power": 1.0}, "power")])
def test_queries_to_significance_rejects_bad_settings(kwargs, message):
    with pytest.raises(ValueError, match=message):
        queries_to_significance([0.1, 0.2], **kwargs)
    with pytest.raises(ValueError, match="deltas must be finite"):
        queries_to_significance([0.1, np.nan])


def test_far_out_means_skip_the_flips_with_the_same_p_values():
    """A measure far beyond any flip gets the count 0 it would get from flipping; flipping the others is
    unchanged by the skip, and an all-zero measure has p = 1."""
    rng = np.random.default_rng(3)
    baseline = rng.random((400, 3))
    candidate = baseline + np.column_stack([rng.normal(0, 0.1, 400), np.full(400, 0.05), np.zeros(400)])
    together = paired_comparisons(baseline, candidate, n_resamples=500, seed=4)
    alone = paired_comparisons(baseline[:, :1], candidate[:, :1], n_resamples=500, seed=4)
    assert together[1].p_value == 1 / 501
    assert together[2].p_value == 1.0
    assert together[0].p_value == alone[0].p_value
