"""With REDIS_URL set, login throttling counts across processes: what two app servers need."""

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.cache import caches
from rest_framework.test import APIClient

REDIS_URL = os.environ.get("TEST_REDIS_URL", "redis://127.0.0.1:6379/15")
ROOT = Path(__file__).resolve().parents[2]

OTHER_PROCESS = """
import django
django.setup()
from django.core.management import call_command
from django.test import Client
from django.test.utils import setup_test_environment
setup_test_environment()
call_command("migrate", verbosity=0)
client = Client()
body = {"username": "nobody", "password": "x"}
print([client.post("/api/auth/token/", body).status_code for _ in range(10)])
"""


def redis_reachable() -> bool:
    host, port = REDIS_URL.split("//")[1].split("/")[0].split(":")
    try:
        socket.create_connection((host, int(port)), timeout=1).close()
        return True
    except OSError:
        return False


@pytest.fixture
def redis_cache(settings):
    if not redis_reachable():
        pytest.skip(f"no Redis at {REDIS_URL} (set TEST_REDIS_URL)")
    settings.CACHES = {
        "default": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": REDIS_URL}
    }
    caches["default"].clear()
    yield
    caches["default"].clear()


def test_a_second_process_sees_the_first_ones_failed_logins(db, redis_cache):
    env = {**os.environ, "REDIS_URL": REDIS_URL, "DJANGO_SETTINGS_MODULE": "config.settings"}
    env["DATABASE_URL"] = "sqlite:///:memory:"  # its own users; only the cache is shared
    done = subprocess.run(
        [sys.executable, "-c", OTHER_PROCESS], cwd=ROOT, env=env, capture_output=True, text=True, check=True
    )
    assert done.stdout.strip() == str([400] * 10)
    response = APIClient().post("/api/auth/token/", {"username": "nobody", "password": "x"})
    assert response.status_code == 429  # the eleventh try, in this process
