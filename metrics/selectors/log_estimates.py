"""What a campaign's interaction logs alone say, which no label changes: propensity curves, each served
model's online metrics and differences, the logs' size and their behaviour qrels (docs/interactions.md).

Computed from `campaign_impressions` and kept in the shared cache: `log_propensities` under a digest of the
clicks, `log_estimates` under the campaign's log ids, so that a new label recomputes the launch report
without reading a single impression.
"""

import hashlib
import inspect
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from django.core.cache import cache

from annotation.models import Campaign
from annotation.setting_texts import parse_action_grades, parse_guardrails
from metrics.compute import labels, resampling
from metrics.compute.guardrails import Bound, Guardrail
from metrics.compute.interactions import behaviour as behaviour_grades
from metrics.compute.interactions import impressions as impression_columns
from metrics.compute.interactions import propensity as propensity_estimators
from metrics.compute.interactions.behaviour import ActionGrades, BehaviourQrels, behaviour_qrels
from metrics.compute.interactions.impressions import ClusterBy, Impressions
from metrics.compute.interactions.online import (
    OnlineDifference,
    OnlineMetrics,
    ctr_name,
    ips_ctr_name,
    online_differences,
    online_metrics,
)
from metrics.compute.interactions.propensity import (
    PropensityCurve,
    intervention_harvesting,
    position_based_em,
)
from metrics.compute.labels import columns_sha256
from metrics.selectors import impressions as impression_reads
from metrics.selectors.evaluation_data import CampaignModel, CampaignQueries
from metrics.selectors.impressions import ImpressionData, campaign_impressions
from plumbing.digests import sources_digest

ONLINE_K = 10  # the cut-off of the online metrics shown (guardrails may name others)
N_RESAMPLES = 1000
EM_RESAMPLES = 100  # EM is fitted again on each resample
SEED = 0
PROPENSITIES_CACHE_SECONDS = 7 * 24 * 3600
# In the cache keys: a deployment that changes the estimators (or these modules) computes them afresh.
_ESTIMATORS = (
    propensity_estimators,
    impression_columns,
    behaviour_grades,
    impression_reads,
    resampling,
    labels,
)
_ESTIMATORS_SOURCE = sources_digest([Path(__file__), *(Path(inspect.getfile(m)) for m in _ESTIMATORS)])[:16]


@dataclass(frozen=True)
class ModelOnline:
    name: str
    role: str
    metrics: OnlineMetrics


@dataclass(frozen=True)
class Propensities:
    """A log's two propensity curves, and the one the IPS metrics use (`method`, "" for none) carried on
    to position `ONLINE_K`."""

    harvesting: PropensityCurve
    em: PropensityCurve
    method: str
    propensity: np.ndarray | None

    @property
    def online_metric(self) -> str:
        """The users' metric judges are compared with: IPS-CTR at `ONLINE_K` with a curve, else CTR."""
        return ips_ctr_name(ONLINE_K) if self.propensity is not None else ctr_name(ONLINE_K)


def log_propensities(*, impressions: Impressions) -> Propensities:
    """The log's propensity curves with the report's resamples, from the shared cache when these clicks
    were estimated before. They read only the clicks' queries, documents and positions, never a label,
    and EM on every resample was most of the launch report's arithmetic: the key is a digest of those
    columns, so a changed log is estimated afresh and an unchanged one by no worker again."""
    key = propensities_key(impressions)
    found = cache.get(key)
    if found is None:
        found = Propensities(*fitted_propensities(impressions, ONLINE_K, N_RESAMPLES, EM_RESAMPLES))
        cache.set(key, found, PROPENSITIES_CACHE_SECONDS)
    return found


def propensities_key(impressions: Impressions) -> str:
    columns = (impressions.query, impressions.document, impressions.position, impressions.clicked)
    settings = f"{ONLINE_K}:{N_RESAMPLES}:{EM_RESAMPLES}:{SEED}"
    return f"propensities:{_ESTIMATORS_SOURCE}:{settings}:{columns_sha256(columns)}"


