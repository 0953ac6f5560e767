"""Shared fixtures: campaigns built through the real import service, users in their real groups, the cache
in Redis for tests that need it (TEST_REDIS_URL)."""

import copy
import os
import socket

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.core.cache import caches
from django.utils import translation

from annotation.bundle import parse_bundle
from annotation.services.assignment import _campaigns_seen
from annotation.services.campaigns import campaign_import
from tests.factories import SMALL_BUNDLE


@pytest.fixture(autouse=True)
def _english_after_each_test():
    """A page asked for in Chinese leaves Chinese active in the test's thread (a server's next request
    chooses its own): the next test starts in the default language again."""
    yield
    translation.deactivate()


@pytest.fixture(autouse=True)
def _no_campaign_seen():
    """Each test starts as a new worker would: no campaign seen by the API's next-task yet
    (`assignment._campaigns_seen`), so what a test counts does not depend on the tests before it."""
    _campaigns_seen.clear()


@pytest.fixture
def bundle_data():
    return copy.deepcopy(SMALL_BUNDLE)


@pytest.fixture
def campaign(db, bundle_data):
    return campaign_import(bundle=parse_bundle(bundle_data, "small.json"))


@pytest.fixture
def make_user(db):
    def make(username: str, *roles: str, password: str = "pw-not-used-1"):
        user = get_user_model().objects.create_user(username=username, password=password)
        for role in roles:
            user.groups.add(Group.objects.get_or_create(name=role)[0])  # a flush drops the migrated groups
        return user

    return make


REDIS_URL = os.environ.get("TEST_REDIS_URL", "redis://127.0.0.1:6379/15")


def redis_reachable() -> bool:
    host, port = REDIS_URL.split("//")[1].split("/")[0].split(":")
    try:
        socket.create_connection((host, int(port)), timeout=1).close()
        return True
    except OSError:
        return False


@pytest.fixture
def redis_cache(settings):
    """The default cache in Redis at TEST_REDIS_URL, emptied before and after; skips without Redis."""
    if not redis_reachable():
        pytest.skip(f"no Redis at {REDIS_URL} (set TEST_REDIS_URL)")
    settings.CACHES = {"default": {"BACKEND": "plumbing.cache.SharedRedisCache", "LOCATION": REDIS_URL}}
    caches["default"].clear()
    yield
    caches["default"].clear()
