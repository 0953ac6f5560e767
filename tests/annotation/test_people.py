"""Managers manage people and campaign membership in the browser; annotators see and answer only the
campaigns open to them (pages and API)."""

import re

import pytest
from django.contrib.auth import get_user_model
from django.urls import reverse
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from annotation.errors import TaskError, TaskErrorCode
from annotation.models import Judgment, LabelRevision, Preference
from annotation.services.assignment import task_next
from annotation.services.labels import judgment_submit
from annotation.services.people import campaign_members_set
from tests.factories import handed_link, password_set_through


def test_a_manager_adds_a_person_who_sets_a_password_once(client, make_user):
    client.force_login(make_user("boss", "manager"))
    response = client.post(
        reverse("annotation:people"),
        {"username": "nina", "name": "Nina Ko", "role": "annotator"},
        follow=True,
    )
    link = handed_link(response)
    nina = get_user_model().objects.get(username="nina")
    assert (nina.first_name, nina.last_name, nina.has_usable_password()) == ("Nina", "Ko", False)
    assert list(nina.groups.values_list("name", flat=True)) == ["annotator"]
    assert "nina" in client.get(reverse("annotation:people")).content.decode()
    assert link not in client.get(reverse("annotation:people")).content.decode()  # shown once

    newcomer = client.__class__()
    done = password_set_through(newcomer, link, "a long new secret 42")
    assert "Password set" in done.content.decode()
    assert newcomer.login(username="nina", password="a long new secret 42")
    again = newcomer.get(link, follow=True).content.decode()
    assert "it was used" in again


@pytest.mark.parametrize(
    ("username", "error"), [("<b>eve</b> x", "Enter a valid username"), ("boss", "is taken")]
)
def test_a_bad_or_taken_username_is_a_form_error(client, make_user, username, error):
    client.force_login(make_user("boss", "manager"))
    response = client.post(reverse("annotation:people"), {"username": username, "role": "annotator"})
    assert response.status_code == 200
    assert error in response.content.decode()
    assert get_user_model().objects.count() == 1


def test_reset_password_and_deactivate(client, make_user):
    boss = make_user("boss", "manager")
    ann = make_user("ann", "annotator", password="old secret 123")
    token = Token.objects.create(user=ann)
    client.force_login(boss)
    url = reverse("annotation:person", args=[ann.pk])
    link = handed_link(client.post(url, {"action": "password_reset"}, follow=True))
    assert not client.__class__().login(username="ann", password="old secret 123")
    assert not Token.objects.filter(pk=token.pk).exists()
    password_set_through(client.__class__(), link, "fresh secret 456")
    assert client.__class__().login(username="ann", password="fresh secret 456")

    client.post(url, {"action": "deactivate"})
    assert not client.__class__().login(username="ann", password="fresh secret 456")
    assert "deactivated" in client.get(reverse("annotation:people")).content.decode()
    client.post(url, {"action": "activate"})
    assert client.__class__().login(username="ann", password="fresh secret 456")

    page = client.post(reverse("annotation:person", args=[boss.pk]), {"action": "deactivate"}, follow=True)
    assert "You cannot change your own account here" in page.content.decode()
    boss.refresh_from_db()
    assert boss.is_active


def test_people_page_shows_last_label(client, campaign, make_user):
    ann = make_user("ann", "annotator")
    judgment_submit(annotator=ann, task=task_next(annotator=ann, campaign=campaign).relevance_task, grade=1)
    client.force_login(make_user("boss", "manager"))
    row = re.search(r"<td>ann</td>.*?</tr>", client.get(reverse("annotation:people")).content.decode(), re.S)
    assert row and "never" in row.group(0) and re.search(r"\d{4}-\d\d-\d\d \d\d:\d\d", row.group(0))


def test_only_members_work_on_a_closed_campaign(client, campaign, make_user):
    member, outsider = make_user("member", "annotator"), make_user("outsider", "annotator")
    campaign_members_set(campaign=campaign, open_to_all=False, members=[member])
    work = reverse("annotation:work", args=[campaign.pk])

    client.force_login(outsider)
    assert campaign.name not in client.get(reverse("annotation:home")).content.decode()
    assert client.get(work).status_code == 404
    with pytest.raises(TaskError) as error:
        task_next(annotator=outsider, campaign=campaign)
    assert error.value.code == TaskErrorCode.NOT_MEMBER

    client.force_login(member)
    assert campaign.name in client.get(reverse("annotation:home")).content.decode()
    assert client.get(work).status_code == 200


