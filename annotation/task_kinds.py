"""The task-kind registry: what differs between relevance and side-by-side tasks, named once.

Every mapping from a kind to its task model, label model, assignment field or overlap setting goes through
`TaskKind`; code elsewhere never spells "relevance_task" or "gsb_overlap" itself.
"""

from dataclasses import dataclass

from annotation.models import Assignment, Campaign, Judgment, Preference, RelevanceTask, SideBySideTask


@dataclass(frozen=True)
class TaskKind:
    """One kind of task: its name (as the API spells it), its models and the fields that point at it."""

    name: str
    model: type[RelevanceTask] | type[SideBySideTask]
    label_model: type[Judgment] | type[Preference]
    assignment_field: str  # also the field of Adjudication and LabelRevision
    overlap_field: str
    related: tuple[str, ...]  # what a page of one task needs with it

    @property
    def slug(self) -> str:
        """How URLs spell the kind (`side-by-side`)."""
        return self.name.replace("_", "-")

    @property
    def is_side_by_side(self) -> bool:
        return self.model is SideBySideTask

    def overlap(self, campaign: Campaign) -> int:
        """How many annotators each task of this kind goes to in the campaign."""
        return getattr(campaign, self.overlap_field)


RELEVANCE = TaskKind(
    "relevance", RelevanceTask, Judgment, "relevance_task", "overlap", ("campaign", "query", "document")
)
SIDE_BY_SIDE = TaskKind(
    "side_by_side", SideBySideTask, Preference, "side_by_side_task", "gsb_overlap", ("campaign", "query")
)
TASK_KINDS = (RELEVANCE, SIDE_BY_SIDE)  # the order tasks are handed out in
KIND_NAMES = tuple(kind.name for kind in TASK_KINDS)


def kind_named(name: str) -> TaskKind:
    """The kind a URL or API field names; KeyError for any other name."""
    return {kind.name: kind for kind in TASK_KINDS}[name]


def kind_of_slug(slug: str) -> TaskKind | None:
    """The kind a URL names, None for any other word."""
    return next((kind for kind in TASK_KINDS if kind.slug == slug), None)


def task_kind(task) -> TaskKind:
    return SIDE_BY_SIDE if isinstance(task, SideBySideTask) else RELEVANCE


def assignment_task(assignment: Assignment) -> tuple[TaskKind, int]:
    """The kind and id of the task an assignment holds, without fetching the task."""
    kind = SIDE_BY_SIDE if assignment.side_by_side_task_id else RELEVANCE
    return kind, getattr(assignment, f"{kind.assignment_field}_id")
