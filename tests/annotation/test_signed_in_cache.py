"""With Redis a signed-in user is read from the cache (`roles.RolesBackend`), and a deactivation, a new
password or new roles reach their open sessions at once, as they reach their API tokens."""

import pytest
from django.core.cache import cache
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from annotation.roles import Role
from annotation.services import people
from annotation.services.tokens import user_password_set


@pytest.fixture(autouse=True)
def _cached(settings):
    settings.API_TOKEN_CACHE_SECONDS = 60  # as with REDIS_URL
    settings.CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}
    cache.clear()  # shared by the process: another test's user of the same id


@pytest.fixture
def ann(make_user, client, campaign):
    user = make_user("ann", "annotator")
    client.force_login(user)
    assert client.get(reverse("annotation:work", args=[campaign.pk])).status_code == 200
    return user


@pytest.fixture
def manager(make_user):
    return make_user("meg", "manager")


def work(client, campaign) -> int:
    return client.get(reverse("annotation:work", args=[campaign.pk])).status_code


def test_a_signed_in_users_requests_read_them_from_the_cache(ann, client, campaign):
    with CaptureQueriesContext(connection) as context:
        assert work(client, campaign) == 200
    assert not [query for query in context.captured_queries if "FROM auth_user u" in query["sql"]]


def test_a_deactivation_signs_them_out_at_once(ann, client, campaign, manager):
    people.person_active_set(by=manager, user=ann, active=False)
    assert work(client, campaign) == 302  # to the sign-in page
    people.person_active_set(by=manager, user=ann, active=True)
    assert work(client, campaign) == 200


def test_a_new_password_signs_their_other_sessions_out_at_once(ann, client, campaign):
    user_password_set(user=ann, password="an0ther-pass-2")
    assert work(client, campaign) == 302


def test_new_roles_reach_their_session_at_once(ann, client, campaign, manager):
    people.person_role_set(by=manager, user=ann, role=Role.REVIEWER)
    assert work(client, campaign) == 403
