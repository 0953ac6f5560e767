"""Ranking measures over all queries at once: nDCG, DCG, CG, AP, RR, P, R and Judged, at cut-offs.

Every function works on a padded `[queries × depth]` array of labels, one row per query in rank order
(rank 1 first), NaN where a retrieved document has no label and beyond the end of a query's list; there is
no Python loop per query. Conventions (those of trec_eval unless said otherwise):

- Gain: `exponential` 2^rel − 1 (the default here) or `linear` rel (trec_eval). Labels may be fractional
  (the mean of several annotators) and are used exactly.
- Discount: `log2` 1 / log2(rank + 1) (the default), or `jarvelin`, Järvelin–Kekäläinen's original form:
  rank 1 undiscounted, then 1 / log2(rank). `position_weights` replace either with one weight per rank
  (a business's own: a promoted slot weighted 0.8 instead of 1), in DCG and in the ideal DCG alike; each
  DCG measure then needs a cut-off no deeper than the weights.
- The ideal DCG sorts **all judged documents of the query**, retrieved or not, by label and cuts at k
  (`ideal="judged"`); `ideal="retrieved"` sorts the retrieved list alone, as scikit-learn's `ndcg_score` does.
- Unjudged documents have gain 0 and are not relevant (drop them before ranking for `judged_only`).
- Negative labels: by default gain 0 and not relevant (trec_eval); `negative="penalize"` keeps their
  negative gain in DCG while the ideal ignores them.
- Binary measures (AP, RR, P, R) count a document relevant when its label ≥ `rel_threshold` (default 1).
  AP@k is trec_eval's `map_cut`: precision at each relevant document in the top k, over all relevant ones.
- A query with no relevant document scores 0 and counts in the mean.
- Near-duplicates (optional `duplicate_groups`): documents of one group are near-duplicates of each other;
  a document whose group already appeared higher in the list gains nothing (DCG, nDCG and CG; the binary
  measures are unchanged). The ideal keeps the best-labelled document of each group among the judged ones
  and drops the rest, so it is the best list any ranking could reach: redundancy-aware nDCG stays ≤ 1 and
  is 1 for a list that shows each group's best document once, in label order.
"""

import math
from collections.abc import Iterable, Mapping, Sequence
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
    position_weights: tuple[float, ...] | None = None

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
        if self.position_weights is not None:
            object.__setattr__(self, "position_weights", checked_position_weights(self.position_weights))

    @classmethod
    def checked(cls, **values) -> "RankingSettings":
        """Settings from user input, each value validated and named when wrong."""
        unknown = sorted(set(values) - {*_SETTING_KINDS, "rel_threshold", "position_weights"})
        if unknown:
            raise ValueError(f"unknown setting {unknown[0]!r}")
        return cls(**values)


_SETTING_KINDS = {"gain": Gain, "discount": Discount, "ideal": Ideal, "negative": Negative}


def checked_position_weights(weights) -> tuple[float, ...]:
    """Position weights as a tuple of floats: at least one, each a finite number ≥ 0 (rank 1 first)."""
    if isinstance(weights, str | bytes) or not isinstance(weights, Iterable):
        raise ValueError(f"position_weights must be a list of numbers, got {weights!r}")
    checked = []
    for rank, weight in enumerate(weights, start=1):
        if isinstance(weight, bool) or not isinstance(weight, int | float | np.number):
            raise ValueError(f"position_weights: the weight of rank {rank} must be a number, got {weight!r}")
        if not (math.isfinite(weight) and weight >= 0):
            raise ValueError(
                f"position_weights: the weight of rank {rank} must be finite and ≥ 0, got {weight}"
            )
        checked.append(float(weight))
    if not checked:
        raise ValueError("position_weights must hold at least one weight")
    return tuple(checked)


