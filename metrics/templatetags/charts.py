"""`{% chart_palette %}`: the chart colours as a JSON script for static/judgeboard/plotting.js."""

from django import template
from django.utils.html import json_script

from metrics.reports.palette import PALETTE

register = template.Library()


@register.simple_tag
def chart_palette() -> str:
    return json_script(PALETTE, "chart-palette")
