"""Every model's measures per query, their means and intervals, and the paired comparisons of two models:
the arithmetic the launch report, the query explorer and the drill-down share. Ranking measures come from
`metrics.compute.ranking` (with the campaign's position weights and, when set, near-duplicates gaining
once), diversity measures from `selectors/diversity`."""

from dataclasses import dataclass

import numpy as np

from annotation.models import Campaign, RankingModel
from metrics.compute.layout import RankedLabels, ranked_labels
from metrics.compute.ranking import Gain, RankingSettings, evaluate_ranked, mean_intervals, weighted_mean
from metrics.compute.significance import PairedComparison, paired_comparisons
from metrics.selectors.aggregation import AggregationFit, aggregated_grades
from metrics.selectors.diversity import (
    diversity_inputs,
    diversity_measures,
    diversity_per_query,
    group_matrix,
    is_diversity_measure,
)
from metrics.selectors.diversity import measure_range as diversity_range
from metrics.selectors.evaluation_data import CampaignEvaluationData
from trec.measures import parse_measure

SEED = 0


@dataclass(frozen=True)
class ModelScores:
    """One model's per-query value of every measure (over the evaluated queries) and their weighted means."""

    name: str
    role: str
    per_query: dict[str, np.ndarray]
    means: dict[str, float]
    intervals: dict[str, tuple[float, float]]  # 95% normal-approximation interval of each mean

    @property
    def is_online(self) -> bool:
        return self.role == RankingModel.Role.ONLINE


def report_measures(campaign: Campaign) -> tuple[list[str], str]:
    """nDCG@k of every cut-off, nDCG (not with position weights: it has no cut-off), AP, RR, P@k and
    Judged@k (k the largest cut-off), and the primary."""
    k = max(campaign.cutoffs, default=10)
    names = [f"nDCG@{cutoff}" for cutoff in sorted(campaign.cutoffs)]
    names += [*(["nDCG"] if campaign.position_weights is None else []), "AP", "RR", f"P@{k}", f"Judged@{k}"]
    primary = str(parse_measure(campaign.primary_measure))
    return list(dict.fromkeys([*names, primary])), primary


def ranking_settings(campaign: Campaign) -> RankingSettings:
    weights = campaign.position_weights
    return RankingSettings(gain=Gain(campaign.gain), position_weights=tuple(weights) if weights else None)


def campaign_measures(campaign: Campaign, data: CampaignEvaluationData) -> tuple[list[str], str]:
    """`report_measures`, then the diversity measures the campaign's data allows (`diversity_measures`)."""
    measures, primary = report_measures(campaign)
    return [*measures, *diversity_measures(campaign, data.diversity)], primary


@dataclass(frozen=True)
class ModelsScored:
    grades: np.ndarray  # aggregated, per relevance task
    aggregation: AggregationFit
    layout: RankedLabels
    weights: np.ndarray  # of the evaluated queries
    models: list[ModelScores]


def scores_of_models(
    *, campaign: Campaign, data: CampaignEvaluationData, measures: list[str]
) -> ModelsScored:
    """The aggregated grades, laid out in each model's rank order, and every model's per-query measures."""
    grades, aggregation = aggregated_grades(campaign=campaign, relevance=data.relevance)
    relevance, rankings = data.relevance, data.rankings
    layout = ranked_labels(
        n_queries=len(data.queries),
        n_models=len(data.models),
        task_query=relevance.task_query,
        task_document=relevance.task_document,
        grades=grades,
        ranking_model=rankings.model,
        ranking_query=rankings.query,
        ranking_document=rankings.document,
        ranking_rank=rankings.rank,
    )
    weights = data.queries.weight[layout.evaluated]
    models, settings = [], ranking_settings(campaign)
    diverse = [name for name in measures if is_diversity_measure(name)]
    ranking = [name for name in measures if name not in diverse]
    inputs = diversity_inputs(data=data, rows=data.diversity)
    judged_groups = (
        group_matrix(inputs, layout, layout.judged_documents) if campaign.redundancy_aware else None
    )
    for index, ranking_model in enumerate(data.models):
        per_query = {}
        if ranking:
            groups = (
                None
                if judged_groups is None
                else group_matrix(inputs, layout, layout.ranked_documents[index])
            )
            per_query = evaluate_ranked(
                layout.ranked[index],
                ranking,
                judged_labels=layout.judged,
                settings=settings,
                duplicate_groups=groups,
                judged_duplicate_groups=judged_groups,
            )
        per_query.update(
            diversity_per_query(
                campaign=campaign, data=data, inputs=inputs, layout=layout, model=index, measures=diverse
            )
        )
        per_query = {name: per_query[name] for name in measures}
        means, intervals = _means(per_query, weights, settings)
        models.append(ModelScores(ranking_model.name, ranking_model.role, per_query, means, intervals))
    return ModelsScored(grades, aggregation, layout, weights, models)


def _means(
    per_query: dict[str, np.ndarray], weights: np.ndarray, settings: RankingSettings
) -> tuple[dict[str, float], dict[str, tuple[float, float]]]:
    """Each measure's weighted mean and its interval over the queries where it is defined (diversity
    measures are NaN where a query lacks their data)."""
    means, intervals = {}, {}
    for name, values in per_query.items():
        defined = ~np.isnan(values)
        ranges = {name: diversity_range(name)} if is_diversity_measure(name) else None
        means[name] = weighted_mean(values[defined], weights[defined])
        intervals.update(mean_intervals({name: values[defined]}, weights[defined], settings, ranges=ranges))
    return means, intervals


def measure_deltas(
    online: ModelScores,
    scores: ModelScores,
    measures: list[str],
    weights: np.ndarray,
    *,
    n_bootstrap: int,
    n_resamples: int,
) -> dict[str, PairedComparison]:
    """Each measure's paired comparison, experimental − online: the ranking measures on one stream of
    resamples over every evaluated query, each diversity measure over the queries where both models have
    it."""
    options = {"n_resamples": n_bootstrap, "n_flips": n_resamples, "seed": SEED}
    ranking_measures = [name for name in measures if not is_diversity_measure(name)]
    deltas = {}
    if weights.size:
        compared = paired_comparisons(
            np.column_stack([online.per_query[name] for name in ranking_measures]),
            np.column_stack([scores.per_query[name] for name in ranking_measures]),
            weights=weights,
            **options,
        )
        deltas = dict(zip(ranking_measures, compared, strict=True))
    for name in measures:
        if not is_diversity_measure(name):
            continue
        base, other = online.per_query[name], scores.per_query[name]
        defined = ~(np.isnan(base) | np.isnan(other))
        if defined.any():
            (deltas[name],) = paired_comparisons(
                base[defined, None], other[defined, None], weights=weights[defined], **options
            )
    return deltas
