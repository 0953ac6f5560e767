"""Adjudication: a reviewer's final label for a task. Raw judgments and preferences are never changed."""

from django.core.exceptions import PermissionDenied
from django.db import transaction

from annotation.errors import TaskError, TaskErrorCode
from annotation.models import Adjudication, LabelRevision, RelevanceTask, SideBySideTask, Verdict
from annotation.roles import can_review
from annotation.services.labels import field_needed
from annotation.services.locks import task_lock
from annotation.services.read_only import campaign_writable_check
from annotation.task_kinds import task_kind


@transaction.atomic
def adjudication_set(
    *,
    reviewer,
    task: RelevanceTask | SideBySideTask,
    grade: int | None = None,
    verdict: str | None = None,
    reason: str,
) -> Adjudication:
    """Create or replace the task's adjudication and record the change in its label history: a grade for a
    relevance task, a verdict (good, same or bad, relative to the experimental model) for a side-by-side
    task; the other is not looked at."""
    if not can_review(reviewer):
        raise PermissionDenied("only reviewers and managers adjudicate")
    campaign_writable_check(campaign=task.campaign)
    is_relevance = isinstance(task, RelevanceTask)
    if is_relevance and grade is None:
        raise field_needed("grade")
    if not is_relevance and verdict is None:
        raise field_needed("verdict")
    reason = (reason or "").strip()
    if not reason:
        raise TaskError(TaskErrorCode.INVALID_LABEL, "say why this label is final", field="reason")
    if is_relevance:
        if grade not in task.campaign.grade_values:
            raise TaskError(
                TaskErrorCode.INVALID_LABEL,
                f"grade must be one of {task.campaign.grade_values}",
                field="grade",
            )
        final_grade, final_verdict = grade, ""
        new_value = str(grade)
    else:
        if verdict not in Verdict.values:
            raise TaskError(
                TaskErrorCode.INVALID_LABEL, f"verdict must be one of {Verdict.values}", field="verdict"
            )
        final_grade, final_verdict = None, verdict
        new_value = verdict

    task_field = task_kind(task).assignment_field
    task_lock(task=task)  # two reviewers' revisions cannot interleave
    adjudication = Adjudication.objects.filter(**{task_field: task}).first()
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
    return adjudication
