"""The launch report as JSON, CSV (one row per query and model) and Markdown (for a launch review)."""

import csv
import io
import json

from metrics.reports.data import decision_data, report_data
from metrics.selectors_launch import LaunchReport

OUTCOME_TITLES = {"launch": "Launch", "no_launch": "Do not launch", "inconclusive": "Inconclusive"}


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


def _number(value: float | None, digits: int = 4) -> str:
    return "n/a" if value is None else f"{value:.{digits}f}"


def _signed(value: float | None) -> str:
    return "n/a" if value is None else f"{value:+.4f}"


def _p(value: float | None) -> str:
    return "n/a" if value is None else ("< 0.001" if value < 0.001 else f"{value:.3f}")


def _cell(text: object) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def report_markdown(report: LaunchReport) -> str:
    data = report_data(report)
    settings = data["settings"]
    coverage = data["campaign"]["coverage"]
    title = OUTCOME_TITLES[data["decision"]]
    lines = [f"# Launch review: {_cell(report.campaign.name)}", ""]
    if report.model:
        lines += [f"**Decision for `{report.model}`: {title}**", ""]
    else:
        lines += [f"**Decision: {title}**", ""]
    lines += [f"- {reason}" for reason in data["reasons"]]
    lines += [
        "",
        "## Settings",
        "",
        f"- Scale: {', '.join(f'{g["value"]} {g["label"]}' for g in settings['scale'])}",
        f"- Overlap: {settings['overlap']} per relevance task, "
        f"{settings['gsb_overlap']} per side-by-side task",
        f"- Aggregation: {settings['aggregation']}; gain: {settings['gain']}; cut-offs: "
        + ", ".join(str(k) for k in settings["cutoffs"]),
        f"- Launch rule: GSB ≥ {settings['launch_min_gsb']:g} with its interval above 0, "
        f"α = {settings['launch_alpha']:g}, primary measure {settings['primary_measure']}",
        f"- Coverage: {coverage['evaluated_queries']} of {coverage['queries']} queries evaluated, "
        f"{coverage['labelled_tasks']} of {coverage['relevance_tasks']} pooled documents labelled "
        f"({coverage['judgments']} grades), {coverage['verdicts']} side-by-side verdicts",
        "",
        "## Measures (query-weighted means, 95% intervals)",
        "",
        "| Measure | " + " | ".join(_cell(name) for name in data["models"]) + " |",
        "| --- | " + " | ".join("---:" for _ in data["models"]) + " |",
    ]
    for measure in report.measures:
        cells = []
        for model in data["models"].values():
            figure = model["metrics"][measure]
            low, high = figure["ci95"]
            cells.append(f"{_number(figure['mean'])} [{_number(low, 3)}, {_number(high, 3)}]")
        lines.append(f"| {measure} | " + " | ".join(cells) + " |")
    for name, comparison in data["comparisons"].items():
        gsb = comparison["gsb"]
        low, high = gsb["ci95"]
        outcome = OUTCOME_TITLES[comparison["decision"]]
        lines += ["", f"## `{_cell(name)}` against the online model: {outcome}", ""]
        lines += [f"- {reason}" for reason in decision_data(report.comparisons[name].decision)["reasons"]]
        lines += [
            "",
            f"GSB {_signed(gsb['score'])} [{_number(low, 3)}, {_number(high, 3)}], p {_p(gsb['p_value'])}: "
            f"{gsb['good']} good, {gsb['same']} same, {gsb['bad']} bad over {gsb['queries']} queries; "
            f"changed queries only {_signed(gsb['changed_score'])} ({gsb['changed_queries']} queries), "
            f"{gsb['identical_queries']} identical-list queries counted as Same."
            + (
                f" Weighted (5-point) {_signed(gsb['weighted_score'])}."
                if gsb["weighted_score"] is not None
                else ""
            ),
            "",
            "| Measure | Δ mean | 95% CI | p | W / T / L |",
            "| --- | ---: | ---: | ---: | ---: |",
        ]
        for measure, delta in comparison["deltas"].items():
            low, high = delta["ci95"]
            lines.append(
                f"| {measure} | {_signed(delta['mean'])} | [{_number(low)}, {_number(high)}] | "
                f"{_p(delta['p_value'])} | {delta['wins']} / {delta['ties']} / {delta['losses']} |"
            )
        if comparison["losing_queries"]:
            lines += ["", f"Queries that lost most ({report.primary_measure}):", ""]
            lines += [
                f"- `{_cell(query['query'])}` {_cell(query['text'])}: {_number(query['online'])} → "
                f"{_number(query['experimental'])} ({_signed(query['delta'])})"
                for query in comparison["losing_queries"]
            ]
    if data["agreement"]:
        lines += ["", "## Agreement", ""]
        for subject, figures in data["agreement"].items():
            for name, figure in figures.items():
                low, high = figure["ci95"]
                lines.append(
                    f"- {subject.replace('_', ' ')}: {name} {_number(figure['value'], 3)} "
                    f"[{_number(low, 3)}, {_number(high, 3)}] over {figure['tasks']} tasks"
                )
    return "\n".join(lines) + "\n"
