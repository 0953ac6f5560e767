"""What users did, read beside what the judges said (docs/interactions.md): a campaign's impressions as
columns, and everything computed from them for the Behaviour page, the launch report and the API.

`campaign_impressions` is the one read (a campaign's impressions in one statement, as NumPy columns);
`campaign_behaviour` computes from it and from the human side the launch report already holds (each model's
per-query measures), so the report runs it on its own thread without a further query.
"""

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
from django.db.models import IntegerField, Value
from django.db.models.functions import Cast, Coalesce

from annotation.campaign_settings import parse_action_grades, parse_guardrails
from annotation.models import Campaign, Document, Impression
from annotation.selectors.rankings import ranked_entries
from metrics.compute.guardrails import Bound, Guardrail, GuardrailOutcome, evaluate_guardrails
from metrics.compute.interactions.behaviour import (
    ActionGrades,
    BehaviourAgreement,
    BehaviourQrels,
    behaviour_agreement,
    behaviour_qrels,
)
from metrics.compute.interactions.impressions import ClusterBy, Impressions, compact
from metrics.compute.interactions.offline_online import OfflineOnlineAgreement, offline_online_agreement
from metrics.compute.interactions.online import (
    DEFAULT_MAX_WEIGHT,
    OnlineDifference,
    OnlineMetrics,
    ips_ctr_name,
    online_differences,
    online_metrics,
)
from metrics.compute.interactions.propensity import (
    PropensityCurve,
    intervention_harvesting,
    position_based_em,
)
from metrics.compute.interactions.simulation import default_click_model, simulate_log
from metrics.compute.layout import ranked_labels
from metrics.compute.ranking import RankingSettings, evaluate_ranked, weighted_mean
from metrics.selectors.evaluation_data import (
    CampaignEvaluationData,
    CampaignModel,
    CampaignQueries,
    campaign_aggregated_labels,
    campaign_models,
    campaign_queries,
)
from plumbing.columns import fetch_columns

ONLINE_K = 10  # the cut-off of the online metrics shown (guardrails may name others)
N_RESAMPLES = 1000
EM_RESAMPLES = 100  # EM is fitted again on each resample
SEED = 0
NO_SESSION = np.iinfo(np.int64).min  # a null session, as read; no session key is this value in practice


@dataclass(frozen=True)
class ImpressionData:
    """A campaign's impressions (`impressions`: queries and models indexed as in `CampaignEvaluationData`,
    documents 0.. indexing `document_pk`), from `n_logs` logs."""

    impressions: Impressions
    document_pk: np.ndarray
    n_logs: int


@dataclass(frozen=True)
class ModelOnline:
    name: str
    role: str
    metrics: OnlineMetrics


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


def campaign_impressions(
    *, campaign: Campaign, queries: CampaignQueries, models: list[CampaignModel]
) -> ImpressionData | None:
    """Every impression of the campaign's logs, or None when it has none: one statement."""
    flag = {name: Cast(name, IntegerField()) for name in ("clicked", "cart", "purchase")}
    rows = (
        Impression.objects.filter(campaign=campaign)
        .annotate(
            clicked_flag=flag["clicked"],
            cart_flag=flag["cart"],
            purchase_flag=flag["purchase"],
            session_key=Coalesce("session", Value(int(NO_SESSION))),
        )
        .values_list(
            "log_id",
            "request",
            "query_id",
            "model_id",
            "document_id",
            "session_key",
            "position",
            "clicked_flag",
            "cart_flag",
            "purchase_flag",
            "dwell",
            "rating",
        )
    )
    (
        log,
        request,
        query_pk,
        model_pk,
        document_pk,
        session,
        position,
        clicked,
        cart,
        purchase,
        dwell,
        rating,
    ) = fetch_columns(rows, "iiiiiiiiiiff")
    if log.size == 0:
        return None
    # Requests are numbered per log: a (log, request) pair is one list.
    lists, _ = compact(log * (int(request.max()) + 1) + request)
    model_order = np.array([model.pk for model in models], dtype=np.int64)
    sorter = np.argsort(model_order)
    documents, document = np.unique(document_pk, return_inverse=True)
    impressions = Impressions.of(
        query=queries.index_of(query_pk),
        model=sorter[np.searchsorted(model_order, model_pk, sorter=sorter)],
        request=lists,
        position=position,
        document=document.ravel(),
        clicked=clicked.astype(bool),
        dwell=dwell,
        cart=cart.astype(bool),
        purchase=purchase.astype(bool),
        rating=rating,
        session=None if (session == NO_SESSION).any() else compact(session)[0],
        n_queries=len(queries),
        n_models=len(models),
    )
    return ImpressionData(impressions, documents, int(np.unique(log).size))


