"""Interaction logs as validated columns, and the cluster bootstrap of ratio metrics.

An impression is one document shown at one position of one result list. `Impressions.of` takes one entry
per impression in each column:

- `query`: the query's index (0..n_queries-1);
- `model`: the index of the ranker that produced the list (0..n_models-1);
- `request`: the id (a non-negative integer) of the result list shown; a request has one query, one model,
  one session, and each position at most once;
- `position`: the rank, 1 at the top;
- `document`: the document's index;
- `clicked`, `cart`, `purchase`: whether the user clicked the document, put it in the cart, bought it
  (booleans; cart and purchase default to never);
- `dwell`: seconds spent on the document after the click, NaN when unknown; read for clicks only;
- `rating`: the rating the user gave after buying (e.g. 1 to 5), NaN when none; read for purchases only;
- `session`: optionally, the id of the user's session, a group of requests.

Every online metric here is a ratio of sums over impressions or requests (clicks over impressions, lists
without a click over lists, ...). Its interval is a cluster bootstrap: the clusters (queries, or sessions
where given) are drawn with replacement, and each resample's metric is the ratio of the drawn clusters' sums,
so the impressions of a cluster, which are correlated (one user's eagerness, one query's difficulty), move
together. `ratio_estimates` does this for several ratios at once, with the same resamples
(`resampling.bootstrap_sums`: one matrix product per chunk of resamples).
"""

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

import numpy as np
from numpy.typing import ArrayLike

from metrics.compute.labels import as_float, as_index, check_count, check_same_length, divide_or_nan
from metrics.compute.resampling import Resampling, bootstrap_sums


class ClusterBy(StrEnum):
    """What the bootstrap resamples as one unit."""

    QUERY = "query"
    SESSION = "session"


@dataclass(frozen=True)
class Impressions:
    """Validated impression columns (see the module docstring), and each impression's list.

    `list_index` numbers the requests 0..n_lists-1 in order of their id; `list_query`, `list_model` and
    `list_session` give each list's query, model and session (-1 without sessions).
    """

    query: np.ndarray
    model: np.ndarray
    request: np.ndarray
    position: np.ndarray
    document: np.ndarray
    clicked: np.ndarray
    dwell: np.ndarray
    cart: np.ndarray
    purchase: np.ndarray
    rating: np.ndarray
    session: np.ndarray | None
    n_queries: int
    n_models: int
    list_index: np.ndarray
    list_query: np.ndarray
    list_model: np.ndarray
    list_session: np.ndarray

    @classmethod
    def of(
        cls,
        *,
        query: ArrayLike,
        model: ArrayLike,
        request: ArrayLike,
        position: ArrayLike,
        document: ArrayLike,
        clicked: ArrayLike,
        dwell: ArrayLike | None = None,
        cart: ArrayLike | None = None,
        purchase: ArrayLike | None = None,
        rating: ArrayLike | None = None,
        session: ArrayLike | None = None,
        n_queries: int | None = None,
        n_models: int | None = None,
    ) -> "Impressions":
        """Checks the columns once (ValueError naming the column and the first bad impression)."""
        query = as_index(query, "query", **_size(n_queries, "n_queries"))
        model = as_index(model, "model", **_size(n_models, "n_models"))
        request = as_index(request, "request")
        document = as_index(document, "document")
        position = as_index(position, "position")
        n = query.size
        if position.size and position.min() < 1:
            raise ValueError(f"position must be 1 or more (1 is the top), found {position.min()}")
        clicked = as_flags(clicked, "clicked")
        cart = np.zeros(n, dtype=bool) if cart is None else as_flags(cart, "cart")
        purchase = np.zeros(n, dtype=bool) if purchase is None else as_flags(purchase, "purchase")
        dwell = np.full(n, np.nan) if dwell is None else as_seconds(dwell, "dwell")
        rating = np.full(n, np.nan) if rating is None else as_float(rating, "rating", allow_nan=True)
        session = None if session is None else as_index(session, "session")
        columns = {"query": query, "model": model, "request": request, "position": position}
        columns |= {"document": document, "clicked": clicked, "dwell": dwell, "cart": cart}
        columns |= {"purchase": purchase, "rating": rating}
        if session is not None:
            columns["session"] = session
        check_same_length(**columns)

        order = np.lexsort((position, request))
        same_request = request[order][1:] == request[order][:-1]
        repeated = same_request & (position[order][1:] == position[order][:-1])
        if repeated.any():
            at = order[1:][repeated][0]
            raise ValueError(f"request {request[at]} shows position {position[at]} more than once")
        per_request = {"query": query, "model": model}
        if session is not None:
            per_request["session"] = session
        for name, column in per_request.items():
            differs = same_request & (column[order][1:] != column[order][:-1])
            if differs.any():
                at = order[1:][differs][0]
                raise ValueError(f"request {request[at]} has more than one {name}; a request shows one list")

        lists, first, list_index = np.unique(request, return_index=True, return_inverse=True)
        return cls(
            query=query,
            model=model,
            request=request,
            position=position,
            document=document,
            clicked=clicked,
            dwell=dwell,
            cart=cart,
            purchase=purchase,
            rating=rating,
            session=session,
            n_queries=_count(n_queries, query),
            n_models=_count(n_models, model),
            list_index=list_index.ravel(),
            list_query=query[first],
            list_model=model[first],
            list_session=np.full(lists.size, -1) if session is None else session[first],
        )

    def clusters(self, cluster_by: "ClusterBy | str | None") -> tuple[ClusterBy, np.ndarray]:
        """What the bootstrap draws, and each list's cluster (a query or session index): `cluster_by` None
        means sessions where the impressions have them, queries otherwise."""
        if cluster_by is None:
            cluster_by = ClusterBy.QUERY if self.session is None else ClusterBy.SESSION
        try:
            cluster_by = ClusterBy(cluster_by)
        except ValueError:
            choices = ", ".join(repr(choice.value) for choice in ClusterBy)
            raise ValueError(f"cluster_by must be one of {choices}, got {cluster_by!r}") from None
        if cluster_by is ClusterBy.SESSION:
            if self.session is None:
                raise ValueError("cluster_by is 'session' but the impressions have no sessions")
            return cluster_by, self.list_session
        return cluster_by, self.list_query


