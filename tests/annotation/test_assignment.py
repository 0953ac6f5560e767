"""Handing tasks out: overlap, per-annotator order, leases and their expiry, skips, identical lists."""

import random
import statistics
from dataclasses import replace
from datetime import timedelta

import pytest
from django.utils import timezone

from annotation.bundle import parse_bundle
from annotation.errors import TaskError, TaskErrorCode
from annotation.models import Assignment, Preference, RelevanceTask, SideBySideTask, SkipReason
from annotation.selectors.campaigns import AnnotatorProgress, campaign_progress
from annotation.selectors.workbench import (
    CampaignWork,
    _tasks_unseen,
    annotator_campaigns,
    annotator_kind_progress,
)
from annotation.services.assignment import task_next, task_skip
from annotation.services.campaigns import campaign_import
from annotation.services.labels import judgment_submit, preference_submit
from annotation.services.leases import leases_expire
from annotation.task_kinds import TASK_KINDS


def expire(assignment: Assignment) -> None:
    Assignment.objects.filter(pk=assignment.pk).update(expires_at=timezone.now() - timedelta(seconds=1))


def answer(annotator, assignment: Assignment) -> None:
    if assignment.relevance_task:
        judgment_submit(annotator=annotator, task=assignment.relevance_task, grade=1)
    else:
        preference_submit(annotator=annotator, task=assignment.side_by_side_task, side="same")


def work_through(annotator, campaign) -> list[Assignment]:
    done = []
    while (assignment := task_next(annotator=annotator, campaign=campaign)) is not None:
        answer(annotator, assignment)
        done.append(assignment)
    return done


def test_live_lease_is_returned_again(campaign, make_user):
    ann = make_user("ann", "annotator")
    first = task_next(annotator=ann, campaign=campaign)
    assert task_next(annotator=ann, campaign=campaign).pk == first.pk
    assert first.expires_at - first.leased_at == timedelta(minutes=30)


def test_every_lease_comes_with_the_campaign_its_page_reads(
    campaign, make_user, settings, django_assert_num_queries
):
    settings.ROUND_TRIP_STATEMENTS = False  # the general path on every database
    user = make_user("ann", "annotator")
    fresh = task_next(annotator=user, campaign=campaign)
    again = task_next(annotator=user, campaign=campaign)  # the live lease
    expire(again)
    renewed = task_next(annotator=user, campaign=campaign)
    assert fresh.pk == again.pk == renewed.pk
    with django_assert_num_queries(0):
        assert fresh.campaign == again.campaign == renewed.campaign == campaign


def test_relevance_first_then_side_by_side_each_once(campaign, make_user):
    ann = make_user("ann", "annotator")
    done = work_through(ann, campaign)
    kinds = ["relevance" if a.relevance_task_id else "sbs" for a in done]
    assert kinds == ["relevance"] * 8 + ["sbs"]
    assert len({a.relevance_task_id for a in done[:8]}) == 8


def _campaign_in_order(bundle_data, task_order: str, overlap: int = 2):
    bundle_data["name"] = task_order
    bundle_data["settings"].update(
        task_order=task_order, auto_same_identical=False, overlap=overlap, gsb_overlap=overlap
    )
    return campaign_import(bundle=parse_bundle(bundle_data, "ordered.json"))


def test_side_by_side_first(db, bundle_data, make_user):
    campaign = _campaign_in_order(bundle_data, "side_by_side_first")
    done = work_through(make_user("ann", "annotator"), campaign)
    assert ["relevance" if a.relevance_task_id else "sbs" for a in done] == ["sbs"] * 2 + ["relevance"] * 8


