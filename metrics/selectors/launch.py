"""Reads for launch decisions: the launch report (its page: `metrics.selectors.overview`; a query's
drill-down: `metrics.selectors.drilldown`).

Everything is fetched by `campaign_evaluation_data` (a fixed number of queries), laid out as NumPy arrays
and handed to `metrics.compute`: no query per query, label or model.
"""

from concurrent.futures import Future
from dataclasses import asdict, dataclass, fields, replace
from datetime import datetime
from typing import Any, TypedDict, Unpack

import numpy as np
from django.utils import timezone

from annotation.campaign_settings import CAMPAIGN_SETTINGS
from annotation.errors import InputError, InputErrorCode
from annotation.models import Campaign
from annotation.selectors.exclusions import ExclusionView, campaign_exclusions
from annotation.selectors.interactions import interaction_log_ids
from annotation.selectors.labels import ReuseSummary, campaign_reuse_summary
from metrics.compute.decision import Coverage as WorkCoverage
from metrics.compute.decision import Decision, LaunchRule, decide, work_coverage
from metrics.compute.gsb import GSBSummary, gsb_by_segment, gsb_summary, model_verdicts
from metrics.compute.guardrails import evaluate_guardrails
from metrics.compute.labels import columns_sha256, overridden_labels
from metrics.compute.significance import PairedComparison
from metrics.selectors.aggregation import AggregationFit
from metrics.selectors.behaviour import CampaignBehaviour, campaign_behaviour
from metrics.selectors.diversity import diversity_guardrails
from metrics.selectors.evaluation_data import (
    CampaignEvaluationData,
    CampaignQueries,
    campaign_evaluation_data,
)
from metrics.selectors.kept import keep, kept, kept_slot
from metrics.selectors.log_estimates import LogEstimates, log_estimates
from metrics.selectors.quality import CampaignAgreement, campaign_agreement_later
from metrics.selectors.scores import (
    SEED,
    ModelScores,
    campaign_measures,
    measure_deltas,
    ranking_settings,
    scores_of_models,
)
from plumbing.digests import inputs_digest
from plumbing.threads import done, started

LOSING_QUERIES = 10


@dataclass(frozen=True)
class QueryDelta:
    pk: int
    external_id: str
    text: str
    segment: str
    online: float
    experimental: float
    delta: float


@dataclass(frozen=True)
class Comparison:
    """An experimental model against the online one: measure deltas, GSB, and the launch decision."""

    model: str
    deltas: dict[str, PairedComparison]
    primary_deltas: np.ndarray  # per evaluated query, of the primary measure
    gsb: GSBSummary
    gsb_segments: dict[str, GSBSummary]
    decision: Decision
    losing_queries: list[QueryDelta]


@dataclass(frozen=True)
class Coverage:
    queries: int
    evaluated_queries: int  # with at least one aggregated label
    relevance_tasks: int
    labelled_tasks: int
    judgments: int
    side_by_side_tasks: int
    identical_tasks: int
    verdicts: int
    work: WorkCoverage  # tasks complete at their overlap, which the decision waits for


@dataclass(frozen=True)
class ReviewSummary:
    """What reviewers changed: tasks given a final label, and raw labels it overrode (a different value)."""

    adjudicated_grades: int
    adjudicated_verdicts: int
    overridden_grades: int
    overridden_verdicts: int

    @property
    def overridden(self) -> int:
        return self.overridden_grades + self.overridden_verdicts

    def as_dict(self) -> dict:
        return {**asdict(self), "overridden": self.overridden}


def _review_summary(data: CampaignEvaluationData) -> ReviewSummary:
    relevance, sbs = data.relevance, data.side_by_side
    return ReviewSummary(
        adjudicated_grades=int(np.asarray(relevance.adjudication.task).size),
        adjudicated_verdicts=int(np.asarray(sbs.adjudication.task).size),
        overridden_grades=overridden_labels(
            relevance.judgment_task, relevance.judgment_grade, relevance.adjudication
        ),
        overridden_verdicts=overridden_labels(sbs.preference_task, sbs.preference_verdict, sbs.adjudication),
    )


@dataclass(frozen=True)
class LabelFingerprint:
    """Tells two label sets apart."""

    labels: int  # how many
    sha256: str  # a hash of every label


