"""The round trip's one-statement cases on PostgreSQL write what the general path writes, in fewer
statements."""

import random
import re
from datetime import UTC, datetime

import pytest
from django.core.cache import cache
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from psycopg.types.json import Jsonb

from annotation.bundle import parse_bundle
from annotation.errors import TaskError, TaskErrorCode
from annotation.models import (
    Assignment,
    Campaign,
    Document,
    Judgment,
    LabelRevision,
    Preference,
    RelevanceTask,
    RepeatAnswer,
    SideBySideTask,
)
from annotation.selectors.rankings import side_by_side_lists
from annotation.selectors.task_page import task_page_sql, task_view
from annotation.services import round_trip
from annotation.services.assignment import REPEAT_GAP, task_next, task_next_in
from annotation.services.campaigns import campaign_import
from annotation.services.labels import judgment_submit, preference_submit
from annotation.services.people import campaign_members_set
from annotation.services.tokens import token_get_or_create
from annotation.task_kinds import RELEVANCE, SIDE_BY_SIDE

pytestmark = pytest.mark.postgres


@pytest.fixture(autouse=True)
def _needs_postgres(db):
    if connection.vendor != "postgresql":
        pytest.skip("needs PostgreSQL (DATABASE_URL=postgres://...)")


def round_trips(context: CaptureQueriesContext) -> list[str]:
    """What a request sent, one string a round trip, less the savepoints of the test's own transaction."""
    return [
        query["sql"]
        for query in context.captured_queries
        if not query["sql"].startswith(("SAVEPOINT", "RELEASE SAVEPOINT", "BEGIN", "COMMIT"))
    ]


def statements(context: CaptureQueriesContext) -> list[str]:
    """Their statements: the annotator's lock and a new lease go as one string (`round_trip._LOCK`)."""
    return [statement for sql in round_trips(context) for statement in sql.split(";\n")]


def executed(sql: str) -> tuple[str, list[str]]:
    """The prepared statement an `EXECUTE name(%(a)s, …)` runs (`plumbing.prepared`), and its parameters."""
    name, arguments = sql.removeprefix("EXECUTE ").split("(", 1)
    return name, re.findall(r"%\((\w+)\)s", arguments)


def sent_in_transaction(call) -> tuple:
    """`call()`'s result, and each string it sent with whether it went inside a transaction."""
    sent = []

    def note(execute, sql, params, many, context):
        sent.append((sql, connection.in_atomic_block or not connection.get_autocommit()))
        return execute(sql, params, many, context)

    with connection.execute_wrapper(note):
        return call(), sent


def relevance_lease(user, campaign) -> Assignment:
    campaign.task_order = "relevance_first"
    lease = task_next(annotator=user, campaign=campaign)
    assert lease.relevance_task_id
    return lease


def relevance_task_leased(user, campaign) -> tuple[Assignment, RelevanceTask]:
    """A lease on a relevance task, and the task with its campaign as a view reads it."""
    lease = relevance_lease(user, campaign)
    return lease, RelevanceTask.objects.select_related("campaign").get(pk=lease.relevance_task_id)


def repeat_of(lease: Assignment) -> Assignment:
    """The lease's task leased again as a repeat, sides swapped (as `task_next` would)."""
    on_left = lease.experimental_on_left
    return Assignment.objects.create(
        annotator_id=lease.annotator_id,
        campaign_id=lease.campaign_id,
        relevance_task_id=lease.relevance_task_id,
        side_by_side_task_id=lease.side_by_side_task_id,
        repeat=True,
        leased_at=lease.leased_at,
        expires_at=lease.expires_at,
        experimental_on_left=None if on_left is None else not on_left,
    )


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
        lease, task = relevance_task_leased(user, campaign)
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


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("marks", [None, [["left", 2, 1]]])
def test_a_first_label_is_a_transaction_of_its_own_unless_marks_are_checked_after_it(
    bundle_data, make_user, marks
):
    """A first label's one statement runs with no BEGIN and COMMIT around it (two round trips fewer); a
    verdict with near-duplicate marks stays in a transaction, which undoes it when a mark is off the list."""
    campaign = campaign_import(bundle=parse_bundle(bundle_data, "small.json"))
    user = make_user("ann", "annotator")
    _lease, task = relevance_task_leased(user, campaign)
    _, grade_sent = sent_in_transaction(lambda: judgment_submit(annotator=user, task=task, grade=2))
    campaign.task_order = "side_by_side_first"
    lease = task_next(annotator=user, campaign=campaign)
    pair = SideBySideTask.objects.select_related("campaign").get(pk=lease.side_by_side_task_id)
    _, verdict_sent = sent_in_transaction(
        lambda: preference_submit(annotator=user, task=pair, side="left", duplicates=marks)
    )
    in_transaction = [inside for _, inside in grade_sent + verdict_sent]
    assert in_transaction[:1] == [False]
    if marks:  # the label, then the lists read in its transaction
        assert len(in_transaction) > 2 and all(in_transaction[1:])
    else:
        assert in_transaction[1:] == [False]
    assert Judgment.objects.filter(annotator=user).exists()
    assert Preference.objects.filter(annotator=user).exists()


