"""The launch comparison dashboard and the printable HTML report of the demo campaign, in Chromium."""

import pytest
from django.urls import reverse

pytestmark = pytest.mark.browser


def log_in(page, next_url: str) -> None:
    page.goto(f"{reverse('login')}?next={next_url}")
    page.fill("#id_username", "reviewer")
    page.fill("#id_password", "demo")
    page.click("main button[type=submit]")
    page.wait_for_url(f"**{next_url}")


def drawn_marks(page, selector: str) -> int:
    """Bars, points and lines a chart drew inside `selector` (0 when it drew nothing)."""
    return page.eval_on_selector(
        selector, "node => node.querySelectorAll('svg path, svg rect, svg circle').length"
    )


def test_comparison_dashboard_draws_its_charts(demo, browser_page, screenshot_dir):
    page = browser_page
    model = demo.models.get(role="experimental").name
    overview = reverse("metrics:campaign_overview", args=[demo.pk])
    log_in(page, overview)
    page.wait_for_selector("#decision")
    page.screenshot(path=screenshot_dir / "overview.png", full_page=True)

    page.click(f"a[href='{reverse('metrics:comparison', args=[demo.pk, model])}']")
    for chart in ("#chart-means", "#chart-gsb", "#chart-deltas"):
        page.wait_for_selector(f"{chart} .main-svg")
        assert drawn_marks(page, chart) > 5, chart
    assert page.locator("#chart-means .point").count() > 0  # the bars
    assert page.locator("#chart-means .errorbar").count() > 0  # their intervals
    page.screenshot(path=screenshot_dir / "comparison.png", full_page=True)

    page.locator("#losing-queries a").first.click()
    page.wait_for_selector(".rankings .ranking")
    assert page.locator(".rankings .ranking").count() == 2
    assert page.locator(".ranked .grade").count() > 0
    page.screenshot(path=screenshot_dir / "drilldown.png", full_page=True)


def test_html_report_is_self_contained_with_charts(demo, browser_page, screenshot_dir):
    page = browser_page
    model = demo.models.get(role="experimental").name
    url = reverse("metrics:launch_report", args=[demo.pk, model, "html"])
    log_in(page, reverse("metrics:campaign_overview", args=[demo.pk]))
    html = page.request.get(url).text()
    requests = []
    page.on("request", lambda request: requests.append(request.url))
    page.set_content(html)
    assert requests == []  # nothing loaded from anywhere
    charts = page.locator("svg[role=img]")
    # Measures, GSB and the per-query deltas, then the diversity and behaviour figures the demo has data for.
    assert charts.count() >= 3
    for index in range(charts.count()):
        box = charts.nth(index).bounding_box()
        assert box["width"] > 200 and box["height"] > 50, charts.nth(index).get_attribute("aria-label")
    assert drawn_marks(page, "body") > 20
    assert page.locator("#decision").inner_text().strip()
    page.screenshot(path=screenshot_dir / "report.png", full_page=True)
    page.emulate_media(media="print")
    page.screenshot(path=screenshot_dir / "report_print.png", full_page=True)
