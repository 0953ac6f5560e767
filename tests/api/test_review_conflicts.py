"""Two reviewers on one queue: a final label saved from a stale page or read is refused (409 over the API, a
message naming the final label now on the page) and nothing changes; and opening a task holds it a while,
so the queue hands the other reviewer another task."""

import threading

import pytest
from django.contrib.auth.models import Group
from django.db import connection, connections

from annotation.bundle import JudgmentRow, parse_bundle
from annotation.errors import TaskError, TaskErrorCode
from annotation.models import Adjudication, LabelRevision, RelevanceTask, ReviewLease
from annotation.selectors.review import review_queue, review_task
from annotation.services.adjudication import adjudication_set, review_lease_next
from annotation.services.campaigns import campaign_import
from annotation.services.label_import import labels_import
from tests.factories import threads_run

DISPUTED = ("d1", "d2", "d3")  # of q1, each graded 0 and 3


def _dispute(campaign) -> list[RelevanceTask]:
    """Split grades on three documents of q1: three open tasks of the review queue, the first most
    disputed."""
    rows = [
        JudgmentRow(0, name, "q1", document, grade, "", 10.0)
        for document in DISPUTED
        for name, grade in (("a", 0), ("b", 3 if document == "d1" else 2))
    ]
    labels_import(campaign=campaign, judgments=rows, preferences=[], source="test")
    return [RelevanceTask.objects.get(query__external_id="q1", document__external_id=doc) for doc in DISPUTED]


@pytest.fixture
def disputed(campaign):
    return _dispute(campaign)


def _page(client, url: str) -> str:
    return client.get(url).content.decode()


def _version(page: str) -> str:
    return page.split('name="version" value="')[1].split('"')[0]


def test_a_stale_final_label_is_refused_and_nothing_changes(disputed, make_user):
    task = disputed[0]
    rita, remy = make_user("rita", "reviewer"), make_user("remy", "reviewer")
    seen = review_task(task=task).version
    adjudication_set(reviewer=rita, task=task, grade=0, reason="spam", version=seen)
    with pytest.raises(TaskError) as refused:
        adjudication_set(reviewer=remy, task=task, grade=3, reason="on topic", version=seen)
    assert refused.value.code == TaskErrorCode.STALE
    assert "it is now 0, by rita" in str(refused.value)
    final = Adjudication.objects.get(relevance_task=task)
    assert (final.grade, final.reviewer, final.reason) == (0, rita, "spam")
    assert LabelRevision.objects.filter(kind=LabelRevision.Kind.ADJUDICATION).count() == 1
    # Read again, the change goes through; without a version (older clients) it always does.
    again = review_task(task=task).version
    adjudication_set(reviewer=remy, task=task, grade=3, reason="on topic", version=again)
    adjudication_set(reviewer=rita, task=task, grade=2, reason="partly")
    assert Adjudication.objects.get(relevance_task=task).grade == 2


def test_two_reviewers_on_the_page_the_second_is_shown_the_final_label(disputed, make_user, client):
    task = disputed[0]
    url = f"/review/relevance/{task.pk}/"
    second = type(client)()
    client.force_login(make_user("rita", "reviewer"))
    second.force_login(make_user("remy", "reviewer"))
    rita_page, remy_page = _page(client, url), _page(second, url)
    saved = client.post(url, {"label": "0", "reason": "spam", "version": _version(rita_page)})
    assert saved.status_code == 302
    stale = {"label": "3", "reason": "on topic", "version": _version(remy_page)}
    refused = second.post(url, stale, follow=True)
    page = refused.content.decode()
    assert "Another reviewer saved this task&#x27;s final label" in page and "it is now 0, by rita" in page
    assert "version:" not in page  # the hidden field is no name for the reviewer
    assert 'id="current-adjudication"' in page and "spam" in page
    final = Adjudication.objects.get(relevance_task=task)
    assert (final.grade, final.reviewer.username) == (0, "rita")
    # The page now carries the version it shows: a deliberate change is taken.
    second.post(url, {"label": "3", "reason": "on topic", "version": _version(page)})
    assert Adjudication.objects.get(relevance_task=task).grade == 3


