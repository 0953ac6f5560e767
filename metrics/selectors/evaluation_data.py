"""Reads for metrics and launch decisions.

A campaign's labels, rankings and verdicts come out in a few queries as NumPy columns (`values_list` of ids
and numbers read by `plumbing.columns.fetch_columns`, never model instances), indexed the way
`metrics.compute` wants them: queries, tasks and annotators as 0-based indices.
Nothing here depends on the number of queries or labels for its query count.
"""

from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass
from functools import partial

import numpy as np
from django.db.models import Case, IntegerField, OuterRef, Subquery, When
from django.db.models.functions import Cast

from annotation.models import (
    Adjudication,
    AnnotatorExclusion,
    Campaign,
    Judgment,
    Preference,
    Query,
    RankingModel,
    RelevanceTask,
    RepeatAnswer,
    SideBySideTask,
    Verdict,
)
from annotation.selectors.rankings import RankedEntries, ranked_entries
from metrics.compute.labels import TaskLabels, sorted_find
from metrics.selectors.diversity_rows import DiversityRows, campaign_diversity_rows
from plumbing.columns import fetch_columns, read_beside

VERDICT_VALUE: dict[str, float] = {Verdict.GOOD: 1.0, Verdict.SAME: 0.0, Verdict.BAD: -1.0}


@dataclass(frozen=True)
class CampaignQueries:
    """The campaign's queries in primary-key order; every other table refers to them by index."""

    pk: np.ndarray
    external_id: np.ndarray
    text: np.ndarray
    segment: np.ndarray
    weight: np.ndarray

    def __len__(self) -> int:
        return self.pk.size

    def index_of(self, pks: np.ndarray) -> np.ndarray:
        """Each of `pks` as its index in `pk` (as `np.searchsorted` places it). The queries of a campaign
        imported in one go have ids without a gap: then by subtraction, which for a large campaign's tasks,
        in no order of query, took a hundredth of the search's time (12.6 ms for 125,000)."""
        n = self.pk.size
        if n and int(self.pk[-1]) - int(self.pk[0]) + 1 == n:
            index = pks - self.pk[0]
            if index.size == 0 or (index.min() >= 0 and index.max() < n):
                return index
        return np.searchsorted(self.pk, pks)


@dataclass(frozen=True)
class CampaignModel:
    pk: int
    name: str
    role: str

    @property
    def is_online(self) -> bool:
        return self.role == RankingModel.Role.ONLINE


@dataclass(frozen=True)
class RelevanceLabels:
    """Every relevance task of the campaign and its raw grades.

    `task_*` are per task, `judgment_*` per judgment; `judgment_task` indexes the tasks and
    `judgment_annotator` indexes `annotator_pk`. `gold` and `adjudication` hold task indices.
    """

    task_pk: np.ndarray
    task_query: np.ndarray
    task_document: np.ndarray
    judgment_task: np.ndarray
    judgment_annotator: np.ndarray
    judgment_grade: np.ndarray
    judgment_seconds: np.ndarray  # NaN where not recorded
    annotator_pk: np.ndarray
    gold: TaskLabels
    adjudication: TaskLabels

    @property
    def n_tasks(self) -> int:
        return self.task_pk.size


@dataclass(frozen=True)
class RankingRows:
    """Model rankings, one entry per ranked document: the top evaluation depth and deeper judged ones."""

    model: np.ndarray
    query: np.ndarray
    document: np.ndarray
    rank: np.ndarray


@dataclass(frozen=True)
class PreferenceRows:
    """Every side-by-side verdict of a campaign by primary keys, as fetched."""

    task_pk: np.ndarray
    annotator_pk: np.ndarray
    verdict: np.ndarray  # +1 good, 0 same, -1 bad for the experimental model
    strength: np.ndarray  # 1 slightly, 2 much; NaN when not given
    on_left: np.ndarray  # the experimental list was shown on the left


@dataclass(frozen=True)
class SideBySideVerdicts:
    """Side-by-side tasks and their verdicts (+1 good, 0 same, -1 bad for the experimental model)."""

    task_query: np.ndarray
    task_model: np.ndarray
    task_identical: np.ndarray
    preference_task: np.ndarray
    preference_annotator: np.ndarray
    preference_verdict: np.ndarray
    preference_strength: np.ndarray  # 1 slightly, 2 much; NaN when not given
    adjudication: TaskLabels


@dataclass(frozen=True)
class CampaignEvaluationData:
    """Everything a launch report computes from, fetched together."""

    campaign: Campaign
    queries: CampaignQueries
    models: list[CampaignModel]
    relevance: RelevanceLabels
    rankings: RankingRows
    side_by_side: SideBySideVerdicts
    preferences: PreferenceRows  # the verdicts behind `side_by_side`, for the agreement figures
    diversity: DiversityRows  # intents, attributes, popularity and near-duplicates (`selectors/diversity`)


