"""Login throttles and failed sign-ins count across processes, in Redis (REDIS_URL) or in the database cache:
what several workers and app servers need."""

import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.db import connection
from rest_framework.test import APIClient

from tests.conftest import REDIS_URL

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
print([client.post("/api/auth/token/", body, "application/json").status_code for _ in range(10)])
"""


def test_a_second_process_sees_the_first_ones_failed_logins(db, redis_cache):
    env = {**os.environ, "REDIS_URL": REDIS_URL, "DJANGO_SETTINGS_MODULE": "config.settings"}
    env["DATABASE_URL"] = "sqlite:///:memory:"  # its own users; only the cache is shared
    done = subprocess.run(
        [sys.executable, "-c", OTHER_PROCESS], cwd=ROOT, env=env, capture_output=True, text=True, check=True
    )
    assert done.stdout.strip() == str([400] * 10)
    response = APIClient().post("/api/auth/token/", {"username": "nobody", "password": "x"}, format="json")
    assert response.status_code == 429  # the eleventh try, in this process


WRONG_PASSWORDS = """
import django
django.setup()
from django.test import Client
from django.test.utils import setup_test_environment
setup_test_environment()
print([Client().post("/login/", {"username": "ann", "password": "wrong"}).status_code for _ in range(10)])
"""


def test_a_second_process_sees_failed_sign_ins_in_the_database_cache(transactional_db, make_user):
    if connection.vendor != "postgresql":
        pytest.skip(
            "needs PostgreSQL (DATABASE_URL=postgres://...): the test database in SQLite is in memory"
        )
    make_user("ann", password="s3cret-pass")
    db = connection.settings_dict
    env = {k: v for k, v in os.environ.items() if k != "REDIS_URL"}
    env["DATABASE_URL"] = (
        f"postgres://{db['USER']}@{db['HOST']}:{db['PORT']}/{db['NAME']}"  # the test database
    )
    env["DJANGO_SETTINGS_MODULE"] = "config.settings"
    done = subprocess.run(
        [sys.executable, "-c", WRONG_PASSWORDS], cwd=ROOT, env=env, capture_output=True, text=True, check=True
    )
    assert done.stdout.strip() == str([200] * 10)  # the form again, with its error
    response = APIClient().post(
        "/api/auth/token/", {"username": "ann", "password": "s3cret-pass"}, format="json"
    )
    assert response.status_code == 429  # the account is locked out in this process too
