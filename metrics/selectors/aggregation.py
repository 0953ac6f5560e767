"""A campaign's relevance labels aggregated into one grade a task, by its aggregation method (adjudications
applied), and how the aggregation went; by external ids for qrels exports."""

from dataclasses import dataclass

import numpy as np
from django.db.models import Exists, OuterRef
from django.utils.translation import gettext

from annotation.models import Campaign, Document, RelevanceTask
from metrics.compute.aggregation import DAWID_SKENE_MAX_ITER, aggregate_grades
from metrics.selectors.evaluation_data import (
    RelevanceLabels,
    campaign_queries,
    campaign_relevance_labels,
    excluded_annotators,
)


@dataclass(frozen=True)
class AggregatedLabels:
    """One aggregated grade per labelled (query, document), by the campaign's aggregation method."""

    query_ids: np.ndarray
    document_ids: np.ndarray
    grades: np.ndarray
    method: str


@dataclass(frozen=True)
class AggregationFit:
    """The campaign's aggregation method and, for Dawid–Skene, whether its fit converged (stopped by its
    tolerance, not after DAWID_SKENE_MAX_ITER rounds) or fell back to majority; None for other methods."""

    method: str
    converged: bool | None = None
    fell_back: bool | None = None

    @property
    def status(self) -> str:
        """The fit in words, for pages and reports; empty for a method without a fit."""
        if self.fell_back:
            return gettext("fell back to majority: no task has two labels to learn from")
        if self.converged is None:
            return ""
        if self.converged:
            return gettext("converged")
        return gettext("did not converge in %(rounds)s rounds: treat its grades with care") % {
            "rounds": DAWID_SKENE_MAX_ITER
        }


def aggregated_grades(*, campaign: Campaign, relevance: RelevanceLabels) -> tuple[np.ndarray, AggregationFit]:
    """[n_tasks] each labelled task's grade by the campaign's aggregation, adjudications applied, and how
    the aggregation went."""
    aggregated = aggregate_grades(
        relevance.judgment_task,
        relevance.judgment_annotator,
        relevance.judgment_grade,
        n_tasks=relevance.n_tasks,
        scale=sorted(campaign.grade_values),
        method=campaign.aggregation,
        gold=relevance.gold,
        adjudication=relevance.adjudication,
    )
    fit = AggregationFit(aggregated.method.value, aggregated.converged, aggregated.fell_back)
    return aggregated.grade, fit


def aggregated_task_grades(*, campaign: Campaign, relevance: RelevanceLabels) -> np.ndarray:
    """[n_tasks] each labelled task's grade by the campaign's aggregation, adjudications applied."""
    return aggregated_grades(campaign=campaign, relevance=relevance)[0]


def campaign_aggregated_labels(*, campaign: Campaign) -> AggregatedLabels:
    """The campaign's aggregated labels by external ids (what a qrels file holds), in id order; excluded
    annotators' labels left out."""
    queries = campaign_queries(campaign=campaign)
    excluded = excluded_annotators(campaign=campaign)
    relevance = campaign_relevance_labels(campaign=campaign, queries=queries, excluded=excluded)
    grades = aggregated_task_grades(campaign=campaign, relevance=relevance)
    labelled = ~np.isnan(grades)
    document_pk = relevance.task_document[labelled]
    with_task = RelevanceTask.objects.filter(document_id=OuterRef("pk"))
    documents = dict(
        Document.objects.filter(Exists(with_task), campaign=campaign)
        .order_by()
        .values_list("pk", "external_id")
    )
    query_ids = queries.external_id[relevance.task_query[labelled]]
    document_ids = np.array([documents[pk] for pk in document_pk.tolist()], dtype=object)
    order = np.lexsort((document_ids, query_ids))
    return AggregatedLabels(
        query_ids=query_ids[order],
        document_ids=document_ids[order],
        grades=grades[labelled][order],
        method=campaign.aggregation,
    )
