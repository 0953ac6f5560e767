"""Sessions in the database read by one plain statement (`plumbing.sessions`), as Django's `db` engine reads
them: the same data for a live key, nothing for an expired, unknown or malformed one."""

from datetime import timedelta

import pytest
from django.conf import settings
from django.contrib.sessions.backends import db as django_db
from django.contrib.sessions.models import Session
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from plumbing import sessions


def stored(data: dict, expires_in: timedelta = timedelta(days=1)) -> str:
    store = sessions.SessionStore()
    store.update(data)
    store.set_expiry(int(expires_in.total_seconds()))
    store.save()
    return store.session_key


def test_the_engine_without_redis():
    assert settings.SESSION_ENGINE == "plumbing.sessions"  # the suite runs without REDIS_URL


def test_a_live_session_reads_as_djangos_in_one_statement(db):
    key = stored({"_auth_user_id": "7", "language": "zh-hans", "nested": {"a": [1, 2]}})
    ours = sessions.SessionStore(key)
    with CaptureQueriesContext(connection) as queries:
        data = ours.load()
    assert len(queries) == 1
    assert data == django_db.SessionStore(key).load()
    assert data == {
        "_auth_user_id": "7",
        "language": "zh-hans",
        "nested": {"a": [1, 2]},
        "_session_expiry": 86400,
    }
    assert ours.session_key == key
    row = ours._get_session_from_db()
    assert type(row) is Session and row.session_key == key
    assert row.expire_date == Session.objects.get(session_key=key).expire_date


@pytest.mark.parametrize("key", ["no-such-session-key-at-all", None, "short"])
def test_an_unknown_key_reads_nothing_and_is_dropped(db, key):
    stored({"_auth_user_id": "7"})
    ours = sessions.SessionStore(key)
    assert ours.load() == {}
    assert ours.session_key is None  # a new key is made on save, never the one asked for


def test_an_expired_session_reads_nothing(db):
    key = stored({"_auth_user_id": "7"})
    Session.objects.filter(session_key=key).update(expire_date=timezone.now() - timedelta(seconds=1))
    ours = sessions.SessionStore(key)
    assert ours.load() == django_db.SessionStore(key).load() == {}
    assert ours.session_key is None


def test_a_signed_in_request_reads_its_session(client, make_user):
    user = make_user("ann", "annotator", password="s3cret-pass")
    assert client.post("/login/", {"username": "ann", "password": "s3cret-pass"}).status_code == 302
    assert client.get("/").wsgi_request.user == user
    Session.objects.all().update(expire_date=timezone.now() - timedelta(seconds=1))
    assert client.get("/").wsgi_request.user.is_anonymous
