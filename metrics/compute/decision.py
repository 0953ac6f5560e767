"""The launch decision for an experimental ranker, from GSB and per-query measure deltas.

Before any rule, the data must be sufficient: until `min_queries` queries have complete side-by-side
judgments and both the side-by-side and the relevance tasks are complete at their overlap to at least
`min_coverage`, the outcome is `collecting` and only progress is reported (with the provisional decision
the rule would give so far, for managers who want to peek). Then, with side-by-side judgments, `decide`
launches when GSB reaches the rule's threshold and is significantly above 0 (the exact query-level test,
p < alpha, so that a campaign with no effect is called better or worse at most alpha of the time at any
size), and does not launch when GSB is at or below 0 ("significantly worse" when significantly below 0,
else "no improvement shown").
Without them it falls back to the rule's primary measure (e.g. nDCG@10): launch on a significant
improvement, no launch without an improvement. In both cases a guarded measure that got significantly worse
vetoes the launch, and so does a failed guardrail on an online metric (`guardrails`), when given. Anything
else is inconclusive, with a rough estimate of how many more queries would likely settle it. Every decision
carries a headline and plain-English reasons.
"""

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum

import numpy as np

from metrics.compute.gsb import GSBSummary
from metrics.compute.guardrails import GuardrailOutcome, GuardrailStatus
from metrics.compute.resampling import check_probability
from metrics.compute.significance import PairedComparison, additional_queries
from metrics.compute.wording import Phrase, number, phrase, signed


class Outcome(StrEnum):
    LAUNCH = "launch"
    NO_LAUNCH = "no_launch"
    INCONCLUSIVE = "inconclusive"
    COLLECTING = "collecting"


@dataclass(frozen=True)
class Coverage:
    """How much of the campaign's work is done: `queries` in the campaign, `complete_queries` with every
    side-by-side task complete at its overlap (with no side-by-side tasks: every relevance task), tasks of
    each kind complete at their overlap out of all, and labels still outstanding."""

    queries: int
    complete_queries: int
    side_by_side_complete: int
    side_by_side_tasks: int
    relevance_complete: int
    relevance_tasks: int
    labels_outstanding: int

    @property
    def side_by_side_share(self) -> float:
        return _share(self.side_by_side_complete, self.side_by_side_tasks)

    @property
    def relevance_share(self) -> float:
        return _share(self.relevance_complete, self.relevance_tasks)


def work_coverage(
    *,
    n_queries: int,
    relevance_query: np.ndarray,
    relevance_labels: np.ndarray,
    relevance_settled: np.ndarray,
    overlap: int,
    side_by_side_query: np.ndarray,
    side_by_side_labels: np.ndarray,
    side_by_side_settled: np.ndarray,
    side_by_side_overlap: int,
) -> Coverage:
    """The campaign's `Coverage` from its tasks: per task its query (index 0..n_queries-1), its number of
    labels and whether it is settled without them (adjudicated, or identical lists recorded as Same). A task
    is complete with `overlap` labels (side by side: `side_by_side_overlap`) or settled; an incomplete task
    has overlap - labels outstanding. A query is complete when it has side-by-side tasks and all are
    complete (in a campaign without side-by-side tasks: relevance tasks)."""
    kinds = (
        (relevance_labels, relevance_settled, overlap),
        (side_by_side_labels, side_by_side_settled, side_by_side_overlap),
    )
    complete, outstanding = [], 0
    for labels, settled, needed in kinds:
        done = (np.asarray(labels) >= needed) | np.asarray(settled, dtype=bool)
        complete.append(done)
        outstanding += int(np.maximum(needed - np.asarray(labels), 0)[~done].sum())
    query, done = (
        (side_by_side_query, complete[1]) if len(side_by_side_query) else (relevance_query, complete[0])
    )
    query = np.asarray(query, dtype=np.int64)
    tasks_of_query = np.bincount(query, minlength=n_queries)
    done_of_query = np.bincount(query[done], minlength=n_queries)
    return Coverage(
        queries=n_queries,
        complete_queries=int(((tasks_of_query > 0) & (done_of_query == tasks_of_query)).sum()),
        side_by_side_complete=int(complete[1].sum()),
        side_by_side_tasks=len(side_by_side_query),
        relevance_complete=int(complete[0].sum()),
        relevance_tasks=len(relevance_query),
        labels_outstanding=outstanding,
    )


def _share(complete: int, total: int) -> float:
    # A kind without tasks has nothing outstanding.
    return complete / total if total else 1.0