def test_interleaved_hands_out_side_by_side_tasks_from_the_start(db, bundle_data, make_user):
    random.seed(14)
    campaign = _campaign_in_order(bundle_data, "interleaved", overlap=20)
    firsts = []
    for n in range(20):
        done = work_through(make_user(f"a{n}", "annotator"), campaign)
        kinds = ["relevance" if a.relevance_task_id else "sbs" for a in done]
        assert sorted(kinds) == ["relevance"] * 8 + ["sbs"] * 2  # everything, each once
        firsts.append(kinds.index("sbs"))
    # Relevance first would put the first side-by-side task at position 8 for everyone.
    assert statistics.median(firsts) < 3 and max(firsts) < 8 and min(firsts) == 0


def test_identical_lists_are_never_handed_out(campaign, make_user):
    identical = SideBySideTask.objects.get(campaign=campaign, lists_identical=True)
    done = [a for name in "abc" for a in work_through(make_user(name, "annotator"), campaign)]
    assert identical.pk not in {a.side_by_side_task_id for a in done}
    assert not identical.preferences.exists()


def test_identical_lists_are_asked_when_auto_same_is_off(campaign, make_user):
    campaign.auto_same_identical = False
    campaign.save()
    done = work_through(make_user("ann", "annotator"), campaign)
    assert sum(a.side_by_side_task_id is not None for a in done) == 2


def test_each_task_goes_to_overlap_annotators(campaign, make_user):
    users = [make_user(name, "annotator") for name in "abc"]
    done = {user.username: work_through(user, campaign) for user in users}
    assert len(done["a"]) == len(done["b"]) == 9
    assert done["c"] == []  # overlap 2: the third annotator finds nothing left
    for task in campaign.relevance_tasks.all():
        assert task.judgments.count() == 2


def test_order_is_random_per_annotator_and_stable(campaign, make_user):
    def order(user):
        ids = []
        while (a := task_next(annotator=user, campaign=campaign)) and a.relevance_task_id:
            ids.append(a.relevance_task_id)
            task_skip(annotator=user, assignment=a, reason=SkipReason.CANT_LOAD)
        return ids

    orders = [order(make_user(f"u{i}", "annotator")) for i in range(4)]
    assert all(sorted(o) == sorted(orders[0]) for o in orders)
    assert len({tuple(o) for o in orders}) > 1


def test_live_leases_hold_slots_and_expired_ones_return_to_the_pool(campaign, make_user):
    campaign.overlap = 1
    campaign.save()
    a, b = make_user("a", "annotator"), make_user("b", "annotator")
    held = [task_next(annotator=a, campaign=campaign)]
    # b gets every other task, never a's leased one
    b_tasks = set()
    while (lease := task_next(annotator=b, campaign=campaign)) and lease.relevance_task_id:
        b_tasks.add(lease.relevance_task_id)
        answer(b, lease)
    assert held[0].relevance_task_id not in b_tasks and len(b_tasks) == 7
    expire(held[0])
    assert lease.side_by_side_task_id  # b moved on to side by side; answer it to come back to relevance
    answer(b, lease)
    again = task_next(annotator=b, campaign=campaign)
    assert again.relevance_task_id == held[0].relevance_task_id


def test_expired_own_lease_is_renewed_in_place(campaign, make_user):
    ann = make_user("ann", "annotator")
    first = task_next(annotator=ann, campaign=campaign)
    expire(first)
    again = task_next(annotator=ann, campaign=campaign)
    assert again.pk == first.pk and again.expires_at > timezone.now()
    assert Assignment.objects.filter(annotator=ann).count() == 1


def test_side_is_random_per_annotator_and_stored(campaign, make_user):
    campaign.gsb_overlap = 12
    campaign.save()
    sides = set()
    for i in range(12):
        user = make_user(f"u{i}", "annotator")
        for task in campaign.relevance_tasks.all():  # skipped, so the side-by-side task comes next
            Assignment.objects.create(
                annotator=user,
                campaign=campaign,
                relevance_task=task,
                status="skipped",
                skip_reason="cant_load",
                leased_at=timezone.now(),
                expires_at=timezone.now(),
            )
        lease = task_next(annotator=user, campaign=campaign)
        assert lease.side_by_side_task_id and lease.experimental_on_left is not None
        sides.add(lease.experimental_on_left)
    assert sides == {True, False}


