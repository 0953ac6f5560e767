"""The launch report as JSON, CSV (one row per query and model) and Markdown (for a launch review)."""

import csv
import io
import json

from django.template.loader import render_to_string

from metrics.reports.data import report_context, report_data
from metrics.selectors.launch import LaunchReport


def report_json(report: LaunchReport) -> str:
    return json.dumps(report_data(report), ensure_ascii=False, allow_nan=False)


def report_csv(report: LaunchReport) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["model", "role", "query", *report.measures])
    columns = [
        (scores, [scores.per_query[name].tolist() for name in report.measures]) for scores in report.models
    ]
    for scores, values in columns:
        for row, query in enumerate(report.query_ids.tolist()):
            writer.writerow([scores.name, scores.role, query, *(repr(column[row]) for column in values)])
    return out.getvalue()


def report_markdown(report: LaunchReport) -> str:
    return render_to_string("metrics/report.md", report_context(report, report_data(report)))
