"""An annotator ticks the intents each document serves and marks near-duplicates in a side-by-side list, by
keyboard alone, on the five-editions campaign; the database holds exactly what was pressed, and the pages
never name a model."""

import json

import pytest
from django.contrib.auth.models import Group
from django.urls import reverse

from annotation.bundle import parse_bundle
from annotation.models import Assignment, Judgment, Preference
from annotation.services.campaigns import campaign_import
from tests.factories import FIVE_EDITIONS, FIVE_EDITIONS_INTENTS

pytestmark = pytest.mark.browser

INTENT_KEYS = {"novel": "a", "film": "d", "sequel": "f"}  # the query's intents, in their order


def press_and_wait(page, key: str) -> None:
    """Press the key that answers: the next task's page is swapped in by the script."""
    main = page.query_selector("main")
    page.keyboard.press(key)
    page.wait_for_function("main => !main.isConnected", arg=main)


def test_intents_and_near_duplicates_by_keyboard(transactional_db, browser_page, screenshot_dir, make_user):
    Group.objects.get_or_create(name="annotator")  # a flush by an earlier test drops it
    bundle = json.loads(json.dumps(FIVE_EDITIONS))
    bundle["settings"]["task_order"] = "relevance_first"
    campaign = campaign_import(bundle=parse_bundle(bundle, "editions.json"))
    user = make_user("kim", "annotator", password="kim-secret-pw")
    titles = {document["title"]: document["id"] for document in FIVE_EDITIONS["documents"]}
    page = browser_page
    page.goto("/login/")
    page.fill("#id_username", "kim")
    page.fill("#id_password", "kim-secret-pw")
    with page.expect_navigation():
        page.press("#id_password", "Enter")  # the header's language button is a submit button too
    page.click(f"a[href='{reverse('annotation:work', args=[campaign.pk])}']")
    page.wait_for_load_state("load")  # the keyboard's script has run: the form is there before it

    ticked = {}
    for index in range(9):  # the pool: both top fives, e1 shared
        page.wait_for_selector(".wb-intents")
        document = titles[page.inner_text(".wb-doc-title")]
        intents = FIVE_EDITIONS_INTENTS.get(document, ["novel"])
        for intent in intents:
            page.keyboard.press(INTENT_KEYS[intent])
        checked = page.eval_on_selector_all("input[name=intents]:checked", "boxes => boxes.map(b => b.value)")
        assert checked == [intent for intent in INTENT_KEYS if intent in intents]
        if index == 0 or document == "m1":
            page.screenshot(path=screenshot_dir / f"intents_{document}.png", full_page=True)
        ticked[document] = checked
        press_and_wait(page, "1" if document == "g1" else "3")

    page.wait_for_selector(".wb-verdict")
    lease = Assignment.objects.get(annotator=user, side_by_side_task__isnull=False)
    online_side = "right" if lease.experimental_on_left else "left"
    arrow = "ArrowRight" if online_side == "right" else "ArrowLeft"
    for position in (2, 3, 4, 5):  # every later edition the same as the first
        page.keyboard.press("d")
        page.keyboard.press(arrow)
        page.keyboard.press(str(position))
        if position == 2:
            assert (
                page.inner_text("#wb-mark")
                == f"{online_side} #2 is a near-duplicate of: the earlier result's number"
            )
            page.screenshot(path=screenshot_dir / "marking.png")
        page.keyboard.press("1")
        assert page.inner_text("#wb-mark") == f"{online_side} #{position} marked the same as #1"
    # The same keys again take a mark back; Escape gives up a mark begun.
    for key in ("d", arrow, "5", "1"):
        page.keyboard.press(key)
    assert page.inner_text("#wb-mark") == f"{online_side} #5 unmarked"
    for key in ("d", arrow, "5", "1"):
        page.keyboard.press(key)
    page.keyboard.press("d")
    page.keyboard.press("Escape")
    assert not page.is_visible("#wb-mark")
    selects = page.eval_on_selector_all(
        f"select[name=duplicate][data-side={online_side}]", "selects => selects.map(s => s.value)"
    )
    assert selects == [f"{online_side}:{position}:1" for position in (2, 3, 4, 5)]
    page.screenshot(path=screenshot_dir / "near_duplicates.png", full_page=True)
    source = page.content()
    press_and_wait(page, "ArrowDown")  # about the same
    page.wait_for_selector(".wb-done")

    stored = {j.task.document.external_id: j.intents for j in Judgment.objects.filter(annotator=user)}
    assert stored == ticked
    preference = Preference.objects.get(annotator=user)
    assert preference.verdict == "same"
    assert preference.duplicates == [[online_side, position, 1] for position in (2, 3, 4, 5)]
    assert "online" not in source and "exp" not in source.replace("expires", "")
