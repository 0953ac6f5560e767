"""GSB: how often side-by-side judges prefer the experimental model's results to the online model's.

GSB = (good - bad) / (good + same + bad) over verdicts relative to the experimental model, in [-1, 1]. Inputs
are columnar per judgment (see `metrics.compute.labels`): `query` (index 0..n_queries-1) and `verdict`
(+1 good, 0 same, -1 bad), optionally `strength` (1 slightly, 2 much; NaN when not given) from the five-point
scale, and per query `changed` (whether the two result lists differ). Queries with identical lists are
recorded as Same automatically, so their rows are part of the input as 0 verdicts.

Worked example: one Good, one Same and two Bad verdicts on four queries give GSB (1 - 2) / 4 = -0.25.
"""

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from metrics.compute.aggregation import majority_verdict
from metrics.compute.labels import (
    VERDICT_SCALE,
    as_float,
    as_index,
    as_segments,
    as_verdict_positions,
    check_count,
    check_same_length,
    divide_or_nan,
    position_counts,
)
from metrics.compute.resampling import Resampling, bootstrap_sums, item_kinds
from metrics.compute.significance import exact_sign_flip_p_value

_BAD, _SAME, _GOOD = range(3)  # columns of the per-query counts, in VERDICT_SCALE order


@dataclass(frozen=True)
class GSBSummary:
    """GSB of an experimental model against the online one, from side-by-side verdicts.

    Counts are over all judgments; `n_queries` counts the queries with at least one judgment. `score` is NaN
    without judgments. `ci_low`/`ci_high`: percentile cluster bootstrap over judged queries (a query's
    judgments are resampled together) at `confidence`; `std_error` is the standard deviation of the bootstrap
    scores. `p_value`: two-sided exact query-level randomization test: under the null each query's
    good - bad is as likely negated, so a query's judges (who are correlated) count as one unit, as in the
    bootstrap; with one judgment per query it is the sign test of good against bad (1.0 when good = bad).
    `majority_*`: each judged query's most common verdict (ties give same), and the GSB of those per-query
    verdicts. `changed_*` / `identical_queries`: judged queries whose two lists differ / are identical, the
    share of judged queries that changed (NaN without judgments), and the GSB over
    judgments of changed queries only. `weighted_score` (only with strengths): the mean over judgments of
    verdict × strength / 2 (same counts 0, a missing strength 1), in [-1, 1].
    """

    good: int
    same: int
    bad: int
    n_judgments: int
    n_queries: int
    score: float
    ci_low: float
    ci_high: float
    p_value: float
    majority_good: int
    majority_same: int
    majority_bad: int
    majority_score: float
    changed_queries: int
    changed_share: float
    changed_score: float
    weighted_score: float | None
    identical_queries: int
    std_error: float
    confidence: float


def gsb_summary(
    query: ArrayLike,
    verdict: ArrayLike,
    *,
    n_queries: int,
    changed: ArrayLike | None = None,
    strength: ArrayLike | None = None,
    n_resamples: int = 10_000,
    confidence: float = 0.95,
    seed: int = 0,
) -> GSBSummary:
    """GSB and its uncertainty from side-by-side verdicts (one row per judgment).

    `changed` (bool per query) tells which queries' lists differ; None means no list is known to be identical,
    so every judged query counts as changed. The bootstrap draws the judged queries with replacement
    `n_resamples` times from `np.random.default_rng(seed)`; each resample's score is
    (sum good - sum bad) / (sum judgments) over the drawn queries. Queries with the same (bad, same, good)
    counts are one kind, so the numbers of draws of each kind are drawn as multinomial(n judged queries,
    share of the kind) (`resampling.bootstrap_sums`): the same distribution, at a cost independent of n.
    """
    n_queries = check_count(n_queries, "n_queries")
    query = as_index(query, "query", size=n_queries, size_name="n_queries")
    position = as_verdict_positions(verdict)
    check_same_length(query=query, verdict=position)
    changed = _as_changed(changed, n_queries)
    strength = None if strength is None else _as_strength(strength, position.size)
    resampling = Resampling.of(n_resamples, confidence, seed)

    counts = position_counts(query, position, n_tasks=n_queries, n_values=VERDICT_SCALE.size)
    judged = counts.sum(axis=1) > 0
    bad, same, good = (int(total) for total in counts.sum(axis=0))
    ci_low, ci_high, std_error = _bootstrap(counts[judged], resampling)

    majority = majority_verdict(query, VERDICT_SCALE[position], n_tasks=n_queries)[judged]
    majority_good, majority_same, majority_bad = (int((majority == value).sum()) for value in (1, 0, -1))
    changed_judged = changed & judged

    weighted_score = None
    if strength is not None:
        signed_strength = VERDICT_SCALE[position] * np.where(np.isnan(strength), 1.0, strength) / 2
        weighted_score = float(signed_strength.mean()) if signed_strength.size else float("nan")

    return GSBSummary(
        good=good,
        same=same,
        bad=bad,
        n_judgments=int(position.size),
        n_queries=int(judged.sum()),
        score=float(_score(counts.sum(axis=0))),
        ci_low=ci_low,
        ci_high=ci_high,
        p_value=exact_sign_flip_p_value(counts[judged, _GOOD] - counts[judged, _BAD]),
        majority_good=majority_good,
        majority_same=majority_same,
        majority_bad=majority_bad,
        majority_score=float(divide_or_nan(majority_good - majority_bad, majority.size)),
        changed_queries=int(changed_judged.sum()),
        changed_share=float(divide_or_nan(changed_judged.sum(), judged.sum())),
        changed_score=float(_score(counts[changed_judged].sum(axis=0))),
        weighted_score=weighted_score,
        identical_queries=int((judged & ~changed).sum()),
        std_error=std_error,
        confidence=resampling.confidence,
    )


