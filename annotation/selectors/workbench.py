"""The annotator's workbench: which tasks an annotator may be handed, their progress and their assignments
(what a task page shows: `selectors.task_page`)."""

import functools
from dataclasses import dataclass

from django.db import connection
from django.db.models import Count, Exists, F, OuterRef, Q, QuerySet, Subquery
from django.db.models.functions import Coalesce
from django.utils import timezone

from annotation.models import (
    Assignment,
    Campaign,
    Judgment,
    Preference,
    RelevanceTask,
    SideBySideTask,
)
from annotation.roles import can_review
from annotation.task_kinds import TASK_KINDS, TaskKind, kind_named
from plumbing import rows


def row_count(queryset, field: str):
    """A queryset filtered on `field=OuterRef(...)` as a subquery of its row count (0 when none)."""
    return Coalesce(Subquery(queryset.order_by().values(field).annotate(n=Count("pk")).values("n")[:1]), 0)


def _renewable(now) -> Q:
    """An annotator's assignments that do not keep a task from them: an expired lease may be renewed."""
    return Q(status=Assignment.Status.EXPIRED) | Q(status=Assignment.Status.LEASED, expires_at__lte=now)


def _tasks_unseen(*, kind: TaskKind, annotator, now) -> QuerySet:
    """Tasks the annotator may still be given, slots aside: unlabelled by them, never submitted or skipped
    by them (an expired lease of theirs may be renewed), and not answered automatically."""
    mine = Assignment.objects.filter(annotator=annotator, **{kind.assignment_field: OuterRef("pk")}).exclude(
        _renewable(now)
    )
    labelled = kind.label_model.objects.filter(task=OuterRef("pk"), annotator=annotator)
    return _not_automatic(kind, kind.model.objects.filter(~Exists(mine), ~Exists(labelled)))


def _not_automatic(kind: TaskKind, tasks: QuerySet) -> QuerySet:
    if kind.is_side_by_side:
        return tasks.exclude(lists_identical=True, campaign__auto_same_identical=True)
    return tasks


def _open_counts(*, kind: TaskKind, annotator, now, campaign_ids: list[int]) -> dict[int, int]:
    """Per campaign id, the tasks of `kind` the annotator could still be given (`_tasks_unseen` with a slot
    left): those with a slot left, less those of them the annotator already met. Each count is plain: the
    annotator's own rows are looked up by their key rather than tested against every task (the two tests
    over a campaign of 125,000 tasks took as long again as counting them)."""
    with_slot = _not_automatic(
        kind,
        kind.model.objects.filter(
            campaign__in=campaign_ids, slots_spent__lt=F(f"campaign__{kind.overlap_field}")
        ),
    )
    mine = (
        Assignment.objects.filter(annotator=annotator, campaign__in=campaign_ids)
        .exclude(_renewable(now))
        .values(kind.assignment_field)
    )
    labelled = kind.label_model.objects.filter(annotator=annotator, campaign__in=campaign_ids).values("task")
    counts: dict[int, int] = {}
    for sign, tasks in ((1, with_slot), (-1, with_slot.filter(pk__in=mine.union(labelled)))):
        for row in tasks.order_by().values("campaign").annotate(n=Count("pk")):
            counts[row["campaign"]] = counts.get(row["campaign"], 0) + sign * row["n"]
    return counts


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
        available = _open_counts(kind=kind, annotator=annotator, now=now, campaign_ids=list(progress))
        for pk, count in available.items():
            progress[pk]["remaining"] += count
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
        open_tasks = _open_counts(kind=kind, annotator=annotator, now=now, campaign_ids=[campaign.pk])
        live = Assignment.objects.filter(
            annotator=annotator,
            campaign=campaign,
            status=Assignment.Status.LEASED,
            expires_at__gt=now,
            **{f"{kind.assignment_field}__isnull": False},
        ).count()
        kinds.append(KindWork(name=kind.name, done=done, remaining=open_tasks.get(campaign.pk, 0) + live))
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
