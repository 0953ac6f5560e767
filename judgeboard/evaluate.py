"""`judgeboard evaluate QRELS RUN...`: TREC runs scored against TREC qrels, with trec_eval's conventions
and its options where they exist (`-q`, `-c`, `-J`, `-l`, `-m ndcg_cut.10`). Files in, numbers out: no
Django, no database, no settings. `manage.py evaluate` is this same code."""

import argparse
import csv
import json
import os
from typing import TextIO

import numpy as np

from judgeboard.errors import CommandFailed, Exit
from metrics.compute.diversity import DEFAULT_INTENT_MEASURES
from metrics.compute.evaluation import IntentQrelsIndex, RunEvaluation, evaluate_intent_run
from metrics.compute.ranking import DEFAULT_MEASURES, RankingSettings, check_weights_cover
from metrics.evaluation_files import ScoredRun, read_files, scored_runs
from plumbing.progress import progress_bar
from trec.files import Run
from trec.intents import read_intent_qrels
from trec.measures import parse_measure, trec_eval_names
from trec.tokenizer import Comments, TrecFormatError, read_columns

DESCRIPTION = "Score TREC runs against TREC qrels (trec_eval conventions; see docs/metrics.md)."


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("qrels", help="TREC qrels: qid 0 docid label (may be gzipped)")
    parser.add_argument("runs", nargs="+", metavar="run", help="TREC run: qid Q0 docid rank score tag")
    parser.add_argument(
        "-m",
        "--measure",
        action="append",
        dest="measures",
        help="e.g. nDCG@10, AP, P@5, or trec_eval's ndcg_cut.5,10, P.10, map, recip_rank (trec_eval's nDCG"
        " gain is --gain linear); with --intents: alpha_nDCG@20, ERR_IA@20, StRecall@20; repeatable",
    )
    parser.add_argument(
        "--intents",
        action="store_true",
        help="the qrels are ndeval's (qid intent docid judgment): score intent-aware measures",
    )
    parser.add_argument("--gain", choices=["linear", "exponential"], default="exponential")
    parser.add_argument("--discount", choices=["log2", "jarvelin"], help="default log2")
    parser.add_argument(
        "--discount-weights",
        metavar="FILE",
        help="one weight per rank and line, rank 1 first, replacing the discount of DCG and nDCG",
    )
    parser.add_argument(
        "-l", "--rel-threshold", type=float, default=1.0, help="binary relevance: label >= N (trec_eval -l)"
    )
    parser.add_argument(
        "-J", "--judged-only", action="store_true", help="drop unjudged documents first (trec_eval -J)"
    )
    parser.add_argument(
        "-c",
        "--complete",
        action="store_true",
        help="score qrels queries missing from a run 0 (trec_eval -c)",
    )
    parser.add_argument(
        "-q", "--per-query", action="store_true", help="each query's values too (trec_eval -q)"
    )
    parser.add_argument("--format", choices=["table", "json", "csv"], default="table")
    parser.add_argument("--baseline", metavar="RUN", help="compare every other run with this one")