@dataclass(frozen=True)
class LaunchRule:
    """When to launch: GSB at least `min_gsb` (in [0, 1]) and significantly above 0 (p < `alpha`), or,
    without side-by-side judgments, a significant (p < `alpha`) improvement of `primary_measure`; never
    when one of the
    `guarded_measures` got significantly worse. No decision before `min_queries` queries have complete
    side-by-side judgments and `min_coverage` (in [0, 1]) of each task kind is complete."""

    min_gsb: float = 0.05
    alpha: float = 0.05
    primary_measure: str = "nDCG@10"
    guarded_measures: tuple[str, ...] = ()
    min_queries: int = 30
    min_coverage: float = 0.9

    def __post_init__(self):
        check_probability(self.alpha, "alpha")
        if (
            isinstance(self.min_queries, bool)
            or not isinstance(self.min_queries, int)
            or self.min_queries < 1
        ):
            raise ValueError(f"min_queries must be a positive integer, got {self.min_queries!r}")
        if (
            isinstance(self.min_coverage, bool)
            or not isinstance(self.min_coverage, int | float)
            or not 0 <= self.min_coverage <= 1
        ):
            raise ValueError(f"min_coverage must be between 0 and 1, got {self.min_coverage!r}")
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
    """The outcome, its `headline` (e.g. "No launch: significantly worse"), the sentences explaining it, and
    for an inconclusive outcome the estimated number of additional queries that would likely settle it
    (None when there is no such estimate). A `collecting` decision carries the `provisional` decision the
    rule gives on the data so far."""

    outcome: Outcome
    reasons: tuple[str, ...]
    more_queries: int | None
    headline: str = ""
    provisional: "Decision | None" = None


def decide(
    rule: LaunchRule,
    *,
    gsb: GSBSummary | None,
    deltas: Mapping[str, PairedComparison],
    coverage: Coverage | None = None,
    guardrails: Sequence[GuardrailOutcome] = (),
) -> Decision:
    """Applies the rule to the experiment's GSB (None or no judgments: no side-by-side evaluation) and its
    per-measure comparisons, keyed by measure name (e.g. "nDCG@10"). With `coverage`, a campaign short of
    the rule's thresholds gets `collecting`, with the rule's decision so far as `provisional`.

    `guardrails`: the outcomes of the campaign's guardrails on online metrics
    (`guardrails.evaluate_guardrails`). A failed guardrail vetoes a launch as a guarded measure does (its
    reason first); every outcome's reason is stated, failed ones first, the others after the rule's
    reasons. A guardrail that could not be evaluated is stated and does not veto. Without outcomes the
    decision is the rule's alone."""
    if not isinstance(rule, LaunchRule):
        raise ValueError(f"rule must be a LaunchRule, got {type(rule).__name__}")
    if isinstance(guardrails, str) or not all(isinstance(item, GuardrailOutcome) for item in guardrails):
        raise ValueError("guardrails must be a sequence of GuardrailOutcome")
    decision = _apply_rule(rule, gsb=gsb, deltas=deltas, guardrails=tuple(guardrails))
    shortfalls = [] if coverage is None else _shortfalls(rule, coverage)
    if not shortfalls:
        return decision
    return Decision(
        Outcome.COLLECTING,
        tuple(shortfalls),
        None,
        headline=phrase("Collecting: not enough data yet"),
        provisional=decision,
    )


def _shortfalls(rule: LaunchRule, coverage: Coverage) -> list[Phrase]:
    """One sentence per threshold not yet reached, with the progress towards it."""
    shortfalls = []
    if coverage.complete_queries < rule.min_queries:
        counts = {
            "complete": coverage.complete_queries,
            "needed": rule.min_queries,
            "queries": coverage.queries,
        }
        if coverage.queries < rule.min_queries:
            shortfall = Phrase(
                "%(complete)s of the %(needed)s queries needed have complete side-by-side judgments; the "
                "campaign has only %(queries)s queries, so add queries or lower min_queries.",
                counts,
            )
        else:
            shortfall = Phrase(
                "%(complete)s of the %(needed)s queries needed have complete side-by-side judgments.", counts
            )
        shortfalls.append(shortfall)
    needed = f"{rule.min_coverage:.0%}"
    if coverage.side_by_side_share < rule.min_coverage:
        shortfalls.append(
            phrase(
                "%(complete)s of %(total)s side-by-side tasks are complete (%(share)s; %(needed)s needed).",
                complete=coverage.side_by_side_complete,
                total=coverage.side_by_side_tasks,
                share=_percent_down(coverage.side_by_side_share),
                needed=needed,
            )
        )
    if coverage.relevance_share < rule.min_coverage:
        shortfalls.append(
            phrase(
                "%(complete)s of %(total)s relevance tasks are complete (%(share)s; %(needed)s needed).",
                complete=coverage.relevance_complete,
                total=coverage.relevance_tasks,
                share=_percent_down(coverage.relevance_share),
                needed=needed,
            )
        )
    if shortfalls and coverage.labels_outstanding:
        shortfalls.append(phrase("%(labels)s labels are outstanding.", labels=coverage.labels_outstanding))
    return shortfalls