@dataclass(frozen=True)
class LaunchReport:
    campaign: Campaign
    settings: dict
    measures: list[str]
    primary_measure: str
    query_pks: np.ndarray  # the evaluated queries, in the order of every per-query array
    query_ids: np.ndarray
    models: list[ModelScores]
    comparisons: dict[str, Comparison]
    model: str | None  # the experimental model the top-level decision is about
    agreement: CampaignAgreement | None
    aggregation: AggregationFit
    coverage: Coverage
    generated_at: datetime
    fingerprint: LabelFingerprint
    exclusions: list[ExclusionView]  # in force (left out of this report, unless `with_excluded`) and past
    reuse: ReuseSummary  # labels taken from earlier campaigns of the standard
    reviews: ReviewSummary
    with_excluded: bool = False
    behaviour: CampaignBehaviour | None = None  # what users did, when the campaign has interaction logs

    @property
    def excluded(self) -> list[str]:
        """The annotators whose labels this report leaves out."""
        return [] if self.with_excluded else [row.annotator for row in self.exclusions if row.in_force]

    @property
    def comparison(self) -> Comparison | None:
        return self.comparisons.get(self.model) if self.model else None

    @property
    def decision(self) -> Decision | None:
        return self.comparison.decision if self.comparison else None


def report_settings(campaign: Campaign) -> dict:
    """The scale, then every setting `CAMPAIGN_SETTINGS` shows in the report, in its order and spelling."""
    scale = [{"value": grade["value"], "label": grade["label"]} for grade in campaign.scale]
    shown = (setting for setting in CAMPAIGN_SETTINGS if setting.report)
    return {
        "scale": scale,
        **{setting.name: setting.normal(getattr(campaign, setting.name)) for setting in shown},
    }


def _losing_queries(queries: CampaignQueries, evaluated, online, experimental) -> list[QueryDelta]:
    delta = experimental - online
    worst = [row for row in np.argsort(delta, kind="stable")[:LOSING_QUERIES] if delta[row] < 0]
    return [
        QueryDelta(
            pk=int(queries.pk[evaluated[row]]),
            external_id=queries.external_id[evaluated[row]],
            text=queries.text[evaluated[row]],
            segment=queries.segment[evaluated[row]],
            online=float(online[row]),
            experimental=float(experimental[row]),
            delta=float(delta[row]),
        )
        for row in worst
    ]


def _label_fingerprint(data: CampaignEvaluationData) -> LabelFingerprint:
    """The number of labels and a SHA-256 over every label (relevance, side by side, adjudicated), in the
    fixed order the selectors fetch them."""
    relevance, sbs = data.relevance, data.side_by_side
    columns = (
        relevance.task_pk[relevance.judgment_task],
        relevance.annotator_pk[relevance.judgment_annotator],
        relevance.judgment_grade,
        relevance.adjudication.task,
        relevance.adjudication.label,
        data.preferences.task_pk,
        data.preferences.annotator_pk,
        data.preferences.verdict,
        data.preferences.strength,
        sbs.adjudication.task,
        sbs.adjudication.label,
    )
    labels = relevance.judgment_task.size + data.preferences.task_pk.size
    labels += len(relevance.adjudication.task) + len(sbs.adjudication.task)
    return LabelFingerprint(labels=int(labels), sha256=columns_sha256(columns))


def _without_guess(decision: Decision, human_labels: int) -> Decision:
    """No provisional decision before any person has labelled: identical lists' automatic Sames alone
    would make one up."""
    if human_labels or decision.provisional is None:
        return decision
    return replace(decision, provisional=None)


def _work_coverage(data: CampaignEvaluationData) -> WorkCoverage:
    relevance, sbs, campaign = data.relevance, data.side_by_side, data.campaign
    relevance_settled = np.zeros(relevance.n_tasks, dtype=bool)
    relevance_settled[np.asarray(relevance.adjudication.task, dtype=np.int64)] = True
    sbs_settled = sbs.task_identical & campaign.auto_same_identical
    sbs_settled[np.asarray(sbs.adjudication.task, dtype=np.int64)] = True
    return work_coverage(
        n_queries=len(data.queries),
        relevance_query=relevance.task_query,
        relevance_labels=np.bincount(relevance.judgment_task, minlength=relevance.n_tasks),
        relevance_settled=relevance_settled,
        overlap=campaign.overlap,
        side_by_side_query=sbs.task_query,
        side_by_side_labels=np.bincount(sbs.preference_task, minlength=sbs.task_query.size),
        side_by_side_settled=sbs_settled,
        side_by_side_overlap=campaign.gsb_overlap,
    )


