"""An import whose worker died, in Chromium: the page, polling, finds it stopped and says so, with Retry and
Cancel; Retry imports it. A file Create would refuse is refused by the preview in the page's words."""

import copy
import json

import pytest
from django.contrib.auth.models import Group
from django_tasks_db.models import DBTaskResult

from annotation.bundle import parse_bundle
from annotation.models import CampaignImport
from annotation.services.campaigns import campaign_import
from tests.factories import SMALL_BUNDLE, work_off_the_queue

pytestmark = pytest.mark.browser


@pytest.fixture
def manager_page(transactional_db, browser_page, make_user, tmp_path, settings):
    settings.IMPORTS_DIR = tmp_path / "imports"
    Group.objects.get_or_create(name="manager")  # a flush by an earlier test drops it
    make_user("boss", "manager", password="boss-secret-1")
    page = browser_page
    page.goto("/login/")
    page.fill("#id_username", "boss")
    page.fill("#id_password", "boss-secret-1")
    page.click("main button[type=submit]")
    (tmp_path / "small.json").write_text(json.dumps(SMALL_BUNDLE))
    page.goto("/campaigns/new/")
    page.set_input_files("input[name=bundle]", tmp_path / "small.json")
    return page


def test_a_stopped_import_is_shown_and_retried(manager_page, screenshot_dir, settings):
    page = manager_page
    page.get_by_role("button", name="Check the files").click()
    work_off_the_queue()
    page.get_by_role("button", name="Create the campaign").click()
    page.wait_for_selector("text=Importing")
    # A worker takes the import, then dies at once; a second of silence is the timeout here.
    settings.IMPORT_WORKER_TIMEOUT_SECONDS = 1
    DBTaskResult.objects.get(id=CampaignImport.objects.get().task_id).claim("killed-worker")
    page.wait_for_selector("text=Stopped: nothing was written")  # the page polled and reloaded
    assert "The background worker stopped while importing" in page.inner_text("#import-error")
    page.screenshot(path=screenshot_dir / "import_stopped.png", full_page=True)

    page.get_by_role("button", name="Retry").click()
    page.wait_for_selector("text=Waiting for the background worker")
    work_off_the_queue()
    page.wait_for_selector("text=Choose its members")
    page.screenshot(path=screenshot_dir / "import_retried.png", full_page=True)
    assert CampaignImport.objects.get().status == CampaignImport.Status.DONE


def test_a_name_taken_is_refused_by_the_preview_in_the_pages_words(manager_page, screenshot_dir):
    campaign_import(bundle=parse_bundle(copy.deepcopy(SMALL_BUNDLE), "earlier.json"))
    page = manager_page
    page.get_by_role("button", name="Check the files").click()
    work_off_the_queue()
    page.wait_for_selector("#import-error")
    error = page.inner_text("#import-error")
    assert error == "Error: small.json, field name: a campaign named 'Small' already exists"
    assert "Create the campaign" not in page.inner_text("main")
    page.screenshot(path=screenshot_dir / "import_name_taken.png", full_page=True)
