"""Judging for diversity: the intents a document serves (relevance tasks) and near-duplicates marked in the
side-by-side lists, through the one label service, the workbench's form and the API; stored as shown."""

import copy

import pytest
from django.urls import reverse
from rest_framework.test import APIClient

from annotation.bundle import parse_bundle
from annotation.errors import TaskError
from annotation.models import Assignment, Judgment, Preference
from annotation.selectors.task_page import task_view
from annotation.services.assignment import task_next
from annotation.services.campaigns import campaign_import
from annotation.services.labels import label_submit
from tests.factories import SMALL_BUNDLE, form_data

INTENTS = [{"id": "fly", "text": "flights"}, {"id": "stay", "text": "hotels"}, {"id": "eat", "text": "food"}]


@pytest.fixture
def diverse(db):
    data = copy.deepcopy(SMALL_BUNDLE)
    data["queries"][0]["intents"] = INTENTS
    data["settings"].update(gsb_depth=4, overlap=1, gsb_overlap=1)
    return campaign_import(bundle=parse_bundle(data, "b.json"))


def relevance_lease(campaign, user, query="q1") -> Assignment:
    """The user's lease on a relevance task of `query`, handing out tasks until one is."""
    while True:
        lease = task_next(annotator=user, campaign=campaign)
        if lease.relevance_task.query.external_id == query:
            return lease
        label_submit(annotator=user, assignment=lease, grade=0)


def side_by_side_lease(campaign, user) -> Assignment:
    campaign.task_order = "side_by_side_first"
    campaign.save(update_fields=["task_order"])
    lease = task_next(annotator=user, campaign=campaign)
    assert lease.side_by_side_task_id
    return lease


def test_intents_ticked_are_stored_in_the_query_order_once_each(diverse, make_user):
    ann = make_user("ann", "annotator")
    lease = relevance_lease(diverse, ann)
    label_submit(annotator=ann, assignment=lease, grade=2, intents=["eat", "fly", "eat"])
    assert Judgment.objects.get(annotator=ann, task=lease.relevance_task).intents == ["fly", "eat"]
    label_submit(annotator=ann, assignment=lease, grade=2, intents=[])
    assert Judgment.objects.get(annotator=ann, task=lease.relevance_task).intents == []
    view = task_view(assignment=Assignment.objects.get(pk=lease.pk))
    assert [(i.id, i.key) for i in view.query.intents] == [("fly", "a"), ("stay", "d"), ("eat", "f")]
    assert view.current.intents == []


def test_a_grade_without_intents_is_not_asked(diverse, make_user):
    ann = make_user("ann", "annotator")
    lease = relevance_lease(diverse, ann)
    label_submit(annotator=ann, assignment=lease, grade=1)
    assert Judgment.objects.get(annotator=ann, task=lease.relevance_task).intents is None


@pytest.mark.parametrize(
    ("query", "intents", "message"),
    [
        ("q1", ["sleep"], r"'sleep' is not an intent of this query \(fly, stay, eat\)"),
        ("q1", "fly", "must be a list of the query's intent ids"),
        ("q1", [3], "must be a list of the query's intent ids"),
        ("q2", ["fly"], "this query has no intents to tick"),
    ],
)
def test_bad_intents_are_refused_and_nothing_is_written(diverse, make_user, query, intents, message):
    ann = make_user("ann", "annotator")
    lease = relevance_lease(diverse, ann, query)
    before = Judgment.objects.count()  # the labels given on the way
    with pytest.raises(TaskError, match=message) as refused:
        label_submit(annotator=ann, assignment=lease, grade=1, intents=intents)
    assert refused.value.field == "intents"
    assert Judgment.objects.count() == before
    assert Assignment.objects.get(pk=lease.pk).status == "leased"


def test_marks_are_stored_as_shown_and_refused_beyond_the_list(diverse, make_user):
    ann = make_user("ann", "annotator")
    lease = side_by_side_lease(diverse, ann)
    with pytest.raises(TaskError, match=r"the left list shows [34] results, not #5"):
        label_submit(annotator=ann, assignment=lease, verdict="left", duplicates=[["left", 5, 1]])
    assert not Preference.objects.exists()
    assert Assignment.objects.get(pk=lease.pk).status == "leased"
    marks = [("right", 3, 1), ["left", 2, 1]]
    label_submit(annotator=ann, assignment=lease, verdict="left", duplicates=marks)
    preference = Preference.objects.get()
    assert preference.duplicates == [["left", 2, 1], ["right", 3, 1]]
    view = task_view(assignment=Assignment.objects.get(pk=lease.pk))
    assert [(r.position, r.same_as) for r in view.left][:3] == [(1, None), (2, 1), (3, None)]
    assert [r.same_as for r in view.right][:3] == [None, None, 1]
    label_submit(annotator=ann, assignment=lease, verdict="left", duplicates=[])
    assert Preference.objects.get().duplicates == []


@pytest.mark.parametrize(
    ("marks", "message"),
    [
        ([["up", 2, 1]], "a mark's side is left or right"),
        ([["left", 2, 2]], "can only be the same as an earlier one"),
        ([["left", 2, True]], "can only be the same as an earlier one"),
        ([["left", 3]], r"each mark is \[side, position, same as position\]"),
        ([["left", 3, 1], ["left", 3, 2]], "left #3 is marked twice"),
    ],
)
def test_bad_marks_are_refused(diverse, make_user, marks, message):
    ann = make_user("ann", "annotator")
    lease = side_by_side_lease(diverse, ann)
    with pytest.raises(TaskError, match=message):
        label_submit(annotator=ann, assignment=lease, verdict="same", duplicates=marks)
    assert not Preference.objects.exists()


