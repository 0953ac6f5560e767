"""The annotator's workbench: which tasks an annotator may be handed, progress, what a task page shows."""

import functools
import json
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.db import connection
from django.db.models import Count, Exists, F, OuterRef, Q, QuerySet, Subquery
from django.db.models.functions import Coalesce
from django.utils import timezone

from annotation.links import is_web_url
from annotation.models import (
    Assignment,
    Campaign,
    Document,
    GSBScale,
    Judgment,
    Preference,
    RelevanceTask,
    SideBySideTask,
    Verdict,
)
from annotation.roles import can_review
from annotation.selectors.rankings import (
    LISTED_DOCUMENTS,
    SIDE_BY_SIDE_LISTS,
    listed_documents,
    listed_documents_of,
)
from annotation.task_kinds import RELEVANCE, TASK_KINDS, TaskKind, assignment_task, kind_named
from plumbing import rows

# Keys for grades outside 0-9; none of g s u c m, which the workbench uses.
GRADE_LETTER_KEYS = "xzvbnqwertyiop"
# An intent's key toggles its tick: home-row letters no grade and no other command takes.
INTENT_KEYS = "adfhjkl"


def row_count(queryset, field: str):
    """A queryset filtered on `field=OuterRef(...)` as a subquery of its row count (0 when none)."""
    return Coalesce(Subquery(queryset.order_by().values(field).annotate(n=Count("pk")).values("n")[:1]), 0)


def _tasks_unseen(*, kind: TaskKind, annotator, now) -> QuerySet:
    """Tasks the annotator may still be given, slots aside: unlabelled by them, never submitted or skipped
    by them (an expired lease of theirs may be renewed), and not answered automatically."""
    renewable = Q(status=Assignment.Status.EXPIRED) | Q(status=Assignment.Status.LEASED, expires_at__lte=now)
    mine = Assignment.objects.filter(annotator=annotator, **{kind.assignment_field: OuterRef("pk")}).exclude(
        renewable
    )
    labelled = kind.label_model.objects.filter(task=OuterRef("pk"), annotator=annotator)
    tasks = kind.model.objects.filter(~Exists(mine), ~Exists(labelled))
    if kind.is_side_by_side:
        tasks = tasks.exclude(lists_identical=True, campaign__auto_same_identical=True)  # type: ignore[misc]  # side by side here
    return tasks


def _tasks_open(*, kind: TaskKind, annotator, now) -> QuerySet:
    """`_tasks_unseen` of every campaign, with a slot left."""
    tasks = _tasks_unseen(kind=kind, annotator=annotator, now=now)
    return tasks.filter(slots_spent__lt=F(f"campaign__{kind.overlap_field}"))


def task_candidates(*, kind: TaskKind, campaign: Campaign, annotator, now, start: int) -> list[QuerySet]:
    """The campaign's open tasks for the annotator from `start` of the shuffle order on, then those before it.

    With a random `start` per hand-out every annotator meets the tasks in a random order of their own, and
    each query is a walk of the (campaign, shuffle_key) index that stops at the first open task, instead of
    a sort of the whole campaign.
    """
    tasks = _tasks_unseen(kind=kind, annotator=annotator, now=now).filter(
        campaign=campaign, slots_spent__lt=kind.overlap(campaign)
    )
    return [
        tasks.filter(shuffle_key__gte=start).order_by("shuffle_key"),
        tasks.filter(shuffle_key__lt=start).order_by("shuffle_key"),
    ]


def _annotator_progress(*, annotator, campaign_ids: list[int]) -> dict[int, dict]:
    """Done, skipped and live leases per campaign: lookups of the annotator's own rows only."""
    now = timezone.now()
    progress = {pk: {"done": 0, "skipped": 0, "live": 0} for pk in campaign_ids}
    for label_model in (Judgment, Preference):
        done = (
            label_model.objects.filter(annotator=annotator, campaign__in=campaign_ids)
            .order_by()
            .values("campaign")
            .annotate(n=Count("pk"))
        )
        for row in done:
            progress[row["campaign"]]["done"] += row["n"]
    assignments = (
        Assignment.objects.filter(annotator=annotator, status__in=["leased", "skipped"])
        .filter(campaign__in=campaign_ids)
        .order_by()
        .values("campaign")
        .annotate(
            skipped=Count("pk", filter=Q(status=Assignment.Status.SKIPPED)),
            live=Count("pk", filter=Q(status=Assignment.Status.LEASED, expires_at__gt=now)),
        )
    )
    for counts in assignments:
        progress[counts["campaign"]].update(skipped=counts["skipped"], live=counts["live"])
    return progress


