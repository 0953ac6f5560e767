"""What users did, read beside what the judges said (docs/interactions.md): a campaign's impressions as
columns, and everything computed from them for the Behaviour page, the launch report and the API.

`campaign_impressions` is the one read (a campaign's impressions in one statement, as NumPy columns);
`log_estimates` computes from it what no label changes, kept in the shared cache under the campaign's log
ids; `campaign_behaviour` computes from that and from the human side the launch report already holds (each
model's per-query measures), so the report runs it on its own thread without a further query; the query
explorer's users' side (`users_per_query`) is read from the same estimates.
"""

from dataclasses import dataclass

import numpy as np

from annotation.setting_texts import parse_action_grades
from metrics.compute.guardrails import GuardrailOutcome, evaluate_guardrails
from metrics.compute.interactions.behaviour import (
    ActionGrades,
    BehaviourAgreement,
    BehaviourQrels,
    behaviour_agreement,
)
from metrics.compute.interactions.impressions import ClusterBy
from metrics.compute.interactions.offline_online import (
    DEFAULT_MARGIN,
    OfflineOnlineAgreement,
    offline_online_agreement,
)
from metrics.compute.interactions.online import (
    DEFAULT_MAX_WEIGHT,
    OnlineDifference,
    ips_ctr_name,
)
from metrics.compute.interactions.propensity import PropensityCurve
from metrics.compute.layout import ranked_labels
from metrics.compute.ranking import RankingSettings, evaluate_ranked, weighted_mean
from metrics.selectors.evaluation_data import (
    CampaignEvaluationData,
    CampaignQueries,
)
from metrics.selectors.log_estimates import (
    N_RESAMPLES,
    ONLINE_K,
    SEED,
    LogEstimates,
    ModelOnline,
    guardrails_of,
    log_estimates,
)
from trec.measures import parse_measure


@dataclass(frozen=True)
class QueryPoint:
    """One query of the offline–online chart: experimental − online on each side."""

    pk: int
    external_id: str
    text: str
    offline_delta: float
    online_delta: float


@dataclass(frozen=True)
class OnlineComparison:
    """An experimental model against the online one in the logs: each metric's per-query difference, the
    judges' per-query delta against the users' (`offline_measure` against `online_metric`), and the
    campaign's guardrails."""

    model: str
    differences: dict[str, OnlineDifference]
    offline_measure: str
    online_metric: str
    points: list[QueryPoint]
    agreement: OfflineOnlineAgreement | None
    judges_only: list[QueryPoint]  # the judges prefer the experiment, the users do not
    users_only: list[QueryPoint]  # the reverse
    guardrails: list[GuardrailOutcome]


@dataclass(frozen=True)
class MeasuresBeside:
    """Each model's mean measures on the judges' labels and on the behaviour qrels, over the queries each
    labels."""

    measures: list[str]
    human: dict[str, dict[str, float]]
    behaviour: dict[str, dict[str, float]]
    behaviour_queries: int


@dataclass(frozen=True)
class CampaignBehaviour:
    n_logs: int
    n_impressions: int
    n_lists: int
    n_clicks: int
    cluster_by: ClusterBy
    k: int
    harvesting: PropensityCurve
    em: PropensityCurve
    propensity_method: str  # the curve the IPS metrics use, "" when neither reaches position k
    max_weight: float
    models: list[ModelOnline]
    comparisons: dict[str, OnlineComparison]
    qrels: BehaviourQrels
    measures: MeasuresBeside
    agreement: BehaviourAgreement | None
    grades_setting: str
    guardrails_setting: str

    @property
    def ips_metric(self) -> str:
        return ips_ctr_name(self.k)


