"""Online metrics of a model from its impressions, their position-debiased (IPS) forms, and the paired
difference of two models per query.

A list is one request (see `impressions`). Each metric is a ratio of sums over the model's lists:

- `CTR@k`: clicks at positions 1..k / impressions at positions 1..k (the naive click-through rate);
- `IPS-CTR@k`: Σ clicked · w(k_i) / impressions at 1..k, w = min(1 / θ_k, max_weight): inverse propensity
  scoring (Joachims, Swaminathan & Schnabel, WSDM 2017; Wang et al., SIGIR 2016). Under the position-based
  model E[clicked / θ] = γ, so with the true θ and no clip it is unbiased for the mean click probability of
  an examined result in the top k (the "examination-debiased CTR"), where the naive CTR estimates the mean
  of θ · γ, lower by the examination. Clipping the weight (Strehl et al., NeurIPS 2010) bounds the variance
  a rarely examined position adds, at the price of a downward bias at positions with θ < 1 / max_weight;
- `SNIPS-CTR@k`: Σ clicked · w / Σ θ · w over the same impressions: self-normalised (Swaminathan & Joachims,
  NeurIPS 2015), dividing by the weight the examined impressions are expected to carry instead of the
  number of impressions (the examinations themselves are not observed, so their expectation under the model
  stands in). Without clipping it equals IPS-CTR@k; with clipping it undoes the clip's downward scale,
  estimating the mean of γ with positions weighted min(1, θ · max_weight), and max_weight = 1 gives clicks
  over expected examinations, Σ clicked / Σ θ;
- `Clicks`: clicks per list, at any position (clicks per query issued);
- `Abandonment`: the share of lists without a click;
- `Dwell`: mean dwell seconds of the clicks whose dwell is known;
- `Conversion`: the share of lists with at least one purchase.

θ comes from a `propensity` curve (relative to position 1, see `propensity`), so the IPS metrics are the click
rate had every result been examined as often as the first. The uncertainty of θ itself is not in their
intervals. Intervals: cluster bootstrap (see `impressions`), by session where the impressions have sessions,
else by query; every metric shares the resamples.

`online_differences`: per query, each metric of the experimental model's lists minus the online model's on
that query, over the queries both served (and where the metric is defined for both, e.g. `Dwell` needs a
click on each side): the mean of those per-query deltas, every query counting once as in the offline
measures, with `significance.paired_comparison` (bootstrap interval over queries, sign-flip p-value).
"""

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from metrics.compute.interactions.impressions import (
    ClusterBy,
    Estimate,
    Impressions,
    check_cutoff,
    check_impressions,
    check_model,
    cluster_sums,
    compact,
    ratio_estimates,
)
from metrics.compute.labels import as_float, divide_or_nan
from metrics.compute.resampling import Resampling
from metrics.compute.significance import PairedComparison, paired_comparison

CLICKS = "Clicks"
ABANDONMENT = "Abandonment"
DWELL = "Dwell"
CONVERSION = "Conversion"
DEFAULT_MAX_WEIGHT = 20.0


def ctr_name(k: int) -> str:
    return f"CTR@{k}"


def ips_ctr_name(k: int) -> str:
    return f"IPS-CTR@{k}"


def snips_ctr_name(k: int) -> str:
    return f"SNIPS-CTR@{k}"


def metric_names(k: int, *, ips: bool) -> tuple[str, ...]:
    """The names of the metrics `online_metrics` gives at cut-off k, in its order."""
    debiased = (ips_ctr_name(k), snips_ctr_name(k)) if ips else ()
    return (ctr_name(k), *debiased, CLICKS, ABANDONMENT, DWELL, CONVERSION)


@dataclass(frozen=True)
class OnlineMetrics:
    """One model's online metrics (`estimates`, keyed by `metric_names`) over its `n_lists` lists,
    `n_impressions` impressions and `n_clicks` clicks, with intervals by `cluster_by`."""

    model: int
    k: int
    n_lists: int
    n_impressions: int
    n_clicks: int
    cluster_by: ClusterBy
    estimates: dict[str, Estimate]


@dataclass(frozen=True)
class OnlineDifference:
    """A metric of the experimental model minus the online one, per query (`query`, `delta`: the queries
    where both are defined, ascending) and on average (`comparison`; None when no query has both)."""

    metric: str
    query: np.ndarray
    delta: np.ndarray
    comparison: PairedComparison | None


def online_metrics(
    impressions: Impressions,
    *,
    model: int,
    k: int = 10,
    propensity: ArrayLike | None = None,
    max_weight: float = DEFAULT_MAX_WEIGHT,
    cluster_by: ClusterBy | str | None = None,
    n_resamples: int = 2000,
    confidence: float = 0.95,
    seed: int = 0,
) -> OnlineMetrics:
    """The metrics of the module docstring for `model`'s lists; the IPS ones only with `propensity`
    (θ_1, θ_2, ... relative to position 1, at least k of them). Resamples come from
    `np.random.default_rng(seed)`."""
    impressions = check_impressions(impressions)
    model = check_model(model, impressions)
    k = check_cutoff(k)
    weights = _ips_weights(propensity, k, max_weight)
    resampling = Resampling.of(n_resamples, confidence, seed)
    cluster_by, cluster_of_list = impressions.clusters(cluster_by)
    rows = impressions.model == model
    lists, n_lists = compact(impressions.list_index[rows])
    numerator, denominator = _ratio_columns(impressions, rows, lists, n_lists, k, weights)
    cluster, n_clusters = compact(cluster_of_list[np.unique(impressions.list_index[rows])])
    estimates = ratio_estimates(
        cluster_sums(cluster, numerator, n_clusters),
        cluster_sums(cluster, denominator, n_clusters),
        resampling,
        np.random.default_rng(resampling.seed),
    )
    return OnlineMetrics(
        model=model,
        k=k,
        n_lists=n_lists,
        n_impressions=int(rows.sum()),
        n_clicks=int(impressions.clicked[rows].sum()),
        cluster_by=cluster_by,
        estimates=dict(zip(metric_names(k, ips=weights is not None), estimates, strict=True)),
    )


