"""Examination propensities per position, estimated from the click logs themselves.

Both estimators assume the position-based model (PBM) and its examination hypothesis: a document at
position k is examined with probability θ_k, which depends on the position only, and clicked if examined
with probability γ(q, d), which depends on the query and document only, so P(click) = θ_k · γ(q, d). Clicks
and non-clicks both count, from every model's lists. The scale is not identified (θ · a and γ / a give the
same clicks), so propensities are relative to position 1: θ_1 = 1, and an IPS metric weighted with them is
the click rate had every result been examined as often as the first.

- `intervention_harvesting` (Agarwal, Zaitsev, Wang, Li, Najork & Joachims, "Estimating Position Bias
  without Intrusive Interventions", WSDM 2019): a (query, document) shown at positions k and k' (by two
  rankers, or one ranker at two times) is a natural swap intervention. Over the set S(k, k') of such pairs,
  c_k = Σ_S clicks(q, d, k) / impressions(q, d, k) has expectation θ_k · Σ_S γ(q, d), and c_k' likewise, so
  log(c_k' / c_k) estimates log θ_k' - log θ_k: the relevance of the documents cancels, because the same
  documents are counted at both positions. Every pair of positions with such documents gives one equation;
  log θ (with log θ_1 = 0) is their weighted least-squares solution, each weighted by the inverse of its
  delta-method variance 1/c_k² · Σ_S clicks/impressions² + the same at k' (the variance of a click rate
  c/n taken as c/n²). With only pairs that include position 1, this is the paper's estimator relative to
  position 1, θ_k = c_k^{1,k} / c_1^{1,k}; the other pairs (the paper's AllPairs idea, here in closed form)
  let the estimate reach positions that are rarely swapped with the first. A position is estimated only
  when pairs connect it to position 1.
- `position_based_em` (Wang, Golbandi, Bendersky, Metzler & Najork, "Position Bias Estimation for Unbiased
  Learning to Rank in Personal Search", WSDM 2018): maximum likelihood of the PBM by expectation
  maximisation over (query, document, position) cells, with one γ per (query, document) (plain EM: the
  regression-EM of the paper replaces that with a regression on features, which logs do not have). E-step,
  for the non-clicked impressions of a cell: P(examined | no click) = θ(1 - γ) / (1 - θγ), P(attractive |
  no click) = (1 - θ)γ / (1 - θγ); M-step: θ_k = (clicks + expected examined non-clicks at k) / impressions
  at k, and γ likewise per (query, document). It needs documents seen at several positions as well, and
  uses only those: a document seen at one position fits its γ to its click rate and says nothing of θ
  (except through the bound γ ≤ 1, which at small counts would push θ up). The maximum-likelihood fit has
  one γ per document, and with few impressions per document it is biased when γ is near 1 (clicks near
  certain at the top): about +5% at positions 2-10 in `bench/simulate_clicks.py` when an examined relevant
  result is clicked 90% of the time; intervention harvesting has no such bias.

Intervals: percentile bootstrap over queries (a query's documents and clicks are drawn together): the
harvested click rates are summed per query and resampled (`resampling.bootstrap_sums`), and the least
squares is solved for every resample at once; EM is rerun on every resample, started from the estimate on all
data.
"""

import dataclasses
from dataclasses import dataclass

import numpy as np
from scipy import sparse

from metrics.compute.interactions.impressions import (
    Impressions,
    check_cutoff,
    check_impressions,
    compact,
)
from metrics.compute.labels import check_count
from metrics.compute.resampling import Resampling, bootstrap_sums, times_drawn

EM_MAX_ITER = 2000
EM_TOL = 1e-5
_EM_ENTRIES = 500_000


@dataclass(frozen=True)
class PropensityCurve:
    """θ_k / θ_1 at positions 1..n (`position`), with percentile bootstrap intervals at `confidence`.

    NaN where a position cannot be estimated (no evidence, or no pairs connecting it to position 1);
    `n_resamples` counts the resamples per position in which it could. `evidence` per position: for
    intervention harvesting the number of (query, document) pairs also seen at another position, for EM
    the impressions of such pairs. `converged` (EM only): whether the fit on all data met the tolerance.
    """

    method: str
    position: np.ndarray
    propensity: np.ndarray
    ci_low: np.ndarray
    ci_high: np.ndarray
    n_resamples: np.ndarray
    evidence: np.ndarray
    confidence: float
    converged: bool | None = None


