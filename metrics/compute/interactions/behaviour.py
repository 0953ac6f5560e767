"""Relevance grades from what users did, and their agreement with the judges' grades.

Each impression gets a grade from its furthest action (`action_grades`, with an `ActionGrades` mapping; the
default is the product seed's e-commerce scale):

| the impression's furthest action                            | grade (default) |
| ----------------------------------------------------------- | --------------- |
| a purchase rated at least `good_rating` (4, on 1 to 5)      | 3               |
| a purchase without a rating                                 | 2               |
| a purchase rated below `good_rating`                        | 1               |
| a cart (no purchase)                                        | 2               |
| a click (no cart), dwell at least `min_dwell` or unknown    | 1               |
| nothing, or a click shorter than `min_dwell` (a bounce)     | 0               |

A purchase decides, whatever came before: bought and rated well is the strongest evidence of relevance; a
purchase without a rating is treated as a cart (the user committed, satisfaction unknown; most purchases go
unrated, so it must not outrank a rated one); a poorly rated purchase is a document that looked right and
was not, as weak as a click. Cart and purchase count without a recorded click (a list may offer "add to
cart"). A rating without a purchase is not read.

`behaviour_qrels` gives one grade per (query, document): by default the maximum over its impressions (the
furthest any user went with it), or with `min_count` m the highest grade that at least m impressions
reached. Behaviour is evidence when it happens, and an absence is weak evidence: most impressions are never
examined (position bias), so a mean grade mostly measures how high and how often the document was shown,
and a relevant document at position 9 averages close to 0. The maximum reads only what users did. Its
weakness is chance: the more impressions, the more chances of a stray click or purchase, so with heavy
traffic it overstates poor documents; raising `min_count` asks for that many users to agree.
`min_impressions` leaves out pairs shown too rarely to grade. Measured on simulated users against the true
grades (`bench/simulate_clicks.py`, docs/statistics.md): at about 36 impressions per pair the maximum
agrees best (weighted κ 0.81); at about 360, `min_count=5` does (κ 0.92, against 0.69 for the plain
maximum); the mean grade, rounded, stays near κ 0.1 at both. The mean is available (`aggregation="mean"`)
for comparison.

`behaviour_agreement` compares behaviour grades with the judges' aggregated grades of the same pairs:
quadratic-weighted kappa and Spearman's ρ, overall and per segment, with bootstrap intervals over queries.
"""

import math
from dataclasses import dataclass
from enum import StrEnum

import numpy as np
from numpy.typing import ArrayLike

from metrics.compute.agreement import Agreement, weighted_kappa
from metrics.compute.correlation import Correlation, spearman
from metrics.compute.interactions.impressions import (
    Impressions,
    as_flags,
    as_seconds,
    check_impressions,
    compact,
)
from metrics.compute.labels import (
    as_float,
    as_index,
    as_scale,
    as_segments,
    check_count,
    check_same_length,
    scale_positions,
)
from metrics.compute.resampling import Resampling


class GradeAggregation(StrEnum):
    MAX = "max"
    MEAN = "mean"


@dataclass(frozen=True)
class ActionGrades:
    """The grade each furthest action earns (see the module docstring), the lowest rating that is good, and
    the shortest dwell (seconds) for a click to count."""

    no_click: float = 0.0
    click: float = 1.0
    cart: float = 2.0
    purchase_good: float = 3.0
    purchase_unrated: float = 2.0
    purchase_poor: float = 1.0
    good_rating: float = 4.0
    min_dwell: float = 0.0

    def __post_init__(self):
        for name in self.__dataclass_fields__:
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
                raise ValueError(f"{name} must be a finite number, got {value!r}")
            object.__setattr__(self, name, float(value))
        if self.min_dwell < 0:
            raise ValueError(f"min_dwell must be 0 or more seconds, got {self.min_dwell!r}")

    @property
    def grades(self) -> np.ndarray:
        """The distinct grades the mapping gives, ascending."""
        return np.unique(
            [
                self.no_click,
                self.click,
                self.cart,
                self.purchase_good,
                self.purchase_unrated,
                self.purchase_poor,
            ]
        )