def _percent_down(share: float) -> str:
    """A share as a whole percent rounded down, so that one short of a threshold never reads as reaching it
    (89.8% is "89%", not "90%"); the epsilon keeps 0.29 from reading 28%."""
    return f"{math.floor(share * 100 + 1e-9)}%"


def _apply_rule(
    rule: LaunchRule,
    *,
    gsb: GSBSummary | None,
    deltas: Mapping[str, PairedComparison],
    guardrails: tuple[GuardrailOutcome, ...],
) -> Decision:
    if gsb is not None and gsb.n_judgments > 0:
        outcome, reasons, more_queries, headline = _decide_on_gsb(rule, gsb)
    else:
        outcome, reasons, more_queries, headline = _decide_on_primary(rule, deltas.get(rule.primary_measure))

    worse = [
        phrase(
            "%(measure)s got significantly worse: %(change)s (%(p)s).",
            measure=name,
            change=signed(deltas[name].mean_delta),
            p=_p(deltas[name].p_value),
        )
        for name in rule.guarded_measures
        if name in deltas and deltas[name].mean_delta < 0 and deltas[name].p_value < rule.alpha
    ]
    unchecked = [name for name in rule.guarded_measures if name not in deltas]
    notes = [phrase("%(measure)s has no comparison, so it was not checked.", measure=m) for m in unchecked]
    failed = [item.reason for item in guardrails if item.status is GuardrailStatus.FAILED]
    notes += [item.reason for item in guardrails if item.status is not GuardrailStatus.FAILED]
    if worse or failed:
        headline = _WORSE if worse else _GUARDRAIL_FAILED
        return Decision(Outcome.NO_LAUNCH, (*worse, *failed, *reasons, *notes), None, headline=headline)
    checked = [name for name in rule.guarded_measures if name in deltas]
    if outcome is Outcome.LAUNCH and checked:
        measures = ", ".join(checked)
        notes.insert(
            0, phrase("No guarded measure (%(measures)s) got significantly worse.", measures=measures)
        )
    return Decision(outcome, (*reasons, *notes), more_queries, headline=headline)


_WORSE = phrase("No launch: significantly worse")
_GUARDRAIL_FAILED = phrase("No launch: a guardrail failed")
_NO_IMPROVEMENT = phrase("No launch: no improvement shown")
_LAUNCH = phrase("Launch")
_INCONCLUSIVE = phrase("Inconclusive")


