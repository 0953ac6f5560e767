"""Submitting grades and verdicts: scale, leases (late ones too), revisions, time and side mapping."""

from datetime import timedelta

import pytest
from django.utils import timezone

from annotation.errors import TaskError, TaskErrorCode
from annotation.models import Assignment, Judgment, LabelRevision, Preference, SkipReason
from annotation.selectors.task_page import preference_side, task_view
from annotation.services.assignment import task_next, task_skip
from annotation.services.labels import judgment_submit, label_submit, preference_submit


def expire(assignment: Assignment) -> None:
    Assignment.objects.filter(pk=assignment.pk).update(expires_at=timezone.now() - timedelta(seconds=1))


def side_by_side_lease(campaign, user) -> Assignment:
    for task in campaign.relevance_tasks.all():
        judgment = Judgment(campaign=campaign, task=task, annotator=user, grade=0)
        judgment.save()
    lease = task_next(annotator=user, campaign=campaign)
    assert lease.side_by_side_task_id
    return lease


def test_judgment_created_with_server_time_and_revision(campaign, make_user):
    ann = make_user("ann", "annotator")
    lease = task_next(annotator=ann, campaign=campaign)
    Assignment.objects.filter(pk=lease.pk).update(leased_at=timezone.now() - timedelta(seconds=42))
    judgment, created = judgment_submit(annotator=ann, task=lease.relevance_task, grade=2, comment="ok")
    assert created and judgment.grade == 2 and judgment.comment == "ok"
    assert 42 <= judgment.seconds_spent < 60
    lease.refresh_from_db()
    assert lease.status == "submitted" and lease.finished_at is not None
    revision = LabelRevision.objects.get(relevance_task=lease.relevance_task)
    assert (revision.kind, revision.old_value, revision.new_value) == ("judgment", "", "2")
    assert revision.changed_by == ann


def test_reported_time_may_only_shorten_the_measure(campaign, make_user):
    ann = make_user("ann", "annotator")
    lease = task_next(annotator=ann, campaign=campaign)
    Assignment.objects.filter(pk=lease.pk).update(leased_at=timezone.now() - timedelta(seconds=30))
    judgment, _ = judgment_submit(annotator=ann, task=lease.relevance_task, grade=1, seconds_spent=9000)
    assert judgment.seconds_spent < 40
    lease = task_next(annotator=ann, campaign=campaign)
    judgment, _ = judgment_submit(annotator=ann, task=lease.relevance_task, grade=1, seconds_spent=0.0)
    assert judgment.seconds_spent == 0.0


def test_changing_a_grade_keeps_time_and_records_revision(campaign, make_user):
    ann = make_user("ann", "annotator")
    lease = task_next(annotator=ann, campaign=campaign)
    first, _ = judgment_submit(annotator=ann, task=lease.relevance_task, grade=1)
    changed, created = judgment_submit(annotator=ann, task=lease.relevance_task, grade=3)
    assert not created and changed.pk == first.pk and changed.grade == 3
    assert changed.seconds_spent == first.seconds_spent
    values = list(
        LabelRevision.objects.filter(relevance_task=lease.relevance_task)
        .order_by("created_at", "pk")
        .values_list("old_value", "new_value")
    )
    assert values == [("", "1"), ("1", "3")]


@pytest.mark.parametrize("grade", [4, -1, 99, True])
def test_off_scale_grade_refused(campaign, make_user, grade):
    ann = make_user("ann", "annotator")
    lease = task_next(annotator=ann, campaign=campaign)
    with pytest.raises(TaskError) as error:
        judgment_submit(annotator=ann, task=lease.relevance_task, grade=grade)
    assert (error.value.code, error.value.field) == (TaskErrorCode.GRADE_NOT_ON_SCALE, "grade")
    assert not Judgment.objects.exists()


def test_scale_with_negative_grade_accepted(campaign, make_user):
    campaign.scale = [{"value": -1, "label": "Spam", "description": ""}, *campaign.scale]
    campaign.save()
    ann = make_user("ann", "annotator")
    lease = task_next(annotator=ann, campaign=campaign)
    assert judgment_submit(annotator=ann, task=lease.relevance_task, grade=-1)[0].grade == -1
    keys = {grade.value: grade.key for grade in task_view(assignment=lease).scale}
    assert keys == {-1: "x", 0: "0", 1: "1", 2: "2", 3: "3"}


