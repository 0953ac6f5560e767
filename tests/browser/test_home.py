"""A manager's home page in Chromium: every campaign with its progress, decision, disputes and last label."""

import shutil
from pathlib import Path

import pytest
from django.urls import reverse

from annotation.services.demo import DEMO_NAME

pytestmark = pytest.mark.browser
DOCS = Path(__file__).resolve().parents[2] / "docs" / "screenshots"


def test_a_managers_home_shows_what_each_campaign_needs(demo, browser_page, screenshot_dir):
    page = browser_page
    page.goto(reverse("login"))
    page.fill("#id_username", "manager")
    page.fill("#id_password", "demo")
    page.click("main button[type=submit]")
    page.wait_for_selector(".decision-cell .decision-badge")
    row = page.locator("table.campaigns tbody tr", has_text=DEMO_NAME)
    assert "tasks" in row.locator(".campaign-progress").inner_text()
    assert row.locator(".decision-badge").inner_text().strip()
    assert "ago" in row.inner_text()
    page.screenshot(path=screenshot_dir / "home-manager.png", full_page=True)
    shutil.copy(screenshot_dir / "home-manager.png", DOCS / "home-manager.png")
