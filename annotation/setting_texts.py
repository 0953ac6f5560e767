"""Two campaign settings written as text, the guardrails and the grades of a log's actions: parsed (a
ValueError names the bad part) and written back in the one spelling they are stored in."""

import math
import re

from django.utils.text import format_lazy
from django.utils.translation import gettext_lazy as _

# Online metrics a guardrail may name: the names `metrics.compute.interactions.online.metric_names` gives
# (tests/annotation/test_behaviour_settings.py holds the two lists together).
ONLINE_METRIC = re.compile(r"(?:(?:IPS-|SNIPS-)?CTR@[1-9][0-9]{0,2}|Clicks|Abandonment|Dwell|Conversion)")
# Diversity measures of the launch report a guardrail may name (`metrics.selectors.diversity`): their
# differences come from the labels, logs or none.
DIVERSITY_METRIC = re.compile(r"(?:ILS|alpha_nDCG|ERR_IA|StRecall|Novelty)@[1-9][0-9]{0,2}")
_GUARDRAIL = re.compile(r"\s*(?P<metric>\S+)\s*(?P<op>>=|<=|≥|≤)\s*(?P<threshold>\S+)\s*")


def parse_guardrails(text: str) -> list[tuple[str, str, float]]:
    """Guardrails as (metric, `>=` or `<=`, threshold), from "IPS-CTR@10 >= -0.01; Abandonment <= 0.02":
    each says that the interval of Δ metric (experimental − online) has its lower end (`>=`) at least, or its
    upper end (`<=`) at most, the threshold. Empty text: none. ValueError names the bad part."""
    rules = []
    for part in (part for part in text.split(";") if part.strip()):
        match = _GUARDRAIL.fullmatch(part)
        if match is None:
            message = _("{part}: write each as METRIC >= NUMBER or METRIC <= NUMBER")
            raise ValueError(format_lazy(message, part=repr(part.strip())))
        metric, op = match["metric"], {"≥": ">=", "≤": "<="}.get(match["op"], match["op"])
        if not (ONLINE_METRIC.fullmatch(metric) or DIVERSITY_METRIC.fullmatch(metric)):
            message = _(
                "{metric} is not an online metric (CTR@k, IPS-CTR@k, SNIPS-CTR@k, Clicks, Abandonment, "
                "Dwell, Conversion) nor a diversity measure (ILS@k, alpha_nDCG@k, ERR_IA@k, StRecall@k, "
                "Novelty@k)"
            )
            raise ValueError(format_lazy(message, metric=repr(metric)))
        try:
            threshold = float(match["threshold"].replace("−", "-"))
        except ValueError:
            message = _("{value} is not a number")
            raise ValueError(format_lazy(message, value=repr(match["threshold"]))) from None
        if not math.isfinite(threshold):
            message = _("{value} is not a finite number")
            raise ValueError(format_lazy(message, value=repr(match["threshold"])))
        rules.append((metric, op, threshold))
    return rules


def guardrails_text(rules: list[tuple[str, str, float]]) -> str:
    """Rules as `parse_guardrails` reads them, in one spelling."""
    return "; ".join(f"{metric} {op} {threshold:.15g}" for metric, op, threshold in rules)


# What each furthest action of an impression grades (`metrics.compute.interactions.behaviour.ActionGrades`'
# fields, in its order, with its defaults: the product seed's e-commerce scale).
ACTION_GRADE_DEFAULTS: dict[str, float] = {
    "no_click": 0,
    "click": 1,
    "cart": 2,
    "purchase_good": 3,
    "purchase_unrated": 2,
    "purchase_poor": 1,
    "good_rating": 4,
    "min_dwell": 0,
}


def parse_action_grades(text: str) -> dict[str, float]:
    """The grade of each action, from "click=1, cart=2, purchase_good=3": the actions named take their
    number, the others keep their default. ValueError names the bad part."""
    grades = dict(ACTION_GRADE_DEFAULTS)
    for part in (part.strip() for part in text.split(",") if part.strip()):
        name, equals, value = part.partition("=")
        name = name.strip()
        if not equals or name not in ACTION_GRADE_DEFAULTS:
            message = _("{part}: write ACTION=NUMBER, ACTION one of {actions}")
            raise ValueError(format_lazy(message, part=repr(part), actions=", ".join(ACTION_GRADE_DEFAULTS)))
        try:
            number = float(value)
        except ValueError:
            message = _("{part}: {value} is not a number")
            raise ValueError(format_lazy(message, part=repr(part), value=repr(value.strip()))) from None
        if not math.isfinite(number) or (name == "min_dwell" and number < 0):
            if name == "min_dwell":
                message = _("{part}: must be a finite number, 0 or more")
            else:
                message = _("{part}: must be a finite number")
            raise ValueError(format_lazy(message, part=repr(part)))
        grades[name] = number
    return grades


def action_grades_text(grades: dict[str, float]) -> str:
    """Every action's grade as `parse_action_grades` reads them, in one spelling."""
    return ", ".join(f"{name}={value:.15g}" for name, value in grades.items())