def campaign_queries(*, campaign: Campaign) -> CampaignQueries:
    rows = list(
        Query.objects.filter(campaign=campaign)
        .order_by("pk")
        .values_list("pk", "external_id", "text", "segment", "weight")
    )
    pk, external_id, text, segment, weight = zip(*rows, strict=True) if rows else ([], [], [], [], [])
    return CampaignQueries(
        pk=np.array(pk, dtype=np.int64),
        external_id=np.array(external_id, dtype=object),
        text=np.array(text, dtype=object),
        segment=np.array(segment, dtype=object),
        weight=np.array(weight, dtype=float),
    )


def campaign_models(*, campaign: Campaign) -> list[CampaignModel]:
    """The online model first, then the experimental ones by name."""
    # Unordered (sorted below): the models' default order joins the campaign to sort by it.
    rows = RankingModel.objects.filter(campaign=campaign).order_by().values_list("pk", "name", "role")
    models = [CampaignModel(pk, name, role) for pk, name, role in rows]
    return sorted(models, key=lambda model: (not model.is_online, model.name))


NO_ONE = np.zeros(0, dtype=np.int64)


def excluded_annotators(*, campaign: Campaign) -> np.ndarray:
    """The ids of the annotators whose labels a manager left out of the campaign (exclusions in force)."""
    return np.fromiter(
        AnnotatorExclusion.objects.filter(campaign=campaign, reinstated_at__isnull=True).values_list(
            "annotator_id", flat=True
        ),
        dtype=np.int64,
    )


def campaign_relevance_labels(
    *, campaign: Campaign, queries: CampaignQueries, excluded: np.ndarray = NO_ONE
) -> RelevanceLabels:
    """`campaign_relevance_labels_later`, waited for."""
    return campaign_relevance_labels_later(campaign=campaign, excluded=excluded).result(queries)


@dataclass(frozen=True)
class LaterRelevanceLabels:
    """A campaign's relevance labels on their way (`campaign_relevance_labels_later`). The caller reads the
    campaign's queries meanwhile and hands them to `result`, which indexes the tasks' queries by them."""

    read: Future[tuple[Callable[..., RelevanceLabels], np.ndarray]]  # the labels but `task_query`; its ids

    def result(self, queries: CampaignQueries) -> RelevanceLabels:
        labels, task_query_pk = self.read.result()
        return labels(task_query=queries.index_of(task_query_pk))


def by_first_column(columns: list[np.ndarray]) -> list[np.ndarray]:
    """The columns' rows in ascending order of the first (a stable sort, run only when they are not)."""
    first = columns[0]
    if np.all(first[1:] >= first[:-1]):
        return columns
    order = np.argsort(first, kind="stable")
    return [column[order] for column in columns]


def campaign_relevance_labels_later(
    *, campaign: Campaign, excluded: np.ndarray = NO_ONE
) -> LaterRelevanceLabels:
    """Tasks, gold grades (of the few gold tasks), adjudicated grades and judgments (with their seconds) in
    four queries of integer ids and numbers; the others' tasks are matched to the tasks by id in NumPy.

    The four reads start on a second connection, where they run beside the caller's next reads
    (`read_beside`), and are matched there; the caller reads the campaign's queries meanwhile (14–18 ms for
    12,500 of them) and hands them to `result`, which indexes the tasks' queries. The judgments of
    `excluded` annotators (ids) are left out.
    """
    # In the table's order, sorted by id here: PostgreSQL reads a large campaign's tasks faster in a scan of
    # the table than along the primary key (30 against 40 ms for 125,000), and they lie mostly in id order.
    tasks = (
        RelevanceTask.objects.filter(campaign=campaign)
        .order_by()
        .values_list("pk", "query_id", "document_id")
    )
    # The gold grades apart, by their own index: sending a grade with every task was a quarter of that read.
    gold_tasks = (
        RelevanceTask.objects.filter(campaign=campaign, gold_grade__isnull=False)
        .order_by()
        .values_list("pk", "gold_grade")
    )
    adjudications = (
        Adjudication.objects.filter(relevance_task__campaign=campaign)
        .order_by()
        .values_list("relevance_task_id", "grade")
    )
    judgment_rows = (
        Judgment.objects.filter(campaign=campaign)
        .order_by()
        .values_list("task_id", "annotator_id", "grade", "seconds_spent")
    )

    def labels() -> tuple[Callable[..., RelevanceLabels], np.ndarray]:
        task_pk, task_query_pk, task_document = by_first_column(fetch_columns(tasks, "iii"))
        gold_pk, gold_grade = by_first_column(fetch_columns(gold_tasks, "ii"))
        adjudicated_pk, adjudicated_grade = fetch_columns(adjudications, "ii")
        judgment_task_pk, annotator_pk, grade, seconds = fetch_columns(judgment_rows, "iiif")
        # The tasks and their judgments are separate statements, so a task pooled between them may have
        # judgments but no row: those are left out rather than matched to a neighbouring task.
        judgment_task, known = sorted_find(task_pk, judgment_task_pk)
        if excluded.size:
            known &= ~np.isin(annotator_pk, excluded)
        if not known.all():
            annotator_pk, grade, seconds = annotator_pk[known], grade[known], seconds[known]
            judgment_task = judgment_task[known]
        gold, gold_known = sorted_find(task_pk, gold_pk)  # a task pooled since the first read: left out
        annotators, annotator_index = np.unique(annotator_pk, return_inverse=True)
        return partial(
            RelevanceLabels,
            task_pk=task_pk,
            task_document=task_document,
            judgment_task=judgment_task,
            judgment_annotator=annotator_index,
            judgment_grade=grade.astype(float),
            judgment_seconds=seconds,
            annotator_pk=annotators,
            gold=TaskLabels(gold[gold_known], gold_grade[gold_known].astype(float)),
            adjudication=TaskLabels(
                np.searchsorted(task_pk, adjudicated_pk), adjudicated_grade.astype(float)
            ),
        ), task_query_pk

    return LaterRelevanceLabels(read_beside(labels))


