"""Is the candidate ranker better than the baseline on the same queries?

`paired_comparison` takes each query's score (e.g. nDCG@10) under both rankers and reports the mean delta
(candidate - baseline), a percentile bootstrap interval over queries and a two-sided paired randomization
(sign-flip) p-value; `paired_comparisons` does the same for several measures at once, with the same resampled
queries and sign flips for every measure. `queries_to_significance` / `additional_queries` estimate how many
more queries a paired test would need.

The bootstrap and the sign flips are matrix products of [resamples × queries] matrices with the per-query
statistics, computed in chunks of at most ~1e6 entries (`metrics.compute.resampling`).
"""

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike
from scipy import signal, stats

from metrics.compute.labels import as_float, check_same_length
from metrics.compute.resampling import (
    Resampling,
    bootstrap_sums,
    check_probability,
    check_resamples,
    sign_flip_sums,
)

TIE_TOLERANCE = 1e-12
# Below this chance that a sign flip reaches the observed mean, no flip is drawn (see _sign_flip_counts).
FLIP_SKIP_CHANCE = 1e-9


@dataclass(frozen=True)
class PairedComparison:
    """One measure of two rankers over the same `n` queries; delta = candidate - baseline.

    Means are weighted when the comparison was given weights. `ci_low`/`ci_high` is the percentile bootstrap
    interval of `mean_delta`, `std_error` the standard deviation of its bootstrap resamples, `p_value` the
    two-sided sign-flip randomization p-value. `wins`/`ties`/`losses` count queries where the candidate scored
    higher / within 1e-12 / lower.
    """

    n: int
    mean_baseline: float
    mean_candidate: float
    mean_delta: float
    ci_low: float
    ci_high: float
    p_value: float
    wins: int
    ties: int
    losses: int
    std_error: float


def paired_comparison(
    baseline: ArrayLike,
    candidate: ArrayLike,
    *,
    weights: ArrayLike | None = None,
    n_resamples: int = 10_000,
    confidence: float = 0.95,
    seed: int = 0,
    n_flips: int | None = None,
) -> PairedComparison:
    """Compares two rankers' per-query scores of the same queries (`baseline[i]`, `candidate[i]`: query i).

    mean_delta = sum(w_i * (candidate_i - baseline_i)) / sum(w_i), w_i = 1 without weights.

    Interval: percentile bootstrap over queries (`n_resamples` resamples of n queries with replacement).
    p-value: two-sided paired randomization test; each of `n_flips` (default: `n_resamples`) resamples flips
    the sign of each query's delta with probability 1/2, and p = (1 + #{|flipped mean| >= |mean_delta|}) /
    (1 + n_flips). The bootstrap, then the flips, come from `np.random.default_rng(seed)`, so a seed gives
    the same result every time.

    Weights (e.g. query frequency) must be positive. Raises ValueError on empty, NaN or mismatched inputs.
    """
    baseline = as_float(baseline, "baseline")
    candidate = as_float(candidate, "candidate")
    check_same_length(baseline=baseline, candidate=candidate)
    (comparison,) = paired_comparisons(
        baseline[:, None],
        candidate[:, None],
        weights=weights,
        n_resamples=n_resamples,
        confidence=confidence,
        seed=seed,
        n_flips=n_flips,
    )
    return comparison


