import dataclasses

import numpy as np
import pytest

from metrics.compute.decision import Coverage, Decision, LaunchRule, Outcome, decide
from metrics.compute.gsb import gsb_summary
from metrics.compute.guardrails import Bound, Guardrail, evaluate_guardrails
from metrics.compute.significance import PairedComparison, additional_queries

RULE = LaunchRule()
GUARDED = LaunchRule(guarded_measures=("nDCG@5", "nDCG@20"))
# A clear win: 30 good, 5 same, 5 bad verdicts, one per query.
CLEAR_WIN = gsb_summary(np.arange(40), np.r_[np.ones(30), np.zeros(5), -np.ones(5)].astype(int), n_queries=40)


def comparison(mean_delta: float, p_value: float, *, n: int = 200, std_error: float = 0.01):
    return PairedComparison(
        n=n,
        mean_baseline=0.5,
        mean_candidate=0.5 + mean_delta,
        mean_delta=mean_delta,
        ci_low=mean_delta - 2 * std_error,
        ci_high=mean_delta + 2 * std_error,
        p_value=p_value,
        wins=n // 2,
        ties=0,
        losses=n - n // 2,
        std_error=std_error,
    )


def gsb(**fields):
    """CLEAR_WIN changed; an interval given without a p-value brings one that agrees with it (the rule
    decides on the p-value, the interval is shown)."""
    if "p_value" not in fields and ("ci_low" in fields or "ci_high" in fields):
        low, high = fields.get("ci_low", CLEAR_WIN.ci_low), fields.get("ci_high", CLEAR_WIN.ci_high)
        fields["p_value"] = 0.01 if low > 0 or high < 0 else 0.5
    return dataclasses.replace(CLEAR_WIN, **fields)


def test_good_same_bad_bad_on_four_queries_is_no_launch():
    summary = gsb_summary([0, 1, 2, 3], [1, 0, -1, -1], n_queries=4)
    decision = decide(RULE, gsb=summary, deltas={})
    assert decision.outcome is Outcome.NO_LAUNCH
    assert decision.reasons == (
        "GSB is −0.250 (95% CI −1.000 to 0.500, 4 queries; p = 1.000), below 0, but not significantly: "
        "not significantly worse.",
    )
    assert decision.headline == "No launch: no improvement shown"
    assert decision.more_queries is None


def test_a_clear_win_launches():
    decision = decide(RULE, gsb=CLEAR_WIN, deltas={})
    assert decision.outcome is Outcome.LAUNCH
    assert CLEAR_WIN.score == 0.625 and CLEAR_WIN.ci_low > 0
    assert decision.reasons[0].startswith("GSB is 0.625 (95% CI ")
    assert decision.reasons[0].endswith("at least the launch threshold 0.050, significantly above 0.")
    assert "p < 0.001" in decision.reasons[0]


def test_gsb_of_zero_is_no_launch():
    assert decide(RULE, gsb=gsb(score=0.0, ci_low=-0.1), deltas={}).outcome is Outcome.NO_LAUNCH


def test_gsb_above_zero_but_below_the_threshold_is_inconclusive():
    decision = decide(RULE, gsb=gsb(score=0.03, ci_low=0.01, ci_high=0.05), deltas={})
    assert decision.outcome is Outcome.INCONCLUSIVE
    assert decision.reasons[0] == (
        "GSB is 0.030 (95% CI 0.010 to 0.050, 40 queries; p = 0.010), above 0 but below the launch "
        "threshold 0.050."
    )
    # Significantly above 0, so the estimate is for telling it from the threshold (0.05 - 0.03).
    assert decision.more_queries == additional_queries(0.02, CLEAR_WIN.std_error, 40) > 0


def test_gsb_over_the_threshold_with_an_interval_reaching_zero_asks_for_more_queries():
    summary = gsb(score=0.1, ci_low=-0.02, ci_high=0.22, std_error=0.06, n_queries=40)
    decision = decide(RULE, gsb=summary, deltas={})
    assert decision.outcome is Outcome.INCONCLUSIVE
    expected = additional_queries(0.1, 0.06, 40, alpha=0.05)
    # 40 * ((1.96 + 0.8416) * 0.06 / 0.1)^2 = 113.02, so 114 queries: 74 more.
    assert decision.more_queries == expected == 74
    assert decision.reasons[-1] == "About 74 more judged queries would likely settle it (a rough estimate)."