def campaigns_open(*, annotator, archived: bool = False) -> QuerySet[Campaign]:
    """The campaigns an annotator may work on: not archived, and open to all or with them as a member. With
    `archived`, the archived ones too: where they ask for work, the answer names the archive, not a 404."""
    memberships = Campaign.members.through.objects.filter(user=annotator).values("campaign")
    campaigns = Campaign.objects.filter(Q(open_to_all=True) | Q(pk__in=memberships))
    return campaigns if archived else campaigns.filter(archived_at__isnull=True)


@dataclass(frozen=True, slots=True)
class CampaignWork:
    """A campaign on the home page with the user's own work in it."""

    campaign: Campaign
    may_annotate: bool  # open to them (else a campaign only reviewers and managers see)
    done: int
    skipped: int
    remaining: int  # what they could still be given, their live lease included


def annotator_campaigns(*, annotator) -> list[CampaignWork]:
    """The campaigns on the user's home page with their own progress: those they may work on, and every
    campaign for reviewers and managers (`may_annotate` tells which is which). Remaining counts what they
    could still be given (their live lease included), a count over every open task of the campaigns."""
    workable = campaigns_open(annotator=annotator)
    if can_review(annotator):
        campaigns = list(Campaign.objects.all())
        open_ids = set(workable.values_list("pk", flat=True))
    else:
        campaigns = list(workable)
        open_ids = {campaign.pk for campaign in campaigns}
    progress = _annotator_progress(annotator=annotator, campaign_ids=sorted(open_ids))
    for row in progress.values():
        row["remaining"] = row.pop("live")
    now = timezone.now()
    for kind in TASK_KINDS:
        available = (
            _tasks_open(kind=kind, annotator=annotator, now=now)
            .filter(campaign__in=list(progress))
            .order_by()
            .values("campaign")
            .annotate(n=Count("pk"))
        )
        for row in available:
            progress[row["campaign"]]["remaining"] += row["n"]
    idle = {"done": 0, "skipped": 0, "remaining": 0}
    return [
        CampaignWork(campaign, may_annotate=campaign.pk in open_ids, **progress.get(campaign.pk, idle))
        for campaign in campaigns
    ]


@dataclass(frozen=True, slots=True)
class KindWork:
    """The annotator's labels of one kind in a campaign and what they could still be given."""

    name: str
    done: int
    remaining: int


def annotator_kind_progress(*, annotator, campaign: Campaign) -> list[KindWork]:
    """Per kind: the annotator's labels and what they could still be given (their live lease included);
    counts over the campaign's open tasks, so the workbench fetches it beside the task, not with it."""
    now = timezone.now()
    kinds = []
    for kind in TASK_KINDS:
        done = kind.label_model.objects.filter(annotator=annotator, campaign=campaign).count()
        open_tasks = _tasks_open(kind=kind, annotator=annotator, now=now).filter(campaign=campaign).count()
        live = Assignment.objects.filter(
            annotator=annotator,
            campaign=campaign,
            status=Assignment.Status.LEASED,
            expires_at__gt=now,
            **{f"{kind.assignment_field}__isnull": False},
        ).count()
        kinds.append(KindWork(name=kind.name, done=done, remaining=open_tasks + live))
    return kinds


_ASSIGNMENT = """SELECT {assignment}, {campaign}, {relevance}, {side_by_side}
FROM annotation_assignment a
JOIN annotation_campaign c ON c.id = a.campaign_id
LEFT JOIN annotation_relevancetask r ON r.id = a.relevance_task_id
LEFT JOIN annotation_sidebysidetask s ON s.id = a.side_by_side_task_id
WHERE a.id = %s AND a.annotator_id = %s"""


@functools.cache
def _assignment_sql() -> str:
    return _ASSIGNMENT.format(
        assignment=rows.select_list(Assignment, "a"),
        campaign=rows.select_list(Campaign, "c"),
        relevance=rows.select_list(RelevanceTask, "r"),
        side_by_side=rows.select_list(SideBySideTask, "s"),
    )


def _assignment_read(*, annotator, pk: int, campaign_id: int | None = None) -> Assignment | None:
    """One of the annotator's assignments with its campaign and task (the task's campaign the same object), in
    one plain statement: the workbench reads it on every label."""
    sql = _assignment_sql()
    params = [pk, annotator.pk]
    if campaign_id is not None:
        sql, params = f"{sql} AND a.campaign_id = %s", [*params, campaign_id]
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        row = cursor.fetchone()
    if row is None:
        return None
    assignment, end = rows.instance_at(Assignment, row)
    campaign, end = rows.instance_at(Campaign, row, end)
    relevance, end = rows.instance_at(RelevanceTask, row, end)
    side_by_side, _ = rows.instance_at(SideBySideTask, row, end)
    assignment.annotator, assignment.campaign = annotator, campaign
    if assignment.relevance_task_id is not None:
        assignment.relevance_task, relevance.campaign = relevance, campaign
    else:
        assignment.side_by_side_task, side_by_side.campaign = side_by_side, campaign
    return assignment