def test_two_reviewers_over_the_api_the_second_gets_409(disputed, client_for):
    task = disputed[0]
    url = f"/api/review/relevance/{task.pk}/"
    rita, remy = client_for("rita", "reviewer"), client_for("remy", "reviewer")
    rita_read, remy_read = rita.get(url).json(), remy.get(url).json()
    assert rita_read["version"] == remy_read["version"] == "new"
    body = {"grade": 0, "reason": "spam", "version": rita_read["version"]}
    saved = rita.post(url + "adjudication/", body, format="json")
    assert saved.status_code == 200 and saved.json()["version"] != "new"
    body = {"grade": 3, "reason": "on topic", "version": remy_read["version"]}
    refused = remy.post(url + "adjudication/", body, format="json")
    assert refused.status_code == 409 and refused.json()["code"] == "stale"
    assert "it is now 0, by rita" in refused.json()["detail"]
    assert Adjudication.objects.get(relevance_task=task).grade == 0


def test_reviewers_opening_the_queue_start_on_different_tasks(disputed, client_for, client, make_user):
    first, second, third = disputed
    rita, remy = client_for("rita", "reviewer"), client_for("remy", "reviewer")
    queue_url = f"/api/campaigns/{first.campaign_id}/review-queue/"
    assert [item["task_id"] for item in rita.get(queue_url).json()["results"]] == [t.pk for t in disputed]
    rita.get(f"/api/review/relevance/{first.pk}/")  # rita opens the top task: hers a while
    remy_queue = remy.get(queue_url).json()["results"]
    assert [item["task_id"] for item in remy_queue] == [second.pk, third.pk, first.pk]
    assert remy_queue[-1]["held_by"] == "rita"
    assert remy.get(f"/api/review/relevance/{first.pk}/").json()["held_by"] == "rita"
    # The page: remy opens the second task; rita, saving the first, is sent on to the third.
    client.force_login(make_user("remy2", "reviewer"))
    assert 'id="held-by"' in _page(client, f"/review/relevance/{first.pk}/")
    remy.get(f"/api/review/relevance/{second.pk}/")
    body = {"grade": 0, "reason": "spam"}
    saved = rita.post(f"/api/review/relevance/{first.pk}/adjudication/", body, format="json")
    assert saved.status_code == 200
    assert not ReviewLease.objects.filter(relevance_task=first).exists()  # settled: no hold left
    assert review_lease_next(reviewer=rita.user, campaign=first.campaign, after=("relevance", first.pk)) == (
        "relevance",
        third.pk,
    )


def test_a_hold_ends_after_review_lease_minutes(disputed, make_user, settings):
    settings.REVIEW_LEASE_MINUTES = 0
    rita, remy = make_user("rita", "reviewer"), make_user("remy", "reviewer")
    campaign = disputed[0].campaign
    assert review_lease_next(reviewer=rita, campaign=campaign, after=None) == ("relevance", disputed[0].pk)
    assert review_lease_next(reviewer=remy, campaign=campaign, after=None) == ("relevance", disputed[0].pk)
    queue = review_queue(campaign=campaign, reviewer=remy)
    assert [item.task_pk for item in queue.items][0] == disputed[0].pk


@pytest.mark.postgres
def test_reviewers_starting_at_once_each_hold_another_task(transactional_db, bundle_data, make_user):
    if connection.vendor != "postgresql":
        pytest.skip("needs PostgreSQL (DATABASE_URL=postgres://...)")
    for role in ("annotator", "reviewer"):
        Group.objects.get_or_create(name=role)  # a flush by an earlier test drops them
    campaign = campaign_import(bundle=parse_bundle(bundle_data, "reviewers.json"))
    _dispute(campaign)
    reviewers = [make_user(f"r{i}", "reviewer") for i in range(len(DISPUTED))]
    barrier, held, errors = threading.Barrier(len(reviewers)), [], []

    def start(reviewer) -> None:
        try:
            barrier.wait()
            held.append(review_lease_next(reviewer=reviewer, campaign=campaign, after=None))
        except Exception as error:  # noqa: BLE001 - reported by the main thread
            errors.append(error)
        finally:
            connections.close_all()

    threads_run([threading.Thread(target=start, args=(reviewer,)) for reviewer in reviewers], timeout=60)
    assert errors == []
    assert None not in held and len(set(held)) == len(reviewers)