@pytest.mark.django_db(transaction=True)
def test_a_new_lease_comes_with_the_annotators_lock_in_one_round_trip_outside_a_transaction(
    bundle_data, make_user
):
    """The lock and the lease go as one string in autocommit, which PostgreSQL runs as one transaction:
    no BEGIN and COMMIT of their own; a lease to go back to takes the general path, in a transaction."""
    campaign = campaign_import(bundle=parse_bundle(bundle_data, "small.json"))
    user = make_user("ann", "annotator")
    lease, [(sql, in_transaction)] = sent_in_transaction(lambda: task_next(annotator=user, campaign=campaign))
    assert not in_transaction
    lock, lease_statement = sql.split(";\n")
    assert "FOR KEY SHARE OF c FOR NO KEY UPDATE OF u" in lock
    # The lease runs prepared (plumbing/prepared.py): its statement is the session's.
    name, _ = executed(lease_statement)
    with connection.cursor() as cursor:
        cursor.execute("SELECT statement FROM pg_prepared_statements WHERE name = %s", [name])
        assert "INSERT INTO annotation_assignment" in cursor.fetchone()[0]
    again, sent = sent_in_transaction(lambda: task_next(annotator=user, campaign=campaign))
    assert again.pk == lease.pk
    assert not sent[0][1] and all(in_transaction for _, in_transaction in sent[1:])


@pytest.mark.django_db(transaction=True)
def test_the_apis_next_task_reads_the_campaign_then_leases_with_the_lock_outside_a_transaction(
    bundle_data, make_user
):
    """POST next-task, in autocommit: the first in a process reads the campaign with whether they are a
    member, without the lock, then sends the lock and the lease as one string; once it has seen the
    campaign, the lock reads it and the lease built from what was seen goes with it, one string in all. A
    lease to go back to takes the general path, in a transaction."""
    campaign = campaign_import(bundle=parse_bundle(bundle_data, "small.json"))
    user, other = make_user("ann", "annotator"), make_user("bob", "annotator")

    def next_task(annotator):
        return task_next_in(annotator=annotator, campaign_id=campaign.pk)

    lease, [(read, read_in_transaction), (sql, in_transaction)] = sent_in_transaction(lambda: next_task(user))
    assert not read_in_transaction and not in_transaction
    assert "FOR " not in read and "annotation_campaign_members" in read
    lock, lease_statement = sql.split(";\n")
    assert "FOR KEY SHARE OF c FOR NO KEY UPDATE OF u" in lock
    assert lease_statement.startswith("EXECUTE ")
    assert Assignment.objects.get(pk=lease.pk).annotator == user

    seen, [(sql, in_transaction)] = sent_in_transaction(lambda: next_task(other))
    assert not in_transaction
    lock, lease_statement = sql.split(";\n")
    assert "FOR KEY SHARE OF c FOR NO KEY UPDATE OF u" in lock and "annotation_campaign_members" in lock
    assert lease_statement.startswith("EXECUTE ")
    assert Assignment.objects.get(pk=seen.pk).annotator == other
    # A lease of their own; the task may be the first one's (a random start in the shuffle order, overlap 2).
    assert seen.campaign.name == campaign.name and seen.pk != lease.pk and seen.relevance_task_id

    again, sent = sent_in_transaction(lambda: next_task(user))
    assert again.pk == lease.pk
    assert not sent[0][1]
    assert sent[1:] and all(in_transaction for _, in_transaction in sent[1:])