def test_a_field_of_the_other_kind_is_refused(diverse, make_user):
    ann = make_user("ann", "annotator")
    with pytest.raises(TaskError, match="is not for this kind of task"):
        label_submit(annotator=ann, assignment=relevance_lease(diverse, ann), grade=1, duplicates=[])
    bob = make_user("bob", "annotator")
    with pytest.raises(TaskError, match="is not for this kind of task"):
        label_submit(annotator=bob, assignment=side_by_side_lease(diverse, bob), verdict="same", intents=[])


def test_the_workbench_form_ticks_intents_and_marks_duplicates(diverse, make_user, client):
    ann = make_user("ann", "annotator")
    client.force_login(ann)
    lease = relevance_lease(diverse, ann)
    url = reverse("annotation:task", args=[diverse.pk, lease.pk])
    page = client.get(url).content.decode()
    assert 'data-intent-key="a"' in page and "hotels" in page
    posted = {**form_data(page, "wb-label-form"), "grade": "2", "intents": ["stay"]}
    assert client.post(url, posted).status_code == 302
    assert Judgment.objects.get(annotator=ann, task=lease.relevance_task).intents == ["stay"]
    posted = form_data(client.get(url).content.decode(), "wb-label-form")
    assert posted["intents"] == "stay" and posted["intents_asked"] == "1"
    client.post(url, {**posted, "grade": "2", "intents": []})  # none ticked is an answer: the page asked
    assert Judgment.objects.get(annotator=ann, task=lease.relevance_task).intents == []

    bob = make_user("bob", "annotator")
    client.force_login(bob)
    lease = side_by_side_lease(diverse, bob)
    url = reverse("annotation:task", args=[diverse.pk, lease.pk])
    page = client.get(url).content.decode()
    view = task_view(assignment=lease)
    assert page.count('name="duplicate"') == len(view.left) + len(view.right) - 2  # all but each #1
    assert 'form="wb-label-form"' in page and "intents_asked" not in page
    posted = {**form_data(page, "wb-label-form"), "side": "same", "duplicate": ["", "right:3:2", ""]}
    assert client.post(url, posted).status_code == 302
    assert Preference.objects.get(annotator=bob).duplicates == [["right", 3, 2]]
    page = client.get(url).content.decode()
    assert '<option value="right:3:2" selected>#2</option>' in page
    posted = form_data(page, "wb-label-form")
    refused = client.post(url, {**posted, "side": "same", "duplicate": "right:4"}, follow=True)
    assert "a near-duplicate is marked as side:position:same-as position" in refused.content.decode()
    assert Preference.objects.get(annotator=bob).duplicates == [["right", 3, 2]]


def test_the_api_takes_intents_and_marks_and_answers_them_as_stored(diverse, make_user):
    ann = make_user("ann", "annotator")
    api = APIClient()
    api.force_authenticate(ann)
    lease = relevance_lease(diverse, ann)
    shown = api.get(f"/api/tasks/{lease.pk}/").json()
    assert [intent["id"] for intent in shown["query"]["intents"]] == ["fly", "stay", "eat"]
    body = {"grade": 1, "intents": ["eat", "fly"]}
    answer = api.post(f"/api/tasks/{lease.pk}/judgment/", body, format="json")
    assert answer.status_code == 201, answer.content
    assert answer.json()["intents"] == ["fly", "eat"]
    refused = api.post(f"/api/tasks/{lease.pk}/judgment/", {"grade": 1, "intents": ["no"]}, format="json")
    assert refused.status_code == 400 and "intents" in refused.content.decode()

    bob = make_user("bob", "annotator")
    api.force_authenticate(bob)
    lease = side_by_side_lease(diverse, bob)
    body = {"verdict": "right", "duplicates": [["left", 3, 2]]}
    answer = api.post(f"/api/tasks/{lease.pk}/judgment/", body, format="json")
    assert answer.status_code == 201, answer.content
    assert answer.json()["duplicates"] == [["left", 3, 2]]
    assert api.get(f"/api/tasks/{lease.pk}/").json()["current"]["duplicates"] == [["left", 3, 2]]


def test_the_label_pool_lends_intents_of_the_same_intents_and_marks_of_the_same_lists(db, make_user):
    data = copy.deepcopy(SMALL_BUNDLE)
    data["queries"][0]["intents"] = INTENTS
    data["settings"].update(gsb_depth=4, overlap=1, gsb_overlap=1, task_order="relevance_first")
    data["standard"] = "travel"
    first = campaign_import(bundle=parse_bundle({**data, "name": "Week 1"}, "b.json"))
    ann = make_user("ann", "annotator")
    while (lease := task_next(annotator=ann, campaign=first)) is not None:
        if lease.relevance_task_id:
            asked = lease.relevance_task.query.external_id == "q1"
            label_submit(annotator=ann, assignment=lease, grade=2, intents=["fly"] if asked else None)
        else:
            label_submit(annotator=ann, assignment=lease, verdict="same", duplicates=[["left", 2, 1]])
    second = campaign_import(bundle=parse_bundle({**data, "name": "Week 2"}, "b.json"))
    reused = Judgment.objects.filter(task__campaign=second, task__query__external_id="q1")
    assert reused.exists() and all(judgment.intents == ["fly"] for judgment in reused)
    marks = Preference.objects.filter(task__campaign=second).values_list("duplicates", flat=True)
    assert marks and all(mark == [["left", 2, 1]] for mark in marks)
    data["queries"][0]["intents"] = [*INTENTS, {"id": "car", "text": "car hire"}]
    third = campaign_import(bundle=parse_bundle({**data, "name": "Week 3"}, "b.json"))
    changed = Judgment.objects.filter(task__campaign=third, task__query__external_id="q1")
    assert changed.exists() and all(judgment.intents is None for judgment in changed)
