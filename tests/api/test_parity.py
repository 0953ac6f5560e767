"""What the pages do, over the API: people, members, archive, exclusions, label import and a new
campaign's upload, through the pages' services and under their rules, for every role."""

import copy
import gzip
import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from rest_framework.test import APIClient

from annotation.models import Campaign, CampaignImport
from tests.factories import SMALL_BUNDLE, password_set_through, work_off_the_queue


@pytest.fixture
def superuser(client_for, django_user_model):
    root = client_for("root")
    django_user_model.objects.filter(pk=root.user.pk).update(is_superuser=True, is_staff=True)
    return root


# --- People ---------------------------------------------------------------------------------------------


def test_a_manager_adds_a_person_who_sets_a_password_with_the_link(manager, client):
    response = manager.post(
        "/api/people/", {"username": "nina", "name": "Nina K", "role": "annotator"}, format="json"
    )
    assert response.status_code == 201, response.content
    body = response.json()
    assert body["username"] == "nina" and body["password_link"].startswith("http://testserver/password/set/")
    page = password_set_through(
        client, body["password_link"].removeprefix("http://testserver"), "a-New-pw-93"
    )
    assert page.status_code == 200
    token = APIClient().post(
        "/api/auth/token/", {"username": "nina", "password": "a-New-pw-93"}, format="json"
    )
    assert token.status_code == 200
    people = {row["username"]: row for row in manager.get("/api/people/").json()}
    assert people["nina"]["roles"] == ["annotator"] and people["nina"]["manageable"]
    assert people["boss"]["manageable"] is False  # oneself


def test_a_taken_name_is_a_400_naming_it(manager, make_user):
    make_user("Nina")
    response = manager.post("/api/people/", {"username": "nina", "role": "annotator"}, format="json")
    assert response.status_code == 400 and response.json()["field"] == "username"


def test_role_deactivation_and_password_link(manager, client_for):
    nina = client_for("nina", "annotator")
    url = f"/api/people/{nina.user.pk}/"
    assert manager.patch(url, {"role": "reviewer"}, format="json").status_code == 204
    assert nina.get(f"/api/campaigns/{0}/progress/").status_code == 404  # a reviewer now: no 403
    assert manager.patch(url, {"is_active": False}, format="json").status_code == 204
    assert nina.get("/api/campaigns/").status_code == 401
    assert manager.post(f"{url}password-link/").status_code == 400  # activate first
    assert manager.patch(url, {"is_active": True}, format="json").status_code == 204
    link = manager.post(f"{url}password-link/")
    assert link.status_code == 200 and "/password/set/" in link.json()["password_link"]
    assert nina.get("/api/campaigns/").status_code == 401  # the reset revoked the token
    both = manager.patch(url, {"is_active": True, "role": "annotator"}, format="json")
    assert both.status_code == 400


def test_a_manager_may_not_act_on_a_manager_nor_make_one_but_a_superuser_may(manager, superuser, client_for):
    other = client_for("other", "manager").user
    assert manager.patch(f"/api/people/{other.pk}/", {"is_active": False}, format="json").status_code == 403
    assert manager.post(f"/api/people/{other.pk}/password-link/").status_code == 403
    assert (
        manager.post("/api/people/", {"username": "m2", "role": "manager"}, format="json").status_code == 403
    )
    assert (
        manager.patch(f"/api/people/{manager.user.pk}/", {"role": "annotator"}, format="json").status_code
        == 400
    )
    assert superuser.patch(f"/api/people/{other.pk}/", {"is_active": False}, format="json").status_code == 204
    assert (
        superuser.post("/api/people/", {"username": "m2", "role": "manager"}, format="json").status_code
        == 201
    )


@pytest.mark.parametrize(("role", "expected"), [(None, 401), ("annotator", 403), ("reviewer", 403)])
def test_only_managers_and_superusers_see_people(client_for, role, expected):
    client = client_for("who", role) if role else APIClient()
    assert client.get("/api/people/").status_code == expected
    assert (
        client.post("/api/people/", {"username": "x", "role": "annotator"}, format="json").status_code
        == expected
    )


# --- Members, archive, exclusions ---------------------------------------------------------------------------


def test_members_close_a_campaign_to_the_others(campaign, manager, client_for):
    ann, other = client_for("ann2", "annotator"), client_for("other2", "annotator")
    url = f"/api/campaigns/{campaign.pk}/members/"
    assert manager.get(url).json() == {"open_to_all": True, "members": []}
    body = {"open_to_all": False, "members": [ann.user.pk]}
    assert manager.put(url, body, format="json").json() == body
    assert ann.post(f"/api/campaigns/{campaign.pk}/next-task/").status_code == 200
    assert other.post(f"/api/campaigns/{campaign.pk}/next-task/").status_code in (403, 404)
    refused = manager.put(url, {"open_to_all": False, "members": [manager.user.pk]}, format="json")
    assert refused.status_code == 400 and refused.json()["field"].startswith("members")


def test_an_archived_campaign_refuses_labels_until_restored(campaign, manager, annotator):
    task = annotator.post(f"/api/campaigns/{campaign.pk}/next-task/").json()
    archived = manager.post(f"/api/campaigns/{campaign.pk}/archive/", {"archived": True}, format="json")
    assert archived.status_code == 200 and archived.json()["archived_at"]
    refused = annotator.post(f"/api/tasks/{task['id']}/judgment/", {"grade": 1}, format="json")
    assert refused.status_code == 409 and refused.json()["code"] == "archived"
    restored = manager.post(f"/api/campaigns/{campaign.pk}/archive/", {"archived": False}, format="json")
    assert restored.json()["archived_at"] is None
    assert (
        annotator.post(f"/api/tasks/{task['id']}/judgment/", {"grade": 1}, format="json").status_code == 201
    )


