import math

import pytest

from metrics.compute.guardrails import Bound, Guardrail, GuardrailStatus, evaluate_guardrails
from metrics.compute.significance import paired_comparison

CTR_FLOOR = Guardrail("IPS-CTR@10", Bound.LOWER, -0.01)
ABANDONMENT_CEILING = Guardrail("Abandonment", "upper", 0.02)


class Interval:
    def __init__(self, ci_low: float, ci_high: float):
        self.ci_low, self.ci_high = ci_low, ci_high


def test_a_lower_bound_holds_at_or_above_its_threshold():
    held, at, failed = (
        evaluate_guardrails([CTR_FLOOR], {"IPS-CTR@10": Interval(low, 0.05)})[0]
        for low in (-0.004, -0.01, -0.02)
    )
    assert held.status is at.status is GuardrailStatus.HELD
    assert held.observed == -0.004
    assert held.reason == (
        "Guardrail on IPS-CTR@10 held: the lower end of the interval of Δ IPS-CTR@10, −0.004, "
        "is at least −0.010."
    )
    assert failed.status is GuardrailStatus.FAILED
    assert failed.reason == (
        "Guardrail on IPS-CTR@10 failed: the lower end of the interval of Δ IPS-CTR@10, −0.020, "
        "is below −0.010."
    )


def test_an_upper_bound_holds_at_or_below_its_threshold():
    held, failed = (
        evaluate_guardrails([ABANDONMENT_CEILING], {"Abandonment": Interval(-0.1, high)})[0]
        for high in (0.02, 0.03)
    )
    assert held.status is GuardrailStatus.HELD
    assert held.reason.endswith("the upper end of the interval of Δ Abandonment, 0.020, is at most 0.020.")
    assert failed.status is GuardrailStatus.FAILED
    assert failed.reason.endswith("the upper end of the interval of Δ Abandonment, 0.030, is above 0.020.")


def test_a_guardrail_without_its_difference_is_not_evaluable():
    missing, empty, undefined = evaluate_guardrails(
        [CTR_FLOOR, ABANDONMENT_CEILING, Guardrail("Dwell", Bound.LOWER, -5)],
        {"Abandonment": None, "Dwell": Interval(math.nan, math.nan)},
    )
    assert missing.status is empty.status is undefined.status is GuardrailStatus.NOT_EVALUABLE
    assert (
        missing.reason == "Guardrail on IPS-CTR@10 could not be checked: there is no IPS-CTR@10 difference."
    )
    assert (
        undefined.reason == "Guardrail on Dwell could not be checked: the interval of Δ Dwell is undefined."
    )
    assert math.isnan(missing.observed)


def test_guardrails_read_paired_comparisons():
    comparison = paired_comparison([0.30, 0.31, 0.29, 0.30], [0.31, 0.33, 0.30, 0.30], n_resamples=200)
    (outcome,) = evaluate_guardrails([CTR_FLOOR], {"IPS-CTR@10": comparison})
    assert outcome.status is GuardrailStatus.HELD and outcome.observed == comparison.ci_low


def test_the_rule_in_words():
    assert CTR_FLOOR.rule == "the lower end of the interval of Δ IPS-CTR@10 is at least −0.010"
    assert ABANDONMENT_CEILING.rule == "the upper end of the interval of Δ Abandonment is at most 0.020"


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"metric": ""}, "metric must be a metric name"),
        ({"bound": "lowest"}, "bound must be one of"),
        ({"threshold": math.inf}, "threshold must be a finite number"),
        ({"threshold": True}, "threshold must be a finite number"),
    ],
)
def test_a_guardrail_refuses_bad_fields(fields, message):
    with pytest.raises(ValueError, match=message):
        Guardrail(**({"metric": "CTR@10", "bound": "lower", "threshold": 0.0} | fields))


def test_evaluate_guardrails_refuses_other_things():
    with pytest.raises(ValueError, match="sequence of Guardrail"):
        evaluate_guardrails(CTR_FLOOR, {})  # type: ignore[arg-type]
