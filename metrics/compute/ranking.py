"""Ranking measures over all queries at once: nDCG, DCG, CG, AP, RR, P, R and Judged, at cut-offs.

Every function works on a padded `[queries × depth]` array of labels, one row per query in rank order
(rank 1 first), NaN where a retrieved document has no label and beyond the end of a query's list; there is
no Python loop per query. Conventions (those of trec_eval unless said otherwise):

- Gain: `exponential` 2^rel − 1 (the default here) or `linear` rel (trec_eval). Labels may be fractional
  (the mean of several annotators) and are used exactly.
- Discount: `log2` 1 / log2(rank + 1) (the default), or `jarvelin`, Järvelin–Kekäläinen's original form:
  rank 1 undiscounted, then 1 / log2(rank).
- The ideal DCG sorts **all judged documents of the query**, retrieved or not, by label and cuts at k
  (`ideal="judged"`); `ideal="retrieved"` sorts the retrieved list alone, as scikit-learn's `ndcg_score` does.
- Unjudged documents have gain 0 and are not relevant (drop them before ranking for `judged_only`).
- Negative labels: by default gain 0 and not relevant (trec_eval); `negative="penalize"` keeps their
  negative gain in DCG while the ideal ignores them.
- Binary measures (AP, RR, P, R) count a document relevant when its label ≥ `rel_threshold` (default 1).
  AP@k is trec_eval's `map_cut`: precision at each relevant document in the top k, over all relevant ones.
- A query with no relevant document scores 0 and counts in the mean.
"""

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import StrEnum

import numpy as np
from numpy.typing import ArrayLike

from trec.measures import Measure, parse_measure


class Gain(StrEnum):
    EXPONENTIAL = "exponential"
    LINEAR = "linear"


class Discount(StrEnum):
    LOG2 = "log2"
    JARVELIN = "jarvelin"


class Ideal(StrEnum):
    JUDGED = "judged"
    RETRIEVED = "retrieved"


class Negative(StrEnum):
    ZERO = "zero"
    PENALIZE = "penalize"


DEFAULT_MEASURES = ("nDCG@1", "nDCG@3", "nDCG@5", "nDCG@10", "nDCG", "AP", "RR", "P@10")


@dataclass(frozen=True)
class RankingSettings:
    """How labels become scores; see the module docstring for each convention."""

    gain: Gain = Gain.EXPONENTIAL
    discount: Discount = Discount.LOG2
    rel_threshold: float = 1.0
    ideal: Ideal = Ideal.JUDGED
    negative: Negative = Negative.ZERO

    def __post_init__(self):
        # Plain strings ("exponential") become their enum, so `is` comparisons hold; others are refused.
        for name, kind in _SETTING_KINDS.items():
            value = getattr(self, name)
            try:
                object.__setattr__(self, name, kind(value))
            except ValueError:
                choices = ", ".join(repr(choice.value) for choice in kind)
                raise ValueError(f"{name} must be one of {choices}, got {value!r}") from None
        value = self.rel_threshold
        if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
            raise ValueError(f"rel_threshold must be a finite number, got {value!r}")
        object.__setattr__(self, "rel_threshold", float(value))

    @classmethod
    def checked(cls, **values) -> "RankingSettings":
        """Settings from user input, each value validated and named when wrong."""
        unknown = sorted(set(values) - {*_SETTING_KINDS, "rel_threshold"})
        if unknown:
            raise ValueError(f"unknown setting {unknown[0]!r}")
        return cls(**values)


_SETTING_KINDS = {"gain": Gain, "discount": Discount, "ideal": Ideal, "negative": Negative}