def paired_comparisons(
    baseline: ArrayLike,
    candidate: ArrayLike,
    *,
    weights: ArrayLike | None = None,
    n_resamples: int = 10_000,
    confidence: float = 0.95,
    seed: int = 0,
    n_flips: int | None = None,
) -> list[PairedComparison]:
    """`paired_comparison` of each column of [queries × measures] scores, one result per measure.

    Every measure uses the same resampled queries and the same sign flips (one random stream), so results of
    different measures are comparable and do not depend on which other measures are compared.
    """
    baseline = _as_score_matrix(baseline, "baseline")
    candidate = _as_score_matrix(candidate, "candidate")
    if baseline.shape != candidate.shape:
        raise ValueError(
            f"baseline and candidate must have the same shape, got {baseline.shape} and {candidate.shape}"
        )
    n, n_measures = baseline.shape
    if n == 0:
        raise ValueError("baseline and candidate must hold at least one query")
    weights = _as_weights(weights, n)
    resampling = Resampling.of(n_resamples, confidence, seed)
    n_flips = resampling.n_resamples if n_flips is None else check_resamples(n_flips, "n_flips")
    if n_measures == 0:
        return []

    delta = candidate - baseline
    weighted_delta = weights[:, None] * delta
    total_weight = weights.sum()
    mean_delta = weighted_delta.sum(axis=0) / total_weight

    rng = np.random.default_rng(resampling.seed)
    # The weight column gives each resample's total weight, the denominator of its weighted mean.
    sums = bootstrap_sums(np.column_stack([weighted_delta, weights]), resampling, rng)
    resampled_mean = sums[:, :-1] / sums[:, -1:]
    ci_low, ci_high = resampling.interval(resampled_mean)
    std_error = resampled_mean.std(axis=0)

    as_extreme = _sign_flip_counts(
        weighted_delta, np.abs(mean_delta) - TIE_TOLERANCE, total_weight, n_flips, rng
    )
    p_value = (1 + as_extreme) / (1 + n_flips)

    mean_baseline = weights @ baseline / total_weight
    mean_candidate = weights @ candidate / total_weight
    wins = (delta > TIE_TOLERANCE).sum(axis=0)
    losses = (delta < -TIE_TOLERANCE).sum(axis=0)
    return [
        PairedComparison(
            n=n,
            mean_baseline=float(mean_baseline[j]),
            mean_candidate=float(mean_candidate[j]),
            mean_delta=float(mean_delta[j]),
            ci_low=float(ci_low[j]),
            ci_high=float(ci_high[j]),
            p_value=float(p_value[j]),
            wins=int(wins[j]),
            ties=int(n - wins[j] - losses[j]),
            losses=int(losses[j]),
            std_error=float(std_error[j]),
        )
        for j in range(n_measures)
    ]


