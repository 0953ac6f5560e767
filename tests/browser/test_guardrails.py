"""A manager in Chromium finds a query in the explorer, excludes a speeding annotator from the quality page,
sees the decision with and without them and confirms; a results page refreshes itself when labels arrive;
the settings page archives a campaign. Screenshots go to docs/screenshots/ for the README."""

import shutil
from pathlib import Path

import pytest
from django.urls import reverse

from annotation.bundle import JudgmentRow, PreferenceRow, parse_bundle
from annotation.models import RelevanceTask
from annotation.services.campaigns import campaign_import
from annotation.services.label_import import labels_import
from tests.factories import GRADES, SMALL_BUNDLE, worked_campaign

pytestmark = pytest.mark.browser

DOCS = Path(__file__).resolve().parents[2] / "docs" / "screenshots"


def sign_in(page, username: str, password: str) -> None:
    page.goto(reverse("login"))
    page.fill("#id_username", username)
    page.fill("#id_password", password)
    page.click("main button[type=submit]")
    page.wait_for_url(lambda url: "/login/" not in url)


def shoot(page, folder: Path, name: str, docs: bool = True) -> None:
    path = folder / f"{name}.png"
    page.screenshot(path=path, full_page=True)
    if docs:
        DOCS.mkdir(parents=True, exist_ok=True)
        shutil.copy(path, DOCS / path.name)


def test_a_manager_explores_excludes_and_archives(
    transactional_db, browser_page, screenshot_dir, make_user, settings
):
    settings.RESULTS_REFRESH_SECONDS = 0.5
    page, shots = browser_page, screenshot_dir
    campaign = worked_campaign()
    documents = [("q1", doc) for doc in GRADES] + [
        (q, d) for q in ("q2", "q3", "q4") for d in ("x", "y", "z")
    ]
    labels_import(
        campaign=campaign,
        judgments=[JudgmentRow(0, "speedy", query, doc, 3, "", 0.1) for query, doc in documents],
        preferences=[PreferenceRow(0, "speedy", query, "exp", "good") for query in ("q1", "q3", "q4")],
        source="test",
    )
    make_user("lead", "manager", password="lead-pass-1")
    sign_in(page, "lead", "lead-pass-1")

    # The explorer: search a query, sort by delta, open its drill-down.
    page.goto(reverse("metrics:query_explorer", args=[campaign.pk]))
    assert page.locator("#won-lost").is_visible()
    page.fill("input[name=q]", "three")
    page.click("#explorer-filters button[type=submit]")
    page.wait_for_url("**q=three**")
    assert page.locator("#explorer-table tbody tr").count() == 1
    page.goto(reverse("metrics:query_explorer", args=[campaign.pk]) + "?sort=delta&order=desc")
    first = page.locator("#explorer-table tbody tr").first
    assert "one" in first.inner_text()
    shoot(page, shots, "query-explorer")
    first.locator("a").first.click()
    page.wait_for_url("**/queries/*/")

    # The quality page flags the speeding annotator; exclude them from there.
    page.goto(reverse("metrics:campaign_quality", args=[campaign.pk]))
    flagged = page.locator("#flagged")
    assert "speedy" in flagged.inner_text() and "median 0.1 s a grade" in flagged.inner_text()
    shoot(page, shots, "quality-flags")
    flagged.locator("form.exclude-form button").click()
    page.wait_for_url(f"**{reverse('metrics:campaign_overview', args=[campaign.pk])}")
    assert page.locator("#decision").is_visible() and page.locator("#decision-with-excluded").is_visible()
    assert "Leaves out the labels of speedy" in page.locator("#excluded-note").inner_text()
    shoot(page, shots, "overview-exclusion")
    page.click("#exclusion-comparison button[type=submit]")
    page.wait_for_load_state()
    assert page.locator("#decision-with-excluded").count() == 0

    # A campaign still collecting: its overview reloads itself when a label arrives.
    small = campaign_import(bundle=parse_bundle(dict(SMALL_BUNDLE), "small.json"))
    page.goto(reverse("metrics:campaign_overview", args=[small.pk]))
    assert page.locator("#auto-refresh").is_visible()
    stamp = page.get_attribute("h1", "data-label-stamp")
    with page.expect_navigation(timeout=10_000):
        labels_import(
            campaign=small, judgments=[JudgmentRow(1, "ann", "q1", "d1", 2)], preferences=[], source="t"
        )
    assert page.get_attribute("h1", "data-label-stamp") != stamp

    # Settings: a bad value is a message, then archive; phones get one column.
    page.goto(reverse("annotation:campaign_settings", args=[small.pk]))
    page.fill("#id_launch_min_gsb", "7")
    page.fill("#id_cutoffs", "1, three, 10")
    page.click("#settings-form button[type=submit]")
    top = page.locator("#form-errors")
    assert top.is_visible() and "Not saved: one problem to fix." in top.inner_text()  # the form's own check
    assert top.locator('a[href="#id_cutoffs"]').count() == 1
    assert page.locator("#id_scale-0-label").is_disabled()  # graded already: the scale's rows are fixed
    page.fill("#id_cutoffs", "1, 3, 10")
    page.click("#settings-form button[type=submit]")
    assert "must be between 0 and 1" in page.inner_text("#form-errors")  # then the parser's, once each
    assert page.inner_text("#settings-form").count("must be between 0 and 1") == 2  # the top, the field
    page.set_viewport_size({"width": 1280, "height": 900})
    shoot(page, shots, "settings-errors")
    page.click("#archive-form button")
    page.wait_for_load_state()
    assert "archived" in page.inner_text("h1")
    page.set_viewport_size({"width": 390, "height": 844})
    shoot(page, shots, "settings-phone")
    phone_pages = [
        reverse("annotation:campaign_settings", args=[small.pk]),
        reverse("annotation:people"),
        reverse("annotation:progress", args=[campaign.pk]),
        reverse("metrics:campaign_overview", args=[campaign.pk]),
        reverse("metrics:campaign_quality", args=[campaign.pk]),
        reverse("metrics:query_explorer", args=[campaign.pk]),
        reverse("metrics:comparison", args=[campaign.pk, "exp"]),
        reverse("metrics:query_drilldown", args=[campaign.pk, campaign.queries.first().pk]),
        reverse("annotation:review_queue", args=[campaign.pk]),
        reverse(
            "annotation:review_relevance", args=[RelevanceTask.objects.filter(campaign=campaign).first().pk]
        ),
        reverse("annotation:home"),
    ]
    for url in phone_pages:
        page.goto(url)
        width = page.evaluate("document.documentElement.scrollWidth")
        assert width <= 400, f"{url} scrolls sideways on a phone ({width}px); wide tables scroll in their box"
