"""A reviewer settles a disagreement from the review queue with the keyboard, in Chromium."""

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.urls import reverse

from annotation.bundle import JudgmentRow
from annotation.models import Adjudication, Judgment, LabelRevision, RelevanceTask
from annotation.services.label_import import labels_import

PASSWORD = "pw-reviewer-1"

pytestmark = pytest.mark.browser


def test_reviewer_settles_a_disagreement_by_keyboard(
    live_server, transactional_db, campaign, browser_page, screenshot_dir
):
    page, shots = browser_page, screenshot_dir
    labels_import(
        campaign=campaign,
        judgments=[
            JudgmentRow(0, name, "q1", "d1", grade, comment, 11.5)
            for name, grade, comment in (
                ("ana", 3, "exactly this"),
                ("ben", 2, ""),
                ("cy", 0, "<b>spam?</b>"),
            )
        ],
        preferences=[],
        source="test",
    )
    task = RelevanceTask.objects.get(query__external_id="q1", document__external_id="d1")
    reviewer = get_user_model().objects.create_user(username="rita", password=PASSWORD)
    reviewer.groups.add(Group.objects.get_or_create(name="reviewer")[0])  # a flushed database has no groups
    queue_url = reverse("annotation:review_queue", args=[campaign.pk])

    page.goto(f"{live_server.url}{reverse('login')}?next={queue_url}")
    page.fill("#id_username", "rita")
    page.fill("#id_password", PASSWORD)
    page.click("main button[type=submit]")
    page.wait_for_url(f"{live_server.url}{queue_url}")
    page.screenshot(path=shots / "review_queue.png", full_page=True)

    page.click(f"a[href='{reverse('annotation:review_relevance', args=[task.pk])}']")
    page.wait_for_selector("#adjudication-form")
    page.wait_for_load_state("load")  # the keyboard handler is attached by a script at the page's end
    assert page.locator("text=<b>spam?</b>").count() == 1  # shown as text, not markup
    page.keyboard.press("2")
    assert page.locator("input[name=label][value='2']").is_checked()
    assert page.evaluate("document.activeElement.id") == "reason"
    page.keyboard.press("Enter")  # no reason yet: nothing is sent
    assert not Adjudication.objects.exists()
    page.keyboard.type("Two of three call it relevant; cy misread the page.")
    page.screenshot(path=shots / "review_task.png", full_page=True)
    page.keyboard.press("Enter")
    page.wait_for_url(f"{live_server.url}{queue_url}")  # no open task left
    page.click("nav.filters >> text='settled'")
    page.wait_for_url(f"{live_server.url}{queue_url}?state=settled")

    adjudication = Adjudication.objects.get(relevance_task=task)
    assert (adjudication.grade, adjudication.reviewer_id) == (2, reviewer.pk)
    assert adjudication.reason == "Two of three call it relevant; cy misread the page."
    revision = LabelRevision.objects.get(relevance_task=task, kind=LabelRevision.Kind.ADJUDICATION)
    assert revision.new_value == "2"
    assert sorted(Judgment.objects.filter(task=task).values_list("grade", flat=True)) == [0, 2, 3]
    assert "settled: 2" in page.content()
    page.screenshot(path=shots / "review_queue_after.png", full_page=True)

    page.goto(f"{live_server.url}{reverse('metrics:campaign_quality', args=[campaign.pk])}")
    page.wait_for_selector("#grade-distribution .main-svg")
    page.click("#annotator-table th:nth-child(2)")
    page.screenshot(path=shots / "quality.png", full_page=True)