def gsb_by_segment(
    query: ArrayLike,
    verdict: ArrayLike,
    *,
    segment_of_query: ArrayLike,
    n_queries: int,
    changed: ArrayLike | None = None,
    strength: ArrayLike | None = None,
    n_resamples: int = 10_000,
    confidence: float = 0.95,
    seed: int = 0,
) -> dict[str, GSBSummary]:
    """`gsb_summary` of each segment's judgments, keyed by segment (`segment_of_query[i]`: query i's segment).

    Segments are listed in sorted order, each one that has a query, including segments without judgments.
    """
    n_queries = check_count(n_queries, "n_queries")
    query = as_index(query, "query", size=n_queries, size_name="n_queries")
    segment_of_query = as_segments(segment_of_query, "segment_of_query", n=n_queries, unit="query")
    verdict = np.asarray(verdict)
    strength = None if strength is None else np.asarray(strength)
    check_same_length(query=query, verdict=verdict)
    if strength is not None:
        check_same_length(query=query, strength=strength)
    segment_of_judgment = segment_of_query[query]
    summaries = {}
    for segment in sorted(set(segment_of_query)):
        rows = segment_of_judgment == segment
        summaries[segment] = gsb_summary(
            query[rows],
            verdict[rows],
            n_queries=n_queries,
            changed=changed,
            strength=None if strength is None else strength[rows],
            n_resamples=n_resamples,
            confidence=confidence,
            seed=seed,
        )
    return summaries


def _score(counts: np.ndarray) -> np.ndarray:
    """GSB of [..., 3] (bad, same, good) counts; NaN without judgments."""
    return divide_or_nan(counts[..., _GOOD] - counts[..., _BAD], counts.sum(axis=-1))


def _bootstrap(counts: np.ndarray, resampling: Resampling) -> tuple[float, float, float]:
    """(ci_low, ci_high, std_error) of the GSB of judged queries' [queries × 3] counts; NaN if none."""
    if counts.shape[0] == 0:
        return float("nan"), float("nan"), float("nan")
    rng = np.random.default_rng(resampling.seed)
    first, multiplicity = item_kinds(counts)
    # Every judged query has a judgment, so no resample is empty.
    scores = _score(bootstrap_sums(counts[first].astype(float), resampling, rng, multiplicity=multiplicity))
    low, high = resampling.interval(scores)
    return float(low), float(high), float(scores.std())


def _as_changed(changed: ArrayLike | None, n_queries: int) -> np.ndarray:
    if changed is None:
        return np.ones(n_queries, dtype=bool)
    changed = np.asarray(changed)
    if changed.dtype != bool:
        raise ValueError(f"changed must hold booleans, got dtype {changed.dtype}")
    if changed.shape != (n_queries,):
        raise ValueError(f"changed must have one entry per query ({n_queries}), got shape {changed.shape}")
    return changed


def _as_strength(strength: ArrayLike, n_judgments: int) -> np.ndarray:
    strength = as_float(strength, "strength", allow_nan=True)
    if strength.size != n_judgments:
        raise ValueError(f"strength must have one entry per judgment ({n_judgments}), got {strength.size}")
    given = strength[~np.isnan(strength)]
    if not np.isin(given, (1.0, 2.0)).all():
        raise ValueError(
            f"strength must be 1 (slightly), 2 (much) or NaN, found {given[~np.isin(given, (1.0, 2.0))][0]}"
        )
    return strength


def model_verdicts(
    *,
    n_queries: int,
    model: int,
    task_query: np.ndarray,
    task_model: np.ndarray,
    task_identical: np.ndarray,
    preference_task: np.ndarray,
    preference_verdict: np.ndarray,
    preference_strength: np.ndarray,
    adjudication_task: np.ndarray,
    adjudication_verdict: np.ndarray,
    auto_same_identical: bool,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(query, verdict, strength) of one experimental model's verdicts, ready for `gsb_summary`, and which
    queries' lists changed.

    `task_*`: one entry per side-by-side task (query and model index, identical lists); `preference_*`: one
    per verdict (task index, -1/0/1, strength or NaN); `adjudication_*`: a reviewer's final verdict of a task.
    An adjudicated verdict replaces the task's verdicts; a task with identical lists and no verdict counts as
    one Same when `auto_same_identical`.
    """
    n_tasks = task_query.size
    adjudicated = np.full(n_tasks, np.nan)
    adjudicated[np.asarray(adjudication_task, dtype=np.int64)] = adjudication_verdict
    of_model = task_model == model
    rows = of_model[preference_task]
    task = preference_task[rows]
    verdict = np.where(np.isnan(adjudicated[task]), preference_verdict[rows], adjudicated[task])
    strength = np.where(np.isnan(adjudicated[task]), preference_strength[rows], np.nan)
    has_verdict = np.zeros(n_tasks, dtype=bool)
    has_verdict[task] = True
    automatic = of_model & ~has_verdict & task_identical & auto_same_identical
    extra_adjudicated = of_model & ~has_verdict & ~automatic & ~np.isnan(adjudicated)
    extra = np.flatnonzero(automatic | extra_adjudicated)
    changed = np.ones(n_queries, dtype=bool)
    changed[task_query[of_model & task_identical]] = False
    return (
        np.concatenate([task_query[task], task_query[extra]]),
        np.concatenate([verdict, np.nan_to_num(adjudicated[extra], nan=0.0)]),
        np.concatenate([strength, np.full(extra.size, np.nan)]),
        changed,
    )
