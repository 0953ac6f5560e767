"""Adjudication: a reviewer's final label for a task. Raw judgments and preferences are never changed.

Two reviewers do not overwrite each other: a final label sent with the version the reviewer's page showed
(`label_version`) is refused when the final label changed since. And they are spread over the queue: opening
a task holds it for REVIEW_LEASE_MINUTES (`ReviewLease`), and the queue hands others other tasks meanwhile.
"""

from datetime import timedelta
from typing import Any

from django.conf import settings
from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from annotation.errors import TaskError, TaskErrorCode
from annotation.models import (
    Adjudication,
    Campaign,
    LabelRevision,
    RelevanceTask,
    ReviewLease,
    SideBySideTask,
    Verdict,
)
from annotation.roles import can_review
from annotation.selectors.review import review_candidates, review_task_get
from annotation.selectors.task_page import label_version
from annotation.services.labels import field_needed
from annotation.services.locks import task_lock
from annotation.services.read_only import campaign_writable_check
from annotation.task_kinds import TaskKind, kind_named, task_kind

REVIEW_LEASE_TRIES = 20  # tasks tried for a hold before the reviewer is sent to the next one held or none


@transaction.atomic
def adjudication_set(
    *,
    reviewer,
    task: RelevanceTask | SideBySideTask,
    grade: int | None = None,
    verdict: str | None = None,
    reason: str,
    version: str | None = None,
) -> Adjudication:
    """Create or replace the task's adjudication and record the change in its label history: a grade for a
    relevance task, a verdict (good, same or bad, relative to the experimental model) for a side-by-side
    task; the other is not looked at. `version` is the final label the reviewer's page showed
    (`ReviewTask.version`): when it changed since, nothing is written. The reviewer's hold on the task
    ends."""
    if not can_review(reviewer):
        raise PermissionDenied(_("only reviewers and managers adjudicate"))
    campaign_writable_check(campaign=task.campaign)
    is_relevance = isinstance(task, RelevanceTask)
    if is_relevance and grade is None:
        raise field_needed("grade")
    if not is_relevance and verdict is None:
        raise field_needed("verdict")
    reason = (reason or "").strip()
    if not reason:
        raise TaskError(TaskErrorCode.INVALID_LABEL, _("say why this label is final"), field="reason")
    if is_relevance:
        if grade not in task.campaign.grade_values:
            raise TaskError(
                TaskErrorCode.INVALID_LABEL,
                _("grade must be one of %(values)s") % {"values": task.campaign.grade_values},
                field="grade",
            )
        final_grade, final_verdict = grade, ""
        new_value = str(grade)
    else:
        if verdict not in Verdict.values:
            raise TaskError(
                TaskErrorCode.INVALID_LABEL,
                _("verdict must be one of %(values)s") % {"values": Verdict.values},
                field="verdict",
            )
        final_grade, final_verdict = None, verdict
        new_value = verdict

    task_field = task_kind(task).assignment_field
    archived = task_lock(task=task)  # two reviewers' revisions cannot interleave
    campaign_writable_check(campaign=task.campaign, archived=archived)  # as committed now
    adjudication = Adjudication.objects.filter(**{task_field: task}).first()
    if version is not None and version != label_version(adjudication):
        raise _stale(adjudication, is_relevance)
    old_value = ""
    if adjudication is None:
        adjudication = Adjudication(**{task_field: task})
    else:
        old_value = str(adjudication.grade) if is_relevance else adjudication.verdict
    adjudication.reviewer = reviewer
    adjudication.grade = final_grade
    adjudication.verdict = final_verdict
    adjudication.reason = reason
    adjudication.save()
    LabelRevision.objects.create(
        kind=LabelRevision.Kind.ADJUDICATION,
        changed_by=reviewer,
        old_value=old_value,
        new_value=new_value,
        note=reason,
        **{task_field: task},
    )
    ReviewLease.objects.filter(**{task_field: task}).delete()  # settled: off the queue
    return adjudication


def _stale(adjudication: Adjudication | None, is_relevance: bool) -> TaskError:
    """The refusal of a final label sent from a page shown before the final label changed, naming it now."""
    if adjudication is None:
        current = _("it was taken back")
    else:
        current = _("it is now %(label)s, by %(reviewer)s: “%(reason)s”") % {
            "label": adjudication.grade if is_relevance else adjudication.verdict,
            "reviewer": adjudication.reviewer.username,
            "reason": adjudication.reason,
        }
    message = _("Another reviewer saved this task's final label since this page was shown: %(current)s. ")
    return TaskError(
        TaskErrorCode.STALE, message % {"current": current} + _("Nothing was changed."), field="version"
    )


def review_lease_take(*, reviewer, task: RelevanceTask | SideBySideTask) -> bool:
    """Hold the task for the reviewer for REVIEW_LEASE_MINUTES (again, if they hold it already), unless
    another reviewer holds it; says whether they hold it now. Nothing is held in an archived campaign."""
    if task.campaign.archived_at is not None:
        return False
    task_field = task_kind(task).assignment_field
    now = timezone.now()
    with transaction.atomic():
        task_lock(task=task)  # two reviewers opening it at once: one holds it
        lease = ReviewLease.objects.filter(**{task_field: task}).first()
        if lease is not None and lease.reviewer_id != reviewer.pk and lease.expires_at > now:
            return False
        held: dict[str, Any] = {task_field: task}
        ReviewLease.objects.update_or_create(
            **held,
            defaults={
                "reviewer": reviewer,
                "expires_at": now + timedelta(minutes=settings.REVIEW_LEASE_MINUTES),
            },
        )
    return True


def review_lease_next(
    *, reviewer, campaign: Campaign, after: tuple[str, int] | None, kind: TaskKind | None = None
) -> tuple[str, int] | None:
    """The open task to go to from the task `after` (`review_candidates`: none another reviewer holds),
    held for the reviewer, as (kind name, task id); None when no open task is free."""
    candidates = review_candidates(campaign=campaign, after=after, kind=kind, reviewer=reviewer)
    for kind_name, task_pk in candidates[:REVIEW_LEASE_TRIES]:
        task = review_task_get(kind=kind_named(kind_name), pk=task_pk)
        if task is not None and review_lease_take(reviewer=reviewer, task=task):
            return kind_name, task_pk
    return None
