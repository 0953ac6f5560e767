"""The reviewers' reads: the queue of doubtful tasks, one task with its labels, a task's label history."""

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Any

from django.db.models import Case, Count, F, Max, Min, OuterRef, Q, QuerySet, Subquery, When
from django.utils import timezone
from django.utils.translation import gettext

from annotation.disputes import grade_dispute, queue_rank, verdict_dispute
from annotation.list_changes import Move, list_changes
from annotation.models import (
    Adjudication,
    Campaign,
    Document,
    Judgment,
    LabelRevision,
    Preference,
    RankingModel,
    RelevanceTask,
    ReviewLease,
    SideBySideTask,
    Verdict,
)
from annotation.selectors.rankings import side_by_side_lists
from annotation.selectors.task_page import label_version
from annotation.task_kinds import RELEVANCE, SIDE_BY_SIDE, TaskKind, task_kind


class QueueState(StrEnum):
    """Which tasks of the queue to list: open (not yet adjudicated), settled (adjudicated), or all."""

    OPEN = "open"
    SETTLED = "settled"
    ALL = "all"


@dataclass(frozen=True)
class QueueItem:
    """A task worth a reviewer's look. `disagreement` is the labels' spread over the scale's range, 0 to 1."""

    kind: str
    task_pk: int
    query: str
    subject: str  # the document, or the experimental model
    labels: list[str]
    disagreement: float
    failed_gold: bool
    adjudicated: str | None
    held_by: str | None = None  # the reviewer who opened it lately (`ReviewLease`), while their hold lasts


@dataclass(frozen=True)
class _Row:
    """A queue entry before its texts and labels are fetched."""

    kind: str
    task_pk: int
    disagreement: float
    failed_gold: bool
    adjudicated: int | str | None
    held_by: str | None  # see QueueItem

    @property
    def rank(self) -> tuple:
        return queue_rank(
            dispute=self.disagreement, failed_gold=self.failed_gold, kind=self.kind, task_pk=self.task_pk
        )


class QueueItems:
    """The queue's tasks in order, as a sequence a paginator slices: a slice fetches the texts and labels of
    its own tasks only (two queries per kind in it), so a page costs the same at any queue length."""

    def __init__(self, rows: list[_Row]):
        self._rows = rows

    def __len__(self) -> int:
        return len(self._rows)

    def __getitem__(self, index: int | slice) -> QueueItem | list[QueueItem]:
        if isinstance(index, slice):
            return _queue_items(self._rows[index])
        return _queue_items([self._rows[index]])[0]

    def __iter__(self) -> Iterator[QueueItem]:
        return iter(_queue_items(self._rows))


@dataclass(frozen=True)
class ReviewQueue:
    campaign: Campaign
    items: QueueItems  # the tasks `state` and `kind` select
    state: QueueState
    kind: str | None  # a task kind's name, None for both
    n_open: int  # of `kind`, whatever `state` is
    n_settled: int


def _queue_rows(campaign: Campaign, kind: TaskKind | None) -> list[_Row]:
    """Every task of `kind` (None: both) that is disputed, fails gold or was adjudicated, in queue order.

    A task is disputed when its labels differ, or fails gold when a label differs from its gold label.
    """
    return _queue_rows_by_campaign([campaign], kind)[campaign.pk]