@pytest.mark.django_db(transaction=True)
def test_a_campaign_changed_since_it_was_seen_is_leased_from_as_it_is_now(bundle_data, make_user):
    """The next-task's statement built from the campaign as this process saw it takes nothing once a setting
    it was built from has changed (here the order of the kinds); the lease then follows the campaign as it
    is, read again, and the change is what is seen next."""
    campaign = campaign_import(bundle=parse_bundle(bundle_data, "small.json"))
    first, second, third = (make_user(name, "annotator") for name in ("ann", "bob", "cat"))
    assert task_next_in(annotator=first, campaign_id=campaign.pk).relevance_task_id is not None
    Campaign.objects.filter(pk=campaign.pk).update(task_order="side_by_side_first", name="Renamed")
    lease, sent = sent_in_transaction(lambda: task_next_in(annotator=second, campaign_id=campaign.pk))
    assert lease.side_by_side_task_id is not None and lease.campaign.name == "Renamed"
    assert len(sent) == 2 and not any(in_transaction for _, in_transaction in sent)  # seen; read, leased
    lease, sent = sent_in_transaction(lambda: task_next_in(annotator=third, campaign_id=campaign.pk))
    assert lease.side_by_side_task_id is not None and len(sent) == 1


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize(
    ("change", "refused"),
    [
        ("archived", TaskErrorCode.ARCHIVED),
        ("membership ended", None),  # not theirs to see: 404
        ("a reviewer's membership ended", TaskErrorCode.NOT_MEMBER),  # theirs to see, not to work on
    ],
)
def test_a_campaign_seen_then_closed_to_the_annotator_leases_them_nothing(
    bundle_data, make_user, change, refused
):
    """What the campaign as seen would allow, the lock's read and the statement's check refuse."""
    campaign = campaign_import(bundle=parse_bundle(bundle_data, "small.json"))
    member = make_user("ann", "annotator")
    other = make_user("bob", "annotator", *(["reviewer"] if "reviewer" in change else []))
    if change != "archived":
        campaign_members_set(campaign=campaign, open_to_all=False, members=[member, other])
    assert task_next_in(annotator=member, campaign_id=campaign.pk) is not None  # the campaign seen
    if change == "archived":
        Campaign.objects.filter(pk=campaign.pk).update(archived_at=datetime.now(tz=UTC))
    else:
        campaign.members.remove(other)
    with pytest.raises(TaskError if refused else Campaign.DoesNotExist) as raised:
        task_next_in(annotator=other, campaign_id=campaign.pk)
    if refused:
        assert raised.value.code == refused
    assert not Assignment.objects.filter(annotator=other).exists()


@pytest.mark.django_db(transaction=True)
def test_a_campaign_archived_after_the_apis_read_leases_nothing(bundle_data, make_user):
    """Archived between the campaign's read and the lease: the lease's statement takes nothing, and the
    general path, under the lock, says why."""
    campaign = campaign_import(bundle=parse_bundle(bundle_data, "small.json"))
    user = make_user("ann", "annotator")
    statements_run = []

    def archive_after_the_read(execute, sql, params, many, context):
        result = execute(sql, params, many, context)
        statements_run.append(sql)
        if len(statements_run) == 1:  # the campaign read, in autocommit: committed at once
            Campaign.objects.filter(pk=campaign.pk).update(archived_at=datetime.now(tz=UTC))
        return result

    with connection.execute_wrapper(archive_after_the_read), pytest.raises(TaskError) as refused:
        task_next_in(annotator=user, campaign_id=campaign.pk)
    assert refused.value.code == TaskErrorCode.ARCHIVED
    assert len(statements_run) > 2  # the read, the lease that took nothing, then the general path
    assert not Assignment.objects.filter(annotator=user).exists()


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
    new = round_trip.lease_new(
        kinds=(RELEVANCE,), annotator=user, campaign=campaign, now=lease.leased_at, expires=lease.expires_at
    )
    assert new.open and new.held and new.lease is None
    assert sorted(RelevanceTask.objects.values_list("slots_spent", flat=True)) == spent
    assert Assignment.objects.filter(annotator=user).count() == 1


