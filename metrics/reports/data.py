"""The launch report as plain JSON-ready data (NaN becomes None): the JSON format, and what the other formats
and the pages read."""

import math

from metrics.compute.correlation import Correlation
from metrics.compute.decision import Decision
from metrics.compute.gsb import GSBSummary
from metrics.compute.interactions.behaviour import GradeAgreement
from metrics.compute.interactions.propensity import PropensityCurve
from metrics.compute.significance import PairedComparison
from metrics.selectors.aggregation import AggregationFit
from metrics.selectors.behaviour import CampaignBehaviour, QueryPoint
from metrics.selectors.diversity import lower_is_better
from metrics.selectors.launch import Comparison, Coverage, LaunchReport
from metrics.selectors.quality import AgreementFigure, CampaignAgreement


def number(value) -> float | None:
    """A float for JSON: an undefined one (NaN, ±inf) is None, so the JSON holds null, never NaN."""
    value = float(value)
    return value if math.isfinite(value) else None


def interval(low, high) -> list[float | None]:
    return [number(low), number(high)]


def delta_data(comparison: PairedComparison, *, lower_is_better: bool = False) -> dict:
    return {
        "lower_is_better": lower_is_better,
        "mean": number(comparison.mean_delta),
        "ci95": interval(comparison.ci_low, comparison.ci_high),
        "p_value": number(comparison.p_value),
        "online": number(comparison.mean_baseline),
        "experimental": number(comparison.mean_candidate),
        "wins": comparison.wins,
        "ties": comparison.ties,
        "losses": comparison.losses,
        "queries": comparison.n,
    }


def gsb_data(gsb: GSBSummary) -> dict:
    return {
        "good": gsb.good,
        "same": gsb.same,
        "bad": gsb.bad,
        "score": number(gsb.score),
        "ci95": interval(gsb.ci_low, gsb.ci_high),
        "p_value": number(gsb.p_value),
        "judgments": gsb.n_judgments,
        "queries": gsb.n_queries,
        "changed_queries": gsb.changed_queries,
        "changed_share": number(gsb.changed_share),
        "changed_score": number(gsb.changed_score),
        "identical_queries": gsb.identical_queries,
        "majority_score": number(gsb.majority_score),
        "weighted_score": None if gsb.weighted_score is None else number(gsb.weighted_score),
    }


def decision_data(decision: Decision | None) -> dict:
    if decision is None:
        return {"decision": "inconclusive", "reasons": ["There is no experimental model to compare."]}
    data: dict[str, object] = {
        "decision": decision.outcome.value,
        "headline": decision.headline,
        "reasons": list(decision.reasons),
    }
    if decision.more_queries is not None:
        data["more_queries"] = decision.more_queries
    if decision.provisional is not None:
        data["provisional"] = decision_data(decision.provisional)
    return data


def coverage_data(coverage: Coverage) -> dict:
    """What was labelled, and the work the decision waits for (tasks complete at their overlap)."""
    work = coverage.work
    return {
        **{key: value for key, value in vars(coverage).items() if key != "work"},
        "complete_queries": work.complete_queries,
        "side_by_side_complete": work.side_by_side_complete,
        "side_by_side_share": work.side_by_side_share,
        "relevance_complete": work.relevance_complete,
        "relevance_share": work.relevance_share,
        "labels_outstanding": work.labels_outstanding,
    }


def comparison_data(comparison: Comparison) -> dict:
    return {
        **decision_data(comparison.decision),
        "deltas": {
            name: delta_data(delta, lower_is_better=lower_is_better(name))
            for name, delta in comparison.deltas.items()
        },
        "gsb": {
            **gsb_data(comparison.gsb),
            "segments": {name: gsb_data(gsb) for name, gsb in comparison.gsb_segments.items()},
        },
        "losing_queries": [
            {
                "query": query.external_id,
                "text": query.text,
                "online": number(query.online),
                "experimental": number(query.experimental),
                "delta": number(query.delta),
            }
            for query in comparison.losing_queries
        ],
    }


def _figure(figure: AgreementFigure) -> dict:
    return {
        "value": figure.value,
        "ci95": [figure.ci_low, figure.ci_high],
        "tasks": figure.n_tasks,
        "undefined": figure.undefined,
    }