def check_impressions(value: object) -> Impressions:
    if not isinstance(value, Impressions):
        raise ValueError(f"impressions must be Impressions (see Impressions.of), got {type(value).__name__}")
    return value


def check_model(value: object, impressions: Impressions, name: str = "model") -> int:
    model = check_count(value, name)
    if model >= impressions.n_models:
        raise ValueError(f"{name} must be less than n_models ({impressions.n_models}), got {model}")
    return model


def check_cutoff(value: object, name: str = "k") -> int:
    """A cut-off or number of positions: an integer of at least 1."""
    k = check_count(value, name)
    if k < 1:
        raise ValueError(f"{name} must be at least 1")
    return k


@dataclass(frozen=True)
class Estimate:
    """A ratio metric's value with its percentile cluster-bootstrap interval at `confidence`.

    `std_error` is the standard deviation of the resampled values, `n_clusters` the number of clusters drawn
    from, `n_resamples` the resamples in which the metric was defined (its denominator not 0). NaN values
    without data.
    """

    value: float
    ci_low: float
    ci_high: float
    std_error: float
    n_clusters: int
    n_resamples: int
    confidence: float


def ratio_estimates(
    numerator: np.ndarray, denominator: np.ndarray, resampling: Resampling, rng: np.random.Generator
) -> list[Estimate]:
    """Σ numerator / Σ denominator of each column of the [clusters × m] per-cluster sums, with the percentile
    interval of the same ratio over `resampling.n_resamples` cluster bootstrap resamples (shared by the m
    ratios). A ratio whose denominator is 0 is NaN, and so are resamples in which it is 0."""
    n_clusters, n_ratios = numerator.shape
    value = divide_or_nan(numerator.sum(axis=0), denominator.sum(axis=0))
    if n_clusters == 0:
        return [_estimate(value[j], np.zeros(0), 0, resampling) for j in range(n_ratios)]
    sums = bootstrap_sums(np.column_stack([numerator, denominator]), resampling, rng)
    resampled = divide_or_nan(sums[:, :n_ratios], sums[:, n_ratios:])
    return [_estimate(value[j], resampled[:, j], n_clusters, resampling) for j in range(n_ratios)]


def _estimate(value: float, resampled: np.ndarray, n_clusters: int, resampling: Resampling) -> Estimate:
    resampled = resampled[np.isfinite(resampled)]
    if np.isnan(value) or resampled.size == 0:
        return Estimate(float(value), np.nan, np.nan, np.nan, n_clusters, 0, resampling.confidence)
    low, high = resampling.interval(resampled)
    return Estimate(
        float(value),
        float(low),
        float(high),
        float(resampled.std()),
        n_clusters,
        int(resampled.size),
        resampling.confidence,
    )


def cluster_sums(cluster: np.ndarray, columns: Sequence[np.ndarray], n_clusters: int) -> np.ndarray:
    """[n_clusters × len(columns)] each column summed per cluster index."""
    return np.column_stack(
        [np.bincount(cluster, weights=column, minlength=n_clusters) for column in columns]
    ).reshape(n_clusters, len(columns))


def compact(index: np.ndarray) -> tuple[np.ndarray, int]:
    """Indices renumbered 0..m-1 in order of value, and m (so that sums per index are m long, not max+1)."""
    values, renumbered = np.unique(index, return_inverse=True)
    return renumbered.ravel(), values.size


def as_flags(values: ArrayLike, name: str) -> np.ndarray:
    """A 1-D boolean array."""
    flags = np.asarray(values)
    if flags.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional, got shape {flags.shape}")
    if flags.size and flags.dtype != bool:
        raise ValueError(f"{name} must hold booleans, got dtype {flags.dtype}")
    return flags.astype(bool)


def as_seconds(values: ArrayLike, name: str) -> np.ndarray:
    """A 1-D array of durations: 0 or more seconds, NaN where unknown."""
    seconds = as_float(values, name, allow_nan=True)
    if (seconds < 0).any():
        raise ValueError(f"{name} must be seconds (0 or more) or NaN, found {seconds[seconds < 0][0]}")
    return seconds


def _size(size: int | None, name: str) -> dict:
    return {} if size is None else {"size": check_count(size, name), "size_name": name}


def _count(size: int | None, index: np.ndarray) -> int:
    if size is not None:
        return int(size)
    return int(index.max()) + 1 if index.size else 0
