"""A manager in Chromium adds an interaction log on the campaign's page, then reads what users did on the
Behaviour page: online metrics, the guardrail in force, judges against users, the propensity curve and the
labels from behaviour. Screenshots go to docs/screenshots/ for the README."""

import shutil
from pathlib import Path

import pytest
from django.core.management import call_command
from django.urls import reverse

from annotation.models import InteractionLog
from tests.factories import rotated_campaign

pytestmark = pytest.mark.browser

DOCS = Path(__file__).resolve().parents[2] / "docs" / "screenshots"


def test_a_manager_adds_a_log_and_reads_the_behaviour_page(
    transactional_db, browser_page, screenshot_dir, make_user, tmp_path
):
    page = browser_page
    campaign = rotated_campaign()
    log = tmp_path / "clicks.jsonl.gz"
    call_command("simulate_interactions", str(campaign.pk), "--lists", "3000", "-o", str(log))
    make_user("boss", "manager", password="pw-boss-1")
    page.goto(reverse("login"))
    page.fill("#id_username", "boss")
    page.fill("#id_password", "pw-boss-1")
    page.press("#id_password", "Enter")
    page.wait_for_url(lambda url: "/login/" not in url)

    page.goto(reverse("annotation:campaign_interactions", args=[campaign.pk]))
    assert page.locator("#no-logs").is_visible()
    page.set_input_files("#id_file", str(log))
    with page.expect_navigation(timeout=60_000):  # the import runs within the request
        page.click("#log-form button[type=submit]", no_wait_after=True)
    page.wait_for_selector("#log-table")
    assert "clicks.jsonl.gz" in page.locator("#log-table").inner_text()
    assert InteractionLog.objects.get(campaign=campaign).requests == 3000
    page.screenshot(path=screenshot_dir / "interaction-logs.png", full_page=True)

    with page.expect_navigation(timeout=60_000):
        page.click("nav >> text=Behaviour", no_wait_after=True)
    page.wait_for_selector("#online-metrics")
    metrics = page.locator("#online-metrics").inner_text()
    assert "IPS-CTR@10" in metrics and "Abandonment" in metrics
    assert "Guardrail on IPS-CTR@10" in page.locator(".guardrails").inner_text()
    assert "intervention harvesting" in page.locator("#decision-uses").inner_text()
    assert page.locator("#propensity tbody tr").count() == 10
    assert page.locator("svg[aria-label^='Per query']").count() == 1
    assert page.locator("#behaviour-agreement").is_visible()
    path = screenshot_dir / "behaviour.png"
    page.screenshot(path=path, full_page=True)
    DOCS.mkdir(parents=True, exist_ok=True)
    shutil.copy(path, DOCS / "behaviour.png")