def test_submission_without_lease_refused(campaign, make_user):
    ann = make_user("ann", "annotator")
    task = campaign.relevance_tasks.first()
    with pytest.raises(TaskError) as error:
        judgment_submit(annotator=ann, task=task, grade=1)
    assert error.value.code == TaskErrorCode.NOT_ASSIGNED


def test_skipped_task_cannot_be_answered(campaign, make_user):
    ann = make_user("ann", "annotator")
    lease = task_next(annotator=ann, campaign=campaign)
    task_skip(annotator=ann, assignment=lease, reason=SkipReason.DONT_UNDERSTAND)
    with pytest.raises(TaskError) as error:
        judgment_submit(annotator=ann, task=lease.relevance_task, grade=1)
    assert error.value.code == TaskErrorCode.SKIPPED


def test_late_submission_accepted_while_the_task_has_room(campaign, make_user):
    ann = make_user("ann", "annotator")
    lease = task_next(annotator=ann, campaign=campaign)
    expire(lease)
    judgment, created = judgment_submit(annotator=ann, task=lease.relevance_task, grade=2)
    assert created and judgment.grade == 2


def test_late_submission_refused_once_others_filled_the_task(campaign, make_user):
    campaign.overlap = 1
    campaign.save()
    late, quick = make_user("late", "annotator"), make_user("quick", "annotator")
    lease = task_next(annotator=late, campaign=campaign)
    expire(lease)
    while (other := task_next(annotator=quick, campaign=campaign)).relevance_task != lease.relevance_task:
        task_skip(annotator=quick, assignment=other, reason=SkipReason.CANT_LOAD)
    with pytest.raises(TaskError) as error:  # quick's live lease holds the only slot
        judgment_submit(annotator=late, task=lease.relevance_task, grade=2)
    assert error.value.code == TaskErrorCode.LEASE_EXPIRED_FULL
    judgment_submit(annotator=quick, task=lease.relevance_task, grade=1)
    with pytest.raises(TaskError) as error:
        judgment_submit(annotator=late, task=lease.relevance_task, grade=2)
    assert error.value.code == TaskErrorCode.LEASE_EXPIRED_FULL
    assert lease.relevance_task.judgments.count() == 1


@pytest.mark.parametrize(
    ("on_left", "side", "verdict"),
    [
        (True, "left", "good"),
        (True, "right", "bad"),
        (False, "left", "bad"),
        (False, "right", "good"),
        (True, "same", "same"),
        (False, "same", "same"),
    ],
)
def test_side_mapped_to_verdict_of_the_experimental_model(campaign, make_user, on_left, side, verdict):
    ann = make_user("ann", "annotator")
    lease = side_by_side_lease(campaign, ann)
    Assignment.objects.filter(pk=lease.pk).update(experimental_on_left=on_left)
    preference, created = preference_submit(annotator=ann, task=lease.side_by_side_task, side=side)
    assert created and preference.verdict == verdict and preference.experimental_on_left is on_left
    assert preference_side(verdict=preference.verdict, experimental_on_left=on_left) == side
    revision = LabelRevision.objects.get(side_by_side_task=lease.side_by_side_task)
    assert (revision.kind, revision.new_value) == ("preference", verdict)


def test_task_view_puts_the_experimental_list_on_its_side(campaign, make_user):
    ann = make_user("ann", "annotator")
    lease = side_by_side_lease(campaign, ann)
    task = lease.side_by_side_task  # q1: online d1 d2, exp d2 d1
    for on_left, left_first in ((True, "Doc 2"), (False, "Doc 1")):
        lease.experimental_on_left = on_left
        view = task_view(assignment=lease)
        assert view.left[0].title == left_first
        assert len(view.left) == len(view.right) == task.campaign.gsb_depth
    assert "exp" not in str(view).replace("expires_at", "")
    assert "online" not in str(view)


