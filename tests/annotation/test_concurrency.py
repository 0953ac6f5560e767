"""Many annotators at once on PostgreSQL: each task gets exactly its overlap, no one twice, no lease leaks."""

import threading
import time
from collections import Counter

import pytest
from django.contrib.auth.models import Group
from django.db import connection, connections, transaction

from annotation.bundle import parse_bundle
from annotation.errors import InputError, InputErrorCode
from annotation.models import Assignment, Judgment, Preference
from annotation.services.assignment import task_next
from annotation.services.campaigns import campaign_import
from annotation.services.labels import judgment_submit, preference_submit
from annotation.services.tokens import token_get_or_create
from tests.factories import threads_run

pytestmark = pytest.mark.postgres

ANNOTATORS = 10
THREADS_PER_ANNOTATOR = 2


@pytest.fixture(autouse=True)
def _needs_postgres(db):
    if connection.vendor != "postgresql":
        pytest.skip("needs PostgreSQL (DATABASE_URL=postgres://...)")


def annotate_until_done(user, campaign, errors: list) -> None:
    try:
        while (lease := task_next(annotator=user, campaign=campaign)) is not None:
            if lease.relevance_task_id:
                judgment_submit(annotator=user, task=lease.relevance_task, grade=1)
            else:
                preference_submit(annotator=user, task=lease.side_by_side_task, side="left")
    except Exception as error:  # noqa: BLE001 - reported by the main thread
        errors.append(error)
    finally:
        connections.close_all()


def test_parallel_annotators_fill_every_task_exactly(transactional_db, bundle_data, make_user):
    Group.objects.get_or_create(name="annotator")  # a flush by an earlier test drops it
    bundle_data["settings"].update(overlap=3, gsb_overlap=2)
    campaign = campaign_import(bundle=parse_bundle(bundle_data, "small.json"))
    users = [make_user(f"a{i}", "annotator") for i in range(ANNOTATORS)]
    errors: list = []
    threads = [
        threading.Thread(target=annotate_until_done, args=(user, campaign, errors))
        for user in users
        for _ in range(THREADS_PER_ANNOTATOR)
    ]
    threads_run(threads, timeout=120)
    assert errors == []
    judgments = Counter(Judgment.objects.values_list("task_id", flat=True))
    assert set(judgments.values()) == {3} and len(judgments) == campaign.relevance_tasks.count()
    preferences = Counter(Preference.objects.values_list("task_id", flat=True))
    served = campaign.side_by_side_tasks.filter(lists_identical=False)
    assert set(preferences.values()) == {2} and set(preferences) == set(served.values_list("pk", flat=True))
    assert not Assignment.objects.filter(status=Assignment.Status.LEASED).exists()
    spent = dict(campaign.relevance_tasks.values_list("pk", "slots_spent"))
    assert spent == dict(judgments), "the slot counter drifted from the labels"
    pairs = Judgment.objects.values_list("task_id", "annotator_id")
    assert len(set(pairs)) == len(pairs)
    submitted = Assignment.objects.filter(status=Assignment.Status.SUBMITTED).count()
    assert submitted == sum(judgments.values()) + sum(preferences.values())


def _waiting_on_locks() -> int:
    """How many other sessions of the test database wait on a lock now."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_stat_clear_snapshot()")  # the view is kept per transaction otherwise
        cursor.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
            " AND wait_event_type = 'Lock' AND pid <> pg_backend_pid()"
        )
        return cursor.fetchone()[0]


def _hand_out_into(annotator, campaign, leases: list, errors: list) -> None:
    try:
        leases.append(task_next(annotator=annotator, campaign=campaign).pk)
    except Exception as error:  # noqa: BLE001 - reported by the main thread
        errors.append(error)
    finally:
        connections.close_all()


def test_one_annotators_hand_outs_at_once_share_one_lease(transactional_db, bundle_data, make_user):
    """Two tabs asking at once queue on the annotator's lock, which goes in one string with the new lease
    (`round_trip._LOCK`) and holds until that lease is written: the second goes back to the lease the first
    took. Here both wait on the lock (held by the test) and are let go together, each round."""
    Group.objects.get_or_create(name="annotator")  # a flush by an earlier test drops it
    campaign = campaign_import(bundle=parse_bundle(bundle_data, "small.json"))
    ann = make_user("ann", "annotator")
    for _round in range(4):
        leases: list = []
        errors: list = []
        threads = [
            threading.Thread(target=_hand_out_into, args=(ann, campaign, leases, errors)) for _tab in range(2)
        ]
        with transaction.atomic():
            type(ann).objects.select_for_update(no_key=True).get(pk=ann.pk)
            for thread in threads:
                thread.start()
            deadline = time.monotonic() + 30
            while _waiting_on_locks() < 2 and time.monotonic() < deadline:
                time.sleep(0.02)
            assert _waiting_on_locks() == 2
        for thread in threads:
            thread.join(timeout=30)
        assert errors == [] and len(leases) == 2 and leases[0] == leases[1]
        live = Assignment.objects.filter(annotator=ann, status=Assignment.Status.LEASED)
        assert list(live.values_list("pk", flat=True)) == leases[:1]
        lease = live.get()
        if lease.relevance_task_id:
            judgment_submit(annotator=ann, task=lease.relevance_task, grade=1)
        else:
            preference_submit(annotator=ann, task=lease.side_by_side_task, side="left")


def test_first_logins_at_once_share_one_token(transactional_db, make_user):
    user = make_user("racer")  # no role: a flush by an earlier transactional test drops the groups
    keys, errors, barrier = [], [], threading.Barrier(8)

    def login() -> None:
        try:
            barrier.wait()
            keys.append(token_get_or_create(user=user).key)
        except Exception as error:  # noqa: BLE001 - reported by the main thread
            errors.append(error)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=login) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert errors == [] and len(keys) == 8 and len(set(keys)) == 1


def test_two_imports_of_one_name_at_once_refuse_the_second_cleanly(transactional_db, bundle_data):
    """B's name check runs while A's campaign is written but not committed, so both pass it; B's insert
    then waits on the unique index and fails when A commits: a clean "already exists", not a 500."""
    outcome: list = []

    def second_import():
        try:
            campaign_import(bundle=parse_bundle(dict(bundle_data), "b.json"))
            outcome.append("created")
        except InputError as error:
            outcome.append(error.code)
        finally:
            connections.close_all()

    with transaction.atomic():
        campaign_import(bundle=parse_bundle(dict(bundle_data), "a.json"))
        thread = threading.Thread(target=second_import)
        thread.start()
        time.sleep(0.5)  # B is now blocked on A's uncommitted row
    thread.join()
    assert outcome == [InputErrorCode.ALREADY_EXISTS]
