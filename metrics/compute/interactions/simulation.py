"""A seeded click simulator under the position-based model, for the proofs by simulation and the demo.

Users see a list and examine the document at position k with probability θ_k (the propensity, e.g.
1/k^0.8), independently of everything else; an examined document of grade g is clicked with probability
click[g] × u, where u is the session's eagerness (1 - e or 1 + e, each for half the sessions, so its mean is
1). Clicks are never made unexamined. So P(click) = θ_k · click[g] on average: the position-based model
(Richardson et al. 2007; Chuklin, Markov & de Rijke, "Click Models for Web Search", 2015), with sessions
whose clicks are correlated. After a click: a dwell time (log-normal with a mean by grade), a cart with
probability cart[g], after a cart a purchase with probability purchase[g], after a purchase a rating with
probability `rated`, good (4 or 5) with probability good_rating[g], else 1 to 3.

Traffic: lists are grouped in sessions of geometric length (mean `mean_session_lists`); each session sees
one model (chosen uniformly: an A/B test by user), each of its lists a query drawn by `query_share`. A
model's list for a query is fixed (`rankings`), so two models that rank the same document differently place
it at different positions: the natural interventions that intervention harvesting uses.

Everything is vectorised: 200,000 impressions take about 0.05 s.
"""

import math
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import ArrayLike

from metrics.compute.interactions.impressions import Impressions
from metrics.compute.labels import as_float, check_count

DWELL_SIGMA = 0.8  # the spread of log dwell seconds


@dataclass(frozen=True)
class ClickModel:
    """Simulated users (see the module docstring). Arrays by grade index 0..G-1, `propensity` by position
    1..K; probabilities in [0, 1], and click[g] · (1 + eagerness) at most 1."""

    propensity: np.ndarray
    click: np.ndarray
    dwell: np.ndarray
    cart: np.ndarray
    purchase: np.ndarray
    good_rating: np.ndarray
    rated: float = 0.5
    eagerness: float = 0.0

    def __post_init__(self):
        for name in ("propensity", "click", "cart", "purchase", "good_rating"):
            values = as_float(getattr(self, name), name)
            if values.size == 0 or values.min() < 0 or values.max() > 1:
                raise ValueError(f"{name} must hold probabilities between 0 and 1, got {values.tolist()}")
            object.__setattr__(self, name, values)
        dwell = as_float(self.dwell, "dwell")
        if dwell.size == 0 or dwell.min() <= 0:
            raise ValueError(f"dwell must hold positive mean seconds, got {dwell.tolist()}")
        object.__setattr__(self, "dwell", dwell)
        sizes = {self.click.size, self.dwell.size, self.cart.size, self.purchase.size, self.good_rating.size}
        if len(sizes) > 1:
            raise ValueError("click, dwell, cart, purchase and good_rating must have one entry per grade")
        if not 0 <= self.rated <= 1:
            raise ValueError(f"rated must be between 0 and 1, got {self.rated!r}")
        if not 0 <= self.eagerness < 1 or self.click.max() * (1 + self.eagerness) > 1:
            raise ValueError("eagerness must be in [0, 1) with click[g] · (1 + eagerness) at most 1")

    @property
    def n_grades(self) -> int:
        return self.click.size


def power_law_propensity(n_positions: int = 10, exponent: float = 0.8) -> np.ndarray:
    """θ_k = 1 / k^exponent for k = 1..n_positions (Joachims et al. 2017 use this family)."""
    return 1.0 / np.arange(1, check_count(n_positions, "n_positions") + 1) ** exponent


def default_click_model(n_positions: int = 10, *, eagerness: float = 0.0) -> ClickModel:
    """Grades 0..3: clicked when examined with probability 0.05, 0.2, 0.4, 0.6; θ_k = 1/k^0.8."""
    return ClickModel(
        propensity=power_law_propensity(n_positions),
        click=np.array([0.05, 0.2, 0.4, 0.6]),
        dwell=np.array([8.0, 20.0, 45.0, 90.0]),
        cart=np.array([0.0, 0.05, 0.2, 0.4]),
        purchase=np.array([0.0, 0.2, 0.4, 0.6]),
        good_rating=np.array([0.1, 0.3, 0.6, 0.9]),
        rated=0.5,
        eagerness=eagerness,
    )