def intervention_harvesting(
    impressions: Impressions,
    *,
    n_positions: int = 10,
    n_resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
) -> PropensityCurve:
    """Relative propensities θ_k / θ_1 of positions 1..`n_positions` from the (query, document) pairs shown
    at more than one position (see the module docstring for the estimator). Impressions at positions beyond
    `n_positions` are not used."""
    impressions = check_impressions(impressions)
    n_positions = check_cutoff(n_positions, "n_positions")
    resampling = Resampling.of(n_resamples, confidence, seed)
    cells = _cells(impressions, n_positions)
    first, second = _paired_cells(cells.item, cells.position)
    rate = cells.clicks / cells.impressions
    rate_variance = cells.clicks / cells.impressions**2
    pair = cells.position[first] * n_positions + cells.position[second]
    n_pairs = n_positions * n_positions
    # Per query, the sums over pairs of positions: click rate at the upper and at the lower position, and
    # their variances; one row per query with intervention pairs.
    query, n_queries = compact(cells.query[first])
    statistics = np.zeros((n_queries, 4 * n_pairs))
    for offset, values in enumerate((rate[first], rate[second], rate_variance[first], rate_variance[second])):
        np.add.at(statistics, (query, offset * n_pairs + pair), values)
    evidence = np.bincount(cells.position[first], minlength=n_positions)
    evidence += np.bincount(cells.position[second], minlength=n_positions)

    estimate = _log_ratio_least_squares(statistics.sum(axis=0)[None, :], n_positions)[0]
    if n_queries == 0:
        resampled = np.empty((0, n_positions))
    else:
        rng = np.random.default_rng(resampling.seed)
        resampled = _log_ratio_least_squares(bootstrap_sums(statistics, resampling, rng), n_positions)
    return _curve("intervention harvesting", estimate, resampled, evidence, resampling)


