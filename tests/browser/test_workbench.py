"""An annotator works through a campaign by keyboard alone; the database holds exactly what was pressed."""

import shutil
from pathlib import Path

import pytest
from django.contrib.auth.models import Group

from annotation.bundle import parse_bundle
from annotation.models import Assignment, Judgment, LabelRevision, Preference
from annotation.services.campaigns import campaign_import

pytestmark = pytest.mark.browser

MODEL_NAMES = ("ranker-prod-v7", "ranker-cand-x", "ranker-cand-y")
DOCS = Path(__file__).resolve().parents[2] / "docs" / "screenshots"
LOREM = (
    "Compare fares from dozens of airlines and travel agencies in one search. Prices shown include taxes "
    "and fees for one adult in economy.\nFlexible dates help: midweek departures are often cheaper."
)


def documents():
    titles = "abcdefghi"
    urls = {"e": "ftp://files.example.org/e.txt"}
    return [
        {
            "id": d,
            "title": f"Result {d.upper()}: a page about {d}",
            "url": urls.get(d, f"https://www.example.com/{d}/guide"),
            "body": f"[{d}] {LOREM}",
        }
        for d in titles
    ]


BUNDLE = {
    "name": "Browser workbench",
    "guidelines": "Grade the page for the query.\nLine two of the guidelines.",
    "scale": [
        {"value": -1, "label": "Broken", "description": "The page does not load or is spam."},
        {"value": 0, "label": "Irrelevant", "description": "Nothing to do with the query."},
        {"value": 1, "label": "Somewhat relevant", "description": "On topic, answers little."},
        {"value": 2, "label": "Relevant", "description": "Answers well, something missing."},
        {"value": 3, "label": "Perfect", "description": "Exactly what was asked for."},
    ],
    "settings": {
        "overlap": 1,
        "gsb_overlap": 1,
        "pool_depth": 1,
        "gsb_depth": 3,
        "task_order": "relevance_first",
        "repeat_rate": 0,  # the walk expects each kind in turn; repeats have their own tests
    },
    "models": [
        {"name": MODEL_NAMES[0], "role": "online"},
        {"name": MODEL_NAMES[1], "role": "experimental"},
        {"name": MODEL_NAMES[2], "role": "experimental"},
    ],
    "queries": [
        {"id": "q1", "text": "cheap flights to lisbon", "description": "Wants to book a low-cost flight."},
        {"id": "q2", "text": "how to boil an egg", "description": "A simple recipe."},
        {"id": "q3", "text": "python list comprehension", "description": "Syntax help."},
    ],
    "documents": documents(),
    "rankings": [
        # pool depth 1: q1 -> a, b; q2 -> d; q3 -> g, h: five relevance tasks.
        *(
            {"model": MODEL_NAMES[0], "query": q, "documents": docs}
            for q, docs in (("q1", "abc"), ("q2", "def"), ("q3", "ghi"))
        ),
        *(
            {"model": MODEL_NAMES[1], "query": q, "documents": docs}
            for q, docs in (("q1", "bac"), ("q2", "dfe"), ("q3", "hgi"))
        ),
        # identical to the online lists: never asked
        *(
            {"model": MODEL_NAMES[2], "query": q, "documents": docs}
            for q, docs in (("q1", "abc"), ("q2", "def"), ("q3", "ghi"))
        ),
    ],
}


def _bundle():
    data = {**BUNDLE, "rankings": [{**r, "documents": list(r["documents"])} for r in BUNDLE["rankings"]]}
    return parse_bundle(data, "browser.json")


def press_and_wait(page, key: str) -> None:
    """Press a key that moves to another page: a label's answer (the next task's main, swapped in by the
    script without a navigation) or `u` (a navigation)."""
    if key == "u":
        with page.expect_navigation():
            page.keyboard.press(key)
        return
    main = page.query_selector("main")
    page.keyboard.press(key)
    page.wait_for_function("main => !main.isConnected", arg=main)


