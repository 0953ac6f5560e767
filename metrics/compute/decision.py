"""The launch decision for an experimental ranker, from GSB and per-query measure deltas.

With side-by-side judgments, `decide` launches when GSB reaches the rule's threshold and its interval is above
0, and does not launch when GSB is at or below 0. Without them it falls back to the rule's primary measure
(e.g. nDCG@10): launch on a significant improvement, no launch without an improvement. In both cases a
guarded measure that got significantly worse vetoes the launch. Anything else is inconclusive, with a rough
estimate of how many more queries would likely settle it. Every decision carries plain-English reasons.
"""

import math
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum

from metrics.compute.gsb import GSBSummary
from metrics.compute.resampling import check_probability
from metrics.compute.significance import PairedComparison, additional_queries


class Outcome(StrEnum):
    LAUNCH = "launch"
    NO_LAUNCH = "no_launch"
    INCONCLUSIVE = "inconclusive"


@dataclass(frozen=True)
class LaunchRule:
    """When to launch: GSB at least `min_gsb` (in [0, 1]) with its interval above 0, or, without side-by-side
    judgments, a significant (p < `alpha`) improvement of `primary_measure`; never when one of the
    `guarded_measures` got significantly worse."""

    min_gsb: float = 0.05
    alpha: float = 0.05
    primary_measure: str = "nDCG@10"
    guarded_measures: tuple[str, ...] = ()

    def __post_init__(self):
        check_probability(self.alpha, "alpha")
        if (
            isinstance(self.min_gsb, bool)
            or not isinstance(self.min_gsb, int | float)
            or not 0 <= self.min_gsb <= 1
        ):
            raise ValueError(f"min_gsb must be between 0 and 1, got {self.min_gsb!r}")
        if not isinstance(self.primary_measure, str) or not self.primary_measure:
            raise ValueError(f"primary_measure must be a measure name, got {self.primary_measure!r}")
        if not isinstance(self.guarded_measures, tuple) or not all(
            isinstance(name, str) for name in self.guarded_measures
        ):
            raise ValueError(f"guarded_measures must be a tuple of names, got {self.guarded_measures!r}")


@dataclass(frozen=True)
class Decision:
    """The outcome, the sentences explaining it, and for an inconclusive outcome the estimated number of
    additional queries that would likely settle it (None when there is no such estimate)."""

    outcome: Outcome
    reasons: tuple[str, ...]
    more_queries: int | None


def decide(rule: LaunchRule, *, gsb: GSBSummary | None, deltas: Mapping[str, PairedComparison]) -> Decision:
    """Applies the rule to the experiment's GSB (None or no judgments: no side-by-side evaluation) and its
    per-measure comparisons, keyed by measure name (e.g. "nDCG@10")."""
    if not isinstance(rule, LaunchRule):
        raise ValueError(f"rule must be a LaunchRule, got {type(rule).__name__}")
    if gsb is not None and gsb.n_judgments > 0:
        outcome, reasons, more_queries = _decide_on_gsb(rule, gsb)
    else:
        outcome, reasons, more_queries = _decide_on_primary(rule, deltas.get(rule.primary_measure))

    worse = [
        f"{name} got significantly worse: {_signed(deltas[name].mean_delta)} ({_p(deltas[name].p_value)})."
        for name in rule.guarded_measures
        if name in deltas and deltas[name].mean_delta < 0 and deltas[name].p_value < rule.alpha
    ]
    unchecked = [name for name in rule.guarded_measures if name not in deltas]
    notes = [f"{name} has no comparison, so it was not checked." for name in unchecked]
    if worse:
        return Decision(Outcome.NO_LAUNCH, (*worse, *reasons, *notes), None)
    checked = [name for name in rule.guarded_measures if name in deltas]
    if outcome is Outcome.LAUNCH and checked:
        notes.insert(0, f"No guarded measure ({', '.join(checked)}) got significantly worse.")
    return Decision(outcome, (*reasons, *notes), more_queries)


def _decide_on_gsb(rule: LaunchRule, gsb: GSBSummary) -> tuple[Outcome, list[str], int | None]:
    described = (
        f"GSB is {_number(gsb.score)} ({gsb.confidence * 100:g}% CI {_number(gsb.ci_low)} to "
        f"{_number(gsb.ci_high)}, {gsb.n_queries} queries)"
    )
    threshold = f"the launch threshold {_number(rule.min_gsb)}"
    if gsb.score <= 0:
        return Outcome.NO_LAUNCH, [f"{described}, at or below 0."], None
    if gsb.score < rule.min_gsb:
        return Outcome.INCONCLUSIVE, [f"{described}, above 0 but below {threshold}."], None
    if gsb.ci_low > 0:
        return Outcome.LAUNCH, [f"{described}, at least {threshold}, with the interval above 0."], None
    more_queries = _at_least_one(
        additional_queries(gsb.score, gsb.std_error, gsb.n_queries, alpha=1 - gsb.confidence)
    )
    reasons = [f"{described}, at least {threshold}, but the interval reaches 0."]
    return Outcome.INCONCLUSIVE, reasons + _more_queries_reasons(more_queries), more_queries


def _decide_on_primary(
    rule: LaunchRule, primary: PairedComparison | None
) -> tuple[Outcome, list[str], int | None]:
    measure = rule.primary_measure
    if primary is None:
        return (
            Outcome.INCONCLUSIVE,
            [f"There are no side-by-side judgments and no {measure} comparison."],
            None,
        )
    reasons = [
        f"There are no side-by-side judgments, so the decision rests on {measure} ({primary.n} queries)."
    ]
    change = f"{_signed(primary.mean_delta)} ({_p(primary.p_value)})"
    if primary.mean_delta <= 0:
        return Outcome.NO_LAUNCH, [*reasons, f"{measure} did not improve: {change}."], None
    if primary.p_value < rule.alpha:
        return Outcome.LAUNCH, [*reasons, f"{measure} improved significantly: {change}."], None
    reasons.append(f"{measure} improved by {change}, not significantly at alpha {rule.alpha:g}.")
    more_queries = _at_least_one(
        additional_queries(primary.mean_delta, primary.std_error, primary.n, alpha=rule.alpha)
    )
    return Outcome.INCONCLUSIVE, reasons + _more_queries_reasons(more_queries), more_queries


def _more_queries_reasons(more_queries: int | None) -> list[str]:
    if more_queries is None:
        return []
    noun = "query" if more_queries == 1 else "queries"
    return [f"About {more_queries} more judged {noun} would likely settle it (a rough estimate)."]


def _at_least_one(more_queries: int | None) -> int | None:
    # Inconclusive means the data so far did not settle it, whatever the normal approximation says.
    return None if more_queries is None else max(1, more_queries)


def _number(value: float) -> str:
    return "n/a" if math.isnan(value) else f"{value:.3f}".replace("-", "\N{MINUS SIGN}")


def _signed(value: float) -> str:
    return f"{value:+.3f}".replace("-", "\N{MINUS SIGN}")


def _p(p_value: float) -> str:
    return "p < 0.001" if p_value < 0.001 else f"p = {p_value:.3f}"