def verdicts_of_model(*, data: CampaignEvaluationData, model: int) -> tuple[np.ndarray, ...]:
    """(query, verdict, strength) of one experimental model's verdicts and which queries' lists changed
    (`metrics.compute.gsb.model_verdicts` on the campaign's columns)."""
    sbs = data.side_by_side
    return model_verdicts(
        n_queries=len(data.queries),
        model=model,
        task_query=sbs.task_query,
        task_model=sbs.task_model,
        task_identical=sbs.task_identical,
        preference_task=sbs.preference_task,
        preference_verdict=sbs.preference_verdict,
        preference_strength=sbs.preference_strength,
        adjudication_task=sbs.adjudication.task,
        adjudication_verdict=sbs.adjudication.label,
        auto_same_identical=data.campaign.auto_same_identical,
    )


class ReportOptions(TypedDict, total=False):
    model: str | None
    n_resamples: int
    n_bootstrap: int
    agreement: bool
    with_excluded: bool


def launch_report_build(*, campaign: Campaign, **options: Unpack[ReportOptions]) -> LaunchReport:
    """The launch report (`launch_report_later`), waited for."""
    return launch_report_later(campaign=campaign, **options).result()


# Read afresh for each request rather than kept with a report: the campaign's row, when it was made, and
# what no figure is computed from (the exclusions' record, the label pool's counts).
_FRESH = ("campaign", "generated_at", "exclusions", "reuse")


@dataclass(frozen=True)
class LaterReport:
    """A launch report on its way (`launch_report_later`); `result()` waits for it. A report computed here
    is kept in the shared cache with the digest of its inputs, for the next request that reads the same."""

    computed: Future[LaunchReport]  # its decision about the first experimental model
    model: str | None  # the decision asked for
    slot: str  # one report kept per campaign and options (`metrics.selectors.kept`)
    inputs: str  # the digest of every input its figures are computed from
    cached: bool

    def result(self) -> LaunchReport:
        report = self.computed.result()
        if not self.cached:
            figures = {
                field.name: getattr(report, field.name)
                for field in fields(report)
                if field.name not in _FRESH
            }
            keep(self.slot, self.inputs, figures)
        return replace(report, model=self.model) if self.model else report


def launch_report_later(
    *,
    campaign: Campaign,
    model: str | None = None,
    n_resamples: int = 10_000,
    n_bootstrap: int = 2_000,
    agreement: bool = True,
    with_excluded: bool = False,
) -> LaterReport:
    """Every model's measures, each experimental model against the online one, and the launch decision
    for `model` (default: the first experimental model); an unknown `model` is an InputError.

    `n_resamples`: sign flips of each measure's randomization test (GSB's test is exact); `n_bootstrap`:
    resamples of every bootstrap interval, the measure deltas' and GSB's (2,000 is ample for a 95% percentile
    interval, which is shown and never decides).
    The labels of excluded annotators are left out unless `with_excluded` (the overview's comparison).

    Every query runs now (and an unknown `model` raises now). The figures come from the shared cache when
    a report was computed from the same inputs: the digest of every column, row and setting read (the
    campaign's interaction logs by their ids, see `interaction_log_ids`) and of the code that computes, so
    no write of any kind can leave a kept report in place. Otherwise the arithmetic runs on a second
    thread (the agreement on a third), so that the caller's next reads run while the resamples are drawn
    (NumPy lets go of the GIL while it draws them). What the logs alone say (propensity curves, online
    metrics), which no label changes, is read from the cache here (or computed here when the log is new:
    `log_estimates`)."""
    data = campaign_evaluation_data(campaign=campaign, with_excluded=with_excluded)
    experimental = [ranking_model.name for ranking_model in data.models if not ranking_model.is_online]
    if model is not None and model not in experimental:
        raise InputError(
            InputErrorCode.UNKNOWN_MODEL,
            f"no experimental model {model!r} in campaign {campaign.name!r}",
            field="model",
        )
    exclusions = campaign_exclusions(campaign=campaign)
    reuse = campaign_reuse_summary(campaign=campaign)
    slot = kept_slot("launch-report", campaign, n_resamples, n_bootstrap, agreement, with_excluded)
    log_ids = interaction_log_ids(campaign=campaign)
    inputs = inputs_digest(data, log_ids)
    found = kept(slot, inputs)
    if found is not None:
        fresh = {
            "campaign": campaign,
            "generated_at": timezone.now(),
            "exclusions": exclusions,
            "reuse": reuse,
        }
        return LaterReport(done(LaunchReport, **fresh, **found), model, slot, inputs, cached=True)
    coefficients = (
        campaign_agreement_later(campaign=campaign, relevance=data.relevance, preferences=data.preferences)
        if agreement
        else None
    )
    estimates = log_estimates(campaign=campaign, log_ids=log_ids, queries=data.queries, models=data.models)
    computed = started(
        _launch_report,
        data,
        estimates,
        n_resamples,
        n_bootstrap,
        coefficients,
        exclusions,
        reuse,
        with_excluded,
    )
    return LaterReport(computed, model, slot, inputs, cached=False)