@pytest.mark.parametrize("order", ["relevance_first", "side_by_side_first"])
def test_when_the_first_kind_has_no_slot_left_the_other_comes_in_the_same_statement(
    bundle_data, make_user, order
):
    campaign = campaign_import(bundle=parse_bundle(bundle_data, "small.json"))
    campaign.task_order = order
    first, other = (RELEVANCE, SIDE_BY_SIDE) if order == "relevance_first" else (SIDE_BY_SIDE, RELEVANCE)
    first.model.objects.filter(campaign=campaign).update(slots_spent=first.overlap(campaign))
    user = make_user("ann", "annotator")
    with CaptureQueriesContext(connection) as context:
        lease = task_next(annotator=user, campaign=campaign)
    assert len(statements(context)) == 2, statements(context)  # the annotator's lock, the lease
    assert len(round_trips(context)) == 1
    assert getattr(lease, f"{first.assignment_field}_id") is None
    task_id = getattr(lease, f"{other.assignment_field}_id")
    assert other.model.objects.get(pk=task_id).slots_spent == 1
    assert (lease.experimental_on_left is None) == (other is RELEVANCE)
    with CaptureQueriesContext(connection) as context:
        view = task_view(assignment=lease)
    assert not statements(context)  # its page came with it
    assert task_view(assignment=Assignment.objects.select_related("campaign").get(pk=lease.pk)) == view
    assert Assignment.objects.get(annotator=user).pk == lease.pk


@pytest.mark.parametrize("order", ["relevance_first", "side_by_side_first"])
def test_a_new_leases_page_comes_with_it_as_its_own_statement_reads_it(bundle_data, make_user, order):
    campaign = campaign_import(bundle=parse_bundle(bundle_data, "small.json"))
    campaign.task_order = order
    user = make_user("ann", "annotator")
    first = task_next(annotator=user, campaign=campaign)
    if first.relevance_task_id:
        judgment_submit(annotator=user, task=first.relevance_task, grade=1)
    else:
        preference_submit(annotator=user, task=first.side_by_side_task, side="left")
    lease = task_next(annotator=user, campaign=campaign)
    with CaptureQueriesContext(connection) as context:
        view = task_view(assignment=lease)
    assert not statements(context)
    again = Assignment.objects.select_related("campaign").get(pk=lease.pk)
    with CaptureQueriesContext(connection) as context:
        assert task_view(assignment=again) == view
    assert len(statements(context)) == 1, statements(context)  # the lists' documents with them
    assert view.progress.done == 1 and view.previous_id == first.pk
    if lease.side_by_side_task_id:
        experimental, online = side_by_side_lists(task=lease.side_by_side_task, depth=campaign.gsb_depth)
        left, right = (experimental, online) if lease.experimental_on_left else (online, experimental)
        shown = [[(d.title, d.url, d.body) for d in side] for side in (view.left, view.right)]
        listed = [[(d.title or "(no title)", d.url, d.body) for d in side] for side in (left, right)]
        assert shown == listed and shown[0]


def _scans(plan: dict):
    """Every node of an EXPLAIN (FORMAT JSON) plan, subplans included."""
    yield plan
    for child in plan.get("Plans", []):
        yield from _scans(child)


def test_a_side_by_side_pages_documents_are_read_by_primary_key(campaign, make_user):
    # Enough other documents that scanning them all costs more than a few lookups, as in any real database.
    Document.objects.bulk_create(
        Document(campaign=campaign, external_id=f"other{i}", title=f"Other {i}") for i in range(5000)
    )
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE annotation_document")
    lease = task_next(annotator=make_user("ann", "annotator"), campaign=campaign)
    task = lease.side_by_side_task or SideBySideTask.objects.filter(campaign=campaign).first()
    sql = task_page_sql(SIDE_BY_SIDE, task="%(task)s", assignment="%(assignment)s", finished=False)
    params = {"annotator": lease.annotator_id, "campaign": campaign.pk, "depth": campaign.gsb_depth}
    with connection.cursor() as cursor:
        cursor.execute("EXPLAIN (FORMAT JSON) " + sql, {**params, "task": task.pk, "assignment": lease.pk})
        plan = cursor.fetchone()[0][0]["Plan"]
    documents = [node for node in _scans(plan) if node.get("Relation Name") == "annotation_document"]
    assert documents and all(
        node["Node Type"] in {"Index Scan", "Index Only Scan"} and "id = ANY" in node["Index Cond"]
        for node in documents
    ), documents


