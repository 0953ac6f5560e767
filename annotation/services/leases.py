"""A task's slots and the leases that hold them: their expiry, a lease claimed and finished by a label.

Every task keeps `slots_spent` (labels plus leases not given back), changed only here, in the hand-out
(`services/assignment.py`) and in the label services, always with the task's row locked (in the order of
`services/locks.py`), so finding a task with an open slot is a column comparison rather than a count over
its labels and leases. Leases past their time are given back by `leases_expire` at the start of every
hand-out.
"""

from django.db.models import F, OuterRef, QuerySet
from django.utils import timezone
from django.utils.translation import gettext as _

from annotation.errors import TaskError, TaskErrorCode
from annotation.models import Assignment, Campaign
from annotation.selectors.workbench import row_count
from annotation.services.read_only import campaign_writable_check
from annotation.task_kinds import TASK_KINDS, TaskKind, task_kind


def slot_open(*, kind: TaskKind, task, campaign: Campaign) -> bool:
    """Whether the task, as read under its lock, has a slot left."""
    return task.slots_spent < kind.overlap(campaign)


def slots_change(task, delta: int) -> None:
    """Add `delta` to the locked task's spent slots, in the database (the caller's copy is left as read)."""
    type(task).objects.filter(pk=task.pk).update(slots_spent=F("slots_spent") + delta)


def leases_expire(*, now) -> None:
    """Give the slots of leases past their time back to their tasks (status expired).

    Tasks (and repeats) locked by someone else are left for the next call: their leases keep the slot a
    little longer. Skipping, it never waits, so it may run under any lock (`services/locks.py`).
    """
    expired = Assignment.objects.filter(status=Assignment.Status.LEASED, expires_at__lte=now)
    if not expired.exists():
        return
    repeats = expired.filter(repeat=True).select_for_update(skip_locked=True, no_key=True)
    Assignment.objects.filter(pk__in=list(repeats.values_list("pk", flat=True))).update(
        status=Assignment.Status.EXPIRED  # repeats hold no slot
    )
    expired = expired.filter(repeat=False)
    for kind in TASK_KINDS:
        field = kind.assignment_field
        held = kind.model.objects.filter(pk__in=expired.values(field))
        held = held.select_for_update(skip_locked=True, no_key=True)
        locked = list(held.values_list("pk", flat=True))
        if not locked:
            continue
        leases = expired.filter(**{f"{field}__in": locked})
        per_task = row_count(leases.filter(**{field: OuterRef("pk")}), field)
        kind.model.objects.filter(pk__in=locked).update(slots_spent=F("slots_spent") - per_task)
        leases.update(status=Assignment.Status.EXPIRED)


def leases_end(*, leases: QuerySet[Assignment], now) -> None:
    """End these live leases now (an exclusion, an archiving): their slots go back to their tasks."""
    leases.update(expires_at=now)
    leases_expire(now=now)


def task_slots_recount(*, campaign: Campaign) -> None:
    """Set every task's `slots_spent` from its rows, after labels were written in bulk (imports)."""
    campaign_writable_check(campaign=campaign)
    for kind in TASK_KINDS:
        field = kind.assignment_field
        labels = kind.label_model.objects.filter(task=OuterRef("pk"))
        leases = Assignment.objects.filter(
            status=Assignment.Status.LEASED, repeat=False, **{field: OuterRef("pk")}
        )
        kind.model.objects.filter(campaign=campaign).update(
            slots_spent=row_count(labels, "task") + row_count(leases, field)
        )


def lease_claim(*, annotator, task) -> Assignment:
    """The annotator's lease on a task, ready to be submitted; call with the task locked (`task_lock`) and
    the annotator's membership checked (`member_check`).

    A late submission is taken while its lease still holds the slot (not yet given back), or when the task
    has a slot free again; else refused.
    """
    kind = task_kind(task)
    assignment = (
        Assignment.objects.select_for_update(no_key=True)
        .filter(annotator=annotator, repeat=False, **{kind.assignment_field: task})
        .first()
    )
    if assignment is None:
        raise TaskError(TaskErrorCode.NOT_ASSIGNED, _("This task was not handed to you."))
    if assignment.status == Assignment.Status.SKIPPED:
        raise TaskError(TaskErrorCode.SKIPPED, _("You skipped this task."))
    if assignment.status == Assignment.Status.SUBMITTED:
        raise TaskError(TaskErrorCode.NOT_LEASED, _("This task is already submitted."))
    if assignment.status == Assignment.Status.EXPIRED:
        task.refresh_from_db(fields=["slots_spent"])  # the caller's copy may predate the lock
        if not slot_open(kind=kind, task=task, campaign=task.campaign):
            raise TaskError(
                TaskErrorCode.LEASE_EXPIRED_FULL,
                _(
                    "Your time on this task ran out and others have since completed it; "
                    "your answer was not kept."
                ),
            )
    return assignment


def lease_finish(*, assignment: Assignment, task) -> None:
    """The claimed lease becomes a label: the slot its lease held, or a free one for a late submission."""
    if assignment.status == Assignment.Status.EXPIRED:
        slots_change(task, +1)
    assignment.status = Assignment.Status.SUBMITTED
    assignment.finished_at = timezone.now()
    assignment.save(update_fields=["status", "finished_at"])
