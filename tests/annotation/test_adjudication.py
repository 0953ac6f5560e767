"""Adjudication: the reviewer's label replaces the aggregate, raw labels stay, every change is logged."""

import pytest
from django.core.exceptions import PermissionDenied

from annotation.bundle import JudgmentRow, PreferenceRow
from annotation.errors import TaskError, TaskErrorCode
from annotation.models import Adjudication, Judgment, LabelRevision, RelevanceTask, SideBySideTask
from annotation.selectors.review import QueueState, review_queue, review_task
from annotation.services.adjudication import adjudication_set
from annotation.services.label_import import labels_import
from annotation.task_kinds import RELEVANCE, SIDE_BY_SIDE
from metrics.compute.aggregation import majority_verdict
from metrics.selectors.aggregation import aggregated_task_grades
from metrics.selectors.evaluation_data import (
    campaign_models,
    campaign_queries,
    campaign_relevance_labels,
    campaign_side_by_side,
)


def grades(campaign, annotator_grades: dict[str, int], query="q1", document="d1"):
    rows = [
        JudgmentRow(0, name, query, document, grade, f"note of {name}", 10.0)
        for name, grade in annotator_grades.items()
    ]
    labels_import(campaign=campaign, judgments=rows, preferences=[], source="test")
    return RelevanceTask.objects.get(query__external_id=query, document__external_id=document)


def aggregate_of(campaign, task) -> float:
    relevance = campaign_relevance_labels(campaign=campaign, queries=campaign_queries(campaign=campaign))
    index = list(relevance.task_pk).index(task.pk)
    return aggregated_task_grades(campaign=campaign, relevance=relevance)[index]


@pytest.fixture
def reviewer(make_user):
    return make_user("rita", "reviewer")


def test_mean_of_3_2_2_through_the_selector(campaign):
    task = grades(campaign, {"a": 3, "b": 2, "c": 2})
    assert campaign.aggregation == "mean"
    assert aggregate_of(campaign, task) == pytest.approx(7 / 3)


def test_adjudication_overrides_the_aggregate_and_keeps_raw_labels(campaign, reviewer):
    task = grades(campaign, {"a": 3, "b": 2, "c": 2})
    adjudication = adjudication_set(reviewer=reviewer, task=task, grade=0, reason="spam page")
    assert aggregate_of(campaign, task) == 0
    assert sorted(Judgment.objects.filter(task=task).values_list("grade", flat=True)) == [2, 2, 3]
    assert (adjudication.grade, adjudication.reviewer, adjudication.reason) == (0, reviewer, "spam page")
    revision = LabelRevision.objects.get(relevance_task=task, kind=LabelRevision.Kind.ADJUDICATION)
    assert (revision.kind, revision.old_value, revision.new_value, revision.note, revision.changed_by) == (
        LabelRevision.Kind.ADJUDICATION,
        "",
        "0",
        "spam page",
        reviewer,
    )


def test_a_second_adjudication_replaces_the_first_and_logs_old_to_new(campaign, reviewer, make_user):
    task = grades(campaign, {"a": 3, "b": 1})
    adjudication_set(reviewer=reviewer, task=task, grade=0, reason="first look")
    manager = make_user("mo", "manager")
    adjudication_set(reviewer=manager, task=task, grade=2, reason="second look")
    adjudication = Adjudication.objects.get(relevance_task=task)
    assert (adjudication.grade, adjudication.reviewer) == (2, manager)
    history = list(
        LabelRevision.objects.filter(relevance_task=task, kind=LabelRevision.Kind.ADJUDICATION)
        .order_by("pk")
        .values_list("old_value", "new_value")
    )
    assert history == [("", "0"), ("0", "2")]
    assert aggregate_of(campaign, task) == 2


def test_side_by_side_adjudication_replaces_the_majority(campaign, reviewer):
    labels_import(
        campaign=campaign,
        judgments=[],
        preferences=[PreferenceRow(0, name, "q1", "exp", "good", None, True) for name in ("a", "b")],
        source="test",
    )
    task = SideBySideTask.objects.get(query__external_id="q1")
    adjudication_set(reviewer=reviewer, task=task, verdict="bad", reason="both missed the dead link")
    queries = campaign_queries(campaign=campaign)
    verdicts = campaign_side_by_side(
        campaign=campaign, queries=queries, models=campaign_models(campaign=campaign)
    )
    majority = majority_verdict(
        verdicts.preference_task, verdicts.preference_verdict, n_tasks=1, adjudication=verdicts.adjudication
    )
    assert list(majority) == [-1.0]
    assert set(task.preferences.values_list("verdict", flat=True)) == {"good"}


def test_only_reviewers_and_managers_adjudicate(campaign, make_user):
    task = grades(campaign, {"a": 3, "b": 1})
    with pytest.raises(PermissionDenied):
        adjudication_set(reviewer=make_user("ann", "annotator"), task=task, grade=1, reason="mine")
    assert not Adjudication.objects.exists()
    assert not LabelRevision.objects.filter(kind=LabelRevision.Kind.ADJUDICATION).exists()


