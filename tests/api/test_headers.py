"""Response headers: a Content-Security-Policy no page breaks, a Permissions-Policy, and no-store on what a
signed-in user sees."""

import re

import pytest
from django.test import Client
from rest_framework.authtoken.models import Token

from tests.factories import ROUTES, route_url

SCRIPT_TAG = re.compile(r"<script\b([^>]*)>", re.I)


@pytest.fixture
def signed_in(world):
    """A superuser holding the world's task: every page is theirs to see."""
    users, ids, tasks = world
    user = users["annotator"]
    user.is_superuser = True
    user.save()
    client = Client()
    client.force_login(user)
    return client, user, ids, tasks


def pages(ids, tasks) -> list[str]:
    return [
        route_url(path, ids, tasks)
        for method, path, _, _ in ROUTES
        if method == "GET"
        and not path.startswith("/api/")
        and path != "/favicon.ico"
        or path in ("/api/docs/", "/api/redoc/")
    ]


def test_every_page_has_a_strict_script_policy_and_no_inline_script(signed_in):
    client, _, ids, tasks = signed_in
    for url in pages(ids, tasks):
        response = client.get(url, follow=True)
        assert response.status_code == 200, url
        policy = dict(
            directive.strip().split(" ", 1) for directive in response["Content-Security-Policy"].split(";")
        )
        assert policy["script-src"] == "'self'" and policy["default-src"] == "'self'", url
        assert policy["frame-ancestors"] == "'none'" and policy["object-src"] == "'none'", url
        for attributes in SCRIPT_TAG.findall(response.content.decode()):
            # A script is a file from this site, or data the browser does not run.
            assert "src=" in attributes or 'type="application/json"' in attributes, (url, attributes)
        assert not re.search(r"\son[a-z]+\s*=", response.content.decode()), url  # no inline handlers


def test_every_answer_has_a_permissions_policy(signed_in):
    client, *_ = signed_in
    for url in ["/login/", "/", "/api/campaigns/", "/healthz"]:
        assert "camera=()" in client.get(url)["Permissions-Policy"], url


def test_what_a_signed_in_user_sees_is_not_stored(signed_in):
    client, user, ids, tasks = signed_in
    campaign_id = ids["campaign_id"]
    urls = [
        "/",
        f"/campaigns/{campaign_id}/progress/",
        f"/metrics/campaigns/{campaign_id}/compare/exp/report.csv",
        f"/metrics/campaigns/{campaign_id}/compare/exp/report.json",
    ]
    for url in urls:
        response = client.get(url)
        assert response.status_code == 200 and "no-store" in response["Cache-Control"], url
    api = Client(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")
    for url in [
        f"/api/campaigns/{campaign_id}/export/judgments/",
        f"/api/campaigns/{campaign_id}/export/qrels/",
        f"/api/campaigns/{campaign_id}/report/",
    ]:
        response = api.get(url)
        assert response.status_code == 200 and "no-store" in response["Cache-Control"], url


def test_the_favicon_is_found_and_the_permissions_policy_names_only_known_features(client):
    response = client.get("/favicon.ico")
    assert response.status_code == 200 and response["Content-Type"] == "image/svg+xml"
    assert response.content.startswith(b"<svg") and "max-age=86400" in response["Cache-Control"]
    policy = client.get("/login/")["Permissions-Policy"]
    assert "bluetooth" not in policy and "camera=()" in policy  # Chromium reports `bluetooth` as unknown
