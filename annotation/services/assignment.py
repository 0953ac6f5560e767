"""Handing tasks out: leases, their expiry and skips.

Order: an annotator gets every relevance task they can before any side-by-side task, so grading comes
first and the launch comparison last; within a kind the order is a shuffle fixed per annotator.

Side-by-side tasks whose two lists are identical are never handed out when the campaign has
`auto_same_identical`: no Preference rows are written for them; the metrics count them as Same.
"""

import random
from datetime import timedelta

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import transaction
from django.utils import timezone

from annotation.errors import TaskError, TaskErrorCode
from annotation.models import Assignment, Campaign, SkipReason
from annotation.selectors import (
    TASK_KINDS,
    TaskKind,
    in_campaign,
    task_kind,
    task_slots_taken,
    tasks_available,
)

# A fresh statement after the lock sees leases committed meanwhile; a few rounds cover those races.
LEASE_ATTEMPTS = 5


def lease_live_get(*, annotator, campaign: Campaign) -> Assignment | None:
    return (
        Assignment.objects.filter(
            in_campaign(campaign),
            annotator=annotator,
            status=Assignment.Status.LEASED,
            expires_at__gt=timezone.now(),
        )
        .order_by("leased_at")
        .first()
    )


@transaction.atomic
def task_next(*, annotator, campaign: Campaign) -> Assignment | None:
    """The annotator's live lease in the campaign, else a new lease on a task with an open slot, else None.

    On PostgreSQL candidate tasks are locked with SKIP LOCKED, so concurrent annotators take different
    tasks; SQLite runs the same code serially (its transactions are IMMEDIATE).
    """
    # One annotator's parallel requests (two tabs) queue here instead of taking two leases.
    get_user_model().objects.select_for_update().filter(pk=annotator.pk).first()
    live = lease_live_get(annotator=annotator, campaign=campaign)
    if live is not None:
        return live
    for kind in TASK_KINDS:
        task = _task_lock_open(kind=kind, annotator=annotator, campaign=campaign)
        if task is not None:
            return _lease(kind=kind, annotator=annotator, task=task)
    return None


def _task_lock_open(*, kind: TaskKind, annotator, campaign: Campaign):
    """Lock the first task in the annotator's order that still has a slot once locked."""
    for _ in range(LEASE_ATTEMPTS):
        now = timezone.now()
        task = (
            tasks_available(kind=kind, annotator=annotator, now=now)
            .filter(campaign=campaign)
            .select_for_update(skip_locked=True, of=("self",))
            .first()
        )
        if task is None:
            return None
        # The candidate query's snapshot predates the lock; recount now that no one else can lease it.
        if task_slots_taken(task=task, now=now) < getattr(campaign, kind.overlap_field):
            return task
    return None


def _lease(*, kind: TaskKind, annotator, task) -> Assignment:
    now = timezone.now()
    # An expired lease of this annotator on the task is renewed: one row per annotator and task.
    assignment = Assignment.objects.filter(annotator=annotator, **{kind.assignment_field: task}).first()
    if assignment is None:
        assignment = Assignment(annotator=annotator, **{kind.assignment_field: task})
        if kind.is_side_by_side:
            assignment.experimental_on_left = random.random() < 0.5
    assignment.status = Assignment.Status.LEASED
    assignment.leased_at = now
    assignment.expires_at = now + timedelta(minutes=settings.TASK_LEASE_MINUTES)
    assignment.save()
    return assignment


def task_lock(*, task) -> None:
    """Serialize everything that spends a task's slots: leasing it and submitting labels for it."""
    type(task).objects.select_for_update().filter(pk=task.pk).first()


def lease_claim(*, annotator, task) -> Assignment:
    """The annotator's lease on a task, ready to be submitted; call with the task locked (`task_lock`).

    A late submission (lease expired) is taken when the task still has a slot for it, else refused.
    """
    kind = task_kind(task)
    assignment = (
        Assignment.objects.select_for_update()
        .filter(annotator=annotator, **{kind.assignment_field: task})
        .first()
    )
    if assignment is None:
        raise TaskError(TaskErrorCode.NOT_ASSIGNED, "This task was not handed to you.")
    if assignment.status == Assignment.Status.SKIPPED:
        raise TaskError(TaskErrorCode.SKIPPED, "You skipped this task.")
    if assignment.status != Assignment.Status.LEASED:
        raise TaskError(TaskErrorCode.NOT_LEASED, "This task is already submitted.")
    now = timezone.now()
    overlap = getattr(task.campaign, kind.overlap_field)
    if assignment.expires_at <= now and task_slots_taken(task=task, now=now) >= overlap:
        raise TaskError(
            TaskErrorCode.LEASE_EXPIRED_FULL,
            "Your time on this task ran out and others have since completed it; your answer was not kept.",
        )
    return assignment


def lease_finish(*, assignment: Assignment) -> None:
    assignment.status = Assignment.Status.SUBMITTED
    assignment.finished_at = timezone.now()
    assignment.save(update_fields=["status", "finished_at"])


@transaction.atomic
def task_skip(*, annotator, assignment: Assignment, reason: SkipReason | str) -> Assignment:
    """Give a leased task back with a reason; the annotator never gets it again, others may."""
    if reason not in SkipReason.values:
        raise TaskError(TaskErrorCode.INVALID_LABEL, f"unknown skip reason {reason!r}", field="reason")
    assignment = Assignment.objects.select_for_update().filter(pk=assignment.pk, annotator=annotator).first()
    if assignment is None:
        raise TaskError(TaskErrorCode.NOT_ASSIGNED, "This task was not handed to you.")
    if assignment.status != Assignment.Status.LEASED:
        raise TaskError(TaskErrorCode.NOT_LEASED, "Only a task you are working on can be skipped.")
    assignment.status = Assignment.Status.SKIPPED
    assignment.skip_reason = reason
    assignment.finished_at = timezone.now()
    assignment.save(update_fields=["status", "skip_reason", "finished_at"])
    return assignment
