"""Numbers on pages: a figure that is undefined (None, NaN, ±inf: no labels yet, one annotator) shows as
"—", never "nan" or a made-up 0."""

import math

from django import template
from django.template.defaultfilters import floatformat

register = template.Library()

UNDEFINED = "—"


@register.filter
def figure(value, digits: int = 2) -> str:
    """`value` with `digits` decimals (as floatformat), or "—" when it is not a finite number."""
    if value is None or value == "" or isinstance(value, bool):
        return UNDEFINED
    try:
        number = float(value)
    except (TypeError, ValueError):
        return UNDEFINED
    return floatformat(number, digits) if math.isfinite(number) else UNDEFINED
