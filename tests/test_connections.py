"""Database connections stay bounded under the development server on PostgreSQL: `runserver` serves each
request on a new thread and never closes its connection, so kept ones used to pile up, one per request."""

import os
import socket
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import requests
from django.conf import settings
from django.contrib.auth.models import Group
from django.db import connection

from annotation.bundle import parse_bundle
from annotation.services.campaigns import campaign_import
from annotation.services.tokens import token_get_or_create

pytestmark = pytest.mark.postgres
ROOT = Path(__file__).resolve().parent.parent
CLIENTS = 12
APP_NAME = "judgeboard-test-runserver"


@pytest.fixture
def server(transactional_db):
    if connection.vendor != "postgresql":
        pytest.skip("needs PostgreSQL (DATABASE_URL=postgres://...)")
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    db = connection.settings_dict
    url = f"postgres://{db['USER']}@{db['HOST']}:{db['PORT']}/{db['NAME']}"  # the test database
    env = {**os.environ, "DEBUG": "1", "DATABASE_URL": url, "DJANGO_SETTINGS_MODULE": "config.settings"}
    env["PGAPPNAME"] = APP_NAME  # libpq names the server's connections, to count them apart from ours
    command = [sys.executable, "manage.py", "runserver", "--noreload", f"127.0.0.1:{port}"]
    process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(200):
            try:
                requests.get(f"{base}/healthz", timeout=5)
                break
            except requests.ConnectionError:
                time.sleep(0.1)
        yield base
    finally:
        process.terminate()
        process.wait(timeout=30)


def server_connections() -> int:
    """The server's connections to the database."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM pg_stat_activity WHERE application_name = %s", [APP_NAME])
        return cursor.fetchone()[0]


def label_tasks(base: str, token: str, campaign_id: int, n: int) -> list[int]:
    session = requests.Session()
    session.headers["Authorization"] = f"Token {token}"
    statuses = []
    for _ in range(n):
        task = session.post(f"{base}/api/campaigns/{campaign_id}/next-task/", timeout=60)
        statuses.append(task.status_code)
        if task.status_code != 200:
            break
        body = {"grade": 1} if task.json()["kind"] == "relevance" else {"verdict": "left"}
        statuses.append(
            session.post(f"{base}/api/tasks/{task.json()['id']}/judgment/", json=body).status_code
        )
        statuses.append(session.get(f"{base}/api/campaigns/{campaign_id}/", timeout=60).status_code)
    return statuses


@pytest.fixture
def campaign(bundle_data):
    """Twenty queries: work for every client."""
    bundle_data["queries"] = [{"id": f"q{i}", "text": f"query {i}"} for i in range(20)]
    bundle_data["rankings"] = [
        {"model": model, "query": f"q{i}", "documents": ["d1", "d2"] if model == "online" else ["d2", "d3"]}
        for i in range(20)
        for model in ("online", "exp")
    ]
    return campaign_import(bundle=parse_bundle(bundle_data, "twenty.json"))


def test_a_burst_of_requests_leaves_a_bounded_number_of_connections(server, campaign, make_user):
    bound = settings.DATABASES["default"]["OPTIONS"]["pool"]["max_size"]
    Group.objects.get_or_create(name="annotator")  # a flush by an earlier transactional test drops it
    users = [make_user(f"ann{i}", "annotator") for i in range(CLIENTS)]
    tokens = [token_get_or_create(user=user).key for user in users]

    assert set(label_tasks(server, tokens[0], campaign.pk, 15)) <= {200, 201}
    assert server_connections() <= bound

    with ThreadPoolExecutor(CLIENTS) as clients:
        runs = list(clients.map(lambda token: label_tasks(server, token, campaign.pk, 5), tokens[1:]))
    assert all(set(statuses) <= {200, 201, 204} for statuses in runs), runs
    assert server_connections() <= bound