def test_the_api_hides_closed_campaigns_from_outsiders(client, campaign, make_user):
    outsider = make_user("outsider", "annotator")
    campaign_members_set(campaign=campaign, open_to_all=False, members=[])
    headers = {"HTTP_AUTHORIZATION": f"Token {Token.objects.create(user=outsider).key}"}
    assert client.get("/api/campaigns/", **headers).json()["results"] == []
    assert client.get(f"/api/campaigns/{campaign.pk}/", **headers).status_code == 404
    assert client.post(f"/api/campaigns/{campaign.pk}/next-task/", **headers).status_code == 404
    reviewer = make_user("rita", "reviewer")
    headers = {"HTTP_AUTHORIZATION": f"Token {Token.objects.create(user=reviewer).key}"}
    assert [c["id"] for c in client.get("/api/campaigns/", **headers).json()["results"]] == [campaign.pk]
    annotating = make_user("ria", "reviewer", "annotator")  # sees it, but is no member: told why
    headers = {"HTTP_AUTHORIZATION": f"Token {Token.objects.create(user=annotating).key}"}
    refused = client.post(f"/api/campaigns/{campaign.pk}/next-task/", **headers)
    assert refused.status_code == 403 and refused.json()["code"] == "not_member"
    assert client.post("/api/campaigns/999999/next-task/", **headers).status_code == 404


def test_a_removed_member_cannot_answer_a_task_they_hold(campaign, make_user):
    ann = make_user("ann", "annotator")
    campaign_members_set(campaign=campaign, open_to_all=False, members=[ann])
    lease = task_next(annotator=ann, campaign=campaign)
    campaign_members_set(campaign=campaign, open_to_all=False, members=[])
    with pytest.raises(TaskError) as error:
        judgment_submit(annotator=ann, task=lease.relevance_task, grade=1)
    assert error.value.code == TaskErrorCode.NOT_MEMBER


def test_the_members_page_saves_membership(client, campaign, make_user):
    ann, boss = make_user("ann", "annotator"), make_user("boss", "manager")
    client.force_login(boss)
    url = reverse("annotation:campaign_members", args=[campaign.pk])
    assert "ann" in client.get(url).content.decode()
    client.post(url, {"members": [ann.pk]})
    campaign.refresh_from_db()
    assert not campaign.open_to_all
    assert list(campaign.members.all()) == [ann]
    client.post(url, {"open_to_all": "on"})
    campaign.refresh_from_db()
    assert campaign.open_to_all and not campaign.members.exists()


def test_a_removed_member_cannot_change_earlier_labels(client, campaign, make_user):
    """Every label they gave (a grade, a verdict) stays as it was: the API answers 403 `not_member`, the
    task's page says why; no label and no revision is written."""
    ann = make_user("ann", "annotator")
    campaign_members_set(campaign=campaign, open_to_all=False, members=[ann])
    api = APIClient()
    api.force_authenticate(ann)
    answered = {}
    while (task := api.post(f"/api/campaigns/{campaign.pk}/next-task/")).status_code == 200:
        task = task.json()
        answer = {"grade": 1} if task["kind"] == "relevance" else {"verdict": "left"}
        assert api.post(f"/api/tasks/{task['id']}/judgment/", answer, format="json").status_code == 201
        answered[task["kind"]] = task["id"]
    assert set(answered) == {"relevance", "side_by_side"}
    before = _labels()
    campaign_members_set(campaign=campaign, open_to_all=False, members=[])
    for kind, change in (("relevance", {"grade": 3}), ("side_by_side", {"verdict": "right"})):
        refused = api.post(f"/api/tasks/{answered[kind]}/judgment/", change, format="json")
        assert refused.status_code == 403 and refused.json()["code"] == "not_member"
    client.force_login(ann)
    url = reverse("annotation:task", args=[campaign.pk, answered["relevance"]])
    page = client.post(url, {"grade": "3"}, follow=True)
    assert "You are not a member of this campaign." in page.content.decode()
    assert _labels() == before


def _labels() -> tuple:
    return (
        sorted(Judgment.objects.values_list("pk", "grade", "comment")),
        sorted(Preference.objects.values_list("pk", "verdict", "strength")),
        LabelRevision.objects.count(),
    )