def test_at_least_one_more_query_when_inconclusive():
    summary = gsb(score=0.5, ci_low=0.0, ci_high=0.9, std_error=0.01, n_queries=40)
    decision = decide(RULE, gsb=summary, deltas={})
    assert decision.outcome is Outcome.INCONCLUSIVE
    assert decision.more_queries == 1
    assert decision.reasons[-1] == "About 1 more judged query would likely settle it (a rough estimate)."


def test_a_guarded_measure_significantly_worse_vetoes_a_launch():
    deltas = {"nDCG@5": comparison(-0.031, 0.004), "nDCG@20": comparison(0.01, 0.2)}
    decision = decide(GUARDED, gsb=CLEAR_WIN, deltas=deltas)
    assert decision.outcome is Outcome.NO_LAUNCH
    assert decision.reasons[0] == "nDCG@5 got significantly worse: −0.031 (p = 0.004)."
    assert decision.reasons[1].startswith("GSB is 0.625")
    assert decision.more_queries is None


def test_a_guarded_measure_worse_but_not_significantly_does_not_veto():
    deltas = {"nDCG@5": comparison(-0.031, 0.2), "nDCG@20": comparison(0.01, 0.2)}
    decision = decide(GUARDED, gsb=CLEAR_WIN, deltas=deltas)
    assert decision.outcome is Outcome.LAUNCH
    assert decision.reasons[-1] == "No guarded measure (nDCG@5, nDCG@20) got significantly worse."


def test_an_unchecked_guarded_measure_is_reported():
    decision = decide(GUARDED, gsb=CLEAR_WIN, deltas={"nDCG@5": comparison(0.0, 1.0)})
    assert decision.outcome is Outcome.LAUNCH
    assert "nDCG@20 has no comparison, so it was not checked." in decision.reasons


@pytest.mark.parametrize("no_judgments", [None, gsb_summary([], [], n_queries=3)])
def test_without_judgments_a_significant_primary_improvement_launches(no_judgments):
    decision = decide(RULE, gsb=no_judgments, deltas={"nDCG@10": comparison(0.031, 0.0004)})
    assert decision == Decision(
        Outcome.LAUNCH,
        (
            "There are no side-by-side judgments, so the decision rests on nDCG@10 (200 queries).",
            "nDCG@10 improved significantly: +0.031 (p < 0.001).",
        ),
        None,
        headline="Launch",
    )


@pytest.mark.parametrize("mean_delta", [0.0, -0.01])
def test_without_judgments_no_primary_improvement_is_no_launch(mean_delta):
    decision = decide(RULE, gsb=None, deltas={"nDCG@10": comparison(mean_delta, 0.5)})
    assert decision.outcome is Outcome.NO_LAUNCH
    assert decision.reasons[-1].startswith("nDCG@10 did not improve: ")


def test_without_judgments_an_insignificant_primary_improvement_is_inconclusive():
    primary = comparison(0.01, 0.21, n=100, std_error=0.008)
    decision = decide(RULE, gsb=None, deltas={"nDCG@10": primary})
    assert decision.outcome is Outcome.INCONCLUSIVE
    assert decision.reasons[1] == "nDCG@10 improved by +0.010 (p = 0.210), not significantly at alpha 0.05."
    assert decision.more_queries == additional_queries(0.01, 0.008, 100) > 0


def test_the_primary_measure_follows_the_rule():
    rule = LaunchRule(primary_measure="nDCG@5", alpha=0.01)
    deltas = {"nDCG@10": comparison(0.05, 0.0001), "nDCG@5": comparison(0.02, 0.03)}
    assert decide(rule, gsb=None, deltas=deltas).outcome is Outcome.INCONCLUSIVE


def test_without_judgments_a_guarded_veto_still_applies():
    deltas = {"nDCG@10": comparison(0.031, 0.0004), "nDCG@5": comparison(-0.02, 0.01)}
    assert decide(GUARDED, gsb=None, deltas=deltas).outcome is Outcome.NO_LAUNCH


def test_nothing_to_decide_on_is_inconclusive():
    decision = decide(RULE, gsb=None, deltas={"nDCG@5": comparison(0.05, 0.001)})
    assert decision == Decision(
        Outcome.INCONCLUSIVE,
        ("There are no side-by-side judgments and no nDCG@10 comparison.",),
        None,
        headline="Inconclusive",
    )


