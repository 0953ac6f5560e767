"""The round trip's one-statement cases on PostgreSQL write what the general path writes, in fewer
statements."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from annotation.bundle import parse_bundle
from annotation.errors import TaskError, TaskErrorCode
from annotation.models import Assignment, LabelRevision, Preference, RelevanceTask
from annotation.selectors.rankings import side_by_side_lists
from annotation.selectors.workbench import task_view
from annotation.services import round_trip
from annotation.services.assignment import task_next
from annotation.services.campaigns import campaign_import
from annotation.services.labels import judgment_submit, preference_submit
from annotation.task_kinds import RELEVANCE

pytestmark = pytest.mark.postgres


@pytest.fixture(autouse=True)
def _needs_postgres(db):
    if connection.vendor != "postgresql":
        pytest.skip("needs PostgreSQL (DATABASE_URL=postgres://...)")


def statements(context: CaptureQueriesContext) -> list[str]:
    """What a request asked, less the savepoints of the test's own transaction."""
    return [
        query["sql"]
        for query in context.captured_queries
        if not query["sql"].startswith(("SAVEPOINT", "RELEASE SAVEPOINT", "BEGIN", "COMMIT"))
    ]


def relevance_lease(user, campaign) -> Assignment:
    campaign.task_order = "relevance_first"
    lease = task_next(annotator=user, campaign=campaign)
    assert lease.relevance_task_id
    return lease


def written(user) -> dict:
    """Everything a first label wrote for the annotator, as comparable values (slots: `slots_kept`)."""
    assignment = Assignment.objects.get(annotator=user, status=Assignment.Status.SUBMITTED)
    revision = LabelRevision.objects.get(changed_by=user)
    task = assignment.task
    label = (task.judgments if isinstance(task, RelevanceTask) else task.preferences).get(annotator=user)
    fields = (
        ("grade",) if isinstance(task, RelevanceTask) else ("verdict", "strength", "experimental_on_left")
    )
    return {
        "label": {field: getattr(label, field) for field in (*fields, "comment")},
        "revision": (revision.kind, revision.old_value, revision.new_value, revision.note),
        "finished": assignment.finished_at is not None,
        "seconds": 0
        <= label.seconds_spent
        <= (assignment.finished_at - assignment.leased_at).total_seconds(),
    }


def test_a_first_grade_writes_what_the_general_path_writes(campaign, make_user, settings):
    results = []
    for fast in (True, False):
        settings.ROUND_TRIP_STATEMENTS = fast
        user = make_user(f"ann{fast}", "annotator")
        lease = relevance_lease(user, campaign)
        task = RelevanceTask.objects.select_related("campaign").get(pk=lease.relevance_task_id)
        spent = task.slots_spent
        with CaptureQueriesContext(connection) as context:
            judgment, created = judgment_submit(
                annotator=user, task=task, grade=2, comment="ok", version="new"
            )
        assert created and judgment.pk and judgment.grade == 2
        task.refresh_from_db()
        assert task.slots_spent == spent  # the lease's slot became the label's
        results.append((written(user), len(statements(context))))
    (fast_rows, fast_count), (general_rows, general_count) = results
    assert fast_rows == general_rows
    assert fast_count == 1 < general_count


@pytest.mark.parametrize("on_left", [True, False])
@pytest.mark.parametrize(("side", "strength"), [("left", 2), ("right", 1), ("same", None)])
def test_a_first_verdict_writes_what_the_general_path_writes(
    bundle_data, make_user, settings, on_left, side, strength
):
    bundle_data["settings"] = {**bundle_data.get("settings", {}), "gsb_scale": 5}
    campaign = campaign_import(bundle=parse_bundle(bundle_data, "small.json"))
    campaign.task_order = "side_by_side_first"
    results = []
    for fast in (True, False):
        settings.ROUND_TRIP_STATEMENTS = fast
        user = make_user(f"ann{fast}", "annotator")
        lease = task_next(annotator=user, campaign=campaign)
        Assignment.objects.filter(pk=lease.pk).update(experimental_on_left=on_left)
        task = lease.side_by_side_task
        task.refresh_from_db()
        spent = task.slots_spent
        preference, created = preference_submit(annotator=user, task=task, side=side, strength=strength)
        assert created and preference.verdict == Preference.objects.get(pk=preference.pk).verdict
        task.refresh_from_db()
        assert task.slots_spent == spent  # the lease's slot became the label's
        results.append(written(user))
    assert results[0] == results[1]


