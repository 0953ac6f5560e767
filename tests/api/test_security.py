"""Security: CSRF on every form, nothing of a hostile bundle unescaped on any page, bad input never a 500."""

import re

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from annotation.bundle import parse_bundle
from annotation.models import CampaignImport
from annotation.services.assignment import task_next
from annotation.services.campaigns import campaign_import
from annotation.services.labels import judgment_submit, preference_submit
from tests.factories import ROUTES, route_url

PAYLOAD = '<script>alert("xss")</script><img src=x onerror=alert(1)>"\'>'
# Model names are restricted at import (test_campaign_import.py); these are the oddest allowed.
ONLINE = "on+line@a:b"
MODEL = "ex.-_+@:1"
EVIL_URL = "javascript:alert(document.cookie)"
JAVASCRIPT_HREF = re.compile(r"""(href|src|action)\s*=\s*["']?\s*(javascript|data|vbscript):""", re.I)


def hostile_bundle() -> dict:
    return {
        "name": f"Campaign {PAYLOAD}",
        "description": PAYLOAD,
        "guidelines": PAYLOAD,
        "scale": [
            {"value": 0, "label": f"no {PAYLOAD}"[:60], "description": PAYLOAD},
            {"value": 1, "label": f"yes {PAYLOAD}"[:60], "description": PAYLOAD},
        ],
        "settings": {"overlap": 1, "gsb_overlap": 1, "pool_depth": 2, "gsb_depth": 2},
        "models": [
            {"name": ONLINE, "role": "online"},
            {"name": MODEL, "role": "experimental"},
        ],
        "queries": [
            {"id": f"q{PAYLOAD}", "text": PAYLOAD, "description": PAYLOAD, "segment": PAYLOAD},
        ],
        "documents": [
            {"id": f"d1{PAYLOAD}", "title": PAYLOAD, "url": EVIL_URL, "body": PAYLOAD},
            {"id": f"d2{PAYLOAD}", "title": PAYLOAD, "url": " JavaScript:alert(1)", "body": PAYLOAD},
            {"id": "d3", "title": "", "url": "data:text/html,<script>alert(1)</script>", "body": PAYLOAD},
        ],
        "rankings": [
            {"model": ONLINE, "query": f"q{PAYLOAD}", "documents": [f"d1{PAYLOAD}", f"d2{PAYLOAD}"]},
            {"model": MODEL, "query": f"q{PAYLOAD}", "documents": ["d3", f"d1{PAYLOAD}"]},
        ],
    }


@pytest.fixture
def hostile(db):
    campaign = campaign_import(bundle=parse_bundle(hostile_bundle(), "evil.json"))
    admin = get_user_model().objects.create_superuser("root", password="pw-not-used-1")
    pages = {}
    # The superuser holds every role: label every task with a hostile comment, keeping one lease open.
    while (assignment := task_next(annotator=admin, campaign=campaign)) is not None:
        pages.setdefault(assignment.relevance_task_id and "relevance" or "side-by-side", assignment)
        if assignment.relevance_task_id:
            judgment_submit(annotator=admin, task=assignment.relevance_task, grade=1, comment=PAYLOAD)
        else:
            preference_submit(
                annotator=admin, task=assignment.side_by_side_task, side="left", comment=PAYLOAD
            )
    return campaign, admin, pages


def _assert_escaped(content: str, url: str) -> None:
    assert PAYLOAD not in content and "<script>alert" not in content, url
    assert "<img src=x" not in content, url
    assert not JAVASCRIPT_HREF.search(content), url


def test_no_page_shows_a_hostile_bundle_unescaped(hostile):
    campaign, admin, assignments = hostile
    client = Client()
    client.force_login(admin)
    tasks = {
        "relevance": campaign.relevance_tasks.first().pk,
        "side-by-side": campaign.side_by_side_tasks.first().pk,
    }
    shown = 0
    for method, path, _, _ in ROUTES:
        if method != "GET" or path.startswith(("/api/", "/admin/")):
            continue
        for kind in ["relevance", "side-by-side"] if "{assignment_id}" in path else ["relevance"]:
            ids = {
                "campaign_id": campaign.pk,
                "assignment_id": assignments[kind].pk,
                "kind": kind,
                "model": MODEL,
                "format": "html",
                "query_id": campaign.queries.first().pk,
                "user_id": admin.pk,
                "import_id": CampaignImport.objects.get_or_create(
                    created_by=admin, folder="-", bundle_file="<script>x</script>.json"
                )[0].pk,
                "uidb64": "MQ",
                "token": "expired-token",
            }
            url = route_url(path, ids, tasks)
            response = client.get(url, follow=True)
            assert response.status_code == 200, url
            content = response.content.decode()
            _assert_escaped(content, url)
            shown += "&lt;script&gt;" in content
    assert shown >= 8  # the payload was on the pages, escaped


def test_the_workbench_shows_the_hostile_task_escaped(hostile, client_for):
    campaign, *_ = hostile
    client = Client()

    annotator = client_for("fresh", "annotator").user
    client.force_login(annotator)
    response = client.get(f"/campaigns/{campaign.pk}/work/", follow=True)
    content = response.content.decode()
    assert "&lt;script&gt;" in content
    _assert_escaped(content, "work")


@pytest.mark.parametrize(
    ("url", "data"),
    [
        ("/login/", {"username": "x", "password": "y"}),
        ("/logout/", {}),
        ("/password/", {}),
    ],
)
def test_forms_need_the_csrf_token(make_user, url, data):
    client = Client(enforce_csrf_checks=True)
    client.force_login(make_user("someone", "annotator"))
    assert client.post(url, data).status_code == 403


def test_workbench_and_review_posts_need_the_csrf_token(campaign, make_user):
    user = make_user("both", "annotator", "reviewer")
    assignment = task_next(annotator=user, campaign=campaign)
    client = Client(enforce_csrf_checks=True)
    client.force_login(user)
    urls = [
        f"/campaigns/{campaign.pk}/tasks/{assignment.pk}/",
        f"/campaigns/{campaign.pk}/tasks/{assignment.pk}/skip/",
        f"/review/relevance/{assignment.relevance_task_id}/",
    ]
    for url in urls:
        assert client.post(url, {"grade": 1, "reason": "cant_load", "label": "1"}).status_code == 403, url
    # The API with the session cookie is held to CSRF too; a token is not.
    api = client.post(f"/api/campaigns/{campaign.pk}/next-task/")
    assert api.status_code == 403


@pytest.mark.parametrize(
    ("path", "body"),
    [
        ("/campaigns/{c}/tasks/{a}/", {"grade": "x"}),
        ("/campaigns/{c}/tasks/{a}/", {"grade": "99"}),
        ("/campaigns/{c}/tasks/{a}/skip/", {"reason": "?"}),
        ("/review/relevance/{t}/", {"label": "nope"}),
        ("/review/side-by-side/{s}/", {"label": "<b>"}),
        ("/campaigns/999/tasks/{a}/", {}),
    ],
)
def test_bad_form_input_is_never_a_500(campaign, make_user, path, body):
    user = make_user("both", "annotator", "reviewer")
    assignment = task_next(annotator=user, campaign=campaign)
    client = Client()
    client.force_login(user)
    url = path.format(
        c=campaign.pk,
        a=assignment.pk,
        t=assignment.relevance_task_id,
        s=campaign.side_by_side_tasks.first().pk,
    )
    response = client.post(url, body)
    assert response.status_code in (302, 400, 404), (url, response.status_code)