def campaign_ranking_rows(
    *,
    entries: RankedEntries,
    queries: CampaignQueries,
    models: list[CampaignModel],
    depth: int,
    relevance: RelevanceLabels,
) -> RankingRows:
    """Every model's top `depth`, plus any deeper document that has a relevance task (it may carry a label).

    Deeper unjudged documents have gain 0 and cannot change any measure but Judged@k beyond `depth`.
    """
    query = queries.index_of(entries.query)
    keep = entries.rank <= depth
    deeper = np.flatnonzero(~keep)
    if deeper.size and relevance.n_tasks:
        # (query index, document pk) as one integer: query indices are below len(queries).
        width = max(len(queries.pk), 1)
        task_pairs = relevance.task_document * width + relevance.task_query
        keep[deeper] = np.isin(entries.document[deeper] * width + query[deeper], task_pairs)
    model_order = np.array([model.pk for model in models], dtype=np.int64)
    sorter = np.argsort(model_order)
    return RankingRows(
        model=sorter[np.searchsorted(model_order, entries.model[keep], sorter=sorter)],
        query=query[keep],
        document=entries.document[keep],
        rank=entries.rank[keep],
    )


def campaign_preferences(*, campaign: Campaign, excluded: np.ndarray = NO_ONE) -> PreferenceRows:
    """Every side-by-side verdict in one query, the verdict mapped to its number in SQL; those of `excluded`
    annotators (ids) left out."""
    verdict = Case(*(When(verdict=name, then=int(value)) for name, value in VERDICT_VALUE.items()))
    task_pk, annotator_pk, value, strength, on_left = fetch_columns(
        Preference.objects.filter(campaign=campaign)
        .order_by()
        .annotate(value=verdict, on_left=Cast("experimental_on_left", IntegerField()))
        .values_list("task_id", "annotator_id", "value", "strength", "on_left"),
        "iiifi",
    )
    kept = ~np.isin(annotator_pk, excluded) if excluded.size else slice(None)
    return PreferenceRows(
        task_pk[kept],
        annotator_pk[kept],
        value[kept].astype(float),
        strength[kept],
        on_left[kept].astype(bool),
    )


def campaign_side_by_side(
    *,
    campaign: Campaign,
    queries: CampaignQueries,
    models: list[CampaignModel],
    preferences: PreferenceRows | None = None,
) -> SideBySideVerdicts:
    """Side-by-side tasks, preferences (unless already fetched) and adjudicated verdicts in three queries."""
    if preferences is None:
        preferences = campaign_preferences(campaign=campaign)
    task_pk, query_pk, model_pk, identical = fetch_columns(
        SideBySideTask.objects.filter(campaign=campaign)
        .order_by("pk")
        .annotate(identical=Cast("lists_identical", IntegerField()))
        .values_list("pk", "query_id", "experimental_model_id", "identical"),
        "iiii",
    )
    adjudication_rows = list(
        Adjudication.objects.filter(side_by_side_task__campaign=campaign)
        .order_by()
        .values_list("side_by_side_task_id", "verdict")
    )
    adjudicated_pk = np.array([row[0] for row in adjudication_rows], dtype=np.int64)
    adjudicated_verdict = np.array([VERDICT_VALUE[row[1]] for row in adjudication_rows], dtype=float)
    model_index = {model.pk: index for index, model in enumerate(models)}
    _, annotator_index = np.unique(preferences.annotator_pk, return_inverse=True)
    return SideBySideVerdicts(
        task_query=queries.index_of(query_pk),
        task_model=np.array([model_index[pk] for pk in model_pk.tolist()], dtype=np.int64),
        task_identical=identical.astype(bool),
        preference_task=np.searchsorted(task_pk, preferences.task_pk),
        preference_annotator=annotator_index,
        preference_verdict=preferences.verdict,
        preference_strength=preferences.strength,
        adjudication=TaskLabels(np.searchsorted(task_pk, adjudicated_pk), adjudicated_verdict),
    )


