"""Playwright on Debian's Chromium: a `browser_page` per test and a `screenshot_dir` to save into.

Without /usr/bin/chromium the browser tests are skipped with the reason printed, unless REQUIRE_BROWSER=1
(then they fail): CI machines that are meant to run them must not pass by skipping.
"""

import os
import re
import shutil
import time
from io import StringIO
from pathlib import Path

import pytest
from django.contrib.auth.models import Group
from django.core.management import call_command
from django.db import connection

from annotation.models import Campaign
from annotation.roles import Role
from annotation.services.demo import DEMO_NAME

CHROMIUM = "/usr/bin/chromium"
SCREENSHOTS = Path(__file__).resolve().parent / "screenshots"

# live_server runs Django in a thread next to Playwright's event loop; the ORM must be allowed there.
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")


@pytest.fixture(scope="session")
def browser():
    if not Path(CHROMIUM).exists():
        reason = f"browser tests need Chromium at {CHROMIUM}"
        if os.environ.get("REQUIRE_BROWSER") == "1":
            pytest.fail(f"{reason} (REQUIRE_BROWSER=1)")
        print(f"\nskipped: {reason}")
        pytest.skip(reason)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        args = ["--no-sandbox", "--disable-gpu", "--disable-background-networking"]
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=args)
        yield browser
        browser.close()


@pytest.fixture
def browser_page(browser, live_server):
    """A fresh page (own cookies) whose relative URLs go to the live server."""
    context = browser.new_context(base_url=live_server.url, viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.set_default_timeout(10_000)
    yield page
    context.close()
    _wait_for_the_server()


def _wait_for_the_server(seconds: float = 30.0) -> None:
    """Until no request of the live server reads the test database any more. A page's own requests after it
    has loaded (the home page fetches each campaign's decision) go on at the server after the browser has
    gone; the flush that ends the test would otherwise deadlock with their reads (it truncates every table
    at once, they lock one table after another)."""
    if connection.vendor != "postgresql":
        return
    deadline = time.monotonic() + seconds
    while True:
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_stat_clear_snapshot()")  # the view is kept per transaction otherwise
            cursor.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
                " AND backend_type = 'client backend' AND state <> 'idle' AND pid <> pg_backend_pid()"
            )
            busy = cursor.fetchone()[0]
        if not busy:
            return
        if time.monotonic() > deadline:
            pytest.fail(f"{busy} session(s) of the live server still busy {seconds:.0f} s after the test")
        time.sleep(0.05)


@pytest.fixture
def screenshot_dir(request) -> Path:
    """tests/browser/screenshots/<test name>/, emptied at the start of the test."""
    folder = SCREENSHOTS / re.sub(r"[^\w.-]+", "_", request.node.name)
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    return folder


@pytest.fixture
def demo(transactional_db, settings):
    """The demo campaigns and their logins (password "demo"), as `load_demo` makes them."""
    settings.DEBUG = True  # load_demo refuses to create its logins otherwise
    for role in Role:
        Group.objects.get_or_create(name=role)  # a flushed database has no groups
    call_command("load_demo", stdout=StringIO())
    return Campaign.objects.get(name=DEMO_NAME)