def assignment_get(*, annotator, campaign_id: int, pk: int) -> Assignment | None:
    """One of the annotator's assignments in a campaign, with its campaign and task."""
    return _assignment_read(annotator=annotator, pk=pk, campaign_id=campaign_id)


# Shown with every task, so nothing here may grow with the campaign's size: lookups of the annotator's own
# rows only. Read with the task (`task_view`): the workbench asks it on every label.
_DONE = """(SELECT COUNT(*) FROM {label_table}
    WHERE campaign_id = %(campaign)s AND annotator_id = %(annotator)s)"""
_SKIPPED = """(SELECT COUNT(*) FROM annotation_assignment
    WHERE annotator_id = %(annotator)s AND campaign_id = %(campaign)s AND status = 'skipped')"""
# The task to go back to: the submitted one they finished last before this one (any, when it is unfinished;
# never a repeat, whose answer is not a label to change).
_PREVIOUS = """(SELECT id FROM annotation_assignment
    WHERE annotator_id = %(annotator)s AND campaign_id = %(campaign)s AND status = 'submitted' AND NOT repeat
      AND id <> {assignment} {finished_before} ORDER BY finished_at DESC LIMIT 1)"""
_PROGRESS = ", ".join(
    [
        *(_DONE.format(label_table=kind.label_model._meta.db_table) for kind in TASK_KINDS),
        _SKIPPED,
        _PREVIOUS,
    ]
)

_RELEVANCE_VIEW = """SELECT q.text, q.description, q.intents, {document}, {progress}
FROM annotation_relevancetask t JOIN annotation_query q ON q.id = t.query_id
JOIN annotation_document d ON d.id = t.document_id
WHERE t.id = {task}"""
_SIDE_BY_SIDE_VIEW = f"""SELECT q.text, q.description, {{progress}}, {SIDE_BY_SIDE_LISTS}
FROM annotation_sidebysidetask t JOIN annotation_query q ON q.id = t.query_id
WHERE t.id = {{task}}"""
# On PostgreSQL the lists' documents come with them: one statement for the page.
_SIDE_BY_SIDE_VIEW_DOCUMENTS = f"""SELECT q.text, q.description, {{progress}}, {LISTED_DOCUMENTS},
    lists.experimental, lists.online
FROM annotation_sidebysidetask t JOIN annotation_query q ON q.id = t.query_id
CROSS JOIN LATERAL (SELECT {SIDE_BY_SIDE_LISTS}) AS lists(experimental, online)
WHERE t.id = {{task}}"""


def task_page_sql(kind: TaskKind, *, task: str, assignment: str, finished: bool) -> str:
    """The task page's one statement (`task_view`); `task` and `assignment` are SQL expressions of their
    ids (a parameter, or the lease a statement just wrote: `services/round_trip.lease_new`). Parameters:
    annotator, campaign, depth (the campaign's `gsb_depth`) and, when `finished`, the assignment's
    finished_at."""
    template = _RELEVANCE_VIEW
    if kind is not RELEVANCE:
        template = _SIDE_BY_SIDE_VIEW_DOCUMENTS if _documents_read(kind) else _SIDE_BY_SIDE_VIEW
    previous = {
        "assignment": assignment,
        "finished_before": "AND finished_at < %(finished)s" if finished else "",
    }
    return template.format(
        progress=_PROGRESS.format(**previous), document=rows.select_list(Document, "d"), task=task
    )


def task_page_width(kind: TaskKind) -> int:
    """How many columns `task_page_sql` reads."""
    progress = len(TASK_KINDS) + 2
    if kind is RELEVANCE:
        return 3 + len(Document._meta.concrete_fields) + progress
    return 2 + progress + (3 if _documents_read(kind) else 2)


def _documents_read(kind: TaskKind) -> bool:
    """Whether the page's statement reads a side-by-side task's lists' documents (PostgreSQL)."""
    return kind is not RELEVANCE and connection.vendor == "postgresql"