@dataclass(frozen=True)
class LogEstimates:
    """What the logs alone say: their propensities, each served model's online metrics, each experimental
    model's differences against the online one (by model name), their size, and the behaviour qrels with
    each pair's document pk."""

    propensities: Propensities
    models: list[ModelOnline]
    differences: dict[str, dict[str, OnlineDifference]]
    n_logs: int
    n_impressions: int
    n_lists: int
    n_clicks: int
    cluster_by: ClusterBy
    qrels: BehaviourQrels
    qrels_document_pk: np.ndarray


def log_estimates(
    *, campaign: Campaign, log_ids: list[int], queries: CampaignQueries, models: list[CampaignModel]
) -> LogEstimates | None:
    """`LogEstimates` of the campaign's logs (`log_ids`, from `interaction_log_ids`), None without
    impressions. Kept in the shared cache under those ids (a log's impressions never change: see
    `interaction_log_ids`), the queries and models the columns index, and the settings read (guardrails'
    cut-offs, the behaviour grades): a new label recomputes the report without reading the impressions."""
    if not log_ids:
        return None
    settings = (campaign.guardrails, campaign.behaviour_grades, ONLINE_K, N_RESAMPLES, EM_RESAMPLES, SEED)
    indexed = repr([(model.pk, model.name, model.role) for model in models])
    parts = [_ESTIMATORS_SOURCE, repr(log_ids), columns_sha256([queries.pk]), indexed, repr(settings)]
    key = f"log-estimates:{hashlib.sha256(':'.join(parts).encode()).hexdigest()}"  # short, for Redis
    found = cache.get(key)
    if found is None:
        read = campaign_impressions(campaign=campaign, queries=queries, models=models)
        if read is None:
            return None
        found = _log_estimates(read, models, guardrails_of(campaign.guardrails), campaign.behaviour_grades)
        cache.set(key, found, PROPENSITIES_CACHE_SECONDS)
    return found


def guardrails_of(setting: str) -> list[Guardrail]:
    return [
        Guardrail(metric, Bound.LOWER if op == ">=" else Bound.UPPER, threshold)
        for metric, op, threshold in parse_guardrails(setting)
    ]


def _log_estimates(
    read: ImpressionData, models: list[CampaignModel], guardrails: list[Guardrail], grades: str
) -> LogEstimates:
    log = read.impressions
    propensities = log_propensities(impressions=log)
    k, propensity, n_resamples = ONLINE_K, propensities.propensity, N_RESAMPLES
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
    differences = {
        model.name: _differences(log, online_index, i, k, propensity, guardrails, n_resamples)
        for i, model in enumerate(models)
        if not model.is_online and online_index is not None and i in served and online_index in served
    }
    qrels = behaviour_qrels(log, mapping=ActionGrades(**parse_action_grades(grades)))
    return LogEstimates(
        propensities,
        online_models,
        differences,
        n_logs=read.n_logs,
        n_impressions=int(log.query.size),
        n_lists=int(log.list_query.size),
        n_clicks=int(log.clicked.sum()),
        cluster_by=log.clusters(None)[0],
        qrels=qrels,
        qrels_document_pk=read.document_pk[qrels.document],
    )


def fitted_propensities(
    log: Impressions, k: int, n_resamples: int, em_resamples: int
) -> tuple[PropensityCurve, PropensityCurve, str, np.ndarray | None]:
    """Both curves, and the one the IPS metrics use (intervention harvesting, else EM, else none) with its
    method. Positions up to the deepest the logs show (at most k) are estimated; the metrics' weights past it
    are never read (no impression is there), so the curve is carried on to k with its last value."""
    depth = min(k, int(log.position.max()))
    harvesting = intervention_harvesting(log, n_positions=depth, n_resamples=n_resamples, seed=SEED)
    em = position_based_em(log, n_positions=depth, n_resamples=em_resamples, seed=SEED)
    for curve in (harvesting, em):
        if np.isfinite(curve.propensity).all():
            return harvesting, em, curve.method, np.pad(curve.propensity, (0, k - depth), mode="edge")
    return harvesting, em, "", None


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