def evaluate(options: dict, out: TextIO) -> None:
    """Reads the files `options` (the parsed arguments, as a dict) name and writes the report to `out`.
    Raises `CommandFailed` with `file:line: problem` for bad input."""
    intents = options["intents"]
    defaults = DEFAULT_INTENT_MEASURES if intents else DEFAULT_MEASURES
    names = [name for given in options["measures"] or defaults for name in trec_eval_names(given)]
    try:
        measures = list(dict.fromkeys(str(parse_measure(name, intents=intents)) for name in names))
    except ValueError as exc:
        hint = "" if intents or "intent-aware" not in str(exc) else " (add --intents)"
        raise CommandFailed(f"{exc}{hint}", Exit.USAGE) from None
    weights = options["discount_weights"]
    if weights is not None and (intents or options["discount"]):
        other = "--intents" if intents else "--discount"
        raise CommandFailed(f"--discount-weights and {other} cannot be used together", Exit.USAGE)
    try:
        settings = RankingSettings.checked(
            gain=options["gain"],
            discount=options["discount"] or "log2",
            rel_threshold=options["rel_threshold"],
            position_weights=None if weights is None else read_position_weights(weights),
        )
        if settings.position_weights is not None:
            # Checked before any file is read: every DCG measure needs a weight per rank.
            check_weights_cover([parse_measure(name) for name in measures], len(settings.position_weights))
    except ValueError as exc:
        raise CommandFailed(str(exc).replace("rel_threshold", "--rel-threshold"), Exit.USAGE) from None
    runs = list(dict.fromkeys(options["runs"]))
    baseline = options["baseline"]
    if baseline and baseline not in runs:
        runs.insert(0, baseline)
    sizes = [os.path.getsize(path) for path in (options["qrels"], *runs) if os.path.isfile(path)]
    # The bytes read of every file; shown only for inputs that take more than a moment.
    with progress_bar(sum(sizes), "reading", unit="B", after_seconds=2) as bar:
        try:
            evaluations = _evaluate(options, runs, measures, settings, progress=bar.update)
        except TrecFormatError as exc:
            raise CommandFailed(str(exc)) from None
    comparisons = (
        {path: _compare(evaluations[baseline], evaluations[path]) for path in runs if path != baseline}
        if baseline
        else {}
    )
    report_settings = {
        "gain": settings.gain.value,
        "discount": settings.discount.value,
        "rel_threshold": _number(settings.rel_threshold),
        "judged_only": options["judged_only"],
        "complete": options["complete"],
    }
    # Only when used, so that the other reports stay as they were.
    if intents:
        report_settings["intents"] = True
    if settings.position_weights is not None:
        report_settings["discount"] = "weights"
        report_settings["discount_weights"] = list(settings.position_weights)
    report = {
        "settings": report_settings,
        "runs": {
            path: _run_report(evaluation, options["per_query"]) for path, evaluation in evaluations.items()
        },
    }
    if baseline:
        report["baseline"] = baseline
        report["comparisons"] = {
            path: {measure: _comparison_report(c) for measure, c in by_measure.items()}
            for path, by_measure in comparisons.items()
        }
    if options["format"] == "json":
        out.write(json.dumps(report, indent=2) + "\n")
    elif options["format"] == "csv":
        csv.writer(out, lineterminator="\n").writerows(_rows(report, measures, precision=None))
    else:
        _write_table(out, _rows(report, measures, precision=4))


def _evaluate(options, runs, measures, settings, progress) -> dict[str, RunEvaluation]:
    """Each run's evaluation, the files read as they are needed."""
    if options["intents"]:
        return _evaluate_intents(options, runs, measures, settings, progress)
    files = scored_runs(
        options["qrels"],
        runs,
        measures,
        settings=settings,
        judged_only=options["judged_only"],
        complete=options["complete"],
        progress=progress,
    )
    _check_qrels(next(files), options)
    evaluations = {}
    for path in runs:
        scored = next(files)
        assert isinstance(scored, ScoredRun)
        _check_entries(scored.entries, path)
        evaluations[path] = _checked(scored.evaluation, path, options)
    return evaluations


def _evaluate_intents(options, runs, measures, settings, progress) -> dict[str, RunEvaluation]:
    threshold = settings.rel_threshold
    files = read_files(
        options["qrels"],
        runs,
        progress,
        load_qrels=lambda path, told: IntentQrelsIndex(read_intent_qrels(path, told), threshold),
    )
    qrels = next(files)
    assert isinstance(qrels, IntentQrelsIndex)
    _check_qrels(qrels, options)
    evaluations = {}
    for path in runs:
        run = next(files)
        assert isinstance(run, Run)
        entries = run.query.size
        _check_entries(entries, path)
        evaluation = evaluate_intent_run(
            qrels, run, measures, judged_only=options["judged_only"], complete=options["complete"]
        )
        # Dropped before the next run is read: one run in memory at a time.
        del run
        evaluations[path] = _checked(evaluation, path, options)
    return evaluations


def _check_qrels(qrels, options) -> None:
    if not len(qrels.query_ids):
        raise CommandFailed(f"{options['qrels']}: no judgments (the qrels are empty)")


def _check_entries(entries: int, path: str) -> None:
    if not entries:
        raise CommandFailed(f"{path}: no ranked documents (the run is empty)")


def _checked(evaluation: RunEvaluation, path: str, options) -> RunEvaluation:
    if not len(evaluation.query_ids):
        raise CommandFailed(f"{path}: no query of this run has judgments in {options['qrels']}")
    return evaluation


