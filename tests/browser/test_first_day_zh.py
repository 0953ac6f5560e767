"""Each role's first day in Simplified Chinese, in Chromium, on the demo's Chinese campaign: the annotator
(whose profile says Chinese) grades and compares by keyboard, the reviewer reads the results and settles a
disputed task, the manager (whose browser asks for Chinese) reads the comparison's charts, the people and
settings pages, and switches the pages to English and back. Screenshots of each page are saved."""

import pytest
from django.contrib.auth.models import Group
from django.urls import reverse

from annotation.models import Adjudication, Campaign, Judgment, Preference
from annotation.roles import Role
from annotation.services.demo import DEMO_ZH_NAME, demo_users_ensure, demo_zh_load

pytestmark = pytest.mark.browser

# Words of the product's chrome in English that must not show on a Chinese page.
ENGLISH_CHROME = ("Log out", "Password", "Guidelines", "Skip", "Review queue", "Results", "Settings")


@pytest.fixture
def chinese_demo(transactional_db):
    for role in Role:
        Group.objects.get_or_create(name=role)  # a flushed database has no groups
    demo_users_ensure()
    campaign, _ = demo_zh_load()
    return campaign


def _context(browser, live_server, **options):
    context = browser.new_context(base_url=live_server.url, locale="zh-CN", **options)
    page = context.new_page()
    page.set_default_timeout(10_000)
    return context, page


def _sign_in(page, username: str) -> None:
    page.goto(reverse("login"))
    assert page.locator("html").get_attribute("lang") == "zh-hans"
    assert page.get_by_role("button", name="登录").count() == 1
    page.fill("#id_username", username)
    page.fill("#id_password", "demo")
    page.get_by_role("button", name="登录").click()
    page.wait_for_url(f"**{reverse('annotation:home')}")


def _no_english_chrome(page) -> None:
    text = page.inner_text("body")
    assert not [word for word in ENGLISH_CHROME if word in text], page.url


def _near_duplicate_marking_said_in_chinese(page, shots) -> None:
    """The workbench's script says each step of marking a near-duplicate from the scripts' catalogue."""
    page.keyboard.press("d")
    assert page.inner_text("#wb-mark") == "近似重复：哪一侧列表？按 ← 或 →"
    page.keyboard.press("ArrowLeft")
    assert page.inner_text("#wb-mark").startswith("左侧列表中的近似重复：")
    page.keyboard.press("2")
    assert page.inner_text("#wb-mark") == "左侧第 2 条与前面哪条近似重复：请输入前面那条结果的序号"
    page.screenshot(path=shots / "workbench_marking.png")
    page.keyboard.press("Escape")
    assert not page.is_visible("#wb-mark")