def _sign_flip_counts(
    weighted_delta: np.ndarray,
    threshold: np.ndarray,
    total_weight: float,
    n_flips: int,
    rng: np.random.Generator,
) -> np.ndarray:
    """How many of the `n_flips` sign flips give a |weighted mean| >= `threshold`, per measure.

    Only measures whose count is in doubt are flipped (the flips of one measure do not depend on which others
    are flipped, so the counts are those of flipping all). Known without flipping:

    - a threshold <= 0 (every delta 0, or a mean within the tie tolerance of 0): every flip counts;
    - a far-out mean: a flipped sum S = sum_i ±v_i has P(|S| >= t) <= 2 exp(-t² / (2 sum_i v_i²))
      (Hoeffding), so when n_flips times that bound is below `FLIP_SKIP_CHANCE` no flip counts, except with
      a chance below `FLIP_SKIP_CHANCE`.
    """
    counts = np.where(threshold <= 0, n_flips, 0)
    t = np.maximum(threshold, 0) * total_weight
    variance = (weighted_delta**2).sum(axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        log_chance = np.log(2.0 * n_flips) - t**2 / (2 * variance)
    doubtful = np.flatnonzero((threshold > 0) & (log_chance > np.log(FLIP_SKIP_CHANCE)))
    if doubtful.size:
        flipped_mean = sign_flip_sums(weighted_delta[:, doubtful], n_flips, rng) / total_weight
        counts[doubtful] = (np.abs(flipped_mean) >= threshold[doubtful]).sum(axis=0)
    return counts


def exact_sign_flip_p_value(values: ArrayLike) -> float:
    """Two-sided exact paired randomization (sign-flip) p-value of the sum of integer per-unit values.

    Under the null each unit's value is as likely to be negative as positive, so p = P(|sum_i e_i |v_i||
    >= |sum_i v_i|) over all 2^n equally likely sign vectors e. With one unit per query this is the
    query-level test of a sum: values of size 1 give the exact sign test. The distribution is exact: units
    of the same size m (n_m of them) add m * (2 Binomial(n_m, 1/2) - n_m), and these are convolved. 1.0
    when the sum is 0 (or no values). Raises ValueError on non-integer values.
    """
    values = np.asarray(values)
    if values.ndim != 1 or (values.size and not np.issubdtype(values.dtype, np.integer)):
        raise ValueError(f"values must be one-dimensional integers, got dtype {values.dtype}")
    observed = abs(int(values.sum()))
    if observed == 0:
        return 1.0
    sizes, n_of_size = np.unique(np.abs(values[values != 0]), return_counts=True)
    distribution = np.ones(1)  # P(sum = s) at index s + (the largest possible sum so far)
    for size, n in zip(sizes.tolist(), n_of_size.tolist(), strict=True):
        step = np.zeros(2 * size * n + 1)
        step[:: 2 * size] = stats.binom.pmf(np.arange(n + 1), n, 0.5)
        distribution = _convolve(distribution, step)
    largest = (distribution.size - 1) // 2
    extreme = np.abs(np.arange(-largest, largest + 1)) >= observed
    return float(min(1.0, distribution[extreme].sum()))


def _convolve(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    # FFT only when direct convolution would be slow; its rounding (~1e-16) is clipped off.
    if min(a.size, b.size) < 500:
        return np.convolve(a, b)
    return np.clip(signal.fftconvolve(a, b), 0, None)


def queries_to_significance(deltas: ArrayLike, *, alpha: float = 0.05, power: float = 0.8) -> int | None:
    """Estimated number of queries, beyond the n given, a paired test would need to detect their mean delta.

    n_needed = ceil(((z_{1-alpha/2} + z_power) * sd / |mean|)^2), sd the sample standard deviation of the
    per-query deltas; returns max(0, n_needed - n). A rough normal-approximation estimate that assumes the
    observed mean and spread are the true ones. None when n < 2, or the mean or the spread is 0.
    """
    deltas = as_float(deltas, "deltas")
    if deltas.size < 2:
        return None
    return additional_queries(
        float(deltas.mean()),
        float(deltas.std(ddof=1)) / math.sqrt(deltas.size),
        deltas.size,
        alpha=alpha,
        power=power,
    )


def additional_queries(
    effect: float, std_error: float, n: int, *, alpha: float = 0.05, power: float = 0.8
) -> int | None:
    """Estimated number of queries, beyond n, for a two-sided test to detect `effect` with the given power.

    An estimate `effect` with standard error `std_error` from n queries has standard error about
    std_error * sqrt(n / m) from m queries, so m_needed = ceil(n * ((z_{1-alpha/2} + z_power) * std_error /
    |effect|)^2); returns max(0, m_needed - n), or None when the effect or its standard error is 0 (within
    1e-12) or not finite.
    """
    check_probability(alpha, "alpha")
    check_probability(power, "power")
    if not (math.isfinite(effect) and math.isfinite(std_error)):
        return None
    # Rounding noise of a mean or spread that is 0 in exact arithmetic counts as 0.
    if abs(effect) <= TIE_TOLERANCE or std_error <= TIE_TOLERANCE:
        return None
    z = stats.norm.ppf(1 - alpha / 2) + stats.norm.ppf(power)
    # The small slack keeps an exact integer result (e.g. 16.000000000000004) from rounding up.
    needed = math.ceil(n * (z * std_error / abs(effect)) ** 2 - 1e-9)
    return max(0, needed - n)


def _as_score_matrix(values: ArrayLike, name: str) -> np.ndarray:
    matrix = np.asarray(values, dtype=float)
    if matrix.ndim != 2:
        raise ValueError(f"{name} must be two-dimensional [queries × measures], got shape {matrix.shape}")
    if not np.isfinite(matrix).all():
        raise ValueError(f"{name} must be finite, found {matrix[~np.isfinite(matrix)][0]}")
    return matrix


def _as_weights(weights: ArrayLike | None, n: int) -> np.ndarray:
    if weights is None:
        return np.ones(n)
    weights = as_float(weights, "weights")
    if weights.size != n:
        raise ValueError(f"weights must have one entry per query ({n}), got {weights.size}")
    if (weights <= 0).any():
        raise ValueError(f"weights must be positive, found {weights[weights <= 0][0]}")
    return weights