def test_exclude_reinstate_and_confirm(campaign, manager, annotator):
    url = f"/api/campaigns/{campaign.pk}/exclusions/"
    missing = manager.post(url, {"action": "exclude", "annotator": "ann"}, format="json")
    assert missing.status_code == 400 and missing.json()["field"] == "reason"
    assert manager.post(url, {"action": "exclude"}, format="json").json()["field"] == "annotator"
    excluded = manager.post(url, {"action": "exclude", "annotator": "ann", "reason": "random"}, format="json")
    assert excluded.status_code == 200
    [row] = excluded.json()
    assert row["annotator"] == "ann" and row["in_force"] and not row["confirmed"]
    [row] = manager.post(url, {"action": "confirm"}, format="json").json()
    assert row["confirmed"]
    [row] = manager.post(url, {"action": "reinstate", "annotator": "ann"}, format="json").json()
    assert not row["in_force"] and row["reinstated_by"] == "boss"
    assert manager.get(url).json() == [row]


# --- Labels imported ----------------------------------------------------------------------------------------

LINES = [
    {"annotator": "imp1", "query": "q1", "document": "d1", "grade": 2},
    {"annotator": "imp2", "query": "q1", "document": "d1", "grade": 3},
    {"annotator": "imp1", "query": "q1", "model": "exp", "verdict": "good"},
]


def _jsonl(lines) -> bytes:
    return "".join(json.dumps(line) + "\n" for line in lines).encode()


@pytest.mark.parametrize("zipped", [False, True])
def test_labels_imported_from_a_jsonl_body(campaign, manager, zipped):
    body = gzip.compress(_jsonl(LINES)) if zipped else _jsonl(LINES)
    response = manager.generic(
        "POST", f"/api/campaigns/{campaign.pk}/judgments/", body, content_type="application/x-ndjson"
    )
    assert response.status_code == 201, response.content
    assert response.json() == {"judgments": 2, "preferences": 1}


def test_a_bad_label_line_is_named_and_nothing_is_written(campaign, manager):
    lines = [LINES[0], {**LINES[1], "grade": 9}]
    response = manager.generic(
        "POST",
        f"/api/campaigns/{campaign.pk}/judgments/",
        _jsonl(lines),
        content_type="application/octet-stream",
    )
    assert response.status_code == 400 and response.json()["line"] == 2
    assert not campaign.relevance_tasks.filter(judgments__isnull=False).exists()


# --- A new campaign's upload --------------------------------------------------------------------------------


@pytest.fixture
def importer(transactional_db, client_for, settings, tmp_path):
    settings.IMPORTS_DIR = tmp_path / "imports"
    return client_for("boss", "manager")


def _upload(client, data, runs=()):
    bundle = SimpleUploadedFile("small.json", json.dumps(data).encode())
    files = [SimpleUploadedFile(f"{model}.run", text.encode()) for model, text in runs]
    return client.post("/api/imports/", {"bundle": bundle, "models": [m for m, _ in runs], "runs": files})


def test_an_upload_is_checked_previewed_confirmed_and_imported(importer, django_capture_on_commit_callbacks):
    data = copy.deepcopy(SMALL_BUNDLE)
    data["name"] = "From the API"
    run = "q1 Q0 d5 1 2.0 exp\nq1 Q0 d1 2 1.0 exp\n"
    with django_capture_on_commit_callbacks(execute=True):
        staged = _upload(importer, data, [("exp", run)])
    assert staged.status_code == 202, staged.content
    body = staged.json()
    assert body["status"] == "checking" and "cancel" in body["actions"]
    work_off_the_queue()
    body = importer.get(f"/api/imports/{body['id']}/").json()
    assert body["status"] == "ready" and body["preview"] and body["actions"] == ["confirm", "cancel"]
    with django_capture_on_commit_callbacks(execute=True):
        confirmed = importer.post(f"/api/imports/{body['id']}/confirm/")
    assert confirmed.json()["status"] == "importing"
    work_off_the_queue()
    body = importer.get(f"/api/imports/{body['id']}/").json()
    assert body["status"] == "done" and body["campaign"] == Campaign.objects.get(name="From the API").pk


def test_an_upload_refused_as_the_page_refuses_it(importer):
    bad_name = _upload(importer, SMALL_BUNDLE, [("no spaces allowed", "q1 Q0 d1 1 1.0 x\n")])
    assert bad_name.status_code == 400 and "run 1" in bad_name.json()["detail"]
    unpaired = importer.post(
        "/api/imports/",
        {"bundle": SimpleUploadedFile("b.json", b"{}"), "models": ["exp"]},
    )
    assert unpaired.status_code == 400 and unpaired.json()["field"] == "models"
    assert not CampaignImport.objects.exists()


def test_an_import_is_cancelled(importer, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        staged = _upload(importer, SMALL_BUNDLE).json()
    cancelled = importer.post(f"/api/imports/{staged['id']}/cancel/")
    assert cancelled.status_code == 200 and cancelled.json()["status"] == "cancelled"
    again = importer.post(f"/api/imports/{staged['id']}/confirm/")
    assert again.status_code == 400