@dataclass(frozen=True)
class SimulatedLog:
    """The impressions and the truth behind them: each model's list per query (`rankings` [models × queries
    × depth], document indices, -1 beyond a list's end), the grade index of each listed document
    (`ranked_grade`, same shape), each query's share of the lists, and the users."""

    impressions: Impressions
    rankings: np.ndarray
    ranked_grade: np.ndarray
    query_share: np.ndarray
    click_model: ClickModel = field(repr=False)

    def query_ctr(self, model: int, k: int, *, debiased: bool) -> np.ndarray:
        """[queries] the expected CTR@k of each query's list from `model`: the mean over its top k of
        θ_i · click[g_i] (debiased: click[g_i], the click rate had every position been examined)."""
        depth = min(k, self.rankings.shape[2])
        grade = self.ranked_grade[model, :, :depth]
        shown = grade >= 0
        rate = np.where(shown, self.click_model.click[np.maximum(grade, 0)], 0.0)
        if not debiased:
            rate = rate * self.click_model.propensity[:depth]
        with np.errstate(invalid="ignore"):
            return rate.sum(axis=1) / shown.sum(axis=1)

    def ctr(self, model: int, k: int, *, debiased: bool) -> float:
        """The expected CTR@k of `model` over the traffic: expected clicks over expected impressions in the
        top k, the quantity `online.online_metrics` estimates (naive: its CTR@k; debiased: its IPS-CTR@k
        with the true propensities)."""
        shown = (self.ranked_grade[model, :, :k] >= 0).sum(axis=1)
        rate = np.nan_to_num(self.query_ctr(model, k, debiased=debiased))
        return float((self.query_share * shown * rate).sum() / (self.query_share * shown).sum())


def simulated_rankings(
    *,
    n_queries: int,
    n_candidates: int = 20,
    depth: int = 10,
    grade_share: ArrayLike = (0.4, 0.3, 0.2, 0.1),
    noise: tuple[float, ...] = (1.5, 1.0),
    seed: int = 0,
) -> tuple[np.ndarray, np.ndarray]:
    """(rankings, ranked_grade) of one ranker per entry of `noise`, each showing the top `depth` of each
    query's `n_candidates` documents by grade + noise · N(0, 1) (a smaller noise ranks better). Candidates
    get grade g with probability grade_share[g]; query q's candidates are documents q · n_candidates + j."""
    n_queries = check_count(n_queries, "n_queries")
    n_candidates = check_count(n_candidates, "n_candidates")
    depth = check_count(depth, "depth")
    if not 1 <= depth <= n_candidates:
        raise ValueError(f"depth must be between 1 and n_candidates ({n_candidates}), got {depth}")
    share = as_float(grade_share, "grade_share")
    if share.min() < 0 or not math.isclose(share.sum(), 1):
        raise ValueError(f"grade_share must be probabilities summing to 1, got {share.tolist()}")
    noise_levels = as_float(noise, "noise")
    if noise_levels.size == 0 or noise_levels.min() < 0:
        raise ValueError(f"noise must hold one non-negative spread per model, got {noise_levels.tolist()}")
    rng = np.random.default_rng(check_count(seed, "seed"))
    grade = rng.choice(share.size, size=(n_queries, n_candidates), p=share)
    score = grade + noise_levels[:, None, None] * rng.standard_normal((noise_levels.size, *grade.shape))
    order = np.argsort(-score, axis=2, kind="stable")[:, :, :depth]
    rankings = order + (np.arange(n_queries) * n_candidates)[None, :, None]
    ranked_grade = np.take_along_axis(np.broadcast_to(grade, score.shape), order, axis=2)
    return rankings, ranked_grade