def _queue_rows_by_campaign(campaigns: list[Campaign], kind: TaskKind | None) -> dict[int, list[_Row]]:
    """`_queue_rows` of each campaign by its id: one query per kind whatever the number of campaigns."""
    now = timezone.now()
    holder = Case(When(review_lease__expires_at__gt=now, then=F("review_lease__reviewer__username")))
    rows: dict[int, list[_Row]] = {campaign.pk: [] for campaign in campaigns}
    if kind in (None, RELEVANCE):
        # The judgments grouped by task, each task's columns looked up by its key: joined to the tasks,
        # PostgreSQL walked every task of every campaign when the judgments' statistics predated the newest.
        task = RelevanceTask.objects.filter(pk=OuterRef("task")).order_by()
        adjudicated = Adjudication.objects.filter(relevance_task=OuterRef("task")).order_by()
        held = ReviewLease.objects.filter(relevance_task=OuterRef("task"), expires_at__gt=now).order_by()
        relevance_rows = (
            Judgment.objects.filter(campaign__in=campaigns)
            .annotate(gold=Subquery(task.values("gold_grade")[:1]))
            .order_by()
            .values("campaign", "task")
            .annotate(
                low=Min("grade"),
                high=Max("grade"),
                n_off_gold=Count("pk", filter=~Q(grade=F("gold"))),  # no gold: never unequal
                adjudicated=Subquery(adjudicated.values("grade")),
                held_by=Subquery(held.values("reviewer__username")),
            )
            .values_list("campaign", "task", "low", "high", "n_off_gold", "adjudicated", "held_by")
        )
        scales = {campaign.pk: campaign.grade_values for campaign in campaigns}
        for campaign_pk, pk, low, high, n_off_gold, adjudicated, held_by in relevance_rows:
            if high > low or n_off_gold or adjudicated is not None:
                dispute = grade_dispute(low, high, scales[campaign_pk])
                rows[campaign_pk].append(
                    _Row(RELEVANCE.name, pk, dispute, n_off_gold > 0, adjudicated, held_by)
                )
    if kind in (None, SIDE_BY_SIDE):
        verdict_rows = (
            # Only the tasks with a verdict or a final label: a task adjudicated before any verdict stays.
            SideBySideTask.objects.filter(campaign__in=campaigns)
            .filter(Q(preferences__isnull=False) | Q(adjudication__isnull=False))
            .annotate(
                n_good=Count("preferences", filter=Q(preferences__verdict=Verdict.GOOD)),
                n_same=Count("preferences", filter=Q(preferences__verdict=Verdict.SAME)),
                n_bad=Count("preferences", filter=Q(preferences__verdict=Verdict.BAD)),
                n_off_gold=Count(
                    "preferences", filter=~Q(gold_verdict="") & ~Q(preferences__verdict=F("gold_verdict"))
                ),
            )
            .order_by()
            .values_list(
                "campaign", "pk", "n_good", "n_same", "n_bad", "n_off_gold", "adjudication__verdict", holder
            )
        )
        for campaign_pk, pk, n_good, n_same, n_bad, n_off_gold, adjudicated, held_by in verdict_rows:
            spread = verdict_dispute(n_good, n_same, n_bad)
            if spread or n_off_gold or adjudicated:
                rows[campaign_pk].append(
                    _Row(SIDE_BY_SIDE.name, pk, spread, n_off_gold > 0, adjudicated or None, held_by)
                )
    for listed in rows.values():
        listed.sort(key=lambda row: (row.adjudicated is not None, row.rank))
    return rows


def open_disputes_by_campaign(*, campaigns: list[Campaign]) -> dict[int, int]:
    """How many tasks wait in each campaign's review queue (its `n_open`), by campaign id, in two queries."""
    return {
        pk: sum(row.adjudicated is None for row in rows)
        for pk, rows in _queue_rows_by_campaign(campaigns, None).items()
    }


def _held_by_others(row: _Row, reviewer) -> bool:
    return row.held_by is not None and (reviewer is None or row.held_by != reviewer.username)


def review_queue(
    *,
    campaign: Campaign,
    state: QueueState = QueueState.OPEN,
    kind: TaskKind | None = None,
    reviewer=None,
) -> ReviewQueue:
    """The tasks worth a reviewer's look: the most disputed first, then those failing gold; with
    `QueueState.ALL` the settled ones follow the open ones. Open tasks another reviewer than `reviewer` holds
    (`ReviewLease`) come after the other open ones, so reviewers opening the queue at once start apart. Two
    queries, and up to four per slice of `items`."""
    rows = _queue_rows(campaign, kind)
    open_rows = [row for row in rows if row.adjudicated is None]
    open_rows.sort(key=lambda row: _held_by_others(row, reviewer))  # stable: in queue order otherwise
    settled_rows = rows[len(open_rows) :]
    listed = {QueueState.OPEN: open_rows, QueueState.SETTLED: settled_rows, QueueState.ALL: rows}[state]
    return ReviewQueue(
        campaign=campaign,
        items=QueueItems(listed),
        state=state,
        kind=kind.name if kind else None,
        n_open=len(open_rows),
        n_settled=len(settled_rows),
    )


def review_candidates(
    *, campaign: Campaign, after: tuple[str, int] | None, kind: TaskKind | None = None, reviewer=None
) -> list[tuple[str, int]]:
    """The open tasks to go to from the task `after` ((kind name, task id), open or settled; None: from the
    start), as (kind name, task id): those that follow it in the queue, then those before it; none that
    another reviewer than `reviewer` holds. `kind` keeps to one kind of task."""
    rows = _candidates(_queue_rows(campaign, kind), after, reviewer)
    return [(row.kind, row.task_pk) for row in rows]