@dataclass(frozen=True)
class BehaviourQrels:
    """One behaviour grade per (query, document) pair, sorted by query then document, with the impressions
    and clicks behind it: columns a TREC qrels writer takes (`trec.files.write_qrels` after mapping the
    indices to ids)."""

    query: np.ndarray
    document: np.ndarray
    grade: np.ndarray
    impressions: np.ndarray
    clicks: np.ndarray
    aggregation: GradeAggregation


@dataclass(frozen=True)
class GradeAgreement:
    """Behaviour against human grades over `n_pairs` (query, document) pairs."""

    n_pairs: int
    kappa: Agreement
    spearman: Correlation


@dataclass(frozen=True)
class BehaviourAgreement:
    overall: GradeAgreement
    by_segment: dict[str, GradeAgreement]


def action_grades(
    clicked: ArrayLike,
    dwell: ArrayLike | None = None,
    cart: ArrayLike | None = None,
    purchase: ArrayLike | None = None,
    rating: ArrayLike | None = None,
    *,
    mapping: ActionGrades = ActionGrades(),
) -> np.ndarray:
    """Each impression's grade from its actions (see the module docstring): `clicked`, `cart`, `purchase`
    booleans; `dwell` seconds and `rating` NaN where unknown. Omitted columns: never / unknown."""
    if not isinstance(mapping, ActionGrades):
        raise ValueError(f"mapping must be an ActionGrades, got {type(mapping).__name__}")
    clicked = as_flags(clicked, "clicked")
    n = clicked.size
    cart = np.zeros(n, dtype=bool) if cart is None else as_flags(cart, "cart")
    purchase = np.zeros(n, dtype=bool) if purchase is None else as_flags(purchase, "purchase")
    dwell = np.full(n, np.nan) if dwell is None else as_seconds(dwell, "dwell")
    rating = np.full(n, np.nan) if rating is None else as_float(rating, "rating", allow_nan=True)
    check_same_length(clicked=clicked, dwell=dwell, cart=cart, purchase=purchase, rating=rating)
    return _grades(clicked, dwell, cart, purchase, rating, mapping)


def behaviour_qrels(
    impressions: Impressions,
    *,
    mapping: ActionGrades = ActionGrades(),
    aggregation: GradeAggregation | str = GradeAggregation.MAX,
    min_impressions: int = 1,
    min_count: int = 1,
) -> BehaviourQrels:
    """The behaviour grade of every (query, document) pair shown at least `min_impressions` times, from all
    models' impressions: the highest grade that at least `min_count` of its impressions reached (default:
    the maximum, the furthest any user went), or the mean of its impressions' `action_grades`. A pair with
    fewer than `min_count` impressions gets the mapping's lowest grade. `min_count` is read by the maximum
    only."""
    impressions = check_impressions(impressions)
    if not isinstance(mapping, ActionGrades):
        raise ValueError(f"mapping must be an ActionGrades, got {type(mapping).__name__}")
    try:
        aggregation = GradeAggregation(aggregation)
    except ValueError:
        choices = ", ".join(repr(choice.value) for choice in GradeAggregation)
        raise ValueError(f"aggregation must be one of {choices}, got {aggregation!r}") from None
    min_impressions = check_count(min_impressions, "min_impressions")
    min_count = check_count(min_count, "min_count")
    if min_count < 1:
        raise ValueError("min_count must be at least 1")
    grade = _grades(
        impressions.clicked,
        impressions.dwell,
        impressions.cart,
        impressions.purchase,
        impressions.rating,
        mapping,
    )
    n_documents = int(impressions.document.max(initial=0)) + 1
    pair, n_pairs = compact(impressions.query * n_documents + impressions.document)
    shown = np.bincount(pair, minlength=n_pairs)
    if aggregation is GradeAggregation.MAX:
        # The min_count-th highest grade of each pair: sorted by pair, then grade from the highest.
        order = np.lexsort((-grade, pair))
        start = np.cumsum(shown) - shown
        pair_grade = np.full(n_pairs, mapping.grades.min())
        enough = shown >= min_count
        pair_grade[enough] = grade[order][start[enough] + min_count - 1]
    else:
        pair_grade = np.bincount(pair, weights=grade, minlength=n_pairs) / shown
    first = np.zeros(n_pairs, dtype=np.int64)
    first[pair[::-1]] = np.arange(pair.size)[::-1]
    kept = shown >= min_impressions
    return BehaviourQrels(
        query=impressions.query[first][kept],
        document=impressions.document[first][kept],
        grade=pair_grade[kept],
        impressions=shown[kept],
        clicks=np.bincount(pair, weights=impressions.clicked, minlength=n_pairs).astype(np.int64)[kept],
        aggregation=aggregation,
    )


