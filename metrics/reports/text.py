"""The launch report as JSON, CSV (one row per query and model; its summary as `field,value` rows) and
Markdown (for a launch review)."""

import csv
import io
import json
import math

from django.template.loader import render_to_string

from metrics.reports.data import report_context, report_data
from metrics.selectors.launch import LaunchReport


def report_json(report: LaunchReport) -> str:
    return json.dumps(report_data(report), ensure_ascii=False, allow_nan=False)


# The settings the CSV summary's `field,value` rows repeat (the rule and the aggregation), in its order:
# each is one the JSON report's `settings` hold (`CAMPAIGN_SETTINGS`' `report`).
CSV_SETTINGS = (
    "aggregation",
    "launch_min_gsb",
    "launch_alpha",
    "primary_measure",
    "min_queries",
    "min_coverage",
)


# A text cell starting with one of these is a formula to a spreadsheet (`=HYPERLINK(...)` as a model name).
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def _csv_text(value: str) -> str:
    """Text a spreadsheet shows as text: a leading formula character is escaped with `'` (OWASP's advice)."""
    return f"'{value}" if value.startswith(FORMULA_STARTS) else value


def _csv_cell(value) -> str:
    """A value as a spreadsheet reads it: empty when undefined (None, NaN), true/false, full precision;
    numbers as numbers (a negative one keeps its sign), text with formulas escaped."""
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value) if isinstance(value, float) else str(value)
    return _csv_text(str(value))


def _csv_metadata(data: dict) -> list[tuple[str, object]]:
    campaign, settings = data["campaign"], data["settings"]
    rows = [("campaign.id", campaign["id"]), ("campaign.name", campaign["name"])]
    rows += [("campaign.model", campaign["model"]), ("decision", data["decision"])]
    rows += [("generated_at", data["generated_at"])]
    rows += [(f"fingerprint.{key}", value) for key, value in data["fingerprint"].items()]
    rows += [(f"coverage.{key}", value) for key, value in data["coverage"].items()]
    rows += [(f"settings.{key}", settings[key]) for key in CSV_SETTINGS]
    rows += [(f"aggregation.{key}", value) for key, value in data["aggregation"].items()]
    rows += [("exclusions.left_out", " ".join(data["exclusions"]["left_out"]))]
    rows += [(f"reuse.{key}", value) for key, value in data["reuse"].items()]
    rows += [(f"reviews.{key}", value) for key, value in data["reviews"].items()]
    return rows + _csv_behaviour(data["behaviour"])


def _csv_behaviour(behaviour: dict | None) -> list[tuple[str, object]]:
    """What users did, as the JSON report's paths: the logs, the propensity the IPS metrics use, and per
    experimental model each online difference, each guardrail and the judges' agreement with users."""
    if behaviour is None:
        return [("behaviour", None)]
    rows: list[tuple[str, object]] = [
        (f"behaviour.{key}", behaviour[key])
        for key in ("logs", "impressions", "lists", "clicks", "cluster_by")
    ]
    rows += [("behaviour.propensity.used", behaviour["propensity"]["used"])]
    for name, comparison in behaviour["comparisons"].items():
        prefix = f"behaviour.comparisons.{_csv_text(name)}"
        for metric, delta in comparison["differences"].items():
            rows += [(f"{prefix}.differences.{metric}.mean", delta and delta["mean"])]
            rows += [(f"{prefix}.differences.{metric}.ci95_low", delta and delta["ci95"][0])]
            rows += [(f"{prefix}.differences.{metric}.ci95_high", delta and delta["ci95"][1])]
        for index, outcome in enumerate(comparison["guardrails"]):
            rows += [
                (f"{prefix}.guardrails.{index}.{key}", outcome[key]) for key in ("rule", "status", "observed")
            ]
        spearman = comparison["offline_online"]["spearman"]
        rows += [(f"{prefix}.offline_online.spearman", spearman and spearman["value"])]
    return rows


def report_summary_csv(report: LaunchReport) -> str:
    """What the report is of, as `field,value` rows: the campaign, when, which labels, coverage, the rule and
    the aggregation (the paths of the same values in the JSON report)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["field", "value"])
    writer.writerows((field, _csv_cell(value)) for field, value in _csv_metadata(report_data(report)))
    return out.getvalue()


def report_csv(report: LaunchReport) -> str:
    """One table: a row per model and evaluated query, a column per measure (what the report is of is
    `report_summary_csv`, a file of its own)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["model", "role", "query", *report.measures])
    columns = [
        (scores, [scores.per_query[name].tolist() for name in report.measures]) for scores in report.models
    ]
    for scores, values in columns:
        for row, query in enumerate(report.query_ids.tolist()):
            cells = (_csv_cell(column[row]) for column in values)
            writer.writerow([_csv_text(scores.name), scores.role, _csv_text(query), *cells])
    return out.getvalue()


def report_markdown(report: LaunchReport) -> str:
    return render_to_string("metrics/report.md", report_context(report, report_data(report)))