def _decide_on_gsb(rule: LaunchRule, gsb: GSBSummary) -> tuple[Outcome, list[Phrase], int | None, Phrase]:
    # Significance is the exact query-level test's (p < alpha), whose error rate is at most alpha at every
    # number of queries; the bootstrap interval is shown, not decided on (it errs more at small n).
    figures = {
        "gsb": number(gsb.score),
        "confidence": f"{gsb.confidence * 100:g}",
        "low": number(gsb.ci_low),
        "high": number(gsb.ci_high),
        "queries": gsb.n_queries,
        "p": _p(gsb.p_value),
        "threshold": number(rule.min_gsb),
    }
    significant = gsb.p_value < rule.alpha
    if gsb.score < 0 and significant:
        worse = Phrase(
            "GSB is %(gsb)s (%(confidence)s%% CI %(low)s to %(high)s, %(queries)s queries; %(p)s), "
            "significantly below 0.",
            figures,
        )
        return Outcome.NO_LAUNCH, [worse], None, _WORSE
    if gsb.score < 0:
        reasons = [
            Phrase(
                "GSB is %(gsb)s (%(confidence)s%% CI %(low)s to %(high)s, %(queries)s queries; %(p)s), "
                "below 0, but not significantly: not significantly worse.",
                figures,
            )
        ]
        return Outcome.NO_LAUNCH, reasons, None, _NO_IMPROVEMENT
    if gsb.score == 0:
        zero = Phrase(
            "GSB is %(gsb)s (%(confidence)s%% CI %(low)s to %(high)s, %(queries)s queries; %(p)s), at 0.",
            figures,
        )
        return Outcome.NO_LAUNCH, [zero], None, _NO_IMPROVEMENT
    if gsb.score < rule.min_gsb:
        reasons = [
            Phrase(
                "GSB is %(gsb)s (%(confidence)s%% CI %(low)s to %(high)s, %(queries)s queries; %(p)s), "
                "above 0 but below the launch threshold %(threshold)s.",
                figures,
            )
        ]
        # Significantly above 0 already: what is in doubt is whether it is really below the threshold.
        effect = rule.min_gsb - gsb.score if significant else gsb.score
        more_queries = _at_least_one(
            additional_queries(effect, gsb.std_error, gsb.n_queries, alpha=rule.alpha)
        )
        return (
            Outcome.INCONCLUSIVE,
            reasons + _more_queries_reasons(more_queries),
            more_queries,
            _INCONCLUSIVE,
        )
    if significant:
        reasons = [
            Phrase(
                "GSB is %(gsb)s (%(confidence)s%% CI %(low)s to %(high)s, %(queries)s queries; %(p)s), "
                "at least the launch threshold %(threshold)s, significantly above 0.",
                figures,
            )
        ]
        return Outcome.LAUNCH, reasons, None, _LAUNCH
    more_queries = _at_least_one(
        additional_queries(gsb.score, gsb.std_error, gsb.n_queries, alpha=rule.alpha)
    )
    reasons = [
        Phrase(
            "GSB is %(gsb)s (%(confidence)s%% CI %(low)s to %(high)s, %(queries)s queries; %(p)s), "
            "at least the launch threshold %(threshold)s, but not significantly above 0.",
            figures,
        )
    ]
    return Outcome.INCONCLUSIVE, reasons + _more_queries_reasons(more_queries), more_queries, _INCONCLUSIVE


def _decide_on_primary(
    rule: LaunchRule, primary: PairedComparison | None
) -> tuple[Outcome, list[Phrase], int | None, Phrase]:
    measure = rule.primary_measure
    if primary is None:
        return (
            Outcome.INCONCLUSIVE,
            [phrase("There are no side-by-side judgments and no %(measure)s comparison.", measure=measure)],
            None,
            _INCONCLUSIVE,
        )
    reasons = [
        phrase(
            "There are no side-by-side judgments, so the decision rests on %(measure)s "
            "(%(queries)s queries).",
            measure=measure,
            queries=primary.n,
        )
    ]
    change = {"measure": measure, "change": signed(primary.mean_delta), "p": _p(primary.p_value)}
    if primary.mean_delta < 0 and primary.p_value < rule.alpha:
        worse = Phrase("%(measure)s got significantly worse: %(change)s (%(p)s).", change)
        return Outcome.NO_LAUNCH, [*reasons, worse], None, _WORSE
    if primary.mean_delta <= 0:
        reasons.append(Phrase("%(measure)s did not improve: %(change)s (%(p)s).", change))
        return Outcome.NO_LAUNCH, reasons, None, _NO_IMPROVEMENT
    if primary.p_value < rule.alpha:
        better = Phrase("%(measure)s improved significantly: %(change)s (%(p)s).", change)
        return Outcome.LAUNCH, [*reasons, better], None, _LAUNCH
    reasons.append(
        Phrase(
            "%(measure)s improved by %(change)s (%(p)s), not significantly at alpha %(alpha)s.",
            {**change, "alpha": f"{rule.alpha:g}"},
        )
    )
    more_queries = _at_least_one(
        additional_queries(primary.mean_delta, primary.std_error, primary.n, alpha=rule.alpha)
    )
    return Outcome.INCONCLUSIVE, reasons + _more_queries_reasons(more_queries), more_queries, _INCONCLUSIVE


def _more_queries_reasons(more_queries: int | None) -> list[Phrase]:
    if more_queries is None:
        return []
    if more_queries == 1:
        return [phrase("About 1 more judged query would likely settle it (a rough estimate).")]
    return [
        phrase(
            "About %(queries)s more judged queries would likely settle it (a rough estimate).",
            queries=more_queries,
        )
    ]


def _at_least_one(more_queries: int | None) -> int | None:
    # Inconclusive means the data so far did not settle it, whatever the normal approximation says.
    return None if more_queries is None else max(1, more_queries)


def _p(p_value: float) -> str:
    return "p < 0.001" if p_value < 0.001 else f"p = {p_value:.3f}"