@pytest.mark.parametrize("score", [-0.5, 0.0, 0.02, 0.06, 0.4])
@pytest.mark.parametrize("ci_low", [-0.1, 0.0, 0.01])
@pytest.mark.parametrize(
    "primary", [None, comparison(-0.01, 0.3), comparison(0.01, 0.3), comparison(0.01, 0.01)]
)
def test_every_outcome_has_a_reason(score, ci_low, primary):
    deltas = {} if primary is None else {"nDCG@10": primary}
    for summary in (None, gsb(score=score, ci_low=min(ci_low, score))):
        decision = decide(RULE, gsb=summary, deltas=deltas)
        assert decision.reasons and all(reason.endswith(".") for reason in decision.reasons)
        assert decision.more_queries is None or decision.outcome is Outcome.INCONCLUSIVE


def complete(queries: int = 40, **fields) -> Coverage:
    values = {
        "queries": queries,
        "complete_queries": queries,
        "side_by_side_complete": queries,
        "side_by_side_tasks": queries,
        "relevance_complete": 10 * queries,
        "relevance_tasks": 10 * queries,
        "labels_outstanding": 0,
    }
    return Coverage(**{**values, **fields})


def test_a_campaign_without_labels_is_collecting():
    # Once "Do not launch": GSB 0 over one auto-Same query, with nothing graded.
    summary = gsb_summary([0], [0], n_queries=40)
    coverage = complete(
        complete_queries=1, side_by_side_complete=1, relevance_complete=0, labels_outstanding=1200
    )
    decision = decide(RULE, gsb=summary, deltas={}, coverage=coverage)
    assert decision.outcome is Outcome.COLLECTING
    assert decision.headline == "Collecting: not enough data yet"
    assert decision.reasons == (
        "1 of the 30 queries needed have complete side-by-side judgments.",
        "1 of 40 side-by-side tasks are complete (2%; 90% needed).",
        "0 of 400 relevance tasks are complete (0%; 90% needed).",
        "1200 labels are outstanding.",
    )
    assert decision.provisional.outcome is Outcome.NO_LAUNCH
    assert decision.more_queries is None


def test_a_pilot_without_side_by_side_work_is_collecting():
    # The pilot once said "Do not launch" with 0 of 4 side-by-side tasks complete, after one annotator.
    coverage = Coverage(4, 0, 0, 4, 40, 40, 8)
    decision = decide(RULE, gsb=gsb_summary([], [], n_queries=4), deltas={}, coverage=coverage)
    assert decision.outcome is Outcome.COLLECTING
    assert decision.reasons[0] == (
        "0 of the 30 queries needed have complete side-by-side judgments; the campaign has only 4 queries, "
        "so add queries or lower min_queries."
    )
    assert decision.reasons[1] == "0 of 4 side-by-side tasks are complete (0%; 90% needed)."
    assert (
        decide(
            LaunchRule(min_queries=4), gsb=None, deltas={}, coverage=Coverage(4, 4, 4, 4, 40, 40, 0)
        ).outcome
        is Outcome.INCONCLUSIVE
    )


def test_a_partly_judged_win_is_collecting_until_the_thresholds_are_met():
    # The demo once said "Launch" with 17 of 28 side-by-side tasks complete and 20 labels outstanding.
    partial = complete(
        28, complete_queries=17, side_by_side_complete=17, relevance_complete=260, labels_outstanding=20
    )
    decision = decide(RULE, gsb=CLEAR_WIN, deltas={}, coverage=partial)
    assert decision.outcome is Outcome.COLLECTING
    assert decision.provisional.outcome is Outcome.LAUNCH
    assert decide(RULE, gsb=CLEAR_WIN, deltas={}, coverage=complete()).outcome is Outcome.LAUNCH
    # Exactly at the thresholds is enough.
    at = complete(
        30, side_by_side_complete=27, side_by_side_tasks=30, relevance_complete=270, relevance_tasks=300
    )
    assert decide(RULE, gsb=CLEAR_WIN, deltas={}, coverage=at).outcome is Outcome.LAUNCH


def test_the_seed_rule_holds_with_the_thresholds_met():
    summary = gsb_summary([0, 1, 2, 3], [1, 0, -1, -1], n_queries=4)
    rule = LaunchRule(min_queries=4)
    decision = decide(rule, gsb=summary, deltas={}, coverage=complete(4))
    assert decision.outcome is Outcome.NO_LAUNCH


