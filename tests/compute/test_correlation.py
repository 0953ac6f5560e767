import numpy as np
import pytest
from scipy import stats

from metrics.compute.correlation import spearman


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_spearman_matches_scipy_with_ties(seed):
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 4, 60).astype(float)
    y = x + rng.normal(0, 2, 60).round()
    result = spearman(x, y, n_resamples=200)
    assert result.value == pytest.approx(stats.spearmanr(x, y).statistic, abs=1e-12)
    assert (result.n, result.n_clusters) == (60, 60)


def test_each_resample_is_the_spearman_of_the_drawn_items_ranked_again():
    # Drawn by hand: the first resample of a plain loop over the same draws, each cluster's items copied as
    # often as the cluster was drawn.
    rng = np.random.default_rng(3)
    x, y = rng.integers(0, 3, 12).astype(float), rng.integers(0, 5, 12).astype(float)
    cluster = np.repeat(np.arange(6), 2)
    draws = np.random.default_rng(9).integers(0, 6, size=(50, 6), dtype=np.int32)  # as resampling draws
    expected = []
    for drawn in draws:
        rows = np.concatenate([np.flatnonzero(cluster == c) for c in drawn])
        value = stats.spearmanr(x[rows], y[rows]).statistic
        if np.isfinite(value):
            expected.append(value)
    result = spearman(x, y, cluster=cluster, n_resamples=50, seed=9)
    assert result.n_resamples == len(expected)
    assert (result.ci_low, result.ci_high) == pytest.approx(tuple(np.quantile(expected, [0.025, 0.975])))


def test_spearman_interval_covers_the_population_correlation():
    # Bivariate normal with correlation 0.6: Spearman's ρ is (6 / π) arcsin(0.3) = 0.5823.
    truth = 6 / np.pi * np.arcsin(0.3)
    rng = np.random.default_rng(4)
    hits = 0
    for seed in range(200):
        x = rng.normal(size=80)
        y = 0.6 * x + 0.8 * rng.normal(size=80)
        result = spearman(x, y, n_resamples=300, seed=seed)
        hits += result.ci_low <= truth <= result.ci_high
    assert 0.9 <= hits / 200 <= 0.99


def test_spearman_is_undefined_without_variation():
    result = spearman([1.0, 1.0, 1.0], [1.0, 2.0, 3.0])
    assert np.isnan(result.value) and np.isnan(result.ci_low) and result.n_resamples == 0
    assert np.isnan(spearman([], []).value)


def test_spearman_refuses_mismatched_columns():
    with pytest.raises(ValueError, match="same length"):
        spearman([1.0, 2.0], [1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="same length"):
        spearman([1.0, 2.0], [1.0, 2.0], cluster=[0])
