"""Tokens are revoked by a password change (page, admin, service), a deactivation and DELETE; they expire."""

from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.core.cache import cache
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from rest_framework.authtoken.models import Token
from rest_framework.exceptions import AuthenticationFailed
from rest_framework.test import APIClient

from annotation.api.authentication import ExpiringTokenAuthentication
from annotation.roles import can_annotate, can_manage
from annotation.services.tokens import user_password_set
from tests.factories import field_values

PASSWORD = "s3cret-pass-1"
NEW_PASSWORD = "an0ther-pass-2"


def token_for(username: str, password: str = PASSWORD) -> str:
    response = APIClient().post(
        "/api/auth/token/", {"username": username, "password": password}, format="json"
    )
    assert response.status_code == 200, response.content
    return response.json()["token"]


def works(token: str) -> bool:
    status = APIClient().get("/api/campaigns/", HTTP_AUTHORIZATION=f"Token {token}").status_code
    assert status in (200, 401)
    return status == 200


@pytest.fixture(autouse=True, params=[0, 60], ids=["uncached", "cached"])
def _token_cache(request, settings):
    """Every revocation holds with the token's user cached too (as with REDIS_URL)."""
    settings.API_TOKEN_CACHE_SECONDS = request.param


@pytest.fixture
def ann(make_user):
    return make_user("ann", "annotator", password=PASSWORD)


def test_the_token_stays_the_same_until_revoked(ann):
    assert token_for("ann") == token_for("ann")


def test_delete_revokes_the_callers_token_and_the_next_sign_in_gets_a_new_one(ann, make_user):
    make_user("bob", "annotator", password=PASSWORD)
    token, other = token_for("ann"), token_for("bob")
    response = APIClient().delete("/api/auth/token/", HTTP_AUTHORIZATION=f"Token {token}")
    assert response.status_code == 204
    assert not works(token) and works(other)
    fresh = token_for("ann")
    assert fresh != token and works(fresh)


def test_delete_needs_credentials():
    assert APIClient().delete("/api/auth/token/").status_code == 401


def test_changing_the_password_on_the_page_revokes_the_token(ann):
    token = token_for("ann")
    client = Client()
    client.force_login(ann)
    body = {"old_password": PASSWORD, "new_password1": NEW_PASSWORD, "new_password2": NEW_PASSWORD}
    assert client.post("/password/", body).status_code == 302
    assert not works(token)
    assert client.get("/").status_code == 200  # this session stays signed in
    assert works(token_for("ann", NEW_PASSWORD))


def test_a_password_set_by_the_service_revokes_the_token(ann):
    token = token_for("ann")
    user_password_set(user=ann, password=NEW_PASSWORD)
    assert not works(token)


def test_the_admin_setting_a_password_or_deactivating_revokes_the_token(ann):
    admin = get_user_model().objects.create_superuser("root", password=PASSWORD)
    client = Client()
    client.force_login(admin)
    token = token_for("ann")
    body = {"password1": NEW_PASSWORD, "password2": NEW_PASSWORD, "usable_password": "true"}
    assert client.post(f"/admin/auth/user/{ann.pk}/password/", body).status_code == 302
    assert not Token.objects.filter(key=token).exists()

    token = token_for("ann", NEW_PASSWORD)
    page = client.get(f"/admin/auth/user/{ann.pk}/change/")
    form = page.context["adminform"].form
    data = {name: form[name].value() for name in form.fields if form[name].value() is not None}
    data.update(is_active="", groups=[g.pk for g in ann.groups.all()], user_permissions=[])
    data = {k: v for k, v in data.items() if k not in ("password", "is_active")}
    data.update(
        {"last_login_0": "", "last_login_1": "", "date_joined_0": "2024-01-01", "date_joined_1": "00:00:00"}
    )
    assert client.post(f"/admin/auth/user/{ann.pk}/change/", data).status_code == 302
    ann.refresh_from_db()
    assert not ann.is_active and not Token.objects.filter(key=token).exists()


def test_a_token_expires_after_api_token_days(ann, settings):
    settings.API_TOKEN_DAYS = 30
    token = token_for("ann")
    Token.objects.filter(key=token).update(created=Token.objects.get(key=token).created - timedelta(days=29))
    assert works(token)
    Token.objects.filter(key=token).update(created=Token.objects.get(key=token).created - timedelta(days=2))
    cache.clear()  # two days pass: a cached copy would have expired long since
    response = APIClient().get("/api/campaigns/", HTTP_AUTHORIZATION=f"Token {token}")
    assert response.status_code == 401 and "expired" in response.json()["detail"]
    fresh = token_for("ann")
    assert fresh != token and works(fresh)


def test_a_cached_token_asks_the_database_nothing_and_a_new_role_reaches_it(ann, settings):
    settings.API_TOKEN_CACHE_SECONDS = 60
    token = token_for("ann")
    assert works(token)
    with CaptureQueriesContext(connection) as context:
        assert works(token)
    assert not [query for query in context.captured_queries if "authtoken_token" in query["sql"]]

    admin = get_user_model().objects.create_superuser("root", password=PASSWORD)
    browser = Client()
    browser.force_login(admin)
    page = browser.get(f"/admin/auth/user/{ann.pk}/change/")
    form = page.context["adminform"].form
    data = {name: form[name].value() for name in form.fields if form[name].value() is not None}
    data = {k: v for k, v in data.items() if k != "password"}
    data.update(groups=[], user_permissions=[], is_active="on")
    data.update(
        {"last_login_0": "", "last_login_1": "", "date_joined_0": "2024-01-01", "date_joined_1": "00:00:00"}
    )
    assert browser.post(f"/admin/auth/user/{ann.pk}/change/", data).status_code == 302
    response = APIClient().post("/api/campaigns/1/next-task/", HTTP_AUTHORIZATION=f"Token {token}")
    assert response.status_code == 403  # no longer an annotator, at once


def test_an_uncached_token_reads_its_user_and_roles_in_one_statement(make_user, settings):
    settings.API_TOKEN_CACHE_SECONDS = 0
    manager = make_user("boss", "manager", "annotator", password=PASSWORD)
    plain = make_user("plain", password=PASSWORD)
    authentication = ExpiringTokenAuthentication()
    for person, roles in ((manager, (True, True)), (plain, (False, False))):
        key = token_for(person.username)
        with CaptureQueriesContext(connection) as context:
            user, token = authentication.authenticate_credentials(key)
            assert (can_manage(user), can_annotate(user)) == roles
        assert len(context.captured_queries) == 1
        assert token.user is user and token.key == key
        assert field_values(token) == field_values(Token.objects.get(key=key))
        assert field_values(user) == field_values(get_user_model().objects.get(pk=person.pk))
    with pytest.raises(AuthenticationFailed):
        authentication.authenticate_credentials("0" * 40)