def query_metrics(
    impressions: Impressions,
    *,
    model: int,
    k: int = 10,
    propensity: ArrayLike | None = None,
    max_weight: float = DEFAULT_MAX_WEIGHT,
) -> dict[str, np.ndarray]:
    """Each metric of `online_metrics` per query: [n_queries] values over `model`'s lists of each query,
    NaN where the query has no list from the model (or, for `Dwell`, no click with a dwell)."""
    impressions = check_impressions(impressions)
    model = check_model(model, impressions)
    k = check_cutoff(k)
    weights = _ips_weights(propensity, k, max_weight)
    return _query_metrics(impressions, model, k, weights)


def online_differences(
    impressions: Impressions,
    *,
    online_model: int,
    experimental_model: int,
    k: int = 10,
    propensity: ArrayLike | None = None,
    max_weight: float = DEFAULT_MAX_WEIGHT,
    n_resamples: int = 2000,
    confidence: float = 0.95,
    seed: int = 0,
) -> dict[str, OnlineDifference]:
    """Experimental − online, per query and on average, for each metric of `online_metrics` (see the module
    docstring). Each metric's comparison is `paired_comparison` of the per-query values with `n_resamples`
    bootstrap resamples and sign flips, seeded by `seed`."""
    impressions = check_impressions(impressions)
    online_model = check_model(online_model, impressions, "online_model")
    experimental_model = check_model(experimental_model, impressions, "experimental_model")
    if online_model == experimental_model:
        raise ValueError("online_model and experimental_model must differ")
    k = check_cutoff(k)
    weights = _ips_weights(propensity, k, max_weight)
    Resampling.of(n_resamples, confidence, seed)
    online = _query_metrics(impressions, online_model, k, weights)
    experimental = _query_metrics(impressions, experimental_model, k, weights)
    differences = {}
    for name, online_values in online.items():
        both = np.flatnonzero(np.isfinite(online_values) & np.isfinite(experimental[name]))
        comparison = None
        if both.size:
            comparison = paired_comparison(
                online_values[both],
                experimental[name][both],
                n_resamples=n_resamples,
                confidence=confidence,
                seed=seed,
            )
        differences[name] = OnlineDifference(
            name, both, experimental[name][both] - online_values[both], comparison
        )
    return differences


def _query_metrics(impressions: Impressions, model: int, k: int, weights: np.ndarray | None) -> dict:
    rows = impressions.model == model
    lists, n_lists = compact(impressions.list_index[rows])
    numerator, denominator = _ratio_columns(impressions, rows, lists, n_lists, k, weights)
    query = impressions.list_query[np.unique(impressions.list_index[rows])]
    values = divide_or_nan(
        cluster_sums(query, numerator, impressions.n_queries),
        cluster_sums(query, denominator, impressions.n_queries),
    )
    names = metric_names(k, ips=weights is not None)
    return {name: values[:, j] for j, name in enumerate(names)}


def _ratio_columns(
    impressions: Impressions,
    rows: np.ndarray,
    lists: np.ndarray,
    n_lists: int,
    k: int,
    weights: np.ndarray | None,
) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """Per list (0..n_lists-1), the numerator and denominator of each metric, in `metric_names` order."""

    def per_list(values: np.ndarray) -> np.ndarray:
        return np.bincount(lists, weights=values, minlength=n_lists)

    position = impressions.position[rows]
    clicked = impressions.clicked[rows].astype(float)
    top = (position <= k).astype(float)
    clicks_top = per_list(clicked * top)
    shown_top = per_list(top)
    numerator, denominator = [clicks_top], [shown_top]
    if weights is not None:
        weight = weights[:, np.minimum(position, k) - 1] * top
        numerator += [per_list(clicked * weight[0]), per_list(clicked * weight[0])]
        denominator += [shown_top, per_list(weight[1])]
    clicks = per_list(clicked)
    dwell = impressions.dwell[rows]
    timed = impressions.clicked[rows] & ~np.isnan(dwell)
    ones = np.ones(n_lists)
    numerator += [clicks, (clicks == 0).astype(float), per_list(np.where(timed, dwell, 0.0))]
    denominator += [ones, ones, per_list(timed.astype(float))]
    numerator.append((per_list(impressions.purchase[rows].astype(float)) > 0).astype(float))
    denominator.append(ones)
    return numerator, denominator


def _ips_weights(propensity: ArrayLike | None, k: int, max_weight: object) -> np.ndarray | None:
    """[2 × k] per position 1..k: the clipped weight w = min(1/θ, max_weight) and θ · w."""
    if isinstance(max_weight, bool) or not isinstance(max_weight, int | float) or not max_weight >= 1:
        raise ValueError(f"max_weight must be a number of at least 1, got {max_weight!r}")
    if propensity is None:
        return None
    theta = as_float(propensity, "propensity", allow_nan=True)
    if theta.size < k:
        raise ValueError(f"propensity must cover positions 1 to k ({k}), got {theta.size} positions")
    theta = theta[:k]
    if not (theta > 0).all():
        raise ValueError(f"propensity must be known and positive at positions 1 to {k}, got {theta.tolist()}")
    weight = np.minimum(1 / theta, float(max_weight))
    return np.stack([weight, theta * weight])