def evaluation_depth(campaign: Campaign) -> int:
    """How deep rankings are read: every cut-off, the pool and the side-by-side lists."""
    return max([campaign.pool_depth, campaign.gsb_depth, *campaign.cutoffs])


@dataclass(frozen=True)
class RepeatPairs:
    """Each repeat's answer beside the annotator's first answer to the task (grades; verdicts as -1/0/+1 for
    the experimental list), by annotator id."""

    grade_annotator_pk: np.ndarray
    first_grade: np.ndarray
    second_grade: np.ndarray
    verdict_annotator_pk: np.ndarray
    first_verdict: np.ndarray
    second_verdict: np.ndarray


def campaign_repeat_pairs(*, campaign: Campaign) -> RepeatPairs:
    """Every answered repeat of the campaign with the first answer it repeats, in two queries."""
    answers = RepeatAnswer.objects.filter(assignment__campaign=campaign).order_by()
    # One label per task and annotator: unordered, or the models' default ordering joins five tables into
    # each subquery and sorts (4.3–5.2 ms to plan for 0.2 to run, per statement, in EXPLAIN ANALYZE).
    first_grade = (
        Judgment.objects.filter(
            task=OuterRef("assignment__relevance_task"), annotator=OuterRef("assignment__annotator")
        )
        .order_by()
        .values("grade")[:1]
    )
    grades = list(
        answers.filter(grade__isnull=False)
        .annotate(first=Subquery(first_grade))
        .filter(first__isnull=False)
        .values_list("assignment__annotator", "first", "grade")
    )
    first_verdict = (
        Preference.objects.filter(
            task=OuterRef("assignment__side_by_side_task"), annotator=OuterRef("assignment__annotator")
        )
        .order_by()
        .values("verdict")[:1]
    )
    verdicts = list(
        answers.exclude(verdict="")
        .annotate(first=Subquery(first_verdict))
        .filter(first__isnull=False)
        .values_list("assignment__annotator", "first", "verdict")
    )

    return RepeatPairs(
        grade_annotator_pk=np.array([row[0] for row in grades], dtype=np.int64),
        first_grade=np.array([row[1] for row in grades], dtype=float),
        second_grade=np.array([row[2] for row in grades], dtype=float),
        verdict_annotator_pk=np.array([row[0] for row in verdicts], dtype=np.int64),
        first_verdict=np.array([VERDICT_VALUE[row[1]] for row in verdicts], dtype=float),
        second_verdict=np.array([VERDICT_VALUE[row[2]] for row in verdicts], dtype=float),
    )


def campaign_evaluation_data(*, campaign: Campaign, with_excluded: bool = False) -> CampaignEvaluationData:
    """Every input of a launch report; the judgments are read on a second connection meanwhile. The labels
    of annotators a manager excluded are left out, unless `with_excluded`."""
    excluded = NO_ONE if with_excluded else excluded_annotators(campaign=campaign)
    relevance = campaign_relevance_labels_later(campaign=campaign, excluded=excluded)
    queries = campaign_queries(campaign=campaign)
    models = campaign_models(campaign=campaign)
    entries = ranked_entries(model_pks=[model.pk for model in models])
    preferences = campaign_preferences(campaign=campaign, excluded=excluded)
    side_by_side = campaign_side_by_side(
        campaign=campaign, queries=queries, models=models, preferences=preferences
    )
    diversity = campaign_diversity_rows(campaign=campaign, excluded=excluded)  # while the judgments are read
    labels = relevance.result(queries)
    return CampaignEvaluationData(
        campaign=campaign,
        queries=queries,
        models=models,
        relevance=labels,
        rankings=campaign_ranking_rows(
            entries=entries,
            queries=queries,
            models=models,
            depth=evaluation_depth(campaign),
            relevance=labels,
        ),
        side_by_side=side_by_side,
        preferences=preferences,
        diversity=diversity,
    )