def _candidates(rows: list[_Row], after: tuple[str, int] | None, reviewer) -> list[_Row]:
    current = next((row for row in rows if (row.kind, row.task_pk) == after), None)
    others = [
        row
        for row in rows
        if row.adjudicated is None and row is not current and not _held_by_others(row, reviewer)
    ]
    following = [row for row in others if current is not None and row.rank > current.rank]
    return following + [row for row in others if row not in following]


def review_next(
    *, campaign: Campaign, after: tuple[str, int], kind: TaskKind | None = None, reviewer=None
) -> QueueItem | None:
    """The first of `review_candidates`, None when there is none."""
    chosen = _candidates(_queue_rows(campaign, kind), after, reviewer)
    return _queue_items(chosen[:1])[0] if chosen else None


def _queue_items(rows: list[_Row]) -> list[QueueItem]:
    """The rows with their query, document or model, and labels."""
    relevance_pks = [row.task_pk for row in rows if row.kind == RELEVANCE.name]
    verdict_pks = [row.task_pk for row in rows if row.kind == SIDE_BY_SIDE.name]
    subjects: dict[tuple[str, int], tuple[str, str]] = {}
    labels: dict[tuple[str, int], list[str]] = {}
    if relevance_pks:
        subjects |= {
            (RELEVANCE.name, pk): (query, title or document_id)
            for pk, query, title, document_id in RelevanceTask.objects.filter(
                pk__in=relevance_pks
            ).values_list("pk", "query__text", "document__title", "document__external_id")
        }
        for task_pk, grade in (
            Judgment.objects.filter(task_id__in=relevance_pks)
            .order_by("grade")
            .values_list("task_id", "grade")
        ):
            labels.setdefault((RELEVANCE.name, task_pk), []).append(str(grade))
    if verdict_pks:
        subjects |= {
            (SIDE_BY_SIDE.name, pk): (query, model)
            for pk, query, model in SideBySideTask.objects.filter(pk__in=verdict_pks).values_list(
                "pk", "query__text", "experimental_model__name"
            )
        }
        for task_pk, verdict in (
            Preference.objects.filter(task_id__in=verdict_pks)
            .order_by("verdict")
            .values_list("task_id", "verdict")
        ):
            labels.setdefault((SIDE_BY_SIDE.name, task_pk), []).append(verdict)
    return [
        QueueItem(
            kind=row.kind,
            task_pk=row.task_pk,
            query=subjects[row.kind, row.task_pk][0],
            subject=subjects[row.kind, row.task_pk][1],
            labels=labels.get((row.kind, row.task_pk), []),
            disagreement=row.disagreement,
            failed_gold=row.failed_gold,
            adjudicated=None if row.adjudicated is None else str(row.adjudicated),
            held_by=row.held_by,
        )
        for row in rows
    ]


@dataclass(frozen=True)
class DocumentView:
    external_id: str
    title: str
    url: str
    body: str


@dataclass(frozen=True)
class LabelView:
    username: str
    value: str
    comment: str
    seconds: float | None
    created_at: datetime
    shown_left: str = ""  # side-by-side: the model whose list was on the left


@dataclass(frozen=True)
class AdjudicationView:
    reviewer: str
    value: str
    reason: str
    updated_at: datetime


@dataclass(frozen=True)
class RevisionView:
    changed_by: str
    created_at: datetime
    kind: str
    old_value: str
    new_value: str
    note: str


@dataclass(frozen=True)
class ReviewTask:
    """Everything a reviewer sees of one task; `choices` are (value, label) of the final label."""

    kind: str
    task_pk: int
    campaign: Campaign
    query: str
    query_description: str
    choices: list[tuple[str, str]]
    gold: str
    labels: list[LabelView]
    adjudication: AdjudicationView | None
    history: list[RevisionView]
    next_item: QueueItem | None
    version: str  # the final label as shown (`label_version`): a save sent with an older one is refused
    held_by: str | None  # another reviewer who opened the task lately (`ReviewLease`), while their hold lasts
    document: DocumentView | None = None
    online_model: str = ""
    experimental_model: str = ""
    online_list: list[DocumentView] | None = None
    experimental_list: list[DocumentView] | None = None

    @property
    def lists(self) -> list[tuple[str, str, list[tuple[DocumentView, Move]]]]:
        """Side by side: (model name, role, top documents each with what changed) of the online model (kept
        or left), then the experimental one (up, down, new, or the same) against the online list."""
        online, experimental = self.online_list or [], self.experimental_list or []
        moves, kept = list_changes(
            [doc.external_id for doc in online], [doc.external_id for doc in experimental]
        )
        return [
            (self.online_model, "online", list(zip(online, kept, strict=True))),
            (self.experimental_model, "experimental", list(zip(experimental, moves, strict=True))),
        ]