def evaluate_ranked(
    labels: ArrayLike,
    measures: Iterable[str | Measure],
    *,
    judged_labels: ArrayLike | None = None,
    settings: RankingSettings | None = None,
    duplicate_groups: ArrayLike | None = None,
    judged_duplicate_groups: ArrayLike | None = None,
) -> dict[str, np.ndarray]:
    """Per-query values of each measure, keyed by canonical name.

    `labels`: `[queries × depth]` each query's retrieved documents in rank order, NaN where unjudged or past
    the end of its list. `judged_labels`: `[queries × any]` every judged label of each query (NaN padding),
    for the ideal DCG and for R (the number of relevant documents); without it the retrieved labels stand
    in for them, as with `ideal="retrieved"`. `duplicate_groups` (integers, same shape as `labels`) and
    `judged_duplicate_groups` (same shape as `judged_labels`) make DCG, nDCG and CG redundancy-aware: equal
    values within a query mark near-duplicates, -1 a document in no group; a query's group numbers must
    mean the same in both.

        DCG@k  = Σ_{i ≤ k} gain(rel_i) · w_i, w_i the discount of rank i (or its position weight)
        nDCG@k = DCG@k / IDCG@k, with IDCG@k the DCG of the ideal ordering; 0 when IDCG@k is 0
        AP     = (1 / R) · Σ_{i : rel_i ≥ t} P@i            RR  = 1 / (rank of the first relevant), else 0
        P@k    = |{i ≤ k : rel_i ≥ t}| / k                  R@k = |{i ≤ k : rel_i ≥ t}| / R, 0 when R is 0
        Judged@k = |{i ≤ k : rel_i is not NaN}| / k         CG@k = Σ_{i ≤ k} gain(rel_i)

    With near-duplicates, gain(rel_i) is 0 when a document of i's group is ranked above i, and the ideal
    ordering sorts the best judged label of each group (and every document in no group).
    """
    settings = settings or RankingSettings()
    labels = _as_label_matrix(labels, "labels")
    parsed = [measure if isinstance(measure, Measure) else parse_measure(measure) for measure in measures]
    if not parsed:
        raise ValueError("measures must name at least one measure")
    intent_aware = [str(measure) for measure in parsed if measure.intent_aware]
    if intent_aware:
        raise ValueError(f"measure {intent_aware[0]!r} is intent-aware: it needs intent judgments")
    if settings.position_weights is not None:
        check_weights_cover(parsed, len(settings.position_weights))
    if judged_labels is None or settings.ideal is Ideal.RETRIEVED:
        ideal_source = labels
    else:
        ideal_source = _as_label_matrix(judged_labels, "judged_labels")
        if ideal_source.shape[0] != labels.shape[0]:
            raise ValueError(
                f"judged_labels has {ideal_source.shape[0]} queries but labels has {labels.shape[0]}"
            )
    groups = judged_groups = None
    if duplicate_groups is not None:
        groups = _as_group_matrix(duplicate_groups, "duplicate_groups", labels.shape)
        if ideal_source is labels:
            judged_groups = groups
        elif judged_duplicate_groups is None:
            raise ValueError("judged_duplicate_groups is needed too: the ideal ranking must know them")
        else:
            judged_groups = _as_group_matrix(
                judged_duplicate_groups, "judged_duplicate_groups", ideal_source.shape
            )
    elif judged_duplicate_groups is not None:
        raise ValueError("judged_duplicate_groups was given without duplicate_groups")
    return _Scorer(labels, ideal_source, settings, groups, judged_groups).scores(parsed)


def check_weights_cover(measures: Sequence[Measure], n_weights: int) -> None:
    """Position weights stand in for the discount of each rank: every DCG measure needs one per rank."""
    for measure in measures:
        if measure.family not in ("DCG", "nDCG"):
            continue
        if measure.k is None:
            raise ValueError(
                f"{measure} needs a cut-off with position weights, e.g. {measure.family}@{n_weights}"
            )
        if measure.k > n_weights:
            raise ValueError(
                f"{measure} needs a position weight for each of its {measure.k} ranks; {n_weights} are given"
            )


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