def position_based_em(
    impressions: Impressions,
    *,
    n_positions: int = 10,
    n_resamples: int = 200,
    confidence: float = 0.95,
    seed: int = 0,
    max_iter: int = EM_MAX_ITER,
    tol: float = EM_TOL,
) -> PropensityCurve:
    """Relative propensities θ_k / θ_1 of positions 1..`n_positions` by EM under the position-based model
    (see the module docstring), run until no relative propensity moves by more than `tol` in an iteration,
    or `max_iter` iterations. Intervals: EM on `n_resamples` bootstrap resamples of the queries."""
    impressions = check_impressions(impressions)
    n_positions = check_cutoff(n_positions, "n_positions")
    resampling = Resampling.of(n_resamples, confidence, seed)
    max_iter = check_count(max_iter, "max_iter")
    if isinstance(tol, bool) or not isinstance(tol, int | float) or not tol > 0:
        raise ValueError(f"tol must be a positive number, got {tol!r}")
    cells = _cells(impressions, n_positions, shared_only=True)
    evidence = np.bincount(cells.position, weights=cells.impressions, minlength=n_positions).astype(np.int64)
    first, second = _paired_cells(cells.item, cells.position)
    connected = _connected_to_first(cells.position[first], cells.position[second], n_positions)
    fit = _PositionBasedFit(cells, n_positions)
    theta, gamma, converged = fit.run(
        cells.impressions[None, :], cells.clicks[None, :], 0.5, 0.5, max_iter, tol
    )
    estimate = np.where(connected, theta[0] / theta[0, 0], np.nan)

    query, n_queries = compact(cells.query)
    rng = np.random.default_rng(resampling.seed)
    resampled = [np.empty((0, n_positions))]
    if connected[1:].any():
        # A few resamples at a time: EM holds several [resamples × cells] arrays.
        batch = max(1, _EM_ENTRIES // cells.query.size)
        for counts in times_drawn(n_queries, resampling.n_resamples, rng):
            for start in range(0, counts.shape[0], batch):
                weight = counts[start : start + batch, query]
                theta_r, _, _ = fit.run(
                    weight * cells.impressions, weight * cells.clicks, theta, gamma, max_iter, tol
                )
                resampled.append(theta_r / theta_r[:, :1])
    curve = _curve("position-based EM", estimate, np.concatenate(resampled), evidence, resampling)
    return dataclasses.replace(curve, converged=converged)


@dataclass(frozen=True)
class _Cells:
    """Impressions and clicks per (query, document, position) cell; `item` numbers the (query, document)
    pairs, `position` is 0-based."""

    query: np.ndarray
    item: np.ndarray
    position: np.ndarray
    impressions: np.ndarray
    clicks: np.ndarray


def _cells(impressions: Impressions, n_positions: int, *, shared_only: bool = False) -> _Cells:
    used = impressions.position <= n_positions
    query = impressions.query[used]
    pair_key = query * (int(impressions.document.max(initial=0)) + 1) + impressions.document[used]
    item, _ = compact(pair_key)
    key = item * n_positions + impressions.position[used] - 1
    cell_key, first, cell = np.unique(key, return_index=True, return_inverse=True)
    cell = cell.ravel()
    cells = _Cells(
        query=query[first],
        item=cell_key // n_positions,
        position=cell_key % n_positions,
        impressions=np.bincount(cell, minlength=cell_key.size).astype(float),
        clicks=np.bincount(cell, weights=impressions.clicked[used], minlength=cell_key.size),
    )
    if not shared_only:
        return cells
    shared = np.bincount(cells.item)[cells.item] > 1
    item, _ = compact(cells.item[shared])
    return _Cells(
        cells.query[shared], item, cells.position[shared], cells.impressions[shared], cells.clicks[shared]
    )


def _paired_cells(item: np.ndarray, position: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Indices (i, j) of every two cells of the same (query, document), position[i] < position[j]; the cells
    come sorted by (item, position)."""
    first, second = [], []
    for offset in range(1, int(np.bincount(item).max(initial=1))):
        same = item[offset:] == item[:-offset]
        first.append(np.flatnonzero(same))
        second.append(np.flatnonzero(same) + offset)
    if not first:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    return np.concatenate(first), np.concatenate(second)


def _connected_to_first(upper: np.ndarray, lower: np.ndarray, n_positions: int) -> np.ndarray:
    """[n_positions] whether pairs of positions (upper[i], lower[i]) connect each position to the first."""
    adjacency = np.zeros((n_positions, n_positions))
    adjacency[upper, lower] = adjacency[lower, upper] = 1
    return _reached(adjacency[None])[0]


def _reached(adjacency: np.ndarray) -> np.ndarray:
    """[r × n] the positions each of r [n × n] adjacency matrices connects to the first."""
    reached = np.zeros(adjacency.shape[:2], dtype=bool)
    reached[:, 0] = True
    for _ in range(adjacency.shape[1]):
        reached |= np.einsum("rk,rkj->rj", reached.astype(float), adjacency) > 0
    return reached


def _log_ratio_least_squares(sums: np.ndarray, n_positions: int) -> np.ndarray:
    """[resamples × n_positions] θ_k / θ_1 from [resamples × 4 n²] summed click rates and variances of each
    pair of positions (upper, lower), by weighted least squares on their log ratios; NaN for positions that
    no pair connects to position 1."""
    n = n_positions
    upper, lower, upper_variance, lower_variance = (
        sums[:, part * n * n : (part + 1) * n * n].reshape(-1, n, n) for part in range(4)
    )
    usable = (upper > 0) & (lower > 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        log_ratio = np.where(usable, np.log(lower) - np.log(upper), 0.0)
        variance = upper_variance / upper**2 + lower_variance / lower**2
        weight = np.where(usable, 1 / variance, 0.0)
    symmetric = weight + weight.transpose(0, 2, 1)
    laplacian = np.eye(n) * symmetric.sum(axis=2)[:, :, None] - symmetric
    # Pair (k, k') says log θ_k' - log θ_k ≈ log_ratio: + at k', - at k.
    target = (weight * log_ratio).sum(axis=1) - (weight * log_ratio).sum(axis=2)
    reached = _reached(symmetric)
    free = reached[:, 1:]
    system = laplacian[:, 1:, 1:]
    # Positions not connected to the first are solved as 0 = 0 and then set to NaN.
    pinned = ~(free[:, :, None] & free[:, None, :])
    system = np.where(pinned, 0.0, system) + np.eye(n - 1) * ~free[:, :, None]
    rhs = np.where(free, target[:, 1:], 0.0)
    log_theta = np.linalg.solve(system, rhs[:, :, None])[:, :, 0] if n > 1 else np.zeros((sums.shape[0], 0))
    theta = np.concatenate([np.ones((sums.shape[0], 1)), np.exp(log_theta)], axis=1)
    return np.where(reached, theta, np.nan)


class _PositionBasedFit:
    """EM for the position-based model on fixed cells, for many weightings of them at once."""

    def __init__(self, cells: _Cells, n_positions: int):
        columns = np.arange(cells.item.size)
        ones = np.ones(cells.item.size)
        self.cells = cells
        self.n_positions = n_positions
        self.n_items = int(cells.item.max(initial=-1)) + 1
        self.by_position = sparse.csr_matrix(
            (ones, (cells.position, columns)), shape=(n_positions, cells.item.size)
        )
        self.by_item = sparse.csr_matrix((ones, (cells.item, columns)), shape=(self.n_items, cells.item.size))

    def run(
        self,
        impressions: np.ndarray,
        clicks: np.ndarray,
        theta: np.ndarray | float,
        gamma: np.ndarray | float,
        max_iter: int,
        tol: float,
    ) -> tuple[np.ndarray, np.ndarray, bool]:
        """(θ [r × positions], γ [r × items], converged) for r weightings of the cells' impressions and clicks
        ([r × cells]), starting from θ and γ (broadcast to r rows).

        EM converges slowly along the unidentified scale, so it is accelerated by SQUAREM (Varadhan &
        Roland, Scandinavian Journal of Statistics 2008, scheme S3): two EM steps x1 = F(x0), x2 = F(x1),
        r = x1 - x0, v = x2 - x1 - r, α = min(-1, -|r| / |v|), then one EM step from the leap
        x0 - 2αr + α²v (kept inside (0, 1)). Where the leap's likelihood is below x1's, the row takes x2
        instead, so the likelihood never falls (EM steps never lower it). It stops when no relative propensity
        θ_k / θ_1 moved by more than `tol` in an iteration.
        """
        r = impressions.shape[0]
        x = np.concatenate(
            [np.broadcast_to(theta, (r, self.n_positions)), np.broadcast_to(gamma, (r, self.n_items))], axis=1
        )
        missed = impressions - clicks
        per_position = (self.by_position @ impressions.T).T
        per_item = (self.by_item @ impressions.T).T
        active = np.arange(r)  # the rows still moving
        for _ in range(max_iter):
            counts = (missed[active], clicks[active], per_position[active], per_item[active])
            x0 = x[active]
            x1, _ = self._step(x0, *counts)
            x2, chances_x1 = self._step(x1, *counts)
            change, curvature = x1 - x0, x2 - 2 * x1 + x0
            length = np.sqrt((change**2).sum(axis=1, keepdims=True))
            bend = np.sqrt((curvature**2).sum(axis=1, keepdims=True))
            alpha = -np.maximum(1.0, np.divide(length, bend, out=np.ones_like(length), where=bend > 0))
            leap = np.clip(x0 - 2 * alpha * change + alpha**2 * curvature, 1e-9, 1 - 1e-9)
            stepped, chances_leap = self._step(leap, *counts)
            better = _log_likelihood(*chances_leap, *counts[:2]) >= _log_likelihood(*chances_x1, *counts[:2])
            x[active] = np.where(better[:, None], stepped, x2)
            relative = x[active, : self.n_positions] / x[active, :1]
            moved = np.abs(relative - x0[:, : self.n_positions] / x0[:, :1])
            active = active[np.nanmax(moved, axis=1, initial=0.0) >= tol]
            if active.size == 0:
                return x[:, : self.n_positions], x[:, self.n_positions :], True
        return x[:, : self.n_positions], x[:, self.n_positions :], False

    def _step(
        self,
        x: np.ndarray,
        missed: np.ndarray,
        clicks: np.ndarray,
        per_position: np.ndarray,
        per_item: np.ndarray,
    ) -> tuple[np.ndarray, tuple[np.ndarray, np.ndarray]]:
        """One EM step of the [r × (positions + items)] parameters (θ, γ), and the chances of a click and of
        none in each cell under x (for its likelihood)."""
        t = x[:, : self.n_positions][:, self.cells.position]
        g = x[:, self.n_positions :][:, self.cells.item]
        clicked_chance = t * g
        unclicked_chance = 1 - clicked_chance
        unclicked = np.divide(missed, unclicked_chance, out=np.zeros_like(missed), where=unclicked_chance > 0)
        examined = clicks + unclicked * (t - clicked_chance)
        attractive = clicks + unclicked * (g - clicked_chance)
        theta = _share((self.by_position @ examined.T).T, per_position)
        gamma = _share((self.by_item @ attractive.T).T, per_item)
        return np.concatenate([theta, gamma], axis=1), (clicked_chance, unclicked_chance)


def _log_likelihood(
    clicked_chance: np.ndarray, unclicked_chance: np.ndarray, missed: np.ndarray, clicks: np.ndarray
) -> np.ndarray:
    """[r] the Bernoulli log-likelihood of the cells' clicks and misses."""
    return (
        clicks * np.log(np.maximum(clicked_chance, 1e-300))
        + missed * np.log(np.maximum(unclicked_chance, 1e-300))
    ).sum(axis=1)


def _share(numerator: np.ndarray, denominator: np.ndarray) -> np.ndarray:
    """numerator / denominator, 0.5 where the denominator is 0 (a parameter without data stays put)."""
    return np.divide(numerator, denominator, out=np.full(numerator.shape, 0.5), where=denominator > 0)


def _curve(
    method: str, estimate: np.ndarray, resampled: np.ndarray, evidence: np.ndarray, resampling: Resampling
) -> PropensityCurve:
    n_positions = estimate.size
    low, high = np.full(n_positions, np.nan), np.full(n_positions, np.nan)
    defined = np.isfinite(resampled).sum(axis=0)
    for k in np.flatnonzero((defined > 0) & np.isfinite(estimate)):
        low[k], high[k] = resampling.interval(resampled[np.isfinite(resampled[:, k]), k])
    return PropensityCurve(
        method=method,
        position=np.arange(1, n_positions + 1),
        propensity=estimate,
        ci_low=low,
        ci_high=high,
        n_resamples=np.where(np.isfinite(estimate), defined, 0),
        evidence=evidence.astype(np.int64),
        confidence=resampling.confidence,
    )