def read_position_weights(path: str) -> tuple[float, ...]:
    """A weights file: one number a line, the weight of rank 1 first (gzip allowed); blank lines and lines
    starting with `#` are skipped. Each weight must be a finite number ≥ 0."""
    try:
        weights, lines = read_columns(
            path, n_fields=1, keep=(0,), names=("the weight",), comments=Comments.FIRST_TEXT
        )
    except TrecFormatError as exc:
        raise CommandFailed(str(exc)) from None
    negative = np.flatnonzero(weights < 0)
    if negative.size:
        line = int(lines[negative[0]])
        raise CommandFailed(f"{path}:{line}: the weight {float(weights[negative[0]])!r} is not ≥ 0")
    if not weights.size:
        raise CommandFailed(f"{path}: no weights (one number a line, rank 1 first)")
    return tuple(weights.tolist())


def _compare(baseline: RunEvaluation, candidate: RunEvaluation) -> dict:
    """Paired comparison over the queries both runs were scored on."""
    # SciPy takes about a second to import; only comparisons need it.
    from metrics.compute.significance import paired_comparisons

    common, in_baseline, in_candidate = np.intersect1d(
        baseline.query_ids, candidate.query_ids, return_indices=True
    )
    if common.size == 0:
        raise CommandFailed("the baseline and a compared run share no scored query")
    measures = list(baseline.per_query)
    compared = paired_comparisons(
        np.column_stack([baseline.per_query[m][in_baseline] for m in measures]),
        np.column_stack([candidate.per_query[m][in_candidate] for m in measures]),
    )
    return dict(zip(measures, compared, strict=True))


def _run_report(evaluation: RunEvaluation, per_query: bool) -> dict:
    report: dict[str, dict] = {"aggregate": evaluation.aggregate()}
    if per_query:
        report["per_query"] = {
            query: {measure: float(values[index]) for measure, values in evaluation.per_query.items()}
            for index, query in enumerate(evaluation.query_ids)
        }
    return report


def _comparison_report(comparison) -> dict:
    return {
        "mean_delta": comparison.mean_delta,
        "ci95": [comparison.ci_low, comparison.ci_high],
        "p_value": comparison.p_value,
        "wins": comparison.wins,
        "ties": comparison.ties,
        "losses": comparison.losses,
        "queries": comparison.n,
    }


def _number(value: float) -> int | float:
    return int(value) if float(value).is_integer() else value


def _write_table(out: TextIO, rows: list[list[str]]) -> None:
    widths = [max(len(row[column]) for row in rows) for column in range(len(rows[0]))]
    for index, row in enumerate(rows):
        cells = [
            cell.ljust(width) if i == 0 else cell.rjust(width)
            for i, (cell, width) in enumerate(zip(row, widths, strict=True))
        ]
        out.write("  ".join(cells).rstrip() + "\n")
        if index == 0:
            out.write("  ".join("-" * width for width in widths) + "\n")


def _rows(report: dict, measures: list[str], precision: int | None) -> list[list[str]]:
    """Runs × measures (and query rows under --per-query); comparisons add Δ, CI, p and W/T/L columns."""

    def show(value: float) -> str:
        return repr(value) if precision is None else f"{value:.{precision}f}"

    comparisons = report.get("comparisons", {})
    header = ["run", "query", *measures] if _has_per_query(report) else ["run", *measures]
    if comparisons:
        for measure in measures:
            header += [f"Δ {measure}", "95% CI", "p", "W/T/L"]
    rows = [header]
    for path, run in report["runs"].items():
        aggregate = [show(run["aggregate"][measure]) for measure in measures]
        row = [path, "all", *aggregate] if _has_per_query(report) else [path, *aggregate]
        for measure in measures if comparisons else []:
            compared = comparisons.get(path, {}).get(measure)
            if compared is None:
                row += ["baseline" if path == report["baseline"] else "", "", "", ""]
            else:
                low, high = compared["ci95"]
                row += [
                    f"{compared['mean_delta']:+.4f}" if precision else repr(compared["mean_delta"]),
                    f"[{show(low)}, {show(high)}]",
                    show(compared["p_value"]),
                    f"{compared['wins']}/{compared['ties']}/{compared['losses']}",
                ]
        rows.append(row)
        for query, values in run.get("per_query", {}).items():
            rows.append(
                [path, query, *(show(values[measure]) for measure in measures)]
                + [""] * (len(header) - 2 - len(measures))
            )
    return rows


def _has_per_query(report: dict) -> bool:
    return any("per_query" in run for run in report["runs"].values())