def test_a_repeats_answer_writes_what_the_general_path_writes_in_one_statement(campaign, make_user, settings):
    results = []
    for fast in (True, False):
        settings.ROUND_TRIP_STATEMENTS = fast
        user = make_user(f"ann{fast}", "annotator")
        lease, task = relevance_task_leased(user, campaign)
        judgment_submit(annotator=user, task=task, grade=3, comment="first")
        repeat = repeat_of(lease)
        with CaptureQueriesContext(connection) as context:
            shown, created = judgment_submit(annotator=user, task=task, grade=0, version="new")
        assert created and shown.pk is None and shown.grade == 0
        repeat.refresh_from_db()
        answer = RepeatAnswer.objects.get(assignment=repeat)
        assert 0 <= answer.seconds_spent <= (repeat.finished_at - repeat.leased_at).total_seconds()
        first = Judgment.objects.get(task=task, annotator=user)
        results.append(
            (
                (repeat.status, answer.grade, answer.verdict, first.grade, first.comment),
                len(statements(context)),
            )
        )
    (fast_rows, fast_count), (general_rows, general_count) = results
    assert fast_rows == general_rows == (Assignment.Status.SUBMITTED, 0, "", 3, "first")
    assert fast_count == 1 < general_count


def test_a_repeats_verdict_is_relative_to_its_swapped_sides(bundle_data, make_user):
    campaign = campaign_import(bundle=parse_bundle(bundle_data, "small.json"))
    campaign.task_order = "side_by_side_first"
    user = make_user("ann", "annotator")
    lease = task_next(annotator=user, campaign=campaign)
    task = lease.side_by_side_task
    preference_submit(annotator=user, task=task, side="left")
    repeat = repeat_of(lease)
    with CaptureQueriesContext(connection) as context:
        shown, created = preference_submit(annotator=user, task=task, side="right")
    assert len(statements(context)) == 1, statements(context)
    first = Preference.objects.get(task=task, annotator=user)
    assert created and shown.verdict == first.verdict  # the same list chosen on the other side
    assert RepeatAnswer.objects.get(assignment=repeat).verdict == first.verdict


def test_a_repeat_is_leased_in_one_statement_by_the_general_paths_rule(campaign, make_user, monkeypatch):
    user = make_user("ann", "annotator")
    answered = []
    for _ in range(REPEAT_GAP + 2):
        lease = relevance_lease(user, campaign)
        judgment_submit(annotator=user, task=lease.relevance_task, grade=1)
        answered.append(lease.relevance_task_id)
    campaign.repeat_rate = 0.5
    monkeypatch.setattr(random, "random", lambda: 0.0)  # a repeat drawn; the latest candidate picked
    for expected in reversed(answered[:2]):
        with CaptureQueriesContext(connection) as context:
            repeat = task_next(annotator=user, campaign=campaign)
        assert repeat.repeat and repeat.relevance_task_id == expected
        repeat_lease = (
            f"EXECUTE {round_trip._repeat_lease_new_sql().name}("  # prepared (plumbing/prepared.py)
        )
        assert [sql for sql in statements(context) if sql.startswith(repeat_lease)]
        assert len(statements(context)) == 2, statements(context)  # the annotator's lock, the repeat
        assert len(round_trips(context)) == 1
        judgment_submit(annotator=user, task=repeat.relevance_task, grade=2)
    with CaptureQueriesContext(connection) as context:
        assert not task_next(annotator=user, campaign=campaign).repeat  # none left beyond the last three
    assert len(statements(context)) == 4, statements(context)  # then the lock again and a new lease
    assert len(round_trips(context)) == 2


def transaction_control(context: CaptureQueriesContext) -> int:
    """The BEGIN and COMMIT statements the request's transactions would send: here the savepoints standing
    for them, the test running in a transaction of its own."""
    savepoints = ("SAVEPOINT", "RELEASE SAVEPOINT")
    return sum(query["sql"].startswith(savepoints) for query in context.captured_queries)


