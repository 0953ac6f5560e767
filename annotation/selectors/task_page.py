"""What a task page shows an annotator: one statement reads the task, their progress and the task to go back
to (`task_page_sql`, also part of the round trip's lease statement), laid out as plain dataclasses with no
model's name, role or id."""

import json
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.db import connection

from annotation.links import is_web_url
from annotation.models import Assignment, Document, GSBScale, Judgment, Preference, Verdict
from annotation.selectors.rankings import (
    LISTED_DOCUMENTS,
    SIDE_BY_SIDE_LISTS,
    listed_documents,
    listed_documents_of,
)
from annotation.task_kinds import RELEVANCE, TASK_KINDS, TaskKind, assignment_task
from plumbing import rows

# Keys for grades outside 0-9; none of g s u c m, which the workbench uses.
GRADE_LETTER_KEYS = "xzvbnqwertyiop"
# An intent's key toggles its tick: home-row letters no grade and no other command takes.
INTENT_KEYS = "adfhjkl"


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