def test_annotator_works_by_keyboard(transactional_db, browser_page, screenshot_dir, make_user):
    Group.objects.get_or_create(name="annotator")  # a flush by an earlier test drops it
    campaign_import(bundle=_bundle())
    user = make_user("kim", "annotator", password="kim-secret-pw")
    page = browser_page
    page.goto("/login/")
    page.fill("#id_username", "kim")
    page.fill("#id_password", "kim-secret-pw")
    page.click("main button[type=submit]")
    page.get_by_role("link", name="Start").click()
    sources = []

    pressed = {}
    for index, key in enumerate(["2", "0", "3", "x", "1"]):
        page.wait_for_selector(".wb-grade")
        title = page.inner_text(".wb-doc-title")
        progress = page.locator(".wb-progress")
        if index in (0, 2):  # fetched on the first page, counted forward by the script after that
            page.wait_for_selector(".wb-progress-kind")
            assert progress.inner_text().split() == ["Grades", f"{index}/5", "Side", "by", "side", "0/3"]
        if index == 0:
            page.screenshot(path=screenshot_dir / "relevance.png", full_page=True)
            page.keyboard.press("g")
            page.wait_for_selector("#wb-guidelines[open]")
            assert "Line two" in page.inner_text("#wb-guidelines")
            page.screenshot(path=screenshot_dir / "guidelines.png")
            page.keyboard.press("Escape")
            page.keyboard.press("?")
            page.wait_for_selector("#wb-keys[open]")
            page.screenshot(path=screenshot_dir / "keys.png")
            page.keyboard.press("Escape")
        sources.append(page.content())
        pressed[title] = -1 if key == "x" else int(key)
        topbar = page.query_selector("header.topbar")
        press_and_wait(page, key)
        # The next task came as the page's part that changes: the top bar stayed, its language switch now
        # comes back to the task shown.
        assert topbar.evaluate("header => header.isConnected")
        path = page.evaluate("location.pathname")
        assert page.input_value("form.languages input[name=next]") == path

    # u: back to the last grade, change it, and land on the next task again.
    press_and_wait(page, "u")
    changed_title = page.inner_text(".wb-doc-title")
    assert page.is_visible(".wb-grade.current")
    press_and_wait(page, "3")
    pressed[changed_title] = 3
    assert "Your earlier answer was changed." in page.inner_text(".messages")
    # The address is the task shown, so a reload shows it again rather than re-posting.
    query = page.inner_text(".wb-query-text")
    page.reload()
    assert page.inner_text(".wb-query-text") == query

    sides = {}
    for index, (key, side) in enumerate([("1", "left"), ("ArrowDown", "same"), ("ArrowRight", "right")]):
        page.wait_for_selector(".wb-verdict")
        if index == 0:
            page.screenshot(path=screenshot_dir / "side_by_side.png", full_page=True)
        sources.append(page.content())
        sides[page.inner_text(".wb-query-text")] = side
        press_and_wait(page, key)
    page.wait_for_selector(".wb-done")
    page.screenshot(path=screenshot_dir / "done.png")

    grades = {j.task.document.title: j.grade for j in Judgment.objects.filter(annotator=user)}
    assert grades == pressed
    assert LabelRevision.objects.filter(relevance_task__document__title=changed_title).count() == 2
    assert len(sides) == 3
    for preference in Preference.objects.filter(annotator=user).select_related("task__query"):
        side = sides[preference.task.query.text]
        assignment = Assignment.objects.get(annotator=user, side_by_side_task=preference.task)
        assert preference.experimental_on_left == assignment.experimental_on_left
        experimental_side = "left" if assignment.experimental_on_left else "right"
        expected = "same" if side == "same" else ("good" if side == experimental_side else "bad")
        assert preference.verdict == expected
    assert not Preference.objects.filter(task__lists_identical=True).exists()
    for source in sources:
        assert not any(name in source for name in MODEL_NAMES)
        assert "experimental" not in source and "online" not in source


def test_side_by_side_on_a_phone_keeps_the_verdict_in_reach(
    transactional_db, browser_page, screenshot_dir, make_user
):
    Group.objects.get_or_create(name="annotator")
    data = {**BUNDLE, "settings": {**BUNDLE["settings"], "task_order": "side_by_side_first"}}
    data["rankings"] = [{**r, "documents": list(r["documents"])} for r in BUNDLE["rankings"]]
    campaign_import(bundle=parse_bundle(data, "phone.json"))
    make_user("pia", "annotator", password="pia-secret-pw")
    page = browser_page
    page.set_viewport_size({"width": 390, "height": 844})
    page.goto("/login/")
    page.fill("#id_username", "pia")
    page.fill("#id_password", "pia-secret-pw")
    page.click("main button[type=submit]")
    page.get_by_role("link", name="Start").click()
    page.wait_for_selector(".wb-verdict")
    heads = page.locator(".wb-list-head").all_inner_texts()
    assert [head.lower() for head in heads] == ["top", "bottom"]  # stacked: no "Left" or "Right" on screen
    verdicts = [text.strip() for text in page.locator(".wb-verdict").all_inner_texts()]
    assert verdicts == ["Top better", "Same", "Bottom better"]
    for y in (0, 1500, 100_000):  # the top of the page, the middle of the lists, the end
        page.evaluate(f"window.scrollTo(0, {y})")
        box = page.locator(".wb-verdicts").bounding_box()
        assert box and box["y"] >= 0 and box["y"] + box["height"] <= 844, (y, box)
    page.evaluate("window.scrollTo(0, 900)")
    page.screenshot(path=screenshot_dir / "side_by_side_phone.png")
    shutil.copy(screenshot_dir / "side_by_side_phone.png", DOCS / "side_by_side_phone.png")
    # The old page stays on screen until the answer comes: wait for the answer, not for a selector.
    with page.expect_response(lambda response: response.request.method == "POST") as answer:
        page.locator(".wb-verdict", has_text="Bottom better").click()
    assert Preference.objects.count() == 1
    # Sent as the form would post it natively, not as multipart.
    content_type = answer.value.request.headers["content-type"]
    assert content_type.startswith("application/x-www-form-urlencoded"), content_type
