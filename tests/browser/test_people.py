"""The People page in Chromium: a manager changes an annotator's role and is offered no action on another
manager; a link made for a person dies when they are deactivated."""

import re

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group

pytestmark = pytest.mark.browser


def test_a_manager_changes_a_role_and_a_deactivation_ends_a_link(
    transactional_db, browser, browser_page, live_server, screenshot_dir, make_user
):
    for role in ("annotator", "reviewer", "manager"):
        Group.objects.get_or_create(name=role)  # a flush by an earlier test drops them
    make_user("boss", "manager", password="boss-secret-1")
    make_user("mona", "manager")
    ann = make_user("ann", "annotator")
    get_user_model().objects.create_superuser("root", password="root-secret-1")
    page = browser_page
    page.goto("/login/")
    page.fill("#id_username", "boss")
    page.fill("#id_password", "boss-secret-1")
    page.click("main button[type=submit]")

    page.goto("/people/")
    assert page.locator("#id_role option").all_inner_texts() == ["annotator", "reviewer"]
    row = page.locator("tr", has_text="ann")
    row.get_by_label("Role of ann").select_option("reviewer")
    row.get_by_role("button", name="Change role").click()
    page.wait_for_selector("text=The role of ann is now reviewer.")
    assert list(ann.groups.values_list("name", flat=True)) == ["reviewer"]
    for other in ("mona", "root"):
        manager_row = page.locator("tr", has_text=other)
        assert manager_row.inner_text().strip().endswith("Managed by a superuser")
        assert manager_row.get_by_role("button").count() == 0
    assert page.locator("tr", has_text="boss").get_by_role("button").count() == 0
    page.screenshot(path=screenshot_dir / "people.png", full_page=True)

    page.locator("tr", has_text="ann").get_by_role("button", name="Reset password").click()
    link = re.search(r"http://\S+/password/set/\S+", page.inner_text(".messages")).group(0)
    page.locator("tr", has_text="ann").get_by_role("button", name="Deactivate").click()
    page.wait_for_selector("text=ann is deactivated.")
    page.locator("tr", has_text="ann").get_by_role("button", name="Activate").click()
    page.wait_for_selector("text=ann is active.")

    stranger = browser.new_context(base_url=live_server.url).new_page()
    stranger.goto(link)
    assert "Ask a manager for a new one." in stranger.inner_text("main")
    stranger.screenshot(path=screenshot_dir / "dead-link.png", full_page=True)
    stranger.context.close()