def _label_round_trip(path: str, client, campaign, assignment_id: int) -> tuple[int, int, int]:
    """A relevance label of the annotator's task with their next task, on `path`: its statements and the
    strings they went in (a transaction's BEGIN and COMMIT each one of both), and the next task's id."""
    with CaptureQueriesContext(connection) as context:
        if path == "web":
            url = reverse("annotation:task", args=[campaign.pk, assignment_id])
            response = client.post(url, {"grade": "1"}, headers={"X-Workbench": "next"})
            assert response.status_code == 200
            next_id = response.context["task"].assignment_id
        else:
            url = f"/api/tasks/{assignment_id}/judgment/" + ("?next=true" if path == "api" else "")
            response = client.post(url, {"grade": 1}, "application/json")
            assert response.status_code == 201
            if path == "api":
                next_id = response.json()["next"]["id"]
            else:
                next_id = client.post(f"/api/campaigns/{campaign.pk}/next-task/").json()["id"]
    control = transaction_control(context)
    return len(statements(context)) + control, len(round_trips(context)) + control, next_id


# The statements of a relevance label with the next task: the assignment, the label; the annotator's lock
# and the lease with its page (in two requests, the lock reads the campaign as well); without Redis the
# session and the signed-in user (web) or the token's user (per API request). Then the strings they go in:
# the lock and the lease are one, without BEGIN and COMMIT (which would count in both).
ROUND_TRIP_STATEMENTS = {
    ("web", True): (4, 3),
    ("api", True): (4, 3),
    ("api in two", True): (4, 3),
    ("web", False): (6, 5),
    ("api", False): (5, 4),
    ("api in two", False): (6, 5),
}


@pytest.mark.parametrize(("path", "cached"), list(ROUND_TRIP_STATEMENTS))
def test_a_label_with_the_next_task_and_a_repeat_take_the_same_statements(
    path, cached, client, campaign, make_user, settings, monkeypatch
):
    if cached:  # as with REDIS_URL: sessions, signed-in users and tokens' users in the cache
        settings.API_TOKEN_CACHE_SECONDS = 60
        settings.CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}
        settings.SESSION_ENGINE = "django.contrib.sessions.backends.cached_db"
    cache.clear()
    user = make_user("ann", "annotator")
    if path == "web":
        client.force_login(user)
    else:
        client = Client(headers={"Authorization": f"Token {token_get_or_create(user=user).key}"})
    current = relevance_lease(user, campaign).pk
    page = (
        reverse("annotation:task", args=[campaign.pk, current]) if path == "web" else f"/api/tasks/{current}/"
    )
    assert client.get(page).status_code == 200  # the session or token read, into the cache if any
    if path == "api in two":  # the campaign seen by next-task (the held lease back), as in a worker's use
        assert client.post(f"/api/campaigns/{campaign.pk}/next-task/").json()["id"] == current
    for _ in range(REPEAT_GAP + 1):
        *counts, current = _label_round_trip(path, client, campaign, current)
        assert tuple(counts) == ROUND_TRIP_STATEMENTS[path, cached]
    Campaign.objects.filter(pk=campaign.pk).update(repeat_rate=0.5)
    if path == "api in two":  # the first next-task after a change reads the campaign again (below)
        assert client.post(f"/api/campaigns/{campaign.pk}/next-task/").json()["id"] == current
    with monkeypatch.context() as drawn:
        drawn.setattr(random, "random", lambda: 0.0)  # the next hand-out draws a repeat
        *counts, current = _label_round_trip(path, client, campaign, current)
    assert Assignment.objects.get(pk=current).repeat
    assert tuple(counts) == ROUND_TRIP_STATEMENTS[path, cached]
    monkeypatch.setattr(random, "random", lambda: 0.9)  # none drawn
    *counts, current = _label_round_trip(path, client, campaign, current)  # the repeat's answer
    assert RepeatAnswer.objects.filter(assignment__annotator=user).count() == 1
    assert tuple(counts) == ROUND_TRIP_STATEMENTS[path, cached]