def test_changing_a_verdict_keeps_the_stored_side(campaign, make_user):
    ann = make_user("ann", "annotator")
    lease = side_by_side_lease(campaign, ann)
    Assignment.objects.filter(pk=lease.pk).update(experimental_on_left=False)
    preference_submit(annotator=ann, task=lease.side_by_side_task, side="left")
    changed, created = preference_submit(annotator=ann, task=lease.side_by_side_task, side="right")
    assert not created and changed.verdict == "good" and not changed.experimental_on_left
    values = list(
        LabelRevision.objects.filter(side_by_side_task=lease.side_by_side_task)
        .order_by("created_at", "pk")
        .values_list("old_value", "new_value")
    )
    assert values == [("", "bad"), ("bad", "good")]


def test_a_stale_verdict_is_refused_naming_the_side_shown(campaign, make_user):
    ann = make_user("ann", "annotator")
    lease = side_by_side_lease(campaign, ann)
    Assignment.objects.filter(pk=lease.pk).update(experimental_on_left=False)
    preference_submit(annotator=ann, task=lease.side_by_side_task, side="left", version="new")
    with pytest.raises(TaskError) as error:
        preference_submit(annotator=ann, task=lease.side_by_side_task, side="right", version="new")
    assert error.value.code == TaskErrorCode.STALE and "your answer now is left" in str(error.value)
    assert lease.side_by_side_task.preferences.get().verdict == "bad"  # unchanged


def test_strength_on_the_five_point_scale_only(campaign, make_user):
    ann = make_user("ann", "annotator")
    lease = side_by_side_lease(campaign, ann)
    task = lease.side_by_side_task
    with pytest.raises(TaskError) as error:
        preference_submit(annotator=ann, task=task, side="left", strength=2)
    assert (error.value.code, error.value.field) == (TaskErrorCode.INVALID_LABEL, "strength")
    campaign.gsb_scale = 5
    campaign.save()
    task.refresh_from_db()
    for side, strength in (("left", None), ("left", 3), ("same", 1)):
        with pytest.raises(TaskError):
            preference_submit(annotator=ann, task=task, side=side, strength=strength)
    with pytest.raises(TaskError) as error:
        preference_submit(annotator=ann, task=task, side="up")
    assert error.value.field == "side"
    Assignment.objects.filter(pk=lease.pk).update(experimental_on_left=True)
    preference, _ = preference_submit(annotator=ann, task=task, side="left", strength=2)
    assert (preference.verdict, preference.strength) == ("good", 2)
    assert LabelRevision.objects.get(side_by_side_task=task).new_value == "good:2"


@pytest.mark.parametrize(
    ("kind", "answer", "field", "message"),
    [
        ("relevance", {}, "grade", "is required for this kind of task."),
        ("relevance", {"verdict": "left"}, "grade", "is required for this kind of task."),
        ("relevance", {"grade": 1, "verdict": "left"}, "verdict", "is not for this kind of task."),
        ("relevance", {"grade": 1, "strength": 1}, "strength", "is not for this kind of task."),
        ("side_by_side", {"strength": 1}, "verdict", "is required for this kind of task."),
        ("side_by_side", {"verdict": "left", "grade": 1}, "grade", "is not for this kind of task."),
    ],
)
def test_a_label_takes_the_fields_of_its_tasks_kind(campaign, make_user, kind, answer, field, message):
    ann = make_user("ann", "annotator")
    lease = (
        task_next(annotator=ann, campaign=campaign)
        if kind == "relevance"
        else side_by_side_lease(campaign, ann)
    )
    labels = Judgment.objects.count()
    with pytest.raises(TaskError) as error:
        label_submit(annotator=ann, assignment=lease, **answer)
    assert (error.value.code, error.value.field, error.value.message) == (
        TaskErrorCode.INVALID_LABEL,
        field,
        message,
    )
    assert Judgment.objects.count() == labels and not Preference.objects.exists()


def test_a_label_of_either_kind_is_stored_by_its_kinds_service(campaign, make_user):
    ann = make_user("ann", "annotator")
    lease = task_next(annotator=ann, campaign=campaign)
    judgment, created = label_submit(annotator=ann, assignment=lease, grade=2, comment="ok")
    assert created and Judgment.objects.get(pk=judgment.pk).grade == 2
    lease = side_by_side_lease(campaign, make_user("other", "annotator"))
    Assignment.objects.filter(pk=lease.pk).update(experimental_on_left=True)
    lease.refresh_from_db()
    preference, created = label_submit(annotator=lease.annotator, assignment=lease, verdict="left")
    assert created and Preference.objects.get(pk=preference.pk).verdict == "good"
