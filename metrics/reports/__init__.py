"""A launch report rendered as JSON, a self-contained HTML page, CSV (per query, and its summary) or
Markdown."""

from django.utils.translation import gettext_lazy as _

from metrics.reports.html import report_html
from metrics.reports.text import report_csv, report_json, report_markdown, report_summary_csv
from metrics.selectors.launch import LaunchReport

RENDERERS = {
    "json": report_json,
    "html": report_html,
    "csv": report_csv,
    "summary.csv": report_summary_csv,
    "md": report_markdown,
}
CONTENT_TYPES = {
    "json": "application/json",
    "html": "text/html",
    "csv": "text/csv",
    "summary.csv": "text/csv",
    "md": "text/markdown",
}
REPORT_FORMATS = tuple(RENDERERS)
# How the pages' download buttons name each format.
FORMAT_LABELS = {
    "json": "JSON",
    "html": "HTML",
    "csv": "CSV",
    "summary.csv": _("CSV summary"),
    "md": "Markdown",
}


def report_render(report: LaunchReport, format: str) -> str:
    """The report in `format` (one of REPORT_FORMATS); ValueError for another."""
    if format not in RENDERERS:
        raise ValueError(f"format must be one of {', '.join(REPORT_FORMATS)}, got {format!r}")
    return RENDERERS[format](report)


def report_file(report: LaunchReport, format: str) -> str:
    """The report as a downloaded or written file holds it: a CSV starts with a byte-order mark, by which
    spreadsheets (Excel above all) know it is UTF-8 and show Chinese names and queries as written."""
    text = report_render(report, format)
    return "\ufeff" + text if format.endswith("csv") else text


def report_filename(report: LaunchReport, format: str) -> str:
    model = f"-{report.model}" if report.model else ""
    return f"launch-report-campaign-{report.campaign.pk}{model}.{format}"