def _document_views(documents: list[Document]) -> list[DocumentView]:
    return [DocumentView(doc.external_id, doc.title, doc.url, doc.body) for doc in documents]


def review_task(
    *, task: RelevanceTask | SideBySideTask, next_kind: TaskKind | None = None, reviewer=None
) -> ReviewTask:
    """Query, document or both lists (with model names), every label, the adjudication, the history, and
    the next open task of the queue for `reviewer` (of `next_kind` only, when given)."""
    campaign = task.campaign
    kind = task_kind(task).name
    task_filter = {task_kind(task).assignment_field: task}
    adjudication = (
        Adjudication.objects.filter(**task_filter)
        .values_list("reviewer__username", "grade", "verdict", "reason", "updated_at")
        .first()
    )
    final = adjudication and AdjudicationView(
        adjudication[0],
        str(adjudication[1]) if isinstance(task, RelevanceTask) else adjudication[2],
        adjudication[3],
        adjudication[4],
    )
    holders = ReviewLease.objects.filter(**task_filter, expires_at__gt=timezone.now())
    if reviewer is not None:
        holders = holders.exclude(reviewer=reviewer)
    history = [
        RevisionView(who, when, str(LabelRevision.Kind(kind_value).label), old, new, note)
        for who, when, kind_value, old, new, note in LabelRevision.objects.filter(**task_filter)
        .order_by("-created_at", "-pk")
        .values_list("changed_by__username", "created_at", "kind", "old_value", "new_value", "note")
    ]
    next_item = review_next(campaign=campaign, after=(kind, task.pk), kind=next_kind, reviewer=reviewer)
    common: dict[str, Any] = {
        "kind": kind,
        "task_pk": task.pk,
        "campaign": campaign,
        "query": task.query.text,
        "query_description": task.query.description,
        "history": history,
        "next_item": next_item,
        "adjudication": final,
        "version": label_version(final),
        "held_by": holders.values_list("reviewer__username", flat=True).first(),
    }
    if isinstance(task, RelevanceTask):
        labels = [
            LabelView(username, str(grade), comment, seconds, created_at)
            for username, grade, comment, seconds, created_at in task.judgments.order_by(
                "annotator__username"
            ).values_list("annotator__username", "grade", "comment", "seconds_spent", "created_at")
        ]
        document = task.document
        return ReviewTask(
            **common,
            choices=[(str(grade["value"]), grade["label"]) for grade in campaign.scale],
            gold="" if task.gold_grade is None else str(task.gold_grade),
            labels=labels,
            document=DocumentView(document.external_id, document.title, document.url, document.body),
        )
    online = RankingModel.objects.get(campaign=campaign, role=RankingModel.Role.ONLINE)  # exactly one
    experimental = task.experimental_model
    labels = [
        LabelView(username, verdict, comment, seconds, created_at, experimental.name if left else online.name)
        for username, verdict, comment, seconds, created_at, left in task.preferences.order_by(
            "annotator__username"
        ).values_list(
            "annotator__username", "verdict", "comment", "seconds_spent", "created_at", "experimental_on_left"
        )
    ]
    experimental_list, online_list = side_by_side_lists(task=task, depth=campaign.gsb_depth)
    return ReviewTask(
        **common,
        # In the order the lists stand on the page (`lists`: online left), so key 1 means the left list.
        choices=[
            (Verdict.BAD.value, gettext("%(model)s (left) better") % {"model": online.name}),
            (Verdict.SAME.value, gettext("About the same")),
            (Verdict.GOOD.value, gettext("%(model)s (right) better") % {"model": experimental.name}),
        ],
        gold=task.gold_verdict,
        labels=labels,
        online_model=online.name,
        experimental_model=experimental.name,
        online_list=_document_views(online_list),
        experimental_list=_document_views(experimental_list),
    )


def review_task_get(*, kind: TaskKind, pk: int) -> RelevanceTask | SideBySideTask | None:
    return kind.model.objects.select_related(*kind.related).filter(pk=pk).first()


def label_history(*, task: RelevanceTask | SideBySideTask) -> QuerySet[LabelRevision]:
    """Who changed the task's labels, when, from what to what; newest first."""
    return (
        LabelRevision.objects.filter(**{task_kind(task).assignment_field: task})
        .select_related("changed_by")
        .order_by("-created_at", "-pk")
    )
