"""Spearman's rank correlation with a cluster bootstrap interval.

Used where two measures of the same items are compared: behaviour grades against human grades per
(query, document), and per query the offline Δ nDCG against the online Δ CTR.
"""

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike
from scipy import sparse

from metrics.compute.labels import as_float, as_index, check_same_length
from metrics.compute.resampling import Resampling, times_drawn

_ENTRIES_PER_BATCH = 1_000_000


@dataclass(frozen=True)
class Correlation:
    """A rank correlation of `n` items in `n_clusters` clusters, with its percentile bootstrap interval at
    `confidence` over the `n_resamples` resamples where it was defined. NaN with fewer than two items or
    when either side does not vary."""

    value: float
    ci_low: float
    ci_high: float
    n: int
    n_clusters: int
    n_resamples: int
    confidence: float


def spearman(
    x: ArrayLike,
    y: ArrayLike,
    *,
    cluster: ArrayLike | None = None,
    n_resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
) -> Correlation:
    """Spearman's ρ: the Pearson correlation of the midranks of x and of y (ties share the mean of their
    ranks), as `scipy.stats.spearmanr`.

    Interval: percentile bootstrap over clusters (`cluster[i]`: item i's cluster, e.g. its query; default
    each item its own): clusters are drawn with replacement from `np.random.default_rng(seed)`, and each
    resample's ρ is that of the drawn items, ranked again, an item drawn m times counting as m tied items
    (weighted midranks, then a weighted Pearson correlation: the same as ranking the m copies). Items of one
    query are not independent, so they are drawn together. A Fisher-z interval would assume independent
    items and a bivariate normal shape, which neither grades nor deltas have.
    """
    x = as_float(x, "x")
    y = as_float(y, "y")
    check_same_length(x=x, y=y)
    n = x.size
    cluster = np.arange(n) if cluster is None else as_index(cluster, "cluster")
    check_same_length(x=x, cluster=cluster)
    resampling = Resampling.of(n_resamples, confidence, seed)
    _, cluster = np.unique(cluster, return_inverse=True)
    n_clusters = int(cluster.max()) + 1 if n else 0
    ones = np.ones((1, n))
    value = float(_weighted_spearman(x, y, ones)[0]) if n else np.nan
    if n < 2 or np.isnan(value) or n_clusters < 2:
        return Correlation(value, np.nan, np.nan, n, n_clusters, 0, resampling.confidence)
    rng = np.random.default_rng(resampling.seed)
    batch = max(1, _ENTRIES_PER_BATCH // n)
    resampled = np.concatenate(
        [
            _weighted_spearman(x, y, counts[start : start + batch, cluster.ravel()])
            for counts in times_drawn(n_clusters, resampling.n_resamples, rng)
            for start in range(0, counts.shape[0], batch)
        ]
    )
    resampled = resampled[np.isfinite(resampled)]
    if resampled.size == 0:
        return Correlation(value, np.nan, np.nan, n, n_clusters, 0, resampling.confidence)
    low, high = resampling.interval(resampled)
    return Correlation(
        value, float(low), float(high), n, n_clusters, int(resampled.size), resampling.confidence
    )


def _weighted_spearman(x: np.ndarray, y: np.ndarray, weight: np.ndarray) -> np.ndarray:
    """[r] Spearman's ρ of x and y with r rows of item weights (how many copies of each item), NaN where a
    side does not vary."""
    rank_x, rank_y = _weighted_midranks(x, weight), _weighted_midranks(y, weight)
    total = weight.sum(axis=1, keepdims=True)
    centred_x = rank_x - (weight * rank_x).sum(axis=1, keepdims=True) / total
    centred_y = rank_y - (weight * rank_y).sum(axis=1, keepdims=True) / total
    covariance = (weight * centred_x * centred_y).sum(axis=1)
    spread = np.sqrt((weight * centred_x**2).sum(axis=1) * (weight * centred_y**2).sum(axis=1))
    with np.errstate(divide="ignore", invalid="ignore"):
        # Ranks that all tie are constant: ρ is undefined, not a rounding residue over 0.
        return np.where(spread > 1e-12 * total[:, 0] ** 3, covariance / spread, np.nan)


def _weighted_midranks(values: np.ndarray, weight: np.ndarray) -> np.ndarray:
    """[r × n] each item's midrank among the items weighted by each row: a value whose copies weigh g in
    total, after values weighing s, has ranks s + 1 .. s + g, and their mean s + (g + 1) / 2."""
    distinct, group = np.unique(values, return_inverse=True)
    membership = sparse.csr_matrix(
        (np.ones(values.size), (np.arange(values.size), group.ravel())), shape=(values.size, distinct.size)
    )
    group_weight = np.asarray((membership.T @ weight.T).T)
    midrank = np.cumsum(group_weight, axis=1) - (group_weight - 1) / 2
    return midrank[:, group.ravel()]