@pytest.mark.parametrize("pick", [0.0, 0.99])  # the latest candidate (relevance), the earliest (side by side)
def test_a_repeats_page_comes_with_it_as_its_own_statement_reads_it(
    bundle_data, make_user, monkeypatch, pick
):
    campaign = campaign_import(bundle=parse_bundle(bundle_data, "small.json"))
    campaign.task_order = "side_by_side_first"
    user = make_user("ann", "annotator")
    while (lease := task_next(annotator=user, campaign=campaign)) is not None:
        if lease.relevance_task_id:
            judgment_submit(annotator=user, task=lease.relevance_task, grade=1)
        else:
            preference_submit(annotator=user, task=lease.side_by_side_task, side="left")
    campaign.repeat_rate = 0.5
    draws = iter([0.0, pick])  # a repeat drawn, then which
    monkeypatch.setattr(random, "random", lambda: next(draws))
    repeat = task_next(annotator=user, campaign=campaign)
    assert repeat.repeat and bool(repeat.side_by_side_task_id) is (pick > 0.5)
    with CaptureQueriesContext(connection) as context:
        view = task_view(assignment=repeat)
    assert not statements(context)
    assert task_view(assignment=Assignment.objects.select_related("campaign").get(pk=repeat.pk)) == view


# What PostgreSQL may type a prepared statement's parameter as (`plumbing.prepared`: it tells each type from
# where the parameter stands), for each Python type the round trip sends. A float typed as an integer would
# be rounded without an error.
TYPES_OF = {
    bool: {"boolean"},
    int: {"smallint", "integer", "bigint"},
    float: {"double precision"},
    str: {"text", "character varying"},
    datetime: {"timestamp with time zone"},
    Jsonb: {"jsonb"},
}


def test_the_prepared_statements_parameters_have_the_types_of_what_is_sent(
    bundle_data, make_user, monkeypatch
):
    bundle_data["settings"] = {**bundle_data.get("settings", {}), "gsb_scale": 5}
    campaign = campaign_import(bundle=parse_bundle(bundle_data, "small.json"))
    user = make_user("ann", "annotator")
    sent = []

    def note(execute, sql, params, many, context):
        if sql.split(";\n")[-1].startswith("EXECUTE "):
            sent.append((sql.split(";\n")[-1], params))
        return execute(sql, params, many, context)

    def answer(lease):
        if lease.relevance_task_id:
            judgment_submit(annotator=lease.annotator, task=lease.relevance_task, grade=1, seconds_spent=2.5)
        else:
            preference_submit(
                annotator=lease.annotator, task=lease.side_by_side_task, side="left", strength=2
            )

    with connection.execute_wrapper(note):
        for order in ("relevance_first", "side_by_side_first"):
            campaign.task_order = order
            for _ in range(REPEAT_GAP + 2):
                lease = task_next(annotator=user, campaign=campaign)
                if lease is None:
                    break
                answer(lease)
        # The API's next-task, from the campaign as seen (`round_trip._SEEN`): a lease in either order, then
        # a repeat's.
        other = make_user("bob", "annotator")
        for order in ("relevance_first", "side_by_side_first"):
            Campaign.objects.filter(pk=campaign.pk).update(task_order=order)
            for _ in range(REPEAT_GAP):
                answer(task_next_in(annotator=other, campaign_id=campaign.pk))
        Campaign.objects.filter(pk=campaign.pk).update(repeat_rate=0.5)
        campaign.repeat_rate = 0.5
        monkeypatch.setattr(random, "random", lambda: 0.3)  # a repeat drawn, not the latest candidate
        assert task_next(annotator=user, campaign=campaign).repeat
        answer(task_next_in(annotator=other, campaign_id=campaign.pk))  # the change seen
        assert task_next_in(annotator=other, campaign_id=campaign.pk).repeat
    checked = set()
    for sql, params in sent:
        name, parameters = executed(sql)
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT parameter_types::text[] FROM pg_prepared_statements WHERE name = %s", [name]
            )
            types = cursor.fetchone()[0]
        for parameter, type_ in zip(parameters, types, strict=True):
            value = params[parameter]
            if value is not None:
                assert type_ in TYPES_OF[type(value)], (parameter, value, type_)
        checked.add(name)
    # A lease in either order and a repeat's, each also as built from the campaign seen; a grade's and a
    # verdict's statement.
    assert len(checked) == 8