def evaluate_ranked(
    labels: ArrayLike,
    measures: Iterable[str | Measure],
    *,
    judged_labels: ArrayLike | None = None,
    settings: RankingSettings | None = None,
) -> dict[str, np.ndarray]:
    """Per-query values of each measure, keyed by canonical name.

    `labels`: `[queries × depth]` each query's retrieved documents in rank order, NaN where unjudged or past
    the end of its list. `judged_labels`: `[queries × any]` every judged label of each query (NaN padding),
    for the ideal DCG and for R (the number of relevant documents); without it the retrieved labels stand
    in for them, as with `ideal="retrieved"`.

        DCG@k  = Σ_{i ≤ k} gain(rel_i) · discount(i)
        nDCG@k = DCG@k / IDCG@k, with IDCG@k the DCG of the ideal ordering; 0 when IDCG@k is 0
        AP     = (1 / R) · Σ_{i : rel_i ≥ t} P@i            RR  = 1 / (rank of the first relevant), else 0
        P@k    = |{i ≤ k : rel_i ≥ t}| / k                  R@k = |{i ≤ k : rel_i ≥ t}| / R, 0 when R is 0
        Judged@k = |{i ≤ k : rel_i is not NaN}| / k         CG@k = Σ_{i ≤ k} gain(rel_i)
    """
    settings = settings or RankingSettings()
    labels = _as_label_matrix(labels, "labels")
    parsed = [measure if isinstance(measure, Measure) else parse_measure(measure) for measure in measures]
    if not parsed:
        raise ValueError("measures must name at least one measure")
    if judged_labels is None or settings.ideal is Ideal.RETRIEVED:
        ideal_source = labels
    else:
        ideal_source = _as_label_matrix(judged_labels, "judged_labels")
        if ideal_source.shape[0] != labels.shape[0]:
            raise ValueError(
                f"judged_labels has {ideal_source.shape[0]} queries but labels has {labels.shape[0]}"
            )
    return _Scorer(labels, ideal_source, settings).scores(parsed)


def gain_of(labels: np.ndarray, gain: Gain, *, negative_as_zero: bool = False) -> np.ndarray:
    """Gain of each label, NaN (unjudged) as 0; negative labels keep their sign unless `negative_as_zero`
    (the same as clipping the gains at 0, since both gains are increasing and 0 for label 0)."""
    # fmax ignores NaN: one pass instead of nan_to_num's copy and three scans.
    values = np.fmax(labels, 0.0) if negative_as_zero else np.where(np.isnan(labels), 0.0, labels)
    if gain is Gain.EXPONENTIAL:
        np.exp2(values, out=values)
        values -= 1.0
    return values


def discounts(depth: int, discount: Discount) -> np.ndarray:
    """The discount of ranks 1..depth."""
    rank = np.arange(1, depth + 1, dtype=float)
    if discount is Discount.LOG2:
        return 1.0 / np.log2(rank + 1.0)
    return 1.0 / np.log2(np.maximum(rank, 2.0))


def weighted_mean(values: np.ndarray, weights: np.ndarray | None = None) -> float:
    """The mean over queries, weighted when weights are given; NaN for no queries."""
    if values.size == 0:
        return math.nan
    if weights is None:
        return float(values.mean())
    return float(np.average(values, weights=weights))


Z95 = 1.959963984540054  # the standard normal's 97.5% quantile


def mean_intervals(per_query: dict[str, np.ndarray], weights: np.ndarray) -> dict[str, tuple[float, float]]:
    """Normal-approximation 95% interval of each measure's weighted mean over queries (NaN under two).

    SE = sqrt(n / (n - 1) * sum(w_i^2 (x_i - mean)^2)) / sum(w_i); a bootstrap would cost as much as every
    comparison together and agrees with it closely at the query counts a launch review has.
    """
    n = weights.size
    intervals = {}
    for name, values in per_query.items():
        if n < 2:
            intervals[name] = (math.nan, math.nan)
            continue
        mean = weighted_mean(values, weights)
        spread = np.sqrt(n / (n - 1) * np.sum(weights**2 * (values - mean) ** 2)) / weights.sum()
        intervals[name] = (float(mean - Z95 * spread), float(mean + Z95 * spread))
    return intervals


def _as_label_matrix(values: ArrayLike, name: str) -> np.ndarray:
    matrix = np.asarray(values, dtype=float)
    if matrix.ndim != 2:
        raise ValueError(f"{name} must be a [queries × depth] array, got shape {matrix.shape}")
    if np.isinf(matrix).any():
        raise ValueError(f"{name} must hold finite labels or NaN (unjudged)")
    return matrix