def test_a_change_a_stale_page_and_a_late_label_take_the_general_path(campaign, make_user):
    user = make_user("ann", "annotator")
    lease = relevance_lease(user, campaign)
    task = lease.relevance_task
    judgment_submit(annotator=user, task=task, grade=1)
    judgment, created = judgment_submit(annotator=user, task=task, grade=3)  # a change: no live lease
    assert not created and judgment.grade == 3
    revisions = LabelRevision.objects.filter(changed_by=user).order_by("pk")
    assert list(revisions.values_list("old_value", "new_value")) == [("", "1"), ("1", "3")]

    lease = relevance_lease(user, campaign)
    with pytest.raises(TaskError) as refused:  # a page rendered with a label that is not there
        judgment_submit(annotator=user, task=lease.relevance_task, grade=2, version="2026-01-01T00:00:00")
    assert refused.value.code == TaskErrorCode.STALE

    Assignment.objects.filter(pk=lease.pk).update(status=Assignment.Status.EXPIRED)
    RelevanceTask.objects.filter(pk=lease.relevance_task_id).update(slots_spent=0)  # its slot given back
    judgment, created = judgment_submit(annotator=user, task=lease.relevance_task, grade=0)
    assert created and RelevanceTask.objects.get(pk=lease.relevance_task_id).slots_spent == 1


def test_a_new_lease_takes_a_slot_and_nothing_while_one_is_held(campaign, make_user):
    user = make_user("ann", "annotator")
    lease = relevance_lease(user, campaign)
    assert RelevanceTask.objects.get(pk=lease.relevance_task_id).slots_spent == 1
    spent = sorted(RelevanceTask.objects.values_list("slots_spent", flat=True))
    now, start = lease.leased_at, 0
    held, again = round_trip.lease_new(
        kind=RELEVANCE, annotator=user, campaign=campaign, now=now, expires=lease.expires_at, start=start
    )
    assert held and again is None
    assert sorted(RelevanceTask.objects.values_list("slots_spent", flat=True)) == spent
    assert Assignment.objects.filter(annotator=user).count() == 1


def test_a_label_with_the_next_task_is_at_most_eight_statements(client, make_user, campaign):
    """Session, user with roles, assignment; the label; the annotator's lock, the lease; the task, the
    progress (a side-by-side task reads its documents once more)."""
    user = make_user("ann", "annotator")
    client.force_login(user)
    campaign.task_order = "relevance_first"
    campaign.save(update_fields=["task_order"])
    task = client.get(reverse("annotation:work", args=[campaign.pk])).context["task"]
    url = reverse("annotation:task", args=[campaign.pk, task.assignment_id])
    with CaptureQueriesContext(connection) as context:
        response = client.post(url, {"grade": "1"}, headers={"X-Workbench": "next"})
    assert response.status_code == 200 and response.context["task"].kind == "relevance"
    assert len(statements(context)) <= 8, statements(context)


def test_a_side_by_side_page_reads_its_lists_documents_in_its_one_statement(bundle_data, make_user):
    campaign = campaign_import(bundle=parse_bundle(bundle_data, "small.json"))
    campaign.task_order = "side_by_side_first"
    lease = task_next(annotator=make_user("ann", "annotator"), campaign=campaign)
    with CaptureQueriesContext(connection) as context:
        view = task_view(assignment=lease)
    assert len(statements(context)) == 1, statements(context)
    experimental, online = side_by_side_lists(task=lease.side_by_side_task, depth=campaign.gsb_depth)
    left, right = (experimental, online) if lease.experimental_on_left else (online, experimental)
    shown = [[(d.title, d.url, d.body) for d in side] for side in (view.left, view.right)]
    listed = [[(d.title or "(no title)", d.url, d.body) for d in side] for side in (left, right)]
    assert shown == listed and shown[0]
