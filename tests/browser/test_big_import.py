"""A 1,000,000-line run uploaded in the browser is imported in the background: the page shows the rows
written so far (then that it pools the tasks) while the worker runs, and the campaign appears complete.
The worker runs on its own thread and database connection, as a `db_worker` process would, so this needs
PostgreSQL (SQLite's in-memory test database is one connection); `.ci/run` runs the browser tests on
PostgreSQL."""

import threading

import pytest
from django.contrib.auth.models import Group
from django.core.management import call_command
from django.db import connection, connections, transaction
from django_tasks_db.management.commands.db_worker import Worker

from annotation.models import Campaign, CampaignImport, Ranking, RelevanceTask
from tests.factories import MILLION_ROWS, million_rankings_files

pytestmark = pytest.mark.browser

# The bar moved, or the import failed (its error is then shown, not a timeout).
BAR_MOVED = """() => {
  const bar = document.getElementById("import-progress");
  return (bar && bar.value > 0) || document.getElementById("import-error");
}"""


def worker() -> None:
    """`db_worker --batch`'s loop, without its signal handlers (a thread may not install them)."""
    try:
        Worker(
            queue_names=["default"],
            interval=0.1,
            batch=True,
            backend_name="default",
            startup_delay=False,
            max_tasks=None,
            worker_id="browser-test",
            excluded_queue_names=[],
        ).run()
    finally:
        connections.close_all()


def test_a_million_line_run_imports_in_the_background(
    transactional_db, browser_page, screenshot_dir, make_user, tmp_path, settings
):
    if connection.vendor != "postgresql":
        pytest.skip("the background worker needs its own connection: run with DATABASE_URL on PostgreSQL")
    settings.IMPORTS_DIR = tmp_path / "imports"
    Group.objects.get_or_create(name="manager")
    make_user("boss", "manager", password="boss-secret-1")
    million_rankings_files(tmp_path)
    page = browser_page
    page.set_default_timeout(30_000)
    page.goto("/login/")
    page.fill("#id_username", "boss")
    page.fill("#id_password", "boss-secret-1")
    page.click("main button[type=submit]")
    page.goto("/campaigns/new/")
    page.set_input_files("input[name=bundle]", tmp_path / "bundle.json")
    for index, model in enumerate(["online", "exp"]):
        page.fill(f"input[name=run_model_{index}]", model)
        page.set_input_files(f"input[name=run_file_{index}]", tmp_path / f"{model}.run")
    page.get_by_role("button", name="Check the files").click()
    page.wait_for_selector("text=Checking the files")
    call_command("db_worker", batch=True, reload=False, startup_delay=False, verbosity=0)
    page.wait_for_selector("text=Create the campaign")
    assert "1000000" in page.inner_text("#import-models")

    page.get_by_role("button", name="Create the campaign").click()
    page.wait_for_selector("text=Importing")
    thread = threading.Thread(target=worker)
    try:
        # Pooling waits for this lock, so the page is seen with every row written and the import still
        # running, however quick the machine (the rows alone can be written between two polls).
        with transaction.atomic():
            connection.cursor().execute(
                f"LOCK TABLE {RelevanceTask._meta.db_table} IN SHARE ROW EXCLUSIVE MODE"
            )
            thread.start()
            page.wait_for_function(BAR_MOVED, timeout=120_000)
            assert not page.query_selector("#import-error"), page.inner_text("main")
            # Once the worker took the import, the page (reloaded) no longer offers to cancel it.
            page.wait_for_selector("button[value=cancel]", state="detached")
            page.wait_for_selector("text=pooling the tasks")
            page.screenshot(path=screenshot_dir / "import_progress.png", full_page=True)
            assert "ranking rows written" in page.inner_text("#import-rows")
        page.wait_for_selector("text=Choose its members", timeout=300_000)
    finally:
        if thread.ident:  # started
            thread.join()
    assert CampaignImport.objects.get().status == CampaignImport.Status.DONE
    campaign = Campaign.objects.get(name="A million rankings")
    lists = Ranking.objects.filter(model__campaign=campaign)
    assert sum(ranking.document_pks.size for ranking in lists) == MILLION_ROWS