def campaign_behaviour(
    *,
    data: CampaignEvaluationData,
    impressions: ImpressionData,
    human_per_query: dict[str, dict[str, np.ndarray]],
    evaluated: np.ndarray,
    grades: np.ndarray,
    primary: str,
    settings: RankingSettings,
    n_resamples: int = N_RESAMPLES,
) -> CampaignBehaviour:
    """Everything the Behaviour page shows, from the fetched data: no query (the launch report runs it on
    its thread). `human_per_query`: each model's per-query values of each measure on the judges' labels
    over the `evaluated` query indices; `grades`: the aggregated grade of each relevance task."""
    campaign, queries, models = data.campaign, data.queries, data.models
    log = impressions.impressions
    k = ONLINE_K
    # Propensities of the positions the logs show (up to k); the metrics' weights past the deepest one are
    # never read (no impression is there), so the curve is carried on to k with its last value.
    depth = min(k, int(log.position.max()))
    harvesting = intervention_harvesting(log, n_positions=depth, n_resamples=n_resamples, seed=SEED)
    em = position_based_em(log, n_positions=depth, n_resamples=EM_RESAMPLES, seed=SEED)
    method, propensity = "", None
    for curve in (harvesting, em):
        if np.isfinite(curve.propensity).all():
            method = curve.method
            propensity = np.pad(curve.propensity, (0, k - depth), mode="edge")
            break

    served = set(log.model.tolist())
    online_index = next((i for i, model in enumerate(models) if model.is_online), None)
    online_models = [
        ModelOnline(
            model.name,
            model.role,
            online_metrics(log, model=i, k=k, propensity=propensity, n_resamples=n_resamples, seed=SEED),
        )
        for i, model in enumerate(models)
        if i in served
    ]
    comparisons = {}
    guardrails = [
        Guardrail(metric, Bound.LOWER if op == ">=" else Bound.UPPER, threshold)
        for metric, op, threshold in parse_guardrails(campaign.guardrails)
    ]
    for i, model in enumerate(models):
        if model.is_online or online_index is None or i not in served or online_index not in served:
            continue
        differences = _differences(log, online_index, i, k, propensity, guardrails, n_resamples)
        online_metric = ips_ctr_name(k) if propensity is not None else f"CTR@{k}"
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
    qrels = behaviour_qrels(log, mapping=mapping)
    return CampaignBehaviour(
        n_logs=impressions.n_logs,
        n_impressions=int(log.query.size),
        n_lists=int(log.list_query.size),
        n_clicks=int(log.clicked.sum()),
        cluster_by=log.clusters(None)[0],
        k=k,
        harvesting=harvesting,
        em=em,
        propensity_method=method,
        max_weight=DEFAULT_MAX_WEIGHT,
        models=online_models,
        comparisons=comparisons,
        qrels=qrels,
        measures=_measures_beside(data, impressions, qrels, human_per_query, evaluated, settings),
        agreement=_agreement(data, impressions, qrels, grades, mapping, n_resamples),
        grades_setting=campaign.behaviour_grades,
        guardrails_setting=campaign.guardrails,
    )