def test_a_gsb_whose_whole_interval_is_below_zero_is_significantly_worse():
    decision = decide(RULE, gsb=gsb(score=-0.3, ci_low=-0.5, ci_high=-0.1), deltas={})
    assert decision.outcome is Outcome.NO_LAUNCH
    assert decision.headline == "No launch: significantly worse"
    assert decision.reasons[0].endswith("significantly below 0.")
    assert (
        decide(RULE, gsb=gsb(score=0.0, ci_low=-0.1), deltas={}).headline == "No launch: no improvement shown"
    )
    primary = decide(RULE, gsb=None, deltas={"nDCG@10": comparison(-0.02, 0.001)})
    assert (primary.outcome, primary.headline) == (Outcome.NO_LAUNCH, "No launch: significantly worse")


def test_a_small_gsb_whose_interval_reaches_zero_gets_a_more_queries_estimate():
    summary = gsb(score=0.03, ci_low=-0.05, ci_high=0.11, std_error=0.04, n_queries=40)
    decision = decide(RULE, gsb=summary, deltas={})
    assert decision.outcome is Outcome.INCONCLUSIVE
    assert decision.more_queries == additional_queries(0.03, 0.04, 40) > 0
    assert decision.reasons[-1].startswith(f"About {decision.more_queries} more judged queries")


def test_outcome_values():
    assert [outcome.value for outcome in Outcome] == ["launch", "no_launch", "inconclusive", "collecting"]


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"alpha": 0}, "alpha"),
        ({"alpha": 1.0}, "alpha"),
        ({"min_gsb": -0.1}, "min_gsb"),
        ({"min_gsb": True}, "min_gsb"),
        ({"primary_measure": ""}, "primary_measure"),
        ({"guarded_measures": ["nDCG@5"]}, "guarded_measures"),
        ({"min_queries": 0}, "min_queries"),
        ({"min_queries": 2.5}, "min_queries"),
        ({"min_coverage": 1.1}, "min_coverage"),
        ({"min_coverage": True}, "min_coverage"),
    ],
)
def test_launch_rule_rejects_bad_settings(fields, message):
    with pytest.raises(ValueError, match=message):
        LaunchRule(**fields)


def test_decide_rejects_a_missing_rule():
    with pytest.raises(ValueError, match="rule must be a LaunchRule"):
        decide(None, gsb=CLEAR_WIN, deltas={})


def guardrail_outcomes(*lower_ends: float):
    """The IPS-CTR@10 floor (−0.01) against each lower end, and a guardrail with no difference to read."""
    floors = [Guardrail(f"IPS-CTR@{k}", Bound.LOWER, -0.01) for k in range(10, 10 + len(lower_ends))]
    differences = {floor.metric: PairedInterval(low) for floor, low in zip(floors, lower_ends, strict=True)}
    return evaluate_guardrails([*floors, Guardrail("Dwell", Bound.LOWER, -5)], differences)


class PairedInterval:
    def __init__(self, ci_low: float):
        self.ci_low, self.ci_high = ci_low, ci_low + 0.02


def test_a_failed_guardrail_vetoes_a_launch_and_says_so():
    outcomes = guardrail_outcomes(-0.004, -0.02)
    decision = decide(RULE, gsb=CLEAR_WIN, deltas={}, guardrails=outcomes)
    assert decision.outcome is Outcome.NO_LAUNCH
    assert decision.headline == "No launch: a guardrail failed"
    assert decision.more_queries is None
    assert decision.reasons[0] == outcomes[1].reason
    assert decision.reasons[1].startswith("GSB is 0.625")
    assert decision.reasons[2:] == (outcomes[0].reason, outcomes[2].reason)


def test_held_guardrails_are_stated_after_the_rules_reasons():
    outcomes = guardrail_outcomes(-0.004)
    decision = decide(RULE, gsb=CLEAR_WIN, deltas={}, guardrails=outcomes)
    without = decide(RULE, gsb=CLEAR_WIN, deltas={})
    assert decision.outcome is Outcome.LAUNCH and decision.headline == without.headline
    assert decision.reasons == (*without.reasons, *(outcome.reason for outcome in outcomes))
    # A guardrail that could not be checked is stated and does not veto.
    assert decision.reasons[-1] == "Guardrail on Dwell could not be checked: there is no Dwell difference."


