"""The launch report as one printable HTML file: styles and SVG charts inline, nothing loaded from outside."""

from django.template.loader import render_to_string
from django.utils.safestring import mark_safe

from metrics.reports.data import report_context, report_data
from metrics.reports.svg import (
    gsb_chart,
    histogram_chart,
    means_chart,
    offline_online_chart,
    propensity_chart,
)
from metrics.selectors.launch import LaunchReport


def report_charts(report: LaunchReport) -> dict:
    """SVG markup: the means of each nDCG measure per model, and per comparison its GSB and Δ histogram."""
    measures = [name for name in report.measures if name.startswith("nDCG")]
    models = [
        (scores.name, [scores.means[m] for m in measures], [scores.intervals[m] for m in measures])
        for scores in report.models
    ]
    comparisons = {
        name: {
            "gsb": mark_safe(
                gsb_chart(
                    comparison.gsb.good,
                    comparison.gsb.same,
                    comparison.gsb.bad,
                    comparison.gsb.score,
                    comparison.gsb.ci_low,
                    comparison.gsb.ci_high,
                )
            ),
            "histogram": mark_safe(histogram_chart(comparison.primary_deltas, report.primary_measure)),
        }
        for name, comparison in report.comparisons.items()
    }
    return {"means": mark_safe(means_chart(measures, models)), "comparisons": comparisons}


def behaviour_charts(behaviour: dict | None) -> dict:
    """SVG markup of what users did (`behaviour`: `behaviour_data`): the propensity curve, and per
    experimental model its offline–online scatter."""
    if behaviour is None:
        return {}
    return {
        "propensity": mark_safe(propensity_chart(behaviour["propensity"])),
        "offline_online": {
            name: mark_safe(
                offline_online_chart(
                    comparison["offline_online"]["points"],
                    comparison["offline_online"]["offline_measure"],
                    comparison["offline_online"]["online_metric"],
                )
            )
            for name, comparison in behaviour["comparisons"].items()
        },
    }


def report_html(report: LaunchReport) -> str:
    data = report_data(report)
    charts = report_charts(report)
    context = report_context(report, data)
    for comparison in context["comparisons"]:
        comparison["charts"] = charts["comparisons"][comparison["name"]]
    context |= {"means_chart": charts["means"], "behaviour_charts": behaviour_charts(data["behaviour"])}
    return render_to_string("metrics/report.html", context)