def measure_range(measure: str | Measure, settings: RankingSettings | None = None) -> tuple[float, float]:
    """The values a measure can take: [0, 1] for the normalised ones (nDCG, AP, RR, P, R, Judged), [0, ∞)
    for DCG and CG; with `negative="penalize"` a negative gain lowers DCG, CG and nDCG without bound."""
    measure = measure if isinstance(measure, Measure) else parse_measure(measure)
    settings = settings or RankingSettings()
    penalized = settings.negative is Negative.PENALIZE and measure.family in ("nDCG", "DCG", "CG")
    low = -math.inf if penalized else 0.0
    return (low, math.inf) if measure.family in ("DCG", "CG") else (low, 1.0)


def mean_intervals(
    per_query: dict[str, np.ndarray],
    weights: np.ndarray,
    settings: RankingSettings | None = None,
    *,
    ranges: Mapping[str, tuple[float, float]] | None = None,
) -> dict[str, tuple[float, float]]:
    """Normal-approximation 95% interval of each measure's weighted mean over queries (NaN under two),
    clipped to the measure's range (`measure_range`, or `ranges[name]` for a measure not of this module):
    a mean RR of 0.93 has no upper bound above 1.

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
        low, high = ranges[name] if ranges and name in ranges else measure_range(name, settings)
        intervals[name] = (float(max(mean - Z95 * spread, low)), float(min(mean + Z95 * spread, high)))
    return intervals


def _repeated_in_list(groups: np.ndarray) -> np.ndarray:
    """`[queries × depth]` True where a document of the same group (≥ 0) is ranked higher in the row."""
    # A stable sort keeps each group's documents in rank order: its first is the highest ranked.
    return _after_first_of_group(groups, np.argsort(groups, axis=1, kind="stable"))


def _below_best_of_group(gains: np.ndarray, groups: np.ndarray) -> np.ndarray:
    """True for every document of a group (≥ 0) but one with the group's largest gain, in each row."""
    return _after_first_of_group(groups, np.lexsort((-gains, groups), axis=1))


def _after_first_of_group(groups: np.ndarray, order: np.ndarray) -> np.ndarray:
    """True for each document of a group (≥ 0) after the group's first in `order` (which sorts each row by
    group), in the rows' own order."""
    ordered = np.take_along_axis(groups, order, axis=1)
    later = np.zeros(groups.shape, dtype=bool)
    later[:, 1:] = (ordered[:, 1:] == ordered[:, :-1]) & (ordered[:, 1:] >= 0)
    out = np.empty_like(later)
    np.put_along_axis(out, order, later, axis=1)
    return out


def _as_group_matrix(values: ArrayLike, name: str, shape: tuple[int, ...]) -> np.ndarray:
    matrix = np.asarray(values)
    if matrix.shape != shape or not np.issubdtype(matrix.dtype, np.integer):
        raise ValueError(
            f"{name} must be integers of shape {shape} (-1: in no group), got {matrix.dtype} {matrix.shape}"
        )
    return matrix


def _as_label_matrix(values: ArrayLike, name: str) -> np.ndarray:
    matrix = np.asarray(values, dtype=float)
    if matrix.ndim != 2:
        raise ValueError(f"{name} must be a [queries × depth] array, got shape {matrix.shape}")
    if np.isinf(matrix).any():
        raise ValueError(f"{name} must hold finite labels or NaN (unjudged)")
    return matrix


