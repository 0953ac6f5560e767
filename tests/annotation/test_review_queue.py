"""The review queue: every disputed task reachable page by page, filters by state and kind, the next open
task after a final label, and a history that starts with imported labels."""

import re

import pytest
from django.urls import reverse

from annotation.bundle import JudgmentRow, PreferenceRow, parse_bundle
from annotation.models import Adjudication, RelevanceTask, SideBySideTask
from annotation.selectors.review import QueueState, review_next, review_queue, review_task
from annotation.services.adjudication import adjudication_set
from annotation.services.campaigns import campaign_import
from annotation.services.label_import import labels_import
from annotation.task_kinds import RELEVANCE

N_DISPUTED = 61


@pytest.fixture
def crowded(db, bundle_data):
    """61 relevance tasks of q1 on which a and b disagree, and its side-by-side task split between good and
    bad. Queue order: spread 1 (d3, d6, … d60, then the side-by-side task), 2/3 (d1, d4, … d61), 1/3 (d2,
    d5, … d59)."""
    bundle_data["documents"] = [{"id": f"d{i}"} for i in range(1, N_DISPUTED + 1)]
    campaign = campaign_import(bundle=parse_bundle(bundle_data, "crowded.json"))
    judgments = []
    for i in range(1, N_DISPUTED + 1):
        judgments += [JudgmentRow(0, "a", "q1", f"d{i}", 3), JudgmentRow(0, "b", "q1", f"d{i}", i % 3)]
    preferences = [
        PreferenceRow(0, "a", "q1", "exp", "good", None, True),
        PreferenceRow(0, "b", "q1", "exp", "bad", None, True),
    ]
    labels_import(campaign=campaign, judgments=judgments, preferences=preferences, source="old.jsonl")
    return campaign


@pytest.fixture
def reviewer(make_user):
    return make_user("rita", "reviewer")


def task_links(page: str) -> list[str]:
    return re.findall(r'class="open-task" href="([^"]+)"', page)


def relevance_task(document: str) -> RelevanceTask:
    return RelevanceTask.objects.get(query__external_id="q1", document__external_id=document)


def test_the_queue_pages_through_every_open_task(client, crowded, reviewer, django_assert_max_num_queries):
    client.force_login(reviewer)
    url = reverse("annotation:review_queue", args=[crowded.pk])
    with django_assert_max_num_queries(14):
        first = client.get(url).content.decode()
    second = client.get(url, {"page": 2}).content.decode()
    assert "62 open tasks, 0 settled" in first
    assert "Tasks 1–50 of 62" in first and "Tasks 51–62 of 62" in second
    assert len(task_links(first)) == 50 and len(task_links(second)) == 12
    assert not set(task_links(first)) & set(task_links(second))
    assert 'href="?page=2"' in first and 'rel="prev" href="?page=1"' in second


def test_settled_tasks_are_listed_apart_and_not_lost(client, crowded, reviewer):
    settled = relevance_task("d1")
    adjudication_set(reviewer=reviewer, task=settled, grade=3, reason="a is right")
    client.force_login(reviewer)
    url = reverse("annotation:review_queue", args=[crowded.pk])
    link = reverse("annotation:review_relevance", args=[settled.pk])
    open_page = client.get(url).content.decode()
    assert "61 open tasks, 1 settled" in open_page and link not in open_page
    settled_page = client.get(url, {"state": "settled"}).content.decode()
    assert task_links(settled_page) == [link] and "settled: 3" in settled_page
    last_of_all = client.get(url, {"state": "all", "page": 2}).content.decode()
    assert task_links(last_of_all)[-1] == link


def test_the_queue_filters_by_kind(client, crowded, reviewer):
    client.force_login(reviewer)
    url = reverse("annotation:review_queue", args=[crowded.pk])
    sbs = SideBySideTask.objects.get(query__external_id="q1")
    side_by_side = client.get(url, {"kind": "side_by_side"}).content.decode()
    link = reverse("annotation:review_side_by_side", args=[sbs.pk])
    assert task_links(side_by_side) == [f"{link}?kind=side_by_side"]
    assert "1 open task, 0 settled among side-by-side tasks" in side_by_side
    relevance = review_queue(campaign=crowded, kind=RELEVANCE)
    assert len(relevance.items) == N_DISPUTED and {item.kind for item in relevance.items} == {"relevance"}
    unknown = client.get(url, {"kind": "gold", "state": "done"}).content.decode()
    assert "kind: Select a valid choice" in unknown and len(task_links(unknown)) == 50  # the defaults


def test_a_slice_of_the_queue_fetches_only_its_own_tasks(crowded, django_assert_num_queries):
    queue = review_queue(campaign=crowded, state=QueueState.ALL)
    with django_assert_num_queries(2):
        items = queue.items[60:70]
    assert [item.subject for item in items] == ["d56", "d59"]
    with django_assert_num_queries(4):
        assert [item.subject for item in queue.items[19:22]] == ["d60", "exp", "d1"]


def test_saving_a_final_label_opens_the_next_open_task(client, crowded, reviewer):
    client.force_login(reviewer)
    sbs = SideBySideTask.objects.get(query__external_id="q1")
    answer = {"label": "3", "reason": "a is right"}
    response = client.post(reverse("annotation:review_relevance", args=[relevance_task("d60").pk]), answer)
    assert response.url == reverse("annotation:review_side_by_side", args=[sbs.pk])
    response = client.post(response.url, {"label": "same", "reason": "both fine"})
    assert response.url == reverse("annotation:review_relevance", args=[relevance_task("d1").pk])
    assert review_next(campaign=crowded, after=("relevance", relevance_task("d61").pk)).subject == "d2"
    assert review_next(campaign=crowded, after=("relevance", relevance_task("d59").pk)).subject == "d3"


