"""The reviewers' reads: the queue of doubtful tasks, one task with its labels, a task's label history."""

from dataclasses import dataclass
from datetime import datetime

from django.db.models import Count, F, Max, Min, Q, QuerySet

from annotation.models import (
    Adjudication,
    Campaign,
    Judgment,
    LabelRevision,
    Preference,
    Ranking,
    RankingModel,
    RelevanceTask,
    SideBySideTask,
    Verdict,
)
from annotation.task_kinds import RELEVANCE, SIDE_BY_SIDE, TaskKind, task_kind


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


@dataclass(frozen=True)
class ReviewQueue:
    campaign: Campaign
    items: list[QueueItem]
    n_open: int


def review_queue(
    *, campaign: Campaign, limit: int = 50, exclude: tuple[str, int] | None = None
) -> ReviewQueue:
    """Disputed tasks, most disputed first, then failed gold; adjudicated ones last. At most six queries.

    A task is disputed when its labels differ, or fails gold when a label differs from its gold label.
    """
    scale = campaign.grade_values
    grade_range = (max(scale) - min(scale)) or 1
    relevance_rows = (
        RelevanceTask.objects.filter(campaign=campaign)
        .annotate(
            low=Min("judgments__grade"),
            high=Max("judgments__grade"),
            n_off_gold=Count(
                "judgments", filter=Q(gold_grade__isnull=False) & ~Q(judgments__grade=F("gold_grade"))
            ),
        )
        .filter(low__isnull=False)
        .order_by()
        .values_list("pk", "low", "high", "n_off_gold", "adjudication__grade")
    )
    candidates = [
        (adjudicated is not None, RELEVANCE.name, pk, (high - low) / grade_range, n_off_gold > 0, adjudicated)
        for pk, low, high, n_off_gold, adjudicated in relevance_rows
        if high > low or n_off_gold or adjudicated is not None
    ]
    verdict_rows = (
        SideBySideTask.objects.filter(campaign=campaign)
        .annotate(
            n_good=Count("preferences", filter=Q(preferences__verdict=Verdict.GOOD)),
            n_same=Count("preferences", filter=Q(preferences__verdict=Verdict.SAME)),
            n_bad=Count("preferences", filter=Q(preferences__verdict=Verdict.BAD)),
            n_off_gold=Count(
                "preferences", filter=~Q(gold_verdict="") & ~Q(preferences__verdict=F("gold_verdict"))
            ),
        )
        .order_by()
        .values_list("pk", "n_good", "n_same", "n_bad", "n_off_gold", "adjudication__verdict")
    )
    for pk, n_good, n_same, n_bad, n_off_gold, adjudicated in verdict_rows:
        used = [value for value, n in ((1, n_good), (0, n_same), (-1, n_bad)) if n]
        spread = (max(used) - min(used)) / 2 if used else 0.0
        if spread or n_off_gold or adjudicated:
            candidates.append(
                (bool(adjudicated), SIDE_BY_SIDE.name, pk, spread, n_off_gold > 0, adjudicated or None)
            )
    candidates = [row for row in candidates if (row[1], row[2]) != exclude]
    candidates.sort(key=lambda row: (row[0], -row[3], not row[4], row[1], row[2]))
    n_open = sum(not row[0] for row in candidates)
    chosen = candidates[:limit]

    relevance_pks = [row[2] for row in chosen if row[1] == RELEVANCE.name]
    verdict_pks = [row[2] for row in chosen if row[1] == SIDE_BY_SIDE.name]
    subjects = {
        (RELEVANCE.name, pk): (query, title or document_id)
        for pk, query, title, document_id in RelevanceTask.objects.filter(pk__in=relevance_pks).values_list(
            "pk", "query__text", "document__title", "document__external_id"
        )
    }
    subjects.update(
        ((SIDE_BY_SIDE.name, pk), (query, model))
        for pk, query, model in SideBySideTask.objects.filter(pk__in=verdict_pks).values_list(
            "pk", "query__text", "experimental_model__name"
        )
    )
    labels: dict[tuple[str, int], list[str]] = {}
    for task_pk, grade in (
        Judgment.objects.filter(task_id__in=relevance_pks).order_by("grade").values_list("task_id", "grade")
    ):
        labels.setdefault((RELEVANCE.name, task_pk), []).append(str(grade))
    for task_pk, verdict in (
        Preference.objects.filter(task_id__in=verdict_pks)
        .order_by("verdict")
        .values_list("task_id", "verdict")
    ):
        labels.setdefault((SIDE_BY_SIDE.name, task_pk), []).append(verdict)
    items = [
        QueueItem(
            kind=kind,
            task_pk=pk,
            query=subjects[kind, pk][0],
            subject=subjects[kind, pk][1],
            labels=labels.get((kind, pk), []),
            disagreement=spread,
            failed_gold=failed_gold,
            adjudicated=None if adjudicated is None else str(adjudicated),
        )
        for _, kind, pk, spread, failed_gold, adjudicated in chosen
    ]
    return ReviewQueue(campaign=campaign, items=items, n_open=n_open)


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
    document: DocumentView | None = None
    online_model: str = ""
    experimental_model: str = ""
    online_list: list[DocumentView] | None = None
    experimental_list: list[DocumentView] | None = None

    @property
    def lists(self) -> list[tuple[str, str, list[DocumentView]]]:
        """Side by side: (model name, role, top documents) of the online, then the experimental model."""
        return [
            (self.online_model, "online", self.online_list or []),
            (self.experimental_model, "experimental", self.experimental_list or []),
        ]


