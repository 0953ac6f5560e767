"""Launch-report wording shared by the pages, the HTML report and the Markdown report."""

import math

from django import template
from django.utils.translation import gettext_lazy as _

from annotation.campaign_settings import CAMPAIGN_SETTINGS
from annotation.templatetags.numbers import UNDEFINED
from metrics.reports.language import say as say_text

register = template.Library()

OUTCOME_TITLES = {
    "launch": _("Launch"),
    "no_launch": _("Do not launch"),
    "inconclusive": _("Inconclusive"),
    "collecting": _("Collecting: not enough data yet"),
}


@register.filter
def outcome_title(outcome: str) -> str:
    """A decision outcome ("launch", "no_launch", "inconclusive") as the banner says it."""
    return str(OUTCOME_TITLES[str(outcome)])


SETTING_CHOICES = {setting.name: setting.choices for setting in CAMPAIGN_SETTINGS if setting.choices}


@register.filter
def setting_value(value: object, name: str) -> object:
    """A chosen setting's value as its label says it in the page's language (`mean` → "Mean")."""
    choices = SETTING_CHOICES.get(name)
    return str(choices(value).label) if choices is not None and value in choices.values else value


@register.filter
def say(text: object) -> str:
    """A sentence of the computation (a decision's reason, a flag) in the page's language."""
    return say_text(text)


@register.filter
def say_each(texts) -> list[str]:
    return [say_text(text) for text in texts]


# Markdown: numbers as text, with "—" for an undefined one (None or NaN), as the pages show it.


def _undefined(value: float | None) -> bool:
    return value is None or not math.isfinite(value)


@register.filter
def fixed(value: float | None, digits: int = 4) -> str:
    return UNDEFINED if _undefined(value) else f"{value:.{digits}f}"


@register.filter
def signed(value: float | None) -> str:
    return UNDEFINED if _undefined(value) else f"{value:+.4f}"


@register.filter
def p_value(value: float | None) -> str:
    if value is None or _undefined(value):
        return UNDEFINED
    return "< 0.001" if value < 0.001 else f"{value:.3f}"


@register.filter
def general(value: float) -> str:
    """Python's shortest general form (0.05, not 0.050000)."""
    return f"{value:g}"


@register.filter
def percent(value: float) -> str:
    return f"{value:.0%}"


@register.filter
def md_cell(text: object) -> str:
    """Text that cannot end a Markdown table cell or line."""
    return str(text).replace("|", "\\|").replace("\n", " ")


@register.filter
def get_item(container, key):
    """`container[key]`: a dict's value by a variable key, or a list's item by index; None when absent."""
    try:
        return container[key]
    except (KeyError, IndexError, TypeError):
        return None