def agreement_data(agreement: CampaignAgreement | None) -> dict:
    if agreement is None:
        return {}
    return {
        "relevance": {figure.name: _figure(figure) for figure in agreement.grade_agreement},
        "side_by_side": {figure.name: _figure(figure) for figure in agreement.verdict_agreement},
    }


def aggregation_data(fit: AggregationFit) -> dict:
    """The method; `converged` and `fell_back` are Dawid–Skene's (null for the other methods)."""
    return {"method": fit.method, "converged": fit.converged, "fell_back": fit.fell_back}


def decision_summary(report: LaunchReport) -> dict:
    """The report's decision and what it rests on: the campaign and model, when, which labels, coverage."""
    return {
        "campaign": {
            "id": report.campaign.pk,
            "name": report.campaign.name,
            "model": report.model,
            "coverage": coverage_data(report.coverage),
        },
        "generated_at": report.generated_at.isoformat(),
        "fingerprint": {"labels": report.fingerprint.labels, "sha256": report.fingerprint.sha256},
        "coverage": coverage_data(report.coverage),
        **decision_data(report.decision),
    }


def report_data(report: LaunchReport) -> dict:
    query_ids = report.query_ids.tolist()
    return {
        **decision_summary(report),
        "models": {
            scores.name: {
                "role": scores.role,
                "metrics": {
                    name: {
                        "mean": number(scores.means[name]),
                        "ci95": interval(*scores.intervals[name]),
                        "per_query": dict(zip(query_ids, map(number, values.tolist()), strict=True)),
                    }
                    for name, values in scores.per_query.items()
                },
            }
            for scores in report.models
        },
        "comparisons": {name: comparison_data(comparison) for name, comparison in report.comparisons.items()},
        "agreement": agreement_data(report.agreement),
        "aggregation": aggregation_data(report.aggregation),
        "exclusions": exclusions_data(report),
        "reuse": report.reuse.as_dict(),
        "reviews": report.reviews.as_dict(),
        "settings": report.settings,
        "behaviour": behaviour_data(report.behaviour),
    }


def exclusions_data(report: LaunchReport) -> dict:
    """Whose labels the report leaves out, and every exclusion's record (who, why, when; reinstated)."""
    return {
        "left_out": report.excluded,
        "record": [
            {
                "annotator": row.annotator,
                "reason": row.reason,
                "excluded_by": row.excluded_by,
                "excluded_at": row.excluded_at.isoformat(),
                "confirmed": row.confirmed,
                "reinstated_by": row.reinstated_by,
                "reinstated_at": row.reinstated_at.isoformat() if row.reinstated_at else None,
            }
            for row in report.exclusions
        ],
    }


def report_context(report: LaunchReport, data: dict) -> dict:
    """What the HTML and Markdown report templates read: `data` (from `report_data`), each measure's figure
    per model as a list, and the comparisons as a list."""
    measures = [
        {
            "name": name,
            "models": [
                {"name": model, **figure["metrics"][name], "per_query": None}
                for model, figure in data["models"].items()
            ],
        }
        for name in report.measures
    ]
    comparisons = [{"name": name, "data": comparison} for name, comparison in data["comparisons"].items()]
    return {"report": report, "data": data, "measures": measures, "comparisons": comparisons}


def chart_data(report: LaunchReport) -> dict:
    """What charts.js draws for the report's comparison: nDCG means per model, GSB, Δ histogram."""
    measures = [name for name in report.measures if name.startswith("nDCG")]
    comparison = report.comparison
    return {
        "measures": measures,
        "models": [
            {
                "name": scores.name,
                "means": [number(scores.means[m]) for m in measures],
                "low": [number(scores.intervals[m][0]) for m in measures],
                "high": [number(scores.intervals[m][1]) for m in measures],
            }
            for scores in report.models
        ],
        "gsb": comparison and gsb_data(comparison.gsb),
        "primary_measure": report.primary_measure,
        "deltas": [number(delta) for delta in comparison.primary_deltas.tolist()] if comparison else [],
    }


# --- What users did ---------------------------------------------------------------------------------


def _curve(curve: PropensityCurve) -> dict:
    data = {
        "propensity": [number(value) for value in curve.propensity],
        "ci95_low": [number(value) for value in curve.ci_low],
        "ci95_high": [number(value) for value in curve.ci_high],
        "evidence": curve.evidence.tolist(),
    }
    if curve.converged is not None:
        data["converged"] = curve.converged
    return data