def test_after_the_last_open_task_come_the_first_then_the_queue(client, campaign, reviewer):
    labels_import(
        campaign=campaign,
        judgments=[
            JudgmentRow(0, name, "q1", doc, grade)
            for doc in ("d1", "d2")
            for name, grade in (("a", 3), ("b", 0))
        ],
        preferences=[],
        source="test",
    )
    first, last = relevance_task("d1"), relevance_task("d2")
    client.force_login(reviewer)
    answer = {"label": "3", "reason": "a is right"}
    response = client.post(reverse("annotation:review_relevance", args=[last.pk]), answer)
    assert response.url == reverse("annotation:review_relevance", args=[first.pk])
    response = client.post(reverse("annotation:review_relevance", args=[first.pk]), answer)
    assert response.url == reverse("annotation:review_queue", args=[campaign.pk])


def test_next_keeps_to_the_kind_the_queue_was_filtered_by(client, crowded, reviewer):
    client.force_login(reviewer)
    url = reverse("annotation:review_relevance", args=[relevance_task("d60").pk])
    d1 = reverse("annotation:review_relevance", args=[relevance_task("d1").pk])
    assert f'href="{d1}?kind=relevance"' in client.get(url, {"kind": "relevance"}).content.decode()
    response = client.post(f"{url}?kind=relevance", {"label": "3", "reason": "a is right"})
    assert response.url == f"{d1}?kind=relevance"
    sbs = SideBySideTask.objects.get(query__external_id="q1")
    response = client.post(
        reverse("annotation:review_side_by_side", args=[sbs.pk]) + "?kind=side_by_side",
        {"label": "same", "reason": "both fine"},
    )
    assert response.url == reverse("annotation:review_queue", args=[crowded.pk]) + "?kind=side_by_side"


def test_the_api_queue_pages_and_filters(client, crowded, reviewer):
    adjudication_set(reviewer=reviewer, task=relevance_task("d1"), grade=3, reason="a is right")
    client.force_login(reviewer)
    url = f"/api/campaigns/{crowded.pk}/review-queue/"
    first, second = client.get(url).json(), client.get(url, {"page": 2}).json()
    assert first["count"] == N_DISPUTED and len(first["results"]) == 50 and len(second["results"]) == 11
    assert not {row["task_id"] for row in first["results"]} & {row["task_id"] for row in second["results"]}
    settled = client.get(url, {"state": "settled"}).json()
    assert [row["adjudicated"] for row in settled["results"]] == ["3"]
    assert client.get(url, {"state": "all"}).json()["count"] == N_DISPUTED + 1
    sbs = client.get(url, {"kind": "side_by_side"}).json()["results"]
    assert [(row["kind"], row["labels"]) for row in sbs] == [("side_by_side", ["bad", "good"])]
    assert client.get(url, {"state": "closed"}).status_code == 400


def test_the_history_starts_with_the_imported_labels(client, crowded, reviewer):
    sbs = SideBySideTask.objects.get(query__external_id="q1")
    adjudication_set(reviewer=reviewer, task=sbs, verdict="same", reason="both fine")
    history = review_task(task=sbs).history
    assert [(row.changed_by, row.kind, row.old_value, row.new_value, row.note) for row in history] == [
        ("rita", "Adjudication", "", "same", "both fine"),
        ("b", "Side-by-side verdict", "", "bad", "imported from old.jsonl"),
        ("a", "Side-by-side verdict", "", "good", "imported from old.jsonl"),
    ]
    client.force_login(reviewer)
    api = client.get(f"/api/review/side-by-side/{sbs.pk}/history/").json()
    assert [row["new_value"] for row in api["results"]] == ["same", "bad", "good"]
    page = client.get(reverse("annotation:review_relevance", args=[relevance_task("d1").pk])).content.decode()
    assert page.count("imported from old.jsonl") == 2


@pytest.mark.parametrize(
    ("post", "message"),
    [
        ({"label": "--1", "reason": "r"}, "label: is not a grade"),
        ({"label": "²", "reason": "r"}, "label: is not a grade"),
        ({"label": "9" * 5000, "reason": "r"}, "label: Ensure this value has at most 8 characters"),
        ({"label": "7", "reason": "r"}, "grade must be one of [0, 1, 2, 3]"),
        ({"label": "2", "reason": "bad\x00byte"}, "reason: Null characters are not allowed."),
        ({"label": "2", "reason": "x" * 5001}, "reason: Ensure this value has at most 5000 characters"),
        ({"label": "2", "reason": " "}, "say why this label is final"),
    ],
)
def test_a_bad_final_label_is_a_message_and_nothing_is_stored(client, campaign, reviewer, post, message):
    client.force_login(reviewer)
    url = reverse("annotation:review_relevance", args=[RelevanceTask.objects.first().pk])
    page = client.post(url, post, follow=True)
    assert page.status_code == 200 and message in page.content.decode().replace("&#x27;", "'")
    assert not Adjudication.objects.exists()


def test_a_side_by_side_task_settled_before_any_verdict_is_listed_settled(crowded, reviewer):
    unlabelled = SideBySideTask.objects.get(query__external_id="q2")
    before = review_queue(campaign=crowded, state=QueueState.ALL)
    assert ("side_by_side", unlabelled.pk) not in [(item.kind, item.task_pk) for item in before.items]
    adjudication_set(reviewer=reviewer, task=unlabelled, verdict="same", reason="read them both")
    queue = review_queue(campaign=crowded, state=QueueState.SETTLED)
    assert [(item.kind, item.task_pk) for item in queue.items] == [("side_by_side", unlabelled.pk)]
    assert (queue.n_open, queue.n_settled) == (N_DISPUTED + 1, 1)
