import csv
import json
import math
import os

import numpy as np
from django.core.management.base import BaseCommand, CommandError

from annotation.management.cli import progress_bar, read_text
from metrics.compute.diversity import DEFAULT_INTENT_MEASURES
from metrics.compute.evaluation import IntentQrelsIndex, RunEvaluation, evaluate_intent_run, evaluate_run
from metrics.compute.ranking import DEFAULT_MEASURES, RankingSettings, check_weights_cover
from metrics.evaluation_files import read_files
from trec.files import TrecFormatError
from trec.intents import read_intent_qrels
from trec.measures import parse_measure


class Command(BaseCommand):
    help = "Score TREC runs against TREC qrels (trec_eval conventions; see docs/metrics.md)."
    # Files in, numbers out: no database, so no system checks (they import every URLconf and view).
    requires_system_checks = []

    def add_arguments(self, parser):
        parser.add_argument("qrels", help="TREC qrels: qid 0 docid label (may be gzipped)")
        parser.add_argument("runs", nargs="+", metavar="run", help="TREC run: qid Q0 docid rank score tag")
        parser.add_argument(
            "-m",
            "--measure",
            action="append",
            dest="measures",
            help="e.g. nDCG@10, AP, P@5 (with --intents: alpha_nDCG@20, ERR_IA@20, StRecall@20); repeatable",
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
        parser.add_argument("--rel-threshold", type=float, default=1.0, help="binary relevance: label >= N")
        parser.add_argument("--judged-only", action="store_true", help="drop unjudged documents first")
        parser.add_argument(
            "--complete", action="store_true", help="score qrels queries missing from a run 0"
        )
        parser.add_argument("--per-query", action="store_true")
        parser.add_argument("--format", choices=["table", "json", "csv"], default="table")
        parser.add_argument("--baseline", metavar="RUN", help="compare every other run with this one")

    def _evaluate(self, options, runs, measures, settings, progress):
        """Each run's evaluation, the files read as they are needed."""
        if options["intents"]:
            threshold = settings.rel_threshold
            files = read_files(
                options["qrels"],
                runs,
                progress,
                load_qrels=lambda path, told: IntentQrelsIndex(read_intent_qrels(path, told), threshold),
            )
        else:
            files = read_files(options["qrels"], runs, progress)
        qrels = next(files)
        if not len(qrels.query_ids):
            raise CommandError(f"{options['qrels']}: no judgments (the qrels are empty)")
        evaluations = {}
        for path in runs:
            run = next(files)
            if not run.query.size:
                raise CommandError(f"{path}: no ranked documents (the run is empty)")
            if options["intents"]:
                evaluations[path] = evaluate_intent_run(
                    qrels, run, measures, judged_only=options["judged_only"], complete=options["complete"]
                )
            else:
                evaluations[path] = evaluate_run(
                    qrels,
                    run,
                    measures,
                    settings=settings,
                    judged_only=options["judged_only"],
                    complete=options["complete"],
                )
            # Dropped before the next run is read: one run in memory at a time.
            del run
            if not len(evaluations[path].query_ids):
                raise CommandError(f"{path}: no query of this run has judgments in {options['qrels']}")
        return evaluations

    def handle(self, *args, **options):
        intents = options["intents"]
        defaults = DEFAULT_INTENT_MEASURES if intents else DEFAULT_MEASURES
        try:
            measures = [str(parse_measure(name, intents=intents)) for name in options["measures"] or defaults]
        except ValueError as exc:
            hint = "" if intents or "intent-aware" not in str(exc) else " (add --intents)"
            raise CommandError(f"{exc}{hint}") from None
        weights = options["discount_weights"]
        if weights is not None and (intents or options["discount"]):
            other = "--intents" if intents else "--discount"
            raise CommandError(f"--discount-weights and {other} cannot be used together")
        try:
            settings = RankingSettings.checked(
                gain=options["gain"],
                discount=options["discount"] or "log2",
                rel_threshold=options["rel_threshold"],
                position_weights=None if weights is None else read_position_weights(weights),
            )
            if settings.position_weights is not None:
                # Checked before any file is read: every DCG measure needs a weight per rank.
                check_weights_cover(
                    [parse_measure(name) for name in measures], len(settings.position_weights)
                )
        except ValueError as exc:
            raise CommandError(str(exc).replace("rel_threshold", "--rel-threshold")) from None
        runs = list(dict.fromkeys(options["runs"]))
        baseline = options["baseline"]
        if baseline and baseline not in runs:
            runs.insert(0, baseline)
        sizes = [os.path.getsize(path) for path in (options["qrels"], *runs) if os.path.isfile(path)]
        # The bytes read of every file; shown only for inputs that take more than a moment.
        with progress_bar(sum(sizes), "reading", unit="B", after_seconds=2) as bar:
            try:
                evaluations = self._evaluate(options, runs, measures, settings, progress=bar.update)
            except TrecFormatError as exc:
                raise CommandError(str(exc)) from None
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
                path: _run_report(evaluation, options["per_query"])
                for path, evaluation in evaluations.items()
            },
        }
        if baseline:
            report["baseline"] = baseline
            report["comparisons"] = {
                path: {measure: _comparison_report(c) for measure, c in by_measure.items()}
                for path, by_measure in comparisons.items()
            }
        writer = {"json": self._write_json, "csv": self._write_csv, "table": self._write_table}
        writer[options["format"]](report, measures)

    def _write_json(self, report, measures):
        self.stdout.write(json.dumps(report, indent=2))

    def _write_csv(self, report, measures):
        writer = csv.writer(self.stdout, lineterminator="\n")
        writer.writerows(_rows(report, measures, precision=None))

    def _write_table(self, report, measures):
        rows = _rows(report, measures, precision=4)
        widths = [max(len(row[column]) for row in rows) for column in range(len(rows[0]))]
        for index, row in enumerate(rows):
            cells = [
                cell.ljust(width) if i == 0 else cell.rjust(width)
                for i, (cell, width) in enumerate(zip(row, widths, strict=True))
            ]
            self.stdout.write("  ".join(cells).rstrip())
            if index == 0:
                self.stdout.write("  ".join("-" * width for width in widths))


def read_position_weights(path: str) -> tuple[float, ...]:
    """A weights file: one number a line, the weight of rank 1 first; blank lines and lines starting with
    `#` are skipped. Each weight must be a finite number ≥ 0."""
    weights = []
    for number, line in enumerate(read_text(path).splitlines(), start=1):
        text = line.strip()
        if not text or text.startswith("#"):
            continue
        try:
            weight = float(text)
        except ValueError:
            weight = math.nan
        if not (math.isfinite(weight) and weight >= 0):
            raise CommandError(f"{path}:{number}: the weight {text!r} is not a finite number ≥ 0")
        weights.append(weight)
    if not weights:
        raise CommandError(f"{path}: no weights (one number a line, rank 1 first)")
    return tuple(weights)


def _compare(baseline: RunEvaluation, candidate: RunEvaluation) -> dict:
    """Paired comparison over the queries both runs were scored on."""
    # SciPy takes about a second to import; only comparisons need it.
    from metrics.compute.significance import paired_comparisons

    common, in_baseline, in_candidate = np.intersect1d(
        baseline.query_ids, candidate.query_ids, return_indices=True
    )
    if common.size == 0:
        raise CommandError("the baseline and a compared run share no scored query")
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
