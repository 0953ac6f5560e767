"""A real `db_worker` process, killed (SIGKILL) in the middle of a browser import on PostgreSQL: the import
page shows it stopped once its heartbeat falls silent, with how far it got; nothing was written; Retry
imports it to completion with a new worker, and the uploaded files are removed."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from django.db import connection
from django.urls import reverse

from annotation.models import Campaign, CampaignImport, Ranking
from annotation.selectors.imports import import_folder
from tests.factories import MILLION_ROWS, million_rankings_files

pytestmark = pytest.mark.postgres
ROOT = Path(__file__).resolve().parents[2]
TIMEOUT = 2.0  # IMPORT_WORKER_TIMEOUT_SECONDS, here and in the workers


@pytest.fixture
def start_worker(transactional_db, settings, tmp_path):
    """Starts `manage.py db_worker` processes on the test database; any still running at the end is ended."""
    if connection.vendor != "postgresql":
        pytest.skip(
            "needs PostgreSQL (DATABASE_URL=postgres://...): the test database in SQLite is in memory"
        )
    settings.IMPORTS_DIR = tmp_path / "imports"
    settings.IMPORT_WORKER_TIMEOUT_SECONDS = TIMEOUT
    db = connection.settings_dict
    env = {
        **os.environ,
        "DEBUG": "1",
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "DATABASE_URL": f"postgres://{db['USER']}@{db['HOST']}:{db['PORT']}/{db['NAME']}",
        "IMPORTS_DIR": str(settings.IMPORTS_DIR),
        "IMPORT_WORKER_TIMEOUT_SECONDS": str(TIMEOUT),
    }
    processes: list[subprocess.Popen] = []

    def start(*options: str) -> subprocess.Popen:
        command = [sys.executable, "manage.py", "db_worker", "--no-reload", "--no-startup-delay", *options]
        log = (tmp_path / f"worker-{len(processes)}.log").open("w")
        processes.append(subprocess.Popen(command, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT))
        return processes[-1]

    yield start
    for process in processes:
        if process.poll() is None:
            process.kill()
        process.wait(timeout=60)


def wait_until(condition, seconds: float, what: str):
    """Polls `condition` until it returns something true; fails naming `what` after `seconds`."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if result := condition():
            return result
        time.sleep(0.05)
    pytest.fail(f"gave up waiting for {what}")


def test_a_worker_killed_mid_import_is_found_and_the_import_retried_to_completion(
    start_worker, client, make_user, tmp_path
):
    client.force_login(make_user("boss", "manager"))
    million_rankings_files(tmp_path)  # seconds of writing and pooling to be killed in
    with (
        (tmp_path / "bundle.json").open("rb") as bundle,
        (tmp_path / "online.run").open("rb") as online,
        (tmp_path / "exp.run").open("rb") as exp,
    ):
        body = {"bundle": bundle, "run_model_0": "online", "run_file_0": online}
        body |= {"run_model_1": "exp", "run_file_1": exp}
        client.post(reverse("annotation:campaign_new"), body)
    staged = CampaignImport.objects.get()
    page_url = reverse("annotation:campaign_import", args=[staged.pk])
    status_url = reverse("annotation:campaign_import_status", args=[staged.pk])

    def status() -> dict:
        return client.get(status_url).json()

    worker = start_worker("--interval", "0.1")
    wait_until(lambda: status()["status"] == "ready", 300, "the check")
    client.post(page_url, {"action": "confirm"})
    progress = wait_until(lambda: (status()["progress"] or {}).get("rows"), 300, "ranking rows written")
    os.kill(worker.pid, signal.SIGKILL)
    worker.wait(timeout=60)
    staged.refresh_from_db()
    assert staged.status == CampaignImport.Status.IMPORTING, "the import ended before the worker was killed"
    assert 0 < progress <= MILLION_ROWS

    # Found once silent for the timeout (the page polls this), shown with how far it got; nothing written.
    wait_until(lambda: status()["status"] == "stopped", 30 * TIMEOUT, "the import shown stopped")
    page = client.get(page_url).content.decode()
    assert "Stopped: nothing was written" in page and "The background worker stopped while importing" in page
    assert f"of {MILLION_ROWS} ranking rows" in page
    assert 'value="retry"' in page and 'value="cancel"' in page
    assert not Campaign.objects.exists()
    assert import_folder(staged).exists()  # kept for the retry

    client.post(page_url, {"action": "retry"})
    retry = start_worker("--batch", "--interval", "0.1")
    assert retry.wait(timeout=600) == 0
    staged.refresh_from_db()
    assert staged.status == CampaignImport.Status.DONE and staged.attempt == 3
    assert "Choose its members" in client.get(page_url).content.decode()
    lists = Ranking.objects.filter(model__campaign=staged.campaign)
    assert sum(ranking.document_pks.size for ranking in lists) == MILLION_ROWS
    assert not import_folder(staged).exists()
