"""A fresh campaign's start on PostgreSQL: 32 API clients (16 annotators, each in two windows) sign in and
answer at once, each on its own thread and connection, repeats among the tasks. Every transaction takes its
row locks in one order (docs/architecture.md, "Row locks"), so none deadlocks: no error, every answer
stored, no task past its overlap."""

import threading
from collections import Counter

import pytest
from django.contrib.auth.models import Group
from django.db import connection, connections
from rest_framework.test import APIClient
from rest_framework.throttling import ScopedRateThrottle

from annotation.bundle import parse_bundle
from annotation.models import Assignment, Judgment, Preference, RepeatAnswer
from annotation.services.campaigns import campaign_import
from annotation.services.tokens import token_get_or_create
from tests.factories import threads_run

pytestmark = pytest.mark.postgres

ANNOTATORS = 16
WINDOWS = 2
PASSWORD = "pw-rush-1"
QUERIES = 12


def _bundle(bundle_data: dict) -> dict:
    """Twelve queries, two models ranking five documents each, partly the same: some 80 tasks of each kind
    to hand out three times."""
    queries = [{"id": f"q{q}", "text": f"query {q}"} for q in range(QUERIES)]
    documents = [{"id": f"d{d}", "title": f"Doc {d}"} for d in range(QUERIES * 8)]
    rankings = [
        {"model": model, "query": f"q{q}", "documents": [f"d{q * 8 + shift + i}" for i in range(5)]}
        for q in range(QUERIES)
        for model, shift in (("online", 0), ("exp", 3))
    ]
    settings = {**bundle_data["settings"], "overlap": 3, "gsb_overlap": 3, "pool_depth": 5}
    settings.update(task_order="interleaved", repeat_rate=0.3)
    lists = {"queries": queries, "documents": documents, "rankings": rankings}
    return {**bundle_data, "settings": settings, **lists}


@pytest.fixture(autouse=True)
def _needs_postgres(transactional_db):
    if connection.vendor != "postgresql":
        pytest.skip("needs PostgreSQL (DATABASE_URL=postgres://...)")


def _deadlocks() -> int:
    with connection.cursor() as cursor:
        cursor.execute("SELECT deadlocks FROM pg_stat_database WHERE datname = current_database()")
        return cursor.fetchone()[0]


def _answer_until_done(username: str, campaign_id: int, barrier, answers: list, errors: list) -> None:
    """Sign in, then take and answer tasks until none is left; every answer that is not a 2xx is an error."""
    client = APIClient(raise_request_exception=False)
    try:
        barrier.wait()
        signed_in = client.post(
            "/api/auth/token/", {"username": username, "password": PASSWORD}, format="json"
        )
        if signed_in.status_code != 200:
            errors.append((username, "sign-in", signed_in.status_code, signed_in.content[:300]))
            return
        client.credentials(HTTP_AUTHORIZATION=f"Token {signed_in.json()['token']}")
        while True:
            task = client.post(f"/api/campaigns/{campaign_id}/next-task/")
            if task.status_code == 204:
                return
            if task.status_code != 200:
                errors.append((username, "next-task", task.status_code, task.content[:300]))
                return
            body = task.json()
            answer = {"grade": 1} if body["kind"] == "relevance" else {"verdict": "left"}
            stored = client.post(f"/api/tasks/{body['id']}/judgment/", answer, format="json")
            if stored.status_code not in (200, 201):  # 200: the other window answered it first
                errors.append((username, "judgment", stored.status_code, stored.content[:300]))
                return
            answers.append((username, body["kind"], body["id"]))
    except Exception as error:  # noqa: BLE001 - reported by the main thread
        errors.append((username, "exception", repr(error)))
    finally:
        connections.close_all()


def _settings_change(token: str, campaign_id: int, barrier, done, errors: list) -> None:
    """A manager turning label reuse off and on while the annotators work: each change recounts every
    task's slots, with the campaign locked."""
    client = APIClient(raise_request_exception=False)
    client.credentials(HTTP_AUTHORIZATION=f"Token {token}")
    try:
        barrier.wait()
        turn = 0
        while not done.is_set():
            turn += 1
            changed = client.patch(
                f"/api/campaigns/{campaign_id}/", {"settings": {"reuse_labels": turn % 2 == 1}}, format="json"
            )
            if changed.status_code != 200:
                errors.append(("manager", "settings", changed.status_code, changed.content[:300]))
    except Exception as error:  # noqa: BLE001 - reported by the main thread
        errors.append(("manager", "exception", repr(error)))
    finally:
        connections.close_all()


def test_clients_starting_at_once_never_deadlock(bundle_data, make_user, monkeypatch):
    for role in ("annotator", "manager"):
        Group.objects.get_or_create(name=role)  # a flush by an earlier test drops them
    manager = token_get_or_create(user=make_user("boss", "manager")).key
    monkeypatch.setattr(ScopedRateThrottle, "THROTTLE_RATES", {"login": "1000/min"})
    campaign = campaign_import(bundle=parse_bundle(_bundle(bundle_data), "rush.json"))
    usernames = [make_user(f"rush{i}", "annotator", password=PASSWORD).username for i in range(ANNOTATORS)]
    deadlocks_before = _deadlocks()
    answers: list = []
    errors: list = []
    barrier = threading.Barrier(ANNOTATORS * WINDOWS + 1)
    done = threading.Event()
    changing = threading.Thread(target=_settings_change, args=(manager, campaign.pk, barrier, done, errors))
    changing.start()
    threads = [
        threading.Thread(target=_answer_until_done, args=(name, campaign.pk, barrier, answers, errors))
        for name in usernames
        for _ in range(WINDOWS)
    ]
    threads_run(threads, timeout=180)
    done.set()
    changing.join(timeout=60)
    assert not changing.is_alive()
    assert errors == []
    assert _deadlocks() == deadlocks_before
    # Every answer is stored: as a label or, to a repeat, as a repeat's answer.
    answered = {pk for _, _, pk in answers}
    stored = set(Assignment.objects.filter(status=Assignment.Status.SUBMITTED).values_list("pk", flat=True))
    assert answered == stored
    repeats = set(RepeatAnswer.objects.values_list("assignment_id", flat=True))
    assert repeats == set(Assignment.objects.filter(repeat=True, pk__in=stored).values_list("pk", flat=True))
    # Every task holds exactly its overlap, none twice by one annotator, the slot counters true.
    judgments = Counter(Judgment.objects.values_list("task_id", flat=True))
    preferences = Counter(Preference.objects.values_list("task_id", flat=True))
    assert len(stored) - len(repeats) == sum(judgments.values()) + sum(preferences.values())
    assert set(judgments.values()) == {3} and len(judgments) == campaign.relevance_tasks.count()
    served = campaign.side_by_side_tasks.filter(lists_identical=False)
    assert set(preferences.values()) == {3} and set(preferences) == set(served.values_list("pk", flat=True))
    assert dict(campaign.relevance_tasks.values_list("pk", "slots_spent")) == dict(judgments)
    assert dict(served.values_list("pk", "slots_spent")) == dict(preferences)