def assignment_list(
    *, annotator, campaign_id: int | None = None, status: str = "", kind: str = ""
) -> QuerySet[Assignment]:
    """The annotator's own tasks, newest first."""
    assignments = Assignment.objects.filter(annotator=annotator).select_related(
        "relevance_task__query", "side_by_side_task__query"
    )
    if campaign_id is not None:
        assignments = assignments.filter(campaign_id=campaign_id)
    if status:
        assignments = assignments.filter(status=status)
    if kind:
        assignments = assignments.filter(**{f"{kind_named(kind).assignment_field}__isnull": False})
    return assignments.order_by("-leased_at", "-pk")


def assignment_of(*, annotator, pk: int) -> Assignment | None:
    """One of the annotator's own tasks; None for anyone else's."""
    return _assignment_read(annotator=annotator, pk=pk)


@dataclass(frozen=True, slots=True)
class DocumentView:
    title: str
    url: str  # as imported: a link only when is_link
    is_link: bool
    body: str


@dataclass(frozen=True, slots=True)
class ListedDocument(DocumentView):
    """A result of a side-by-side list, at its position (from 1), with the earlier position the annotator
    marked it a near-duplicate of (None: none)."""

    position: int
    same_as: int | None

    @property
    def earlier(self) -> range:
        return range(1, self.position)


@dataclass(frozen=True, slots=True)
class GradeChoice:
    """A grade of the campaign's scale with its key on the workbench ("" for none)."""

    value: int
    label: str
    description: str
    key: str


@dataclass(frozen=True, slots=True)
class TaskCampaign:
    id: int
    name: str
    guidelines: str


@dataclass(frozen=True, slots=True)
class IntentChoice:
    """An intent of the query, to tick where a document serves it, with its key ("" for none)."""

    id: str
    text: str
    key: str


@dataclass(frozen=True, slots=True)
class TaskQuery:
    text: str
    description: str
    intents: list[IntentChoice] = field(default_factory=list)  # relevance tasks' (side by side: none)


@dataclass(frozen=True, slots=True)
class OwnProgress:
    done: int  # the annotator's labels in the campaign, both kinds
    skipped: int


@dataclass(frozen=True, slots=True)
class CurrentGrade:
    grade: int
    comment: str
    intents: list[str] | None = None  # the intents ticked; None: not asked


@dataclass(frozen=True, slots=True)
class CurrentVerdict:
    side: str  # as the annotator pressed it: left, same or right
    strength: int | None
    comment: str
    duplicates: list[list] = field(default_factory=list)  # as shown: [side, position, same as position]


@dataclass(frozen=True, slots=True)
class TaskView:
    """What the workbench shows of any task: texts only, never a model's name, role or id."""

    kind: str
    assignment_id: int
    status: str
    expires_at: datetime
    campaign: TaskCampaign
    query: TaskQuery
    version: str  # `label_version` of the label shown
    skip_reason: str
    progress: OwnProgress
    previous_id: int | None  # the task to go back to


@dataclass(frozen=True, slots=True)
class RelevanceTaskView(TaskView):
    document: DocumentView
    scale: list[GradeChoice]
    current: CurrentGrade | None


@dataclass(frozen=True, slots=True)
class SideBySideTaskView(TaskView):
    left: list[ListedDocument]  # in the order shown
    right: list[ListedDocument]
    five_point: bool
    current: CurrentVerdict | None


def _document_view[View: DocumentView](document: Document, view: type[View], **more) -> View:
    return view(
        title=document.title or "(no title)",
        url=document.url,
        is_link=is_web_url(document.url),
        body=document.body,
        **more,
    )


def _scale_view(scale: list[dict]) -> list[GradeChoice]:
    """Each grade with its key: its digit, else a letter while letters last, else none (still a button)."""
    letters = iter(GRADE_LETTER_KEYS)
    return [
        GradeChoice(
            value=grade["value"],
            label=grade["label"],
            description=grade["description"],
            key=str(grade["value"]) if 0 <= grade["value"] <= 9 else next(letters, ""),
        )
        for grade in scale
    ]


# Where a lease carries its page's row when the statement that wrote it read that too (`task_view`).
PAGE_ROW = "_task_page_row"