def _ranked_documents(model_pk: int, query_pk: int, depth: int) -> list[DocumentView]:
    rows = (
        Ranking.objects.filter(model_id=model_pk, query_id=query_pk, rank__lte=depth)
        .order_by("rank")
        .values_list("document__external_id", "document__title", "document__url", "document__body")
    )
    return [DocumentView(*row) for row in rows]


def review_task(*, task: RelevanceTask | SideBySideTask) -> ReviewTask:
    """Query, document or both lists (with model names), every label, the adjudication, the history."""
    campaign = task.campaign
    is_relevance = isinstance(task, RelevanceTask)
    kind = task_kind(task).name
    task_filter = {task_kind(task).assignment_field: task}
    adjudication = (
        Adjudication.objects.filter(**task_filter)
        .values_list("reviewer__username", "grade", "verdict", "reason", "updated_at")
        .first()
    )
    history = [
        RevisionView(who, when, LabelRevision.Kind(kind_value).label, old, new, note)
        for who, when, kind_value, old, new, note in LabelRevision.objects.filter(**task_filter)
        .order_by("-created_at", "-pk")
        .values_list("changed_by__username", "created_at", "kind", "old_value", "new_value", "note")
    ]
    next_item = next(iter(review_queue(campaign=campaign, limit=1, exclude=(kind, task.pk)).items), None)
    if next_item is not None and next_item.adjudicated is not None:
        next_item = None
    common = {
        "kind": kind,
        "task_pk": task.pk,
        "campaign": campaign,
        "query": task.query.text,
        "query_description": task.query.description,
        "history": history,
        "next_item": next_item,
    }
    if is_relevance:
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
            adjudication=adjudication
            and AdjudicationView(adjudication[0], str(adjudication[1]), adjudication[3], adjudication[4]),
            document=DocumentView(document.external_id, document.title, document.url, document.body),
        )
    online = RankingModel.objects.filter(campaign=campaign, role=RankingModel.Role.ONLINE).first()
    experimental = task.experimental_model
    labels = [
        LabelView(username, verdict, comment, seconds, created_at, experimental.name if left else online.name)
        for username, verdict, comment, seconds, created_at, left in task.preferences.order_by(
            "annotator__username"
        ).values_list(
            "annotator__username", "verdict", "comment", "seconds_spent", "created_at", "experimental_on_left"
        )
    ]
    return ReviewTask(
        **common,
        # In the order the lists stand on the page (`lists`: online left), so key 1 means the left list.
        choices=[
            (Verdict.BAD.value, f"{online.name} (left) better"),
            (Verdict.SAME.value, "About the same"),
            (Verdict.GOOD.value, f"{experimental.name} (right) better"),
        ],
        gold=task.gold_verdict,
        labels=labels,
        adjudication=adjudication
        and AdjudicationView(adjudication[0], adjudication[2], adjudication[3], adjudication[4]),
        online_model=online.name,
        experimental_model=experimental.name,
        online_list=_ranked_documents(online.pk, task.query_id, campaign.gsb_depth),
        experimental_list=_ranked_documents(experimental.pk, task.query_id, campaign.gsb_depth),
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
