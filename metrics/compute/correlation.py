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
    # Items with the same (x, y) share their ranks, so each resample needs only how many copies each such
    # cell has: the clusters' draws times each cluster's items per cell. Graded items fall in a few cells.
    cells, cell = np.unique(np.column_stack([x, y]), axis=0, return_inverse=True)
    items_of_cluster = sparse.csr_matrix(
        (np.ones(n), (cell.ravel(), cluster.ravel())), shape=(cells.shape[0], n_clusters)
    )
    ties = _tie_groups(cells[:, 0]), _tie_groups(cells[:, 1])
    items_of_cell = np.bincount(cell.ravel())[None, :].astype(float)
    value = float(_weighted_spearman(*ties, items_of_cell)[0]) if n else np.nan
    if n < 2 or np.isnan(value) or n_clusters < 2:
        return Correlation(value, np.nan, np.nan, n, n_clusters, 0, resampling.confidence)
    rng = np.random.default_rng(resampling.seed)
    resampled = np.concatenate(
        [
            _weighted_spearman(*ties, (items_of_cluster @ counts.T).T)
            for counts in times_drawn(n_clusters, resampling.n_resamples, rng)
        ]
    )
    resampled = resampled[np.isfinite(resampled)]
    if resampled.size == 0:
        return Correlation(value, np.nan, np.nan, n, n_clusters, 0, resampling.confidence)
    low, high = resampling.interval(resampled)
    return Correlation(
        value, float(low), float(high), n, n_clusters, int(resampled.size), resampling.confidence
    )


@dataclass(frozen=True)
class TieGroups:
    """Items grouped by equal value: `order` sorts the items by value, `last` lists the sorted positions that
    end a group, `group[i]` is item i's group (0 for the smallest value)."""

    order: np.ndarray
    last: np.ndarray
    group: np.ndarray


def _tie_groups(values: np.ndarray) -> TieGroups:
    _, group = np.unique(values, return_inverse=True)
    group = group.ravel()
    order = np.argsort(group, kind="stable")
    return TieGroups(order, np.flatnonzero(np.diff(group[order], append=-1)), group)


def _weighted_spearman(ties_x: TieGroups, ties_y: TieGroups, weight: np.ndarray) -> np.ndarray:
    """[r] Spearman's ρ of two sides' values (given by their `_tie_groups`) with r rows of item weights (how
    many copies of each item), NaN where a side does not vary.

    The midranks of N weighted items average (N + 1) / 2 on each side, and a side's sum of squares is its
    groups' (weight × midrank²): only the cross term needs every item."""
    midrank_x, weight_x = _weighted_midranks(ties_x, weight)
    midrank_y, weight_y = _weighted_midranks(ties_y, weight)
    total = weight.sum(axis=1)
    square_of_mean = total * ((total + 1) / 2) ** 2
    cross = (weight * midrank_x[:, ties_x.group] * midrank_y[:, ties_y.group]).sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        spread = np.sqrt(
            ((weight_x * midrank_x**2).sum(axis=1) - square_of_mean)
            * ((weight_y * midrank_y**2).sum(axis=1) - square_of_mean)
        )
        # Ranks that all tie are constant: ρ is undefined, not a rounding residue over 0.
        return np.where(spread > 1e-12 * total**3, (cross - square_of_mean) / spread, np.nan)


def _weighted_midranks(ties: TieGroups, weight: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """([r × groups] each group's midrank among the items weighted by each row, [r × groups] its weight): a
    value whose copies weigh g in total, after values weighing s, has ranks s + 1 .. s + g, and their mean
    s + (g + 1) / 2."""
    ends = np.cumsum(weight[:, ties.order], axis=1)[:, ties.last]  # s + g of each group
    starts = np.zeros_like(ends)
    starts[:, 1:] = ends[:, :-1]
    return (starts + ends + 1) / 2, ends - starts