def task_view(*, assignment: Assignment) -> RelevanceTaskView | SideBySideTaskView:
    """What the workbench shows for an assignment: texts only, never a model's name, role or id; with the
    annotator's progress and the task to go back to. One plain statement for the task, none when the lease
    came with it (`PAGE_ROW`); on SQLite a side-by-side task's lists' documents one more; a label to show,
    one more."""
    kind, task_id = assignment_task(assignment)
    row = getattr(assignment, PAGE_ROW, None)
    if row is None:
        finished = assignment.finished_at is not None
        sql = task_page_sql(kind, task="%(task)s", assignment="%(assignment)s", finished=finished)
        params = {
            "annotator": assignment.annotator_id,
            "campaign": assignment.campaign_id,
            "depth": assignment.campaign.gsb_depth,
            "assignment": assignment.pk,
            "finished": assignment.finished_at,
            "task": task_id,
        }
        with connection.cursor() as cursor:
            cursor.execute(sql, params)
            row = cursor.fetchone()
    return _task_view_of(assignment, kind, task_id, row)


def _task_view_of(
    assignment: Assignment, kind: TaskKind, task_id: int, row: tuple
) -> RelevanceTaskView | SideBySideTaskView:
    annotator = assignment.annotator_id
    campaign = assignment.campaign
    # A lease ends with the annotator's label: only a task they finished can hold one to show.
    labelled = assignment.status != Assignment.Status.LEASED
    query_text, query_description = row[:2]
    intents: list[IntentChoice] = []
    if kind is RELEVANCE:
        intents = _intent_choices(row[2])
        document, end = rows.instance_at(Document, row, 3)
    else:
        end = 2
    *done, skipped, previous_id = row[end : end + len(TASK_KINDS) + 2]
    common: dict[str, Any] = {
        "kind": kind.name,
        "assignment_id": assignment.pk,
        "status": assignment.status,
        "expires_at": assignment.expires_at,
        "campaign": TaskCampaign(id=campaign.pk, name=campaign.name, guidelines=campaign.guidelines),
        "query": TaskQuery(text=query_text, description=query_description, intents=intents),
        "skip_reason": assignment.get_skip_reason_display() if assignment.skip_reason else "",
        "progress": OwnProgress(done=sum(done), skipped=skipped),
        "previous_id": previous_id,
    }
    if kind is RELEVANCE:
        judgment = labelled and Judgment.objects.filter(task_id=task_id, annotator=annotator).first()
        return RelevanceTaskView(
            **common,
            document=_document_view(document, DocumentView),
            scale=_scale_view(campaign.scale),
            current=(
                CurrentGrade(grade=judgment.grade, comment=judgment.comment, intents=judgment.intents)
                if judgment
                else None
            ),
            version=label_version(judgment or None),
        )
    if _documents_read(kind):
        experimental, online = listed_documents_of(*row[-3:], depth=campaign.gsb_depth)
    else:
        experimental, online = listed_documents(*row[-2:], depth=campaign.gsb_depth)
    on_left = bool(assignment.experimental_on_left)  # set on every side-by-side assignment
    left, right = (experimental, online) if on_left else (online, experimental)
    preference = labelled and Preference.objects.filter(task_id=task_id, annotator=annotator).first()
    marks = {(side, position): same_as for side, position, same_as in (preference or NO_MARKS).duplicates}
    current = None
    if preference:
        current = CurrentVerdict(
            side=preference_side(verdict=preference.verdict, experimental_on_left=on_left),
            strength=preference.strength,
            comment=preference.comment,
            duplicates=preference.duplicates,
        )
    return SideBySideTaskView(
        **common,
        left=_listed(left, "left", marks),
        right=_listed(right, "right", marks),
        five_point=campaign.gsb_scale == GSBScale.FIVE_POINT,
        current=current,
        version=label_version(preference or None),
    )


NO_MARKS = Preference(duplicates=[])


def _listed(documents: list[Document], side: str, marks: dict) -> list[ListedDocument]:
    return [
        _document_view(document, ListedDocument, position=position, same_as=marks.get((side, position)))
        for position, document in enumerate(documents, start=1)
    ]


def _intent_choices(stored: str | list) -> list[IntentChoice]:
    """The query's intents (a JSON column read by plain SQL: its text) with their keys."""
    intents = json.loads(stored) if isinstance(stored, str) else stored
    keys = iter(INTENT_KEYS)
    return [IntentChoice(id=intent["id"], text=intent["text"], key=next(keys, "")) for intent in intents]


def label_version(label) -> str:
    """What a page shows its label as, so a submit from a stale page (another tab answered since) is caught:
    the label's last change, or "new" when there was none."""
    return label.updated_at.isoformat() if label else "new"


def preference_side(*, verdict: str, experimental_on_left: bool) -> str:
    """The side an annotator pressed for a verdict stored relative to the experimental model."""
    if verdict == Verdict.SAME:
        return "same"
    experimental_side, online_side = ("left", "right") if experimental_on_left else ("right", "left")
    return experimental_side if verdict == Verdict.GOOD else online_side