def campaign_behaviour(
    *,
    data: CampaignEvaluationData,
    estimates: LogEstimates,
    human_per_query: dict[str, dict[str, np.ndarray]],
    evaluated: np.ndarray,
    grades: np.ndarray,
    primary: str,
    settings: RankingSettings,
) -> CampaignBehaviour:
    """Everything the Behaviour page shows, from the fetched data and what the log alone says (`estimates`:
    `log_estimates`): no query (the launch report runs it on its thread). `human_per_query`: each model's
    per-query values of each measure on the judges' labels over the `evaluated` query indices; `grades`:
    the aggregated grade of each relevance task."""
    campaign, queries, models = data.campaign, data.queries, data.models
    k, n_resamples = ONLINE_K, N_RESAMPLES
    propensities = estimates.propensities
    online_metric = propensities.online_metric
    online_index = next((i for i, model in enumerate(models) if model.is_online), None)
    comparisons = {}
    guardrails = guardrails_of(campaign.guardrails)
    for model in models:
        if model.name not in estimates.differences or online_index is None:
            continue
        differences = estimates.differences[model.name]
        points = _points(
            queries,
            evaluated,
            human_per_query[models[online_index].name][primary],
            human_per_query[model.name][primary],
            differences[online_metric],
        )
        agreement = None
        if len(points) >= 2:
            agreement = offline_online_agreement(
                np.arange(len(points)),
                [point.offline_delta for point in points],
                [point.online_delta for point in points],
                n_resamples=n_resamples,
                seed=SEED,
            )
        comparisons[model.name] = OnlineComparison(
            model=model.name,
            differences=differences,
            offline_measure=primary,
            online_metric=online_metric,
            points=points,
            agreement=agreement,
            judges_only=[points[j] for j in agreement.judges_only] if agreement else [],
            users_only=[points[j] for j in agreement.users_only] if agreement else [],
            guardrails=evaluate_guardrails(
                guardrails, {name: difference.comparison for name, difference in differences.items()}
            ),
        )

    mapping = ActionGrades(**parse_action_grades(campaign.behaviour_grades))
    qrels, document_pk = estimates.qrels, estimates.qrels_document_pk
    return CampaignBehaviour(
        n_logs=estimates.n_logs,
        n_impressions=estimates.n_impressions,
        n_lists=estimates.n_lists,
        n_clicks=estimates.n_clicks,
        cluster_by=estimates.cluster_by,
        k=k,
        harvesting=propensities.harvesting,
        em=propensities.em,
        propensity_method=propensities.method,
        max_weight=DEFAULT_MAX_WEIGHT,
        models=estimates.models,
        comparisons=comparisons,
        qrels=qrels,
        measures=_measures_beside(data, qrels, document_pk, human_per_query, evaluated, settings),
        agreement=_agreement(data, qrels, document_pk, grades, mapping, n_resamples),
        grades_setting=campaign.behaviour_grades,
        guardrails_setting=campaign.guardrails,
    )


@dataclass(frozen=True)
class UsersPerQuery:
    """Experimental − online per query index of `metric` (NaN where a model did not serve the query)."""

    metric: str
    delta: np.ndarray


def users_per_query(*, data: CampaignEvaluationData, model: int, log_ids: list[int]) -> UsersPerQuery | None:
    """The query explorer's users' side: per query, Δ IPS-CTR@10 (CTR@10 without propensities) of the
    experimental model `model` (an index of `data.models`) against the online one, NaN where the logs lack
    either; None without logs. From the logs' kept estimates (`log_estimates`, the launch report's), so a
    new label reads no impression."""
    campaign, queries, models = data.campaign, data.queries, data.models
    online = next((i for i, candidate in enumerate(models) if candidate.is_online), None)
    estimates = log_estimates(campaign=campaign, log_ids=log_ids, queries=queries, models=models)
    if estimates is None or online is None:
        return None
    metric = estimates.propensities.online_metric
    delta = np.full(len(queries), np.nan)
    difference = estimates.differences.get(models[model].name, {}).get(metric)
    if difference is not None:
        delta[difference.query] = difference.delta
    return UsersPerQuery(metric, delta)