def test_skip_frees_the_slot_and_never_returns(campaign, make_user):
    campaign.overlap = 1
    campaign.save()
    a, b = make_user("a", "annotator"), make_user("b", "annotator")
    lease = task_next(annotator=a, campaign=campaign)
    task_skip(annotator=a, assignment=lease, reason=SkipReason.FOREIGN_LANGUAGE)
    lease.refresh_from_db()
    assert lease.status == "skipped" and lease.skip_reason == "foreign_language"
    assert lease.relevance_task_id not in {x.relevance_task_id for x in work_through(a, campaign)}
    assert lease.relevance_task_id in {x.relevance_task_id for x in work_through(b, campaign)}


def test_skip_refusals(campaign, make_user):
    a, b = make_user("a", "annotator"), make_user("b", "annotator")
    lease = task_next(annotator=a, campaign=campaign)
    with pytest.raises(TaskError) as error:
        task_skip(annotator=a, assignment=lease, reason="bored")
    assert error.value.code == TaskErrorCode.INVALID_LABEL
    with pytest.raises(TaskError) as error:
        task_skip(annotator=b, assignment=lease, reason=SkipReason.CANT_LOAD)
    assert error.value.code == TaskErrorCode.NOT_ASSIGNED
    answer(a, lease)
    with pytest.raises(TaskError) as error:
        task_skip(annotator=a, assignment=lease, reason=SkipReason.CANT_LOAD)
    assert error.value.code == TaskErrorCode.NOT_LEASED


def test_annotator_campaigns_counts_own_work(campaign, make_user):
    a = make_user("a", "annotator")
    assert annotator_campaigns(annotator=a) == [
        CampaignWork(campaign=campaign, may_annotate=True, done=0, skipped=0, remaining=9)
    ]
    lease = task_next(annotator=a, campaign=campaign)
    assert annotator_campaigns(annotator=a)[0].remaining == 9  # the leased task is still theirs
    task_skip(annotator=a, assignment=lease, reason=SkipReason.CANT_LOAD)
    answer(a, task_next(annotator=a, campaign=campaign))
    task_next(annotator=a, campaign=campaign)
    row = annotator_campaigns(annotator=a)[0]
    assert (row.done, row.remaining, row.skipped) == (1, 7, 1)


def test_remaining_is_the_open_tasks_never_met(campaign, make_user):
    """What an annotator could still be given is counted as the tasks with a slot left less those they met;
    it equals testing every task for their labels and leases, through answers, skips, leases live and
    expired, and tasks filled by others."""
    rng = random.Random(11)
    people = [make_user(f"p{number}", "annotator") for number in range(4)]

    def one_by_one(person) -> dict[str, int]:
        now = timezone.now()
        live = Assignment.objects.filter(annotator=person, status="leased", expires_at__gt=now)
        return {
            kind.name: _tasks_unseen(kind=kind, annotator=person, now=now)
            .filter(campaign=campaign, slots_spent__lt=kind.overlap(campaign))
            .count()
            + live.filter(**{f"{kind.assignment_field}__isnull": False}).count()
            for kind in TASK_KINDS
        }

    for _ in range(30):
        person = rng.choice(people)
        lease = task_next(annotator=person, campaign=campaign)
        if lease is not None:
            action = rng.choice(["answer", "skip", "expire", "keep"])
            if action == "answer":
                answer(person, lease)
            elif action == "skip":
                task_skip(annotator=person, assignment=lease, reason=SkipReason.CANT_LOAD)
            elif action == "expire":
                expire(lease)
        for someone in people:
            expected = one_by_one(someone)
            kinds = annotator_kind_progress(annotator=someone, campaign=campaign)
            assert {kind.name: kind.remaining for kind in kinds} == expected
            assert annotator_campaigns(annotator=someone)[0].remaining == sum(expected.values())