class _Scorer:
    """Shares the cumulative sums that several measures of one evaluation need."""

    def __init__(self, labels: np.ndarray, judged: np.ndarray, settings: RankingSettings):
        self.labels = labels
        self.judged = judged
        self.settings = settings
        self.n_queries, self.depth = labels.shape
        self._cache: dict[str, np.ndarray] = {}

    def scores(self, measures: Sequence[Measure]) -> dict[str, np.ndarray]:
        return {str(measure): self._score(measure) for measure in measures}

    def _cached(self, key: str, compute) -> np.ndarray:
        if key not in self._cache:
            self._cache[key] = compute()
        return self._cache[key]

    def _at(self, cumulative: np.ndarray, k: int | None) -> np.ndarray:
        """Column k of a `[queries × depth]` cumulative sum (the whole row for k None or past the end)."""
        width = cumulative.shape[1]
        if width == 0:
            return np.zeros(self.n_queries)
        return cumulative[:, (width if k is None else min(k, width)) - 1]

    def _gains(self) -> np.ndarray:
        def compute():
            return gain_of(
                self.labels, self.settings.gain, negative_as_zero=self.settings.negative is Negative.ZERO
            )

        return self._cached("gains", compute)

    def _dcg_at(self, k: int | None) -> np.ndarray:
        """DCG@k of every query (k None: the whole list), with no cumulative `[queries × depth]` copy."""

        def compute():
            width = self.depth if k is None else min(k, self.depth)
            return _row_sums(self._gains()[:, :width], discounts(width, self.settings.discount))

        return self._cached(f"dcg@{k}", compute)

    def _ideal_dcg_at(self, k: int | None) -> np.ndarray:
        """The DCG@k of each query's judged labels in their best order."""

        def negated_ideal():
            # In place: the judged matrix can be as large as the run's. Sorting the negated gains ascending
            # orders them largest first without a reversed copy.
            ideal = gain_of(self.judged, self.settings.gain, negative_as_zero=True)
            np.negative(ideal, out=ideal)
            ideal.sort(axis=1)
            return ideal

        ideal = self._cached("ideal", negated_ideal)
        width = ideal.shape[1] if k is None else min(k, ideal.shape[1])
        return -_row_sums(ideal[:, :width], discounts(width, self.settings.discount))

    def _relevant(self) -> np.ndarray:
        # NaN >= t is False: unjudged documents are not relevant.
        return self._cached("relevant", lambda: self.labels >= self.settings.rel_threshold)

    def _relevant_cumulative(self) -> np.ndarray:
        return self._cached("relevant_cumulative", lambda: np.cumsum(self._relevant(), axis=1))

    def _n_relevant(self) -> np.ndarray:
        return self._cached(
            "n_relevant", lambda: (self.judged >= self.settings.rel_threshold).sum(axis=1).astype(float)
        )

    def _score(self, measure: Measure) -> np.ndarray:
        family, k = measure.family, measure.k
        if family == "DCG":
            return self._dcg_at(k).copy()
        if family == "nDCG":
            return _ratio(self._dcg_at(k), self._ideal_dcg_at(k))
        if family == "CG":
            return self._at(np.cumsum(self._gains(), axis=1), k).copy()
        if family == "P":
            return self._at(self._relevant_cumulative(), k) / k
        if family == "R":
            return _ratio(self._at(self._relevant_cumulative(), k), self._n_relevant())
        if family == "Judged":
            return self._at(np.cumsum(~np.isnan(self.labels), axis=1), k) / k
        if family == "RR":
            relevant = self._relevant()[:, :k] if k else self._relevant()
            if relevant.shape[1] == 0:
                return np.zeros(self.n_queries)
            first = relevant.argmax(axis=1)
            found = relevant[np.arange(self.n_queries), first]
            return np.where(found, 1.0 / (first + 1.0), 0.0)
        if family == "AP":
            relevant = self._relevant()[:, :k] if k else self._relevant()
            hits = self._relevant_cumulative()[:, : relevant.shape[1]]
            precision_at_hits = hits / np.arange(1, relevant.shape[1] + 1) * relevant
            return _ratio(precision_at_hits.sum(axis=1), self._n_relevant())
        raise AssertionError(f"unhandled measure {measure}")


def _row_sums(matrix: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Σ_j matrix[i, j] · weights[j] for each row i, a block of rows at a time (small temporaries). Each
    row is summed on its own in the same way, so a query's value does not depend on the others (a BLAS
    matrix-vector product would not promise that)."""
    out = np.empty(matrix.shape[0])
    block = max(1, (1 << 20) // max(matrix.shape[1], 1))
    for start in range(0, matrix.shape[0], block):
        np.sum(matrix[start : start + block] * weights, axis=1, out=out[start : start + block])
    return out


def _ratio(numerator: np.ndarray, denominator: np.ndarray) -> np.ndarray:
    """numerator / denominator, 0 where the denominator is 0 (a query with nothing relevant scores 0)."""
    out = np.zeros(np.broadcast(numerator, denominator).shape)
    np.divide(numerator, denominator, out=out, where=denominator != 0)
    return out
