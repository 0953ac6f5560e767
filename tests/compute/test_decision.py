import dataclasses

import numpy as np
import pytest

from metrics.compute.decision import Decision, LaunchRule, Outcome, decide
from metrics.compute.gsb import gsb_summary
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
    return dataclasses.replace(CLEAR_WIN, **fields)


def test_good_same_bad_bad_on_four_queries_is_no_launch():
    summary = gsb_summary([0, 1, 2, 3], [1, 0, -1, -1], n_queries=4)
    decision = decide(RULE, gsb=summary, deltas={})
    assert decision.outcome is Outcome.NO_LAUNCH
    assert decision.reasons == ("GSB is −0.250 (95% CI −1.000 to 0.500, 4 queries), at or below 0.",)
    assert decision.more_queries is None


def test_a_clear_win_launches():
    decision = decide(RULE, gsb=CLEAR_WIN, deltas={})
    assert decision.outcome is Outcome.LAUNCH
    assert CLEAR_WIN.score == 0.625 and CLEAR_WIN.ci_low > 0
    assert decision.reasons[0].startswith("GSB is 0.625 (95% CI ")
    assert decision.reasons[0].endswith("at least the launch threshold 0.050, with the interval above 0.")


def test_gsb_of_zero_is_no_launch():
    assert decide(RULE, gsb=gsb(score=0.0, ci_low=-0.1), deltas={}).outcome is Outcome.NO_LAUNCH


def test_gsb_above_zero_but_below_the_threshold_is_inconclusive():
    decision = decide(RULE, gsb=gsb(score=0.03, ci_low=0.01, ci_high=0.05), deltas={})
    assert decision.outcome is Outcome.INCONCLUSIVE
    assert decision.reasons == (
        "GSB is 0.030 (95% CI 0.010 to 0.050, 40 queries), above 0 but below the launch threshold 0.050.",
    )
    assert decision.more_queries is None


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
        Outcome.INCONCLUSIVE, ("There are no side-by-side judgments and no nDCG@10 comparison.",), None
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


def test_outcome_values():
    assert [outcome.value for outcome in Outcome] == ["launch", "no_launch", "inconclusive"]


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"alpha": 0}, "alpha"),
        ({"alpha": 1.0}, "alpha"),
        ({"min_gsb": -0.1}, "min_gsb"),
        ({"min_gsb": True}, "min_gsb"),
        ({"primary_measure": ""}, "primary_measure"),
        ({"guarded_measures": ["nDCG@5"]}, "guarded_measures"),
    ],
)
def test_launch_rule_rejects_bad_settings(fields, message):
    with pytest.raises(ValueError, match=message):
        LaunchRule(**fields)


def test_decide_rejects_a_missing_rule():
    with pytest.raises(ValueError, match="rule must be a LaunchRule"):
        decide(None, gsb=CLEAR_WIN, deltas={})