def test_a_failed_guardrail_turns_an_inconclusive_result_into_no_launch():
    summary = gsb(score=0.1, ci_low=-0.02, ci_high=0.22, std_error=0.06)
    decision = decide(RULE, gsb=summary, deltas={}, guardrails=guardrail_outcomes(-0.03))
    assert decision.outcome is Outcome.NO_LAUNCH and decision.more_queries is None


def test_a_significantly_worse_measure_keeps_its_headline_beside_a_failed_guardrail():
    deltas = {"nDCG@5": comparison(-0.031, 0.004)}
    decision = decide(GUARDED, gsb=CLEAR_WIN, deltas=deltas, guardrails=guardrail_outcomes(-0.03))
    assert decision.headline == "No launch: significantly worse"
    assert decision.reasons[0].startswith("nDCG@5 got significantly worse")
    assert decision.reasons[1].startswith("Guardrail on IPS-CTR@10 failed")


def test_a_collecting_campaign_keeps_the_guardrails_in_its_provisional_decision():
    coverage = complete(complete_queries=3)
    decision = decide(RULE, gsb=CLEAR_WIN, deltas={}, coverage=coverage, guardrails=guardrail_outcomes(-0.03))
    assert decision.outcome is Outcome.COLLECTING
    assert decision.provisional is not None and decision.provisional.outcome is Outcome.NO_LAUNCH


def test_decide_refuses_guardrails_that_are_not_outcomes():
    with pytest.raises(ValueError, match="sequence of GuardrailOutcome"):
        decide(RULE, gsb=CLEAR_WIN, deltas={}, guardrails=[Guardrail("CTR@10", Bound.LOWER, 0)])


@pytest.mark.parametrize("n_queries", [10, 20, 40])
def test_with_no_effect_the_rule_calls_gsb_better_or_worse_at_most_alpha_of_the_time(n_queries):
    """Seeded simulation: no-effect campaigns (Good and Bad equally likely, 3 judges a query, queries
    leaning either way). The rule, on the exact test, calls GSB significantly better or worse in at most
    alpha (5%) of them at every size; the bootstrap interval it used to read errs more at 20 queries."""
    rng = np.random.default_rng(29)
    n_runs, judges = 3000, 3
    lean = rng.choice([-1, 1], (n_runs, n_queries)) * rng.uniform(0, 0.6, (n_runs, n_queries))
    draw = rng.random((n_runs, n_queries, judges))
    p_good, p_bad = 0.35 * (1 + lean[..., None]), 0.35 * (1 - lean[..., None])
    verdicts = np.where(draw < p_good, 1, np.where(draw > 1 - p_bad, -1, 0))
    query = np.repeat(np.arange(n_queries), judges)
    rule = LaunchRule(min_gsb=0.0)  # any GSB above 0 may launch: only significance stands in the way
    called = by_interval = 0
    for run in range(n_runs):
        summary = gsb_summary(query, verdicts[run].ravel(), n_queries=n_queries, n_resamples=1000, seed=run)
        decision = decide(rule, gsb=summary, deltas={})
        called += decision.outcome is Outcome.LAUNCH or decision.headline == "No launch: significantly worse"
        by_interval += summary.ci_low > 0 or summary.ci_high < 0
    slack = 2.5 * np.sqrt(0.05 * 0.95 / n_runs)  # Monte Carlo error of a 5% rate
    assert called / n_runs <= 0.05 + slack
    if n_queries == 20:
        assert by_interval / n_runs > 0.05 + slack  # what reading the interval would err


@pytest.mark.parametrize(("done", "shown"), [(449, "89%"), (29, "29%"), (0, "0%")])
def test_coverage_short_of_its_threshold_never_reads_as_reaching_it(done, shown):
    # 449 of 500 is 89.8%: rounded it would read "90%; 90% needed".
    tasks = 100 if done == 29 else 500
    coverage = complete(relevance_complete=done, relevance_tasks=tasks)
    decision = decide(RULE, gsb=CLEAR_WIN, deltas={}, coverage=coverage)
    (reason,) = [reason for reason in decision.reasons if "relevance tasks are complete" in reason]
    assert f"({shown}; 90% needed)" in reason