class _Scorer:
    """Shares the gains, relevance and counts that several measures of one evaluation need."""

    def __init__(
        self,
        labels: np.ndarray,
        judged: np.ndarray,
        settings: RankingSettings,
        groups: np.ndarray | None = None,
        judged_groups: np.ndarray | None = None,
    ):
        self.labels = labels
        self.judged = judged
        self.settings = settings
        self.groups, self.judged_groups = groups, judged_groups
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
            gains = gain_of(
                self.labels, self.settings.gain, negative_as_zero=self.settings.negative is Negative.ZERO
            )
            if self.groups is not None:
                gains[_repeated_in_list(self.groups)] = 0.0
            return gains

        return self._cached("gains", compute)

    def _weights(self, width: int) -> np.ndarray:
        """The weight of ranks 1..width: the position weights where set, else the discount."""
        if self.settings.position_weights is not None:
            return np.array(self.settings.position_weights[:width])
        return discounts(width, self.settings.discount)

    def _dcg_at(self, k: int | None) -> np.ndarray:
        """DCG@k of every query (k None: the whole list), with no cumulative `[queries × depth]` copy."""

        def compute():
            width = self.depth if k is None else min(k, self.depth)
            return _row_sums(self._gains()[:, :width], self._weights(width))

        return self._cached(f"dcg@{k}", compute)

    def _ideal_dcg_at(self, k: int | None) -> np.ndarray:
        """The DCG@k of each query's judged labels in their best order."""

        def negated_ideal():
            # In place: the judged matrix can be as large as the run's. Sorting the negated gains ascending
            # orders them largest first without a reversed copy.
            ideal = gain_of(self.judged, self.settings.gain, negative_as_zero=True)
            if self.judged_groups is not None:
                ideal[_below_best_of_group(ideal, self.judged_groups)] = 0.0
            np.negative(ideal, out=ideal)
            ideal.sort(axis=1)
            return ideal

        ideal = self._cached("ideal", negated_ideal)
        width = ideal.shape[1] if k is None else min(k, ideal.shape[1])
        return -_row_sums(ideal[:, :width], self._weights(width))

    def _relevant(self) -> np.ndarray:
        # NaN >= t is False: unjudged documents are not relevant.
        return self._cached("relevant", lambda: self.labels >= self.settings.rel_threshold)

    def _relevant_in_top(self, k: int | None) -> np.ndarray:
        """How many of each query's first k documents (all of them for k None) are relevant: a count of
        those columns, not a cumulative `[queries × depth]` copy."""
        width = self.depth if k is None else min(k, self.depth)
        return self._cached(f"relevant@{k}", lambda: np.count_nonzero(self._relevant()[:, :width], axis=1))

    def _n_relevant(self) -> np.ndarray:
        return self._cached(
            "n_relevant", lambda: (self.judged >= self.settings.rel_threshold).sum(axis=1).astype(float)
        )

    def _score(self, measure: Measure) -> np.ndarray:
        family, k = measure.family, measure.k
        if family == "DCG":
            return self._dcg_at(k).copy()
        if family == "nDCG":
            return ratio_or_zero(self._dcg_at(k), self._ideal_dcg_at(k))
        if family == "CG":
            return self._at(np.cumsum(self._gains(), axis=1), k).copy()
        if family == "P":
            return self._relevant_in_top(k) / k
        if family == "R":
            return ratio_or_zero(self._relevant_in_top(k), self._n_relevant())
        if family == "Judged":
            return np.count_nonzero(~np.isnan(self.labels[:, :k]), axis=1) / k
        if family == "RR":
            relevant = self._relevant()[:, :k] if k else self._relevant()
            if relevant.shape[1] == 0:
                return np.zeros(self.n_queries)
            first = relevant.argmax(axis=1)
            found = relevant[np.arange(self.n_queries), first]
            return np.where(found, 1.0 / (first + 1.0), 0.0)
        if family == "AP":
            relevant = self._relevant()[:, :k] if k else self._relevant()
            return ratio_or_zero(_precision_at_hits(relevant), self._n_relevant())
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


def _precision_at_hits(relevant: np.ndarray) -> np.ndarray:
    """Σ_{i : relevant_i} P@i for each row, a block of rows at a time: the block's cumulative counts and
    products stay in cache (one cumulative sum of a whole large run took most of its scoring)."""
    out = np.empty(relevant.shape[0])
    ranks = np.arange(1, relevant.shape[1] + 1)
    block = max(1, (1 << 16) // max(relevant.shape[1], 1))
    for start in range(0, relevant.shape[0], block):
        rows = relevant[start : start + block]
        np.sum(np.cumsum(rows, axis=1) / ranks * rows, axis=1, out=out[start : start + block])
    return out


def ratio_or_zero(numerator: np.ndarray, denominator: np.ndarray) -> np.ndarray:
    """numerator / denominator, 0 where the denominator is 0 (a query with nothing relevant scores 0)."""
    out = np.zeros(np.broadcast(numerator, denominator).shape)
    np.divide(numerator, denominator, out=out, where=denominator != 0)
    return out