@pytest.mark.parametrize(
    ("label", "reason", "field"),
    [({"grade": 7}, "why", "grade"), ({"grade": None}, "why", "grade"), ({"grade": 1}, "  ", "reason")],
)
def test_relevance_labels_are_checked(campaign, reviewer, label, reason, field):
    task = grades(campaign, {"a": 3, "b": 1})
    with pytest.raises(TaskError) as error:
        adjudication_set(reviewer=reviewer, task=task, reason=reason, **label)
    assert (error.value.code, error.value.field) == (TaskErrorCode.INVALID_LABEL, field)
    assert not Adjudication.objects.exists()


def test_side_by_side_verdict_must_be_good_same_or_bad(campaign, reviewer):
    task = SideBySideTask.objects.filter(campaign=campaign).first()
    with pytest.raises(TaskError) as error:
        adjudication_set(reviewer=reviewer, task=task, verdict="better", reason="why")
    assert error.value.field == "verdict"


def test_queue_puts_disputes_first_failed_gold_next_and_settled_last(campaign, reviewer):
    agreed = grades(campaign, {"a": 2, "b": 2}, document="d2")
    small = grades(campaign, {"a": 2, "b": 1}, document="d3")
    wide = grades(campaign, {"a": 3, "b": 0}, document="d4")
    off_gold = grades(campaign, {"a": 1, "b": 1}, document="d5")
    RelevanceTask.objects.filter(pk=agreed.pk).update(gold_grade=2)
    RelevanceTask.objects.filter(pk=off_gold.pk).update(gold_grade=3)
    settled = grades(campaign, {"a": 3, "b": 0}, query="q2", document="d6")
    adjudication_set(reviewer=reviewer, task=settled, grade=3, reason="clear")

    queue = review_queue(campaign=campaign, state=QueueState.ALL)
    order = [(item.kind, item.task_pk) for item in queue.items]
    assert order == [
        (RELEVANCE.name, wide.pk),
        (RELEVANCE.name, small.pk),
        (RELEVANCE.name, off_gold.pk),
        (RELEVANCE.name, settled.pk),
    ]
    assert (queue.n_open, queue.n_settled) == (3, 1)
    assert queue.items[0].labels == ["0", "3"]
    assert queue.items[0].disagreement == 1.0
    assert [item.failed_gold for item in queue.items] == [False, False, True, False]
    assert queue.items[3].adjudicated == "3"


def test_queue_flags_failed_gold_and_split_verdicts(campaign):
    task = grades(campaign, {"a": 2, "b": 2})
    RelevanceTask.objects.filter(pk=task.pk).update(gold_grade=0)
    labels_import(
        campaign=campaign,
        judgments=[],
        preferences=[
            PreferenceRow(0, "a", "q1", "exp", "good", None, True),
            PreferenceRow(0, "b", "q1", "exp", "same", None, False),
        ],
        source="test",
    )
    items = review_queue(campaign=campaign).items
    assert [(item.kind, item.disagreement, item.failed_gold) for item in items] == [
        (SIDE_BY_SIDE.name, 0.5, False),
        (RELEVANCE.name, 0.0, True),
    ]
    assert items[0].subject == "exp"


def test_review_task_shows_every_label_the_adjudication_and_history(campaign, reviewer):
    task = grades(campaign, {"bea": 3, "al": 1})
    adjudication_set(reviewer=reviewer, task=task, grade=2, reason="partly answers")
    review = review_task(task=task)
    assert review.query == "cheap flights to lisbon"
    assert review.document.title == "Doc 1"
    assert [(label.username, label.value, label.comment) for label in review.labels] == [
        ("al", "1", "note of al"),
        ("bea", "3", "note of bea"),
    ]
    assert (review.adjudication.reviewer, review.adjudication.value) == ("rita", "2")
    assert [(row.changed_by, row.old_value, row.new_value, row.note) for row in review.history] == [
        ("rita", "", "2", "partly answers"),
        ("al", "", "1", "imported from test"),
        ("bea", "", "3", "imported from test"),
    ]


def test_review_of_side_by_side_names_both_models(campaign):
    labels_import(
        campaign=campaign,
        judgments=[],
        preferences=[PreferenceRow(0, "a", "q1", "exp", "good", None, True)],
        source="test",
    )
    review = review_task(task=SideBySideTask.objects.get(query__external_id="q1"))
    assert (review.online_model, review.experimental_model) == ("online", "exp")
    assert [doc.external_id for doc in review.online_list] == ["d1", "d2"]
    assert [doc.external_id for doc in review.experimental_list] == ["d2", "d1"]
    assert review.labels[0].shown_left == "exp"


def test_review_keys_of_side_by_side_follow_the_lists_on_screen(campaign, client, reviewer):
    """Online stands left, so key 1 says the left (online) list is better: verdict bad for experimental."""
    task = SideBySideTask.objects.get(query__external_id="q1")
    review = review_task(task=task)
    assert [name for name, _, _ in review.lists] == ["online", "exp"]
    assert [value for value, _ in review.choices] == ["bad", "same", "good"]
    client.force_login(reviewer)
    page = client.get(f"/review/side-by-side/{task.pk}/").content.decode()
    assert page.index('value="bad"') < page.index('value="same"') < page.index('value="good"')
    assert 'data-key="1"' in page.split('value="bad"')[1].split(">")[0]
    client.post(f"/review/side-by-side/{task.pk}/", {"label": "bad", "reason": "left list answers it"})
    assert Adjudication.objects.get(side_by_side_task=task).verdict == "bad"
