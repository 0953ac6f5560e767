"""Failed sign-ins are limited per account and per client address, on the login page and the token endpoint,
keyed on what the client cannot choose."""

import time
from datetime import UTC, datetime

import pytest
from django.core.cache.backends import db as database_cache
from django.test import Client, RequestFactory
from rest_framework.test import APIClient
from rest_framework.throttling import ScopedRateThrottle

from annotation.services.logins import LoginLimited, user_authenticate

PASSWORD = "s3cret-pass"
LOCKED = "Too many failed sign-ins"


def web_login(username: str, password: str, **headers):
    return Client().post("/login/", {"username": username, "password": password}, **headers)


def api_login(username: str, password: str, **headers):
    credentials = {"username": username, "password": password}
    return APIClient().post("/api/auth/token/", credentials, format="json", **headers)


@pytest.fixture(autouse=True)
def _rate(monkeypatch):
    """Sets the token endpoint's rate throttle (DRF reads the setting once, into this class attribute); high
    unless a test sets it, so that the tests see the failure limits."""

    def rate(value: str) -> None:
        monkeypatch.setattr(ScopedRateThrottle, "THROTTLE_RATES", {"login": value})

    rate("100000/min")
    return rate


@pytest.mark.parametrize("login", [web_login, api_login])
def test_after_a_hundred_wrong_passwords_the_right_one_is_refused(make_user, login):
    make_user("ann", "annotator", password=PASSWORD)
    statuses = [
        login("ann", f"guess-{i}", REMOTE_ADDR=f"10.0.{i // 250}.{i % 250}").status_code for i in range(100)
    ]
    assert statuses[:10] in ([200] * 10, [400] * 10)  # the page shows the form again; the API says 400
    assert set(statuses[10:]) == {429}
    refused = login("ann", PASSWORD, REMOTE_ADDR="10.9.9.9")
    assert refused.status_code == 429
    assert LOCKED in refused.content.decode()


def test_the_login_page_says_why(make_user):
    make_user("ann", "annotator", password=PASSWORD)
    for _ in range(10):
        web_login("ann", "wrong")
    page = web_login("ann", PASSWORD).content.decode()
    assert "Too many failed sign-ins for this account or from this address; try again in 15 minutes." in page


@pytest.mark.parametrize("login", [web_login, api_login])
def test_a_new_forwarded_for_per_request_does_not_escape_the_address_limit(make_user, login):
    make_user("ann", "annotator", password=PASSWORD)
    statuses = [
        login(f"user{i}", "wrong", HTTP_X_FORWARDED_FOR=f"203.0.113.{i}").status_code for i in range(60)
    ]
    assert 429 not in statuses[:50] and set(statuses[50:]) == {429}
    assert login("ann", PASSWORD, HTTP_X_FORWARDED_FOR="198.51.100.1").status_code == 429


def test_a_new_forwarded_for_per_request_does_not_escape_the_rate_throttle(_rate):
    _rate("10/min")
    statuses = [api_login("ann", "x", HTTP_X_FORWARDED_FOR=f"203.0.113.{i}").status_code for i in range(12)]
    assert statuses[:10] == [400] * 10 and statuses[10:] == [429, 429]


def test_behind_a_trusted_proxy_the_address_it_saw_counts(settings, make_user):
    settings.NUM_PROXIES = 1
    make_user("ann", "annotator", password=PASSWORD)
    # The client wrote the first entry; the proxy appended the address it saw.
    for i in range(50):
        api_login(f"user{i}", "wrong", HTTP_X_FORWARDED_FOR=f"1.2.3.{i}, 198.51.100.7")
    assert api_login("ann", PASSWORD, HTTP_X_FORWARDED_FOR="9.9.9.9, 198.51.100.7").status_code == 429
    assert api_login("ann", PASSWORD, HTTP_X_FORWARDED_FOR="198.51.100.7, 198.51.100.8").status_code == 200


def test_a_success_clears_the_accounts_count_not_the_addresses(make_user):
    make_user("ann", "annotator", password=PASSWORD)
    for _ in range(2):
        assert [api_login("ann", "wrong").status_code for _ in range(9)] == [400] * 9
        assert api_login("ann", PASSWORD).status_code == 200
    # 18 failures from this address so far: 32 more lock it out, whoever signs in.
    for i in range(32):
        api_login(f"user{i}", "wrong")
    assert api_login("ann", PASSWORD).status_code == 429


def test_another_account_is_not_locked_by_a_neighbours_failures(make_user):
    make_user("ann", "annotator", password=PASSWORD)
    make_user("bob", "annotator", password=PASSWORD)
    for _ in range(10):
        api_login("ann", "wrong", REMOTE_ADDR="10.0.0.1")
    assert api_login("ann", PASSWORD, REMOTE_ADDR="10.0.0.2").status_code == 429
    assert api_login("bob", PASSWORD, REMOTE_ADDR="10.0.0.2").status_code == 200


@pytest.fixture
def clock(monkeypatch):
    """`clock(seconds)` moves the time the sign-in limits and the database cache see. Redis keeps its own
    time: there the window's stored end decides."""
    now = [time.time()]
    monkeypatch.setattr(time, "time", lambda: now[0])
    monkeypatch.setattr(database_cache, "tz_now", lambda: datetime.fromtimestamp(now[0], UTC))

    def move(seconds: float) -> None:
        now[0] += seconds

    return move


def _sign_in(password: str):
    request = RequestFactory().post("/login/", REMOTE_ADDR="10.0.0.1")
    return user_authenticate(request=request, username="ann", password=password)


@pytest.mark.parametrize("backend", ["database", "redis"])
def test_the_lockout_lasts_the_window_from_the_first_failure(request, make_user, clock, backend):
    if backend == "redis":
        request.getfixturevalue("redis_cache")
    ann = make_user("ann", "annotator", password=PASSWORD)
    for _ in range(9):
        assert _sign_in("wrong") is None
    clock(6 * 60)  # past the cache's default timeout (5 minutes), inside the window (15)
    assert _sign_in("wrong") is None  # the tenth failure
    clock(8 * 60 + 59)  # 14:59 after the first failure
    with pytest.raises(LoginLimited):
        _sign_in(PASSWORD)
    clock(2)  # 15:01 after the first
    assert _sign_in(PASSWORD) == ann