def _correlation(correlation: Correlation) -> dict:
    return {"value": number(correlation.value), "ci95": interval(correlation.ci_low, correlation.ci_high)}


def _point(point: QueryPoint) -> dict:
    return {
        "query_pk": point.pk,
        "query": point.external_id,
        "text": point.text,
        "offline_delta": number(point.offline_delta),
        "online_delta": number(point.online_delta),
    }


def _grade_agreement(agreement: GradeAgreement) -> dict:
    kappa = agreement.kappa
    return {
        "pairs": agreement.n_pairs,
        "weighted_kappa": {"value": number(kappa.value), "ci95": interval(kappa.ci_low, kappa.ci_high)},
        "spearman": _correlation(agreement.spearman),
    }


def decision_uses(behaviour: CampaignBehaviour) -> str:
    """Which online figures the decision reads, in a sentence."""
    rules = behaviour.guardrails_setting or "none"
    if behaviour.propensity_method:
        weights = (
            f"IPS metrics weight each click by 1/θ of its position from {behaviour.propensity_method}, "
            f"clipped at {behaviour.max_weight:g}; SNIPS divides by the weights' expected sum."
        )
    else:
        weights = "No propensity reaches every position: there are no IPS metrics, only naive ones."
    return f"The decision reads the campaign's guardrails ({rules}). {weights}"


def behaviour_data(behaviour: CampaignBehaviour | None) -> dict | None:
    if behaviour is None:
        return None
    measures = behaviour.measures
    return {
        "logs": behaviour.n_logs,
        "impressions": behaviour.n_impressions,
        "lists": behaviour.n_lists,
        "clicks": behaviour.n_clicks,
        "cluster_by": behaviour.cluster_by.value,
        "k": behaviour.k,
        "decision_uses": decision_uses(behaviour),
        "online_metrics": list(behaviour.models[0].metrics.estimates) if behaviour.models else [],
        "propensity": {
            "used": behaviour.propensity_method or None,
            "max_weight": behaviour.max_weight,
            "positions": behaviour.harvesting.position.tolist(),
            "intervention_harvesting": _curve(behaviour.harvesting),
            "position_based_em": _curve(behaviour.em),
        },
        "models": {
            model.name: {
                "role": model.role,
                "lists": model.metrics.n_lists,
                "impressions": model.metrics.n_impressions,
                "clicks": model.metrics.n_clicks,
                "metrics": {
                    name: {
                        "value": number(estimate.value),
                        "ci95": interval(estimate.ci_low, estimate.ci_high),
                    }
                    for name, estimate in model.metrics.estimates.items()
                },
            }
            for model in behaviour.models
        },
        "comparisons": {
            name: {
                "differences": {
                    metric: delta_data(difference.comparison) if difference.comparison else None
                    for metric, difference in comparison.differences.items()
                },
                "offline_online": {
                    "offline_measure": comparison.offline_measure,
                    "online_metric": comparison.online_metric,
                    "queries": len(comparison.points),
                    "spearman": _correlation(comparison.agreement.correlation)
                    if comparison.agreement
                    else None,
                    "agree": comparison.agreement.agree if comparison.agreement else 0,
                    "judges_only": [_point(point) for point in comparison.judges_only],
                    "users_only": [_point(point) for point in comparison.users_only],
                    "points": [_point(point) for point in comparison.points],
                },
                "guardrails": [
                    {
                        "rule": outcome.guardrail.rule,
                        "status": outcome.status.value,
                        "observed": number(outcome.observed),
                        "reason": outcome.reason,
                    }
                    for outcome in comparison.guardrails
                ],
            }
            for name, comparison in behaviour.comparisons.items()
        },
        "labels": {
            "grades": behaviour.grades_setting,
            "pairs": int(behaviour.qrels.grade.size),
            "queries": measures.behaviour_queries,
            "measures": {
                measure: {
                    model: {
                        "human": number(measures.human[model][measure]),
                        "behaviour": number(measures.behaviour[model][measure]),
                    }
                    for model in measures.human
                }
                for measure in measures.measures
            },
            "agreement": None
            if behaviour.agreement is None
            else {
                "overall": _grade_agreement(behaviour.agreement.overall),
                "by_segment": {
                    segment: _grade_agreement(figure)
                    for segment, figure in behaviour.agreement.by_segment.items()
                },
            },
        },
    }
