"""Do the judges and the users agree on what changed? Per query, the offline delta (e.g. Δ nDCG@10 from the
human labels) against the online delta (e.g. Δ IPS-CTR@10 from the logs), both experimental − online.

"NDCG up but CTR down" is a query whose results became more relevant but less attractive (or whose judges
and users want different things); the reverse is a change users like that the judges did not reward.
"""

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from metrics.compute.correlation import Correlation, spearman
from metrics.compute.labels import as_float, as_index, check_same_length

DEFAULT_MARGIN = 0.01


@dataclass(frozen=True)
class OfflineOnlineAgreement:
    """The rank correlation of the per-query deltas over `n_queries` queries, and the queries where the two
    sides disagree beyond their margins (query indices, the clearest disagreements first):
    `judges_only` the judges prefer the experiment (offline delta > offline_margin) and the users prefer the
    online model (online delta < -online_margin), `users_only` the reverse. `agree` counts the queries where
    both deltas are beyond their margins with the same sign; the others have a delta within its margin."""

    correlation: Correlation
    n_queries: int
    judges_only: np.ndarray
    users_only: np.ndarray
    agree: int
    offline_margin: float
    online_margin: float


def offline_online_agreement(
    query: ArrayLike,
    offline_delta: ArrayLike,
    online_delta: ArrayLike,
    *,
    offline_margin: float = DEFAULT_MARGIN,
    online_margin: float = DEFAULT_MARGIN,
    n_resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
) -> OfflineOnlineAgreement:
    """Spearman's ρ of the offline and online deltas of the same queries (`query[i]` the index of entry i;
    each query once), with a percentile bootstrap interval over queries (`correlation.spearman`, seeded by
    `seed`), and the disagreeing queries in both directions.

    A query disagrees when both deltas are beyond their margins and of opposite signs: a delta within its
    margin (default 0.01, on the measure's own scale) is "no clear change" on that side, not a preference,
    so noise around 0 is not listed. Disagreements are ordered by |offline delta| · |online delta|, largest
    first, then by query index.
    """
    query = as_index(query, "query")
    offline_delta = as_float(offline_delta, "offline_delta")
    online_delta = as_float(online_delta, "online_delta")
    check_same_length(query=query, offline_delta=offline_delta, online_delta=online_delta)
    if np.unique(query).size != query.size:
        raise ValueError("query must list each query once")
    offline_margin = _as_margin(offline_margin, "offline_margin")
    online_margin = _as_margin(online_margin, "online_margin")
    correlation = spearman(
        offline_delta, online_delta, n_resamples=n_resamples, confidence=confidence, seed=seed
    )

    offline_sign = np.where(
        offline_delta > offline_margin, 1, np.where(offline_delta < -offline_margin, -1, 0)
    )
    online_sign = np.where(online_delta > online_margin, 1, np.where(online_delta < -online_margin, -1, 0))
    strength = np.abs(offline_delta * online_delta)

    def clearest_first(rows: np.ndarray) -> np.ndarray:
        return query[rows][np.lexsort((query[rows], -strength[rows]))]

    return OfflineOnlineAgreement(
        correlation=correlation,
        n_queries=int(query.size),
        judges_only=clearest_first((offline_sign == 1) & (online_sign == -1)),
        users_only=clearest_first((offline_sign == -1) & (online_sign == 1)),
        agree=int(((offline_sign * online_sign) == 1).sum()),
        offline_margin=offline_margin,
        online_margin=online_margin,
    )


def _as_margin(value: object, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value < np.inf:
        raise ValueError(f"{name} must be a finite number of at least 0, got {value!r}")
    return float(value)