def simulate_log(
    *,
    rankings: ArrayLike,
    ranked_grade: ArrayLike,
    click_model: ClickModel,
    n_lists: int,
    query_share: ArrayLike | None = None,
    mean_session_lists: float = 3.0,
    seed: int = 0,
) -> SimulatedLog:
    """`n_lists` result lists shown and what users did with them (see the module docstring).

    `rankings` [models × queries × depth]: each model's documents per query in rank order, -1 beyond the
    list's end; `ranked_grade` the same shape: each listed document's grade index. `query_share`: each
    query's probability (uniform by default). Requests are numbered 0..n_lists-1, sessions 0.. in order.
    """
    rankings = np.asarray(rankings)
    ranked_grade = np.asarray(ranked_grade)
    if rankings.ndim != 3 or rankings.dtype.kind not in "iu":
        raise ValueError(f"rankings must be [models × queries × depth] integers, got shape {rankings.shape}")
    if ranked_grade.shape != rankings.shape or ranked_grade.dtype.kind not in "iu":
        raise ValueError("ranked_grade must hold one integer grade per entry of rankings")
    if not isinstance(click_model, ClickModel):
        raise ValueError(f"click_model must be a ClickModel, got {type(click_model).__name__}")
    listed = rankings >= 0
    if (ranked_grade[listed] < 0).any() or (ranked_grade[listed] >= click_model.n_grades).any():
        raise ValueError(f"ranked_grade must be grade indices 0..{click_model.n_grades - 1} where listed")
    n_models, n_queries, depth = rankings.shape
    if depth > click_model.propensity.size:
        raise ValueError(f"the click model has propensities for {click_model.propensity.size} positions only")
    n_lists = check_count(n_lists, "n_lists")
    share = np.full(n_queries, 1 / n_queries) if query_share is None else as_float(query_share, "query_share")
    if share.size != n_queries or share.min() < 0 or not math.isclose(share.sum(), 1):
        raise ValueError("query_share must hold one probability per query, summing to 1")
    if isinstance(mean_session_lists, bool) or not isinstance(mean_session_lists, int | float):
        raise ValueError(f"mean_session_lists must be a number, got {mean_session_lists!r}")
    if not 1 <= mean_session_lists < math.inf:
        raise ValueError(f"mean_session_lists must be at least 1, got {mean_session_lists!r}")
    rng = np.random.default_rng(check_count(seed, "seed"))

    lengths = rng.geometric(1 / mean_session_lists, size=int(n_lists / mean_session_lists * 1.5) + 10)
    while lengths.sum() < n_lists:
        lengths = np.concatenate([lengths, rng.geometric(1 / mean_session_lists, size=lengths.size)])
    list_session = np.repeat(np.arange(lengths.size), lengths)[:n_lists]
    n_sessions = int(list_session[-1]) + 1 if n_lists else 0
    session_model = rng.integers(n_models, size=n_sessions)
    eagerness = 1 + click_model.eagerness * rng.choice([-1.0, 1.0], size=n_sessions)
    list_query = rng.choice(n_queries, size=n_lists, p=share)
    list_model = session_model[list_session]

    document = rankings[list_model, list_query]  # [lists × depth]
    shown = document >= 0
    request, slot = np.nonzero(shown)
    document = document[request, slot]
    grade = ranked_grade[list_model, list_query][request, slot]
    session = list_session[request]
    n = request.size

    examined = rng.random(n) < click_model.propensity[slot]
    clicked = examined & (rng.random(n) < click_model.click[grade] * eagerness[session])
    log_mean = np.log(click_model.dwell[grade]) - DWELL_SIGMA**2 / 2
    dwell = np.where(clicked, np.exp(log_mean + DWELL_SIGMA * rng.standard_normal(n)), np.nan)
    cart = clicked & (rng.random(n) < click_model.cart[grade])
    purchase = cart & (rng.random(n) < click_model.purchase[grade])
    rated = purchase & (rng.random(n) < click_model.rated)
    good = rng.random(n) < click_model.good_rating[grade]
    rating = np.where(good, rng.integers(4, 6, size=n), rng.integers(1, 4, size=n)).astype(float)
    rating[~rated] = np.nan

    impressions = Impressions.of(
        query=list_query[request],
        model=list_model[request],
        request=request,
        position=slot + 1,
        document=document,
        clicked=clicked,
        dwell=dwell,
        cart=cart,
        purchase=purchase,
        rating=rating,
        session=session,
        n_queries=n_queries,
        n_models=n_models,
    )
    return SimulatedLog(impressions, rankings, ranked_grade, share, click_model)