def behaviour_agreement(
    behaviour_grade: ArrayLike,
    human_grade: ArrayLike,
    *,
    query: ArrayLike,
    scale: ArrayLike,
    segment: ArrayLike | None = None,
    n_resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
) -> BehaviourAgreement:
    """Agreement of behaviour grades and the judges' aggregated grades of the same (query, document) pairs
    (one entry per pair; `query[i]`: pair i's query index, `segment[i]`: its segment name).

    - kappa: `agreement.weighted_kappa` (quadratic weights on the positions of `scale`). Behaviour grades must
      be on the scale; human grades, often a mean of several judges, are first taken to the nearest grade of
      the scale (halfway between two: the higher).
    - ρ: `correlation.spearman` of the behaviour grades and the human grades as given (not rounded).

    Both intervals are percentile bootstraps over queries (a query's pairs drawn together), seeded by `seed`.
    Segments are listed in sorted order, each computed on its own pairs.
    """
    behaviour_grade = as_float(behaviour_grade, "behaviour_grade")
    human_grade = as_float(human_grade, "human_grade")
    query = as_index(query, "query")
    check_same_length(behaviour_grade=behaviour_grade, human_grade=human_grade, query=query)
    scale = as_scale(scale)
    scale_positions(behaviour_grade, scale, "behaviour_grade")
    segments = None
    if segment is not None:
        segments = as_segments(segment, "segment", n=behaviour_grade.size, unit="pair")
    Resampling.of(n_resamples, confidence, seed)
    human_on_scale = _nearest_grade(human_grade, scale)

    def agreement(rows: np.ndarray) -> GradeAgreement:
        return GradeAgreement(
            n_pairs=int(rows.sum()),
            kappa=weighted_kappa(
                behaviour_grade[rows],
                human_on_scale[rows],
                scale=scale,
                cluster=query[rows],
                n_resamples=n_resamples,
                confidence=confidence,
                seed=seed,
            ),
            spearman=spearman(
                behaviour_grade[rows],
                human_grade[rows],
                cluster=query[rows],
                n_resamples=n_resamples,
                confidence=confidence,
                seed=seed,
            ),
        )

    everything = np.ones(behaviour_grade.size, dtype=bool)
    by_segment = (
        {} if segments is None else {name: agreement(segments == name) for name in sorted(set(segments))}
    )
    return BehaviourAgreement(overall=agreement(everything), by_segment=by_segment)


def _grades(
    clicked: np.ndarray,
    dwell: np.ndarray,
    cart: np.ndarray,
    purchase: np.ndarray,
    rating: np.ndarray,
    mapping: ActionGrades,
) -> np.ndarray:
    counted_click = clicked & ~(dwell < mapping.min_dwell)
    purchase_grade = np.where(
        np.isnan(rating),
        mapping.purchase_unrated,
        np.where(rating >= mapping.good_rating, mapping.purchase_good, mapping.purchase_poor),
    )
    return np.select(
        [purchase, cart, counted_click],
        [purchase_grade, np.full(clicked.size, mapping.cart), np.full(clicked.size, mapping.click)],
        default=mapping.no_click,
    )


def _nearest_grade(values: np.ndarray, scale: np.ndarray) -> np.ndarray:
    """Each value's nearest grade on the scale; halfway between two, the higher."""
    upper = np.clip(np.searchsorted(scale, values), 0, scale.size - 1)
    lower = np.maximum(upper - 1, 0)
    take_lower = values - scale[lower] < scale[upper] - values
    return np.where(take_lower, scale[lower], scale[upper])