def test_campaign_progress(campaign, make_user, django_assert_max_num_queries):
    a, b = make_user("a", "annotator"), make_user("b", "annotator")
    work_through(a, campaign)
    lease = task_next(annotator=b, campaign=campaign)
    task_skip(annotator=b, assignment=lease, reason=SkipReason.CANT_LOAD)
    task_next(annotator=b, campaign=campaign)
    with django_assert_max_num_queries(10):  # as many with any number of annotators and labels
        progress = campaign_progress(campaign=campaign)
    rows = {row.username: row for row in progress.annotators}
    assert rows["a"].last_active == Preference.objects.get(annotator=a).updated_at  # their last label
    assert 0 <= rows["a"].median_seconds < 60  # lease to answer, measured by the services
    assert replace(rows["a"], last_active=None, median_seconds=None) == AnnotatorProgress(
        username="a",
        judgments=8,
        preferences=1,
        done=9,
        in_progress=0,
        skipped=0,
        median_seconds=None,
        last_active=None,
    )
    assert (rows["b"].done, rows["b"].in_progress, rows["b"].skipped) == (0, 1, 1)
    assert rows["b"].median_seconds is None and rows["b"].last_active is None
    relevance, sbs = progress.kinds
    assert (relevance.tasks, relevance.complete, relevance.labels_left) == (8, 0, 8)
    # The identical lists' task counts, complete, as in the launch report; the other waits for a verdict.
    assert (sbs.tasks, sbs.complete, sbs.automatic_same, sbs.labels_left) == (2, 1, 1, 1)
    with django_assert_max_num_queries(8):  # without every label's seconds (the overview shows none)
        without = campaign_progress(campaign=campaign, median_seconds=False)
    assert without.kinds == progress.kinds
    assert without.annotators == [replace(row, median_seconds=None) for row in progress.annotators]


def assert_slots_match_rows(campaign) -> None:
    """The counter the hand-out reads equals what it stands for: labels plus leases not given back."""
    for task in campaign.relevance_tasks.all():
        held = task.assignments.filter(status=Assignment.Status.LEASED).count()
        assert task.slots_spent == task.judgments.count() + held, task
    for task in campaign.side_by_side_tasks.all():
        held = task.assignments.filter(status=Assignment.Status.LEASED).count()
        assert task.slots_spent == task.preferences.count() + held, task


def test_slot_counter_follows_leases_labels_skips_and_expiry(campaign, make_user):
    a, b = make_user("a", "annotator"), make_user("b", "annotator")
    first = task_next(annotator=a, campaign=campaign)
    assert RelevanceTask.objects.get(pk=first.relevance_task_id).slots_spent == 1
    answer(a, first)
    second = task_next(annotator=a, campaign=campaign)
    task_skip(annotator=a, assignment=second, reason=SkipReason.CANT_LOAD)
    third = task_next(annotator=a, campaign=campaign)
    expire(third)
    assert_slots_match_rows(campaign)
    task_next(annotator=b, campaign=campaign)  # any hand-out gives expired slots back
    third.refresh_from_db()
    assert third.status == Assignment.Status.EXPIRED
    assert_slots_match_rows(campaign)
    answer(a, third)  # late, and the task has room: taken, and its slot spent again
    third.refresh_from_db()
    assert third.status == Assignment.Status.SUBMITTED
    work_through(a, campaign)
    work_through(b, campaign)
    assert_slots_match_rows(campaign)


def test_expired_lease_given_back_is_renewed_for_its_annotator(campaign, make_user):
    campaign.overlap = 1
    campaign.save()
    a = make_user("a", "annotator")
    first = task_next(annotator=a, campaign=campaign)
    expire(first)
    leases_expire(now=timezone.now())
    first.refresh_from_db()
    assert first.status == Assignment.Status.EXPIRED
    assert_slots_match_rows(campaign)
    again = task_next(annotator=a, campaign=campaign)  # the first task in a's order, free again
    assert again.pk == first.pk and again.status == Assignment.Status.LEASED
    assert_slots_match_rows(campaign)