def _launch_report(
    data: CampaignEvaluationData,
    estimates: LogEstimates | None,
    n_resamples: int,
    n_bootstrap: int,
    coefficients: Future[CampaignAgreement] | None,
    exclusions: list[ExclusionView],
    reuse: ReuseSummary,
    with_excluded: bool,
) -> LaunchReport:
    """`launch_report_later`'s arithmetic on the fetched data, the decision about the first experimental
    model: no query, as it runs on another thread."""
    campaign = data.campaign
    measures, primary = campaign_measures(campaign, data)
    scored = scores_of_models(campaign=campaign, data=data, measures=measures)
    layout, models = scored.layout, scored.models
    sbs = data.side_by_side
    experimental = [scores.name for scores in models if not scores.is_online]
    online = next((scores for scores in models if scores.is_online), None)
    rule = LaunchRule(
        min_gsb=campaign.launch_min_gsb,
        alpha=campaign.launch_alpha,
        primary_measure=primary,
        guarded_measures=tuple(f"nDCG@{cutoff}" for cutoff in sorted(campaign.cutoffs)),
        min_queries=campaign.min_queries,
        min_coverage=campaign.min_coverage,
    )
    work = _work_coverage(data)
    guardrails = diversity_guardrails(campaign)
    fingerprint = _label_fingerprint(data)
    behaviour = None
    if estimates is not None:
        behaviour = campaign_behaviour(
            data=data,
            estimates=estimates,
            human_per_query={scores.name: scores.per_query for scores in models},
            evaluated=layout.evaluated,
            grades=scored.grades,
            primary=primary,
            settings=ranking_settings(campaign),
        )
    comparisons = {}
    for index, scores in enumerate(models):
        if scores.is_online or online is None:
            continue
        deltas = measure_deltas(
            online, scores, measures, scored.weights, n_bootstrap=n_bootstrap, n_resamples=n_resamples
        )
        query, verdict, strength, changed = verdicts_of_model(data=data, model=index)
        gsb_arguments: dict[str, Any] = {
            "n_queries": len(data.queries),
            "changed": changed,
            "strength": strength if campaign.gsb_scale == 5 else None,
            "n_resamples": n_bootstrap,
            "seed": SEED,
        }
        gsb = gsb_summary(query, verdict, **gsb_arguments)
        comparisons[scores.name] = Comparison(
            model=scores.name,
            deltas=deltas,
            primary_deltas=scores.per_query[primary] - online.per_query[primary],
            gsb=gsb,
            gsb_segments=gsb_by_segment(
                query, verdict, segment_of_query=data.queries.segment, **gsb_arguments
            ),
            decision=_without_guess(
                decide(
                    rule,
                    gsb=gsb,
                    deltas=deltas,
                    coverage=work,
                    guardrails=[
                        *evaluate_guardrails(guardrails, deltas),
                        *(
                            behaviour.comparisons[scores.name].guardrails
                            if behaviour and scores.name in behaviour.comparisons
                            else ()
                        ),
                    ],
                ),
                fingerprint.labels,
            ),
            losing_queries=_losing_queries(
                data.queries, layout.evaluated, online.per_query[primary], scores.per_query[primary]
            ),
        )

    coverage = Coverage(
        queries=len(data.queries),
        evaluated_queries=int(layout.evaluated.size),
        relevance_tasks=data.relevance.n_tasks,
        labelled_tasks=int((~np.isnan(scored.grades)).sum()),
        judgments=int(data.relevance.judgment_task.size),
        side_by_side_tasks=int(sbs.task_query.size),
        identical_tasks=int(sbs.task_identical.sum()),
        verdicts=int(sbs.preference_task.size),
        work=work,
    )
    return LaunchReport(
        campaign=campaign,
        settings={**report_settings(campaign), "n_resamples": n_resamples, "n_bootstrap": n_bootstrap},
        measures=measures,
        primary_measure=primary,
        query_pks=data.queries.pk[layout.evaluated],
        query_ids=data.queries.external_id[layout.evaluated],
        models=models,
        comparisons=comparisons,
        model=experimental[0] if comparisons else None,
        agreement=coefficients.result() if coefficients else None,
        aggregation=scored.aggregation,
        coverage=coverage,
        generated_at=timezone.now(),
        fingerprint=fingerprint,
        exclusions=exclusions,
        reuse=reuse,
        reviews=_review_summary(data),
        with_excluded=with_excluded,
        behaviour=behaviour,
    )
