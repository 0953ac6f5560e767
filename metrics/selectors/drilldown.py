"""Read for one query of a launch review: every model's ranking with labels, grades and measures."""

import math
from dataclasses import dataclass, field

import numpy as np

from annotation.list_changes import Move, rank_move
from annotation.models import Campaign, Document, Query
from annotation.selectors.rankings import ranked_entries
from metrics.selectors.aggregation import aggregated_task_grades
from metrics.selectors.evaluation_data import campaign_evaluation_data, evaluation_depth
from metrics.selectors.scores import campaign_measures, scores_of_models


@dataclass(frozen=True)
class RankedDocument:
    rank: int
    external_id: str
    title: str
    url: str
    label: float | None  # aggregated
    grades: list[int]  # every annotator's grade
    online_rank: int | None  # where the online model ranked it
    move: Move | None = None  # against the online list (None for the online model itself)


@dataclass(frozen=True)
class VerdictCounts:
    good: int
    same: int
    bad: int


@dataclass(frozen=True)
class ModelRanking:
    name: str
    role: str
    documents: list[RankedDocument]
    scores: dict[str, float]
    verdicts: VerdictCounts | None  # experimental models
    identical: bool
    dropped: list[tuple[int, str]] = field(default_factory=list)  # (online rank, id) of the online
    # list's documents this model does not rank


@dataclass(frozen=True)
class QueryDrilldown:
    campaign: Campaign
    query: Query
    measures: list[str]
    aggregation: str
    judged_documents: int
    models: list[ModelRanking]


def query_drilldown(*, campaign: Campaign, query_pk: int) -> QueryDrilldown:
    """Every model's ranking of one query with each document's aggregated label, and the query's measures.

    Labels are aggregated over the whole campaign (reliability weights and Dawid–Skene need every label).
    Raises Query.DoesNotExist for a query of another campaign.
    """
    query = Query.objects.get(campaign=campaign, pk=query_pk)
    data = campaign_evaluation_data(campaign=campaign)
    relevance = data.relevance
    grades = aggregated_task_grades(campaign=campaign, relevance=relevance)
    query_index = int(data.queries.index_of(np.array([query.pk]))[0])
    tasks = np.flatnonzero(relevance.task_query == query_index)
    label_of = {int(relevance.task_document[t]): grades[t] for t in tasks.tolist()}
    raw: dict[int, list[int]] = {}
    judgment_rows = np.flatnonzero(np.isin(relevance.judgment_task, tasks))
    for row in judgment_rows.tolist():
        document = int(relevance.task_document[relevance.judgment_task[row]])
        raw.setdefault(document, []).append(int(relevance.judgment_grade[row]))

    entries = ranked_entries(
        model_pks=[model.pk for model in data.models], query_pk=query.pk, depth=evaluation_depth(campaign)
    )
    lists: dict[int, list[tuple[int, int]]] = {}
    for model_pk, rank, document in zip(
        entries.model.tolist(), entries.rank.tolist(), entries.document.tolist(), strict=True
    ):
        lists.setdefault(model_pk, []).append((rank, document))
    documents = {
        pk: (external_id, title, url)
        for pk, external_id, title, url in Document.objects.filter(
            pk__in={document for ranked in lists.values() for _, document in ranked}
        )
        .order_by()
        .values_list("pk", "external_id", "title", "url")
    }
    sbs = data.side_by_side
    # The report's measures, diversity ones too, as the report computes them: this query's row of all.
    measures, _ = campaign_measures(campaign, data)
    scored = scores_of_models(campaign=campaign, data=data, measures=measures)
    row = np.flatnonzero(scored.layout.evaluated == query_index)
    online_pk = next((model.pk for model in data.models if model.is_online), None)
    online_rank = {document: rank for rank, document in (lists.get(online_pk, []) if online_pk else [])}
    models = []
    for index, model in enumerate(data.models):
        ranked = lists.get(model.pk, [])
        per_query = scored.models[index].per_query
        task = np.flatnonzero((sbs.task_query == query_index) & (sbs.task_model == index))
        verdicts = None
        if not model.is_online:
            verdict = sbs.preference_verdict[np.isin(sbs.preference_task, task)]
            good, same, bad = (int((verdict == value).sum()) for value in (1, 0, -1))
            verdicts = VerdictCounts(good=good, same=same, bad=bad)
        models.append(
            ModelRanking(
                name=model.name,
                role=model.role,
                documents=[
                    RankedDocument(
                        rank=rank,
                        external_id=documents[document][0],
                        title=documents[document][1],
                        url=documents[document][2],
                        label=None if np.isnan(label_of.get(document, np.nan)) else float(label_of[document]),
                        grades=sorted(raw.get(document, [])),
                        online_rank=online_rank.get(document),
                        move=None if model.is_online else rank_move(online_rank.get(document), rank),
                    )
                    for rank, document in ranked
                ],
                dropped=[]
                if model.is_online
                else [
                    (rank, documents[document][0])
                    for document, rank in online_rank.items()
                    if document not in {listed for _, listed in ranked}
                ],
                # A query without labels has no measure ("—").
                scores={name: float(per_query[name][row[0]]) if row.size else math.nan for name in measures},
                verdicts=verdicts,
                identical=bool(sbs.task_identical[task].any()),
            )
        )
    return QueryDrilldown(
        campaign=campaign,
        query=query,
        measures=measures,
        aggregation=campaign.aggregation,
        judged_documents=sum(not np.isnan(label) for label in label_of.values()),
        models=models,
    )