def disagreement_side(offline_delta: float, online_delta: float) -> str:
    """Which side alone prefers the experiment, as `offline_online_agreement` lists queries: "judges",
    "users", or "" (they agree, or a delta is within its margin or missing)."""
    margin = DEFAULT_MARGIN
    if offline_delta > margin and online_delta < -margin:
        return "judges"
    if offline_delta < -margin and online_delta > margin:
        return "users"
    return ""


def _points(
    queries: CampaignQueries,
    evaluated: np.ndarray,
    online_values: np.ndarray,
    experimental_values: np.ndarray,
    online_difference: OnlineDifference,
) -> list[QueryPoint]:
    """The queries with both a human delta and an online delta."""
    offline = dict(zip(evaluated.tolist(), (experimental_values - online_values).tolist(), strict=True))
    return [
        QueryPoint(
            int(queries.pk[q]), str(queries.external_id[q]), str(queries.text[q]), offline[q], float(delta)
        )
        for q, delta in zip(online_difference.query.tolist(), online_difference.delta.tolist(), strict=True)
        if q in offline and np.isfinite(offline[q])
    ]


def _measures_beside(
    data: CampaignEvaluationData,
    qrels: BehaviourQrels,
    document_pk: np.ndarray,
    human_per_query: dict[str, dict[str, np.ndarray]],
    evaluated: np.ndarray,
    settings: RankingSettings,
) -> MeasuresBeside:
    # The relevance measures: diversity ones (ILS, α-nDCG, ...) read intents and near-duplicates, which
    # behaviour does not give.
    measures = [name for name in next(iter(human_per_query.values()), {}) if _relevance_measure(name)]
    weights = data.queries.weight
    layout = ranked_labels(
        n_queries=len(data.queries),
        n_models=len(data.models),
        task_query=qrels.query,
        task_document=document_pk,
        grades=qrels.grade.astype(float),
        ranking_model=data.rankings.model,
        ranking_query=data.rankings.query,
        ranking_document=data.rankings.document,
        ranking_rank=data.rankings.rank,
    )
    human, behaviour = {}, {}
    for index, model in enumerate(data.models):
        human[model.name] = {
            name: weighted_mean(values, weights[evaluated])
            for name, values in human_per_query[model.name].items()
        }
        per_query = evaluate_ranked(
            layout.ranked[index], measures, judged_labels=layout.judged, settings=settings
        )
        behaviour[model.name] = {
            name: weighted_mean(values, weights[layout.evaluated]) for name, values in per_query.items()
        }
    return MeasuresBeside(measures, human, behaviour, int(layout.evaluated.size))


def _relevance_measure(name: str) -> bool:
    try:
        parse_measure(name)
    except ValueError:
        return False
    return True


def _agreement(
    data: CampaignEvaluationData,
    qrels: BehaviourQrels,
    document_pk: np.ndarray,
    grades: np.ndarray,
    mapping: ActionGrades,
    n_resamples: int,
) -> BehaviourAgreement | None:
    """Behaviour grades against the judges' aggregated grades of the pairs both have, overall and per
    segment; None without two such pairs."""
    relevance = data.relevance
    labelled = np.flatnonzero(~np.isnan(grades))
    task_key = {
        (q, d): j
        for j, q, d in zip(
            labelled.tolist(),
            relevance.task_query[labelled].tolist(),
            relevance.task_document[labelled].tolist(),
            strict=True,
        )
    }
    matched = [
        (i, task_key[q, d])
        for i, (q, d) in enumerate(zip(qrels.query.tolist(), document_pk.tolist(), strict=True))
        if (q, d) in task_key
    ]
    if len(matched) < 2:
        return None
    pair, task = (np.array(column) for column in zip(*matched, strict=True))
    scale = np.union1d(data.campaign.grade_values, mapping.grades)
    return behaviour_agreement(
        qrels.grade[pair],
        grades[task],
        query=qrels.query[pair],
        scale=scale,
        segment=np.array([segment or "(none)" for segment in data.queries.segment[qrels.query[pair]]]),
        n_resamples=n_resamples,
        seed=SEED,
    )