def _differences(
    log: Impressions,
    online: int,
    experimental: int,
    k: int,
    propensity: np.ndarray | None,
    guardrails: list[Guardrail],
    n_resamples: int,
) -> dict[str, OnlineDifference]:
    """Every metric's experimental − online at cut-off k, and at any other cut-off a guardrail names."""
    cutoffs = {k} | {int(rule.metric.rpartition("@")[2]) for rule in guardrails if "@" in rule.metric}
    differences: dict[str, OnlineDifference] = {}
    for cutoff in sorted(cutoffs, key=lambda value: value != k):
        theta = propensity
        if theta is not None and theta.size < cutoff:
            theta = None  # no IPS metrics past the estimated positions
        found = online_differences(
            log,
            online_model=online,
            experimental_model=experimental,
            k=cutoff,
            propensity=theta,
            n_resamples=n_resamples,
            seed=SEED,
        )
        differences |= {name: value for name, value in found.items() if name not in differences}
    return differences


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
    impressions: ImpressionData,
    qrels: BehaviourQrels,
    human_per_query: dict[str, dict[str, np.ndarray]],
    evaluated: np.ndarray,
    settings: RankingSettings,
) -> MeasuresBeside:
    measures = list(next(iter(human_per_query.values()), {}))
    weights = data.queries.weight
    layout = ranked_labels(
        n_queries=len(data.queries),
        n_models=len(data.models),
        task_query=qrels.query,
        task_document=impressions.document_pk[qrels.document],
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


def _agreement(
    data: CampaignEvaluationData,
    impressions: ImpressionData,
    qrels: BehaviourQrels,
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
    document_pk = impressions.document_pk[qrels.document]
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


def behaviour_qrels_rows(*, campaign: Campaign) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The campaign's behaviour qrels by external ids (query ids, document ids, grades; what a TREC qrels
    file holds), by query then document id; empty without logs."""
    queries = campaign_queries(campaign=campaign)
    impressions = campaign_impressions(
        campaign=campaign, queries=queries, models=campaign_models(campaign=campaign)
    )
    if impressions is None:
        return np.zeros(0, dtype=object), np.zeros(0, dtype=object), np.zeros(0)
    mapping = ActionGrades(**parse_action_grades(campaign.behaviour_grades))
    qrels = behaviour_qrels(impressions.impressions, mapping=mapping)
    pks = impressions.document_pk[qrels.document]
    names = dict(Document.objects.filter(campaign=campaign).values_list("pk", "external_id"))
    query_ids = queries.external_id[qrels.query]
    document_ids = np.array([names[pk] for pk in pks.tolist()], dtype=object)
    order = np.lexsort((document_ids, query_ids))
    return query_ids[order], document_ids[order], qrels.grade[order]


SIMULATED_DEPTH = 10


def simulated_interactions(*, campaign: Campaign, n_lists: int, seed: int = 0) -> Iterator[dict]:
    """A log of `n_lists` result lists as users under the position-based model would have made it
    (`compute.interactions.simulation`, θ_k = 1/k^0.8), one impression a dict in the log format
    (docs/interactions.md): each model's top 10 of each query as its runs rank them, shown to sessions of
    about three lists, each session one model; a document's relevance is its aggregated human grade, taken
    to four levels (unlabelled: the lowest). For the demo and for trying the pages, never for decisions."""
    queries = campaign_queries(campaign=campaign)
    models = campaign_models(campaign=campaign)
    entries = ranked_entries(model_pks=[model.pk for model in models], depth=SIMULATED_DEPTH)
    labels = campaign_aggregated_labels(campaign=campaign)
    scale = sorted(campaign.grade_values)
    level = {
        (str(q), str(d)): round(3 * (np.searchsorted(scale, grade) / max(len(scale) - 1, 1)))
        for q, d, grade in zip(labels.query_ids, labels.document_ids, labels.grades, strict=True)
    }
    names = dict(Document.objects.filter(campaign=campaign).values_list("pk", "external_id"))
    model_index = {model.pk: i for i, model in enumerate(models)}
    rankings = np.full((len(models), len(queries), SIMULATED_DEPTH), -1, dtype=np.int64)
    grade = np.full(rankings.shape, -1, dtype=np.int64)
    query = queries.index_of(entries.query)
    rankings[[model_index[m] for m in entries.model.tolist()], query, entries.rank - 1] = entries.document
    documents = np.unique(entries.document)
    document_index = np.searchsorted(documents, rankings.clip(min=documents[0] if documents.size else 0))
    listed = rankings >= 0
    for m, q, r in zip(*np.nonzero(listed), strict=True):
        key = (str(queries.external_id[q]), names[int(rankings[m, q, r])])
        grade[m, q, r] = level.get(key, 0)
    log = simulate_log(
        rankings=np.where(listed, document_index, -1),
        ranked_grade=grade,
        click_model=default_click_model(SIMULATED_DEPTH, eagerness=0.3),
        n_lists=n_lists,
        seed=seed,
    ).impressions
    for i in range(log.query.size):
        row = {
            "query": str(queries.external_id[log.query[i]]),
            "model": models[log.model[i]].name,
            "request": f"r{log.request[i]}",
            "session": f"s{log.session[i]}" if log.session is not None else None,
            "position": int(log.position[i]),
            "document": names[int(documents[log.document[i]])],
            "clicked": bool(log.clicked[i]),
        }
        if log.clicked[i]:
            row["dwell"] = round(float(log.dwell[i]), 1)
        if log.cart[i]:
            row["cart"] = True
        if log.purchase[i]:
            row["purchase"] = True
            if not np.isnan(log.rating[i]):
                row["rating"] = int(log.rating[i])
        yield row
