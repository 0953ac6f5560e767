"""Guardrails: online metrics that an experiment must not degrade.

A guardrail names a metric whose difference experimental − online has an interval (e.g. "IPS-CTR@10" from
`interactions.online.online_differences`), an end of that interval and a threshold: "the lower end of the
interval of Δ IPS-CTR@10 is at least −0.01" (the metric may not have dropped by more than 0.01, with the
interval's confidence), or "the upper end of the interval of Δ Abandonment is at most 0.02". A lower bound
must be at least its threshold, an upper bound at most its threshold. `evaluate_guardrails` says for each
whether it held, failed, or could not be evaluated (no such difference, or an undefined interval), with the
reason in a sentence; `decision.decide` takes the outcomes and states them in its reasons.
"""

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Protocol

from metrics.compute.wording import Phrase, number, phrase


class Bound(StrEnum):
    """Which end of the difference's interval a guardrail reads."""

    LOWER = "lower"
    UPPER = "upper"


class GuardrailStatus(StrEnum):
    HELD = "held"
    FAILED = "failed"
    NOT_EVALUABLE = "not_evaluable"


class Interval(Protocol):
    """What a guardrail reads: an interval of a difference (e.g. a `significance.PairedComparison`)."""

    @property
    def ci_low(self) -> float: ...

    @property
    def ci_high(self) -> float: ...


@dataclass(frozen=True)
class Guardrail:
    """`bound` end of the interval of Δ `metric` (experimental − online) against `threshold`: a lower end
    must be at least the threshold, an upper end at most."""

    metric: str
    bound: Bound
    threshold: float

    def __post_init__(self):
        if not isinstance(self.metric, str) or not self.metric:
            raise ValueError(f"metric must be a metric name, got {self.metric!r}")
        try:
            object.__setattr__(self, "bound", Bound(self.bound))
        except ValueError:
            choices = ", ".join(repr(choice.value) for choice in Bound)
            raise ValueError(f"bound must be one of {choices}, got {self.bound!r}") from None
        value = self.threshold
        if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
            raise ValueError(f"threshold must be a finite number, got {value!r}")
        object.__setattr__(self, "threshold", float(value))

    @property
    def rule(self) -> str:
        """The guardrail in words, e.g. "the lower end of the interval of Δ IPS-CTR@10 is at least −0.010"."""
        if self.bound is Bound.LOWER:
            return f"the lower end of the interval of Δ {self.metric} is at least {number(self.threshold)}"
        return f"the upper end of the interval of Δ {self.metric} is at most {number(self.threshold)}"


@dataclass(frozen=True)
class GuardrailOutcome:
    """A guardrail's status, the interval end it read (NaN when not evaluable) and the reason in words."""

    guardrail: Guardrail
    status: GuardrailStatus
    observed: float
    reason: Phrase


def evaluate_guardrails(
    guardrails: Sequence[Guardrail], differences: Mapping[str, Interval | None]
) -> list[GuardrailOutcome]:
    """Each guardrail against the interval of its metric's difference in `differences` (keyed by metric
    name; a missing key or None: not evaluable), in the order given."""
    if isinstance(guardrails, str | Guardrail) or not all(isinstance(item, Guardrail) for item in guardrails):
        raise ValueError("guardrails must be a sequence of Guardrail")
    if not isinstance(differences, Mapping):
        raise ValueError(f"differences must be a mapping of metric names, got {type(differences).__name__}")
    return [_evaluate(guardrail, differences.get(guardrail.metric)) for guardrail in guardrails]


def _evaluate(guardrail: Guardrail, difference: Interval | None) -> GuardrailOutcome:
    metric, threshold = guardrail.metric, number(guardrail.threshold)
    if difference is None:
        reason = phrase(
            "Guardrail on %(metric)s could not be checked: there is no %(metric)s difference.", metric=metric
        )
        return GuardrailOutcome(guardrail, GuardrailStatus.NOT_EVALUABLE, math.nan, reason)
    lower = guardrail.bound is Bound.LOWER
    observed = float(difference.ci_low if lower else difference.ci_high)
    if math.isnan(observed):
        reason = phrase(
            "Guardrail on %(metric)s could not be checked: the interval of Δ %(metric)s is undefined.",
            metric=metric,
        )
        return GuardrailOutcome(guardrail, GuardrailStatus.NOT_EVALUABLE, observed, reason)
    held = observed >= guardrail.threshold if lower else observed <= guardrail.threshold
    template = _REASONS[guardrail.bound, held]
    reason = Phrase(template, {"metric": metric, "observed": number(observed), "threshold": threshold})
    return GuardrailOutcome(
        guardrail, GuardrailStatus.HELD if held else GuardrailStatus.FAILED, observed, reason
    )


# One whole sentence per case, so that each can be translated as a whole (templates: filled in `_evaluate`).
_REASONS = {
    (Bound.LOWER, True): phrase(
        "Guardrail on %(metric)s held: the lower end of the interval of Δ %(metric)s, %(observed)s, "
        "is at least %(threshold)s."
    ),
    (Bound.LOWER, False): phrase(
        "Guardrail on %(metric)s failed: the lower end of the interval of Δ %(metric)s, %(observed)s, "
        "is below %(threshold)s."
    ),
    (Bound.UPPER, True): phrase(
        "Guardrail on %(metric)s held: the upper end of the interval of Δ %(metric)s, %(observed)s, "
        "is at most %(threshold)s."
    ),
    (Bound.UPPER, False): phrase(
        "Guardrail on %(metric)s failed: the upper end of the interval of Δ %(metric)s, %(observed)s, "
        "is above %(threshold)s."
    ),
}