def test_each_role_spends_a_first_day_in_chinese(chinese_demo, browser, live_server, screenshot_dir):
    campaign: Campaign = chinese_demo
    shots = screenshot_dir

    # The annotator: the workbench in Chinese, graded and compared by keyboard.
    context, page = _context(browser, live_server, viewport={"width": 1280, "height": 900})
    _sign_in(page, "annotator_zh1")
    assert "退出登录" in page.inner_text("header") and DEMO_ZH_NAME in page.inner_text("main")
    page.screenshot(path=shots / "annotator_home.png", full_page=True)
    page.get_by_role("link", name="开始").click()
    seen = set()
    # Interleaved hand-outs draw the kind at even odds: forty draws miss side-by-side once in 2**40.
    for _ in range(40):
        page.wait_for_selector(".wb-progress-kind")
        kind = "relevance" if page.query_selector(".wb-grade") else "side_by_side"
        if kind not in seen:
            seen.add(kind)
            _no_english_chrome(page)
            page.screenshot(path=shots / f"workbench_{kind}.png", full_page=True)
            if kind == "side_by_side":
                _near_duplicate_marking_said_in_chinese(page, shots)
        if len(seen) == 2:
            break
        main = page.query_selector("main")
        page.keyboard.press("2")
        page.wait_for_function("main => !main.isConnected", arg=main)
    assert seen == {"relevance", "side_by_side"}
    page.keyboard.press("g")
    page.wait_for_selector("#wb-guidelines[open]")
    assert "高度相关" in page.inner_text("#wb-guidelines") and "标注规范" in page.inner_text("#wb-guidelines")
    page.screenshot(path=shots / "workbench_guidelines.png")
    page.keyboard.press("Escape")
    # The progress bar is the script's: its words come from the scripts' Chinese catalogue.
    assert "相关性打分" in page.inner_text(".wb-progress")
    assert "已完成" in page.locator(".wb-progress-kind").first.get_attribute("title")
    labelled = Judgment.objects.filter(annotator__username="annotator_zh1").count()
    labelled += Preference.objects.filter(annotator__username="annotator_zh1").count()
    assert labelled >= 1
    context.close()

    # The reviewer: results and the review queue in Chinese, a disputed task settled with a reason.
    context, page = _context(browser, live_server, viewport={"width": 1280, "height": 900})
    _sign_in(page, "reviewer_zh")
    page.goto(reverse("metrics:campaign_overview", args=[campaign.pk]))
    page.wait_for_selector("#decision")
    banner = page.inner_text("#decision")
    assert any(word in banner for word in ("上线", "不上线", "无定论", "收集中")), banner
    _no_english_chrome(page)
    page.screenshot(path=shots / "reviewer_overview.png", full_page=True)
    page.goto(reverse("annotation:review_queue", args=[campaign.pk]))
    assert "审核队列" in page.inner_text("main")
    page.screenshot(path=shots / "review_queue.png", full_page=True)
    page.locator("a.open-task").first.click()
    page.wait_for_selector("#adjudication-form")
    page.wait_for_load_state("load")
    assert "最终标注" in page.inner_text("main")
    page.locator("#adjudication-form input[name=label]").first.check()
    page.fill("#reason", "多数标注员认为相关；一人看错了页面。")
    page.screenshot(path=shots / "review_task.png", full_page=True)
    page.get_by_role("button", name="保存最终标注").click()
    page.wait_for_load_state("load")
    assert Adjudication.objects.filter(reason="多数标注员认为相关；一人看错了页面。").exists()
    page.goto(reverse("metrics:campaign_quality", args=[campaign.pk]))
    assert "标注质量" in page.inner_text("main")
    page.screenshot(path=shots / "quality.png", full_page=True)
    context.close()

    # The manager: the comparison's charts with Chinese labels, people and settings, the switcher.
    context, page = _context(browser, live_server, viewport={"width": 1280, "height": 900})
    _sign_in(page, "manager")
    model = campaign.models.get(role="experimental").name
    page.goto(reverse("metrics:comparison", args=[campaign.pk, model]))
    page.wait_for_selector("#chart-gsb .main-svg")
    page.wait_for_selector("#chart-deltas .main-svg")
    assert "查询" in page.inner_text("#chart-deltas")  # the axis title, from the scripts' catalogue
    _no_english_chrome(page)
    page.screenshot(path=shots / "comparison.png", full_page=True)
    # A fourth run's row: its script numbers it where the Chinese label puts the number.
    page.goto(reverse("annotation:campaign_new"))
    page.get_by_role("button", name="再添加一个运行结果").click()
    assert page.get_attribute("input[name=run_model_3]", "aria-label") == "第 4 个运行结果的模型名称"
    assert page.get_attribute("input[name=run_file_3]", "aria-label") == "第 4 个运行结果文件"
    page.goto(reverse("annotation:people"))
    assert "添加人员" in page.inner_text("main")
    page.screenshot(path=shots / "people.png", full_page=True)
    page.goto(reverse("annotation:campaign_settings", args=[campaign.pk]))
    assert "保存设置" in page.inner_text("main")
    page.screenshot(path=shots / "settings.png", full_page=True)
    page.get_by_role("button", name="English").click()
    page.wait_for_load_state("load")
    assert page.locator("html").get_attribute("lang") == "en" and "Settings" in page.inner_text("main")
    page.get_by_role("button", name="简体中文").click()
    page.wait_for_load_state("load")
    assert page.locator("html").get_attribute("lang") == "zh-hans"
    context.close()
