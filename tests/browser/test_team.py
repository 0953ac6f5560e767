"""A team's first day in Chromium: a manager creates a campaign from an uploaded bundle and two runs (a
warning in the preview, then the background import), adds an annotator and makes them its only member; the
annotator sees only that campaign, gets side-by-side tasks early and watches the progress bar move; the
manager downloads the labels from a button. The Tasks worker runs here as `db_worker` does in production.
Screenshots of the main pages are copied to docs/screenshots/ for the README."""

import json
import random
import re
import shutil
from pathlib import Path

import pytest
from django.contrib.auth.models import Group
from django.core.management import call_command

from annotation.bundle import parse_bundle
from annotation.models import Campaign, CampaignImport, Judgment, Preference
from annotation.services.campaigns import campaign_import
from annotation.services.people import campaign_members_set
from tests.factories import SMALL_BUNDLE

pytestmark = pytest.mark.browser

DOCS = Path(__file__).resolve().parents[2] / "docs" / "screenshots"
QUERIES = [f"q{i}" for i in range(1, 7)]
BUNDLE = {
    "name": "Weekly ranker review",
    "guidelines": "Grade how well the page answers the query.",
    "settings": {"overlap": 1, "gsb_overlap": 1, "pool_depth": 2, "gsb_depth": 3, "cutoffs": [1, 2]},
    "models": [{"name": "prod", "role": "online"}, {"name": "cand", "role": "experimental"}],
    "queries": [{"id": q, "text": f"query number {q[1:]}"} for q in QUERIES],
    "documents": [
        {"id": f"d{i}", "title": f"Page {i}", "url": f"https://example.com/{i}"} for i in range(12)
    ],
}


def run_text(model: str, shift: int, queries) -> str:
    lines = []
    for index, query in enumerate(queries):
        docs = [f"d{(index + shift + k) % 12}" for k in range(3)]
        lines += [f"{query} Q0 {doc} {rank} {10 - rank} {model}" for rank, doc in enumerate(docs, start=1)]
    return "\n".join(lines) + "\n"


def work_off_the_queue() -> None:
    call_command("db_worker", batch=True, reload=False, startup_delay=False, verbosity=0)


def sign_in(page, username: str, password: str) -> None:
    page.goto("/login/")
    page.fill("#id_username", username)
    page.fill("#id_password", password)
    page.click("main button[type=submit]")


def shoot(page, folder: Path, name: str) -> None:
    path = folder / f"{name}.png"
    page.screenshot(path=path, full_page=True)
    DOCS.mkdir(parents=True, exist_ok=True)
    shutil.copy(path, DOCS / f"{name}.png")


def test_a_team_sets_up_and_runs_a_review_in_the_browser(
    transactional_db, browser, live_server, browser_page, screenshot_dir, make_user, tmp_path, settings
):
    settings.IMPORTS_DIR = tmp_path / "imports"
    for role in ("annotator", "reviewer", "manager"):
        Group.objects.get_or_create(name=role)  # a flush by an earlier test drops them
    other = campaign_import(bundle=parse_bundle(dict(SMALL_BUNDLE), "other.json"))
    campaign_members_set(campaign=other, open_to_all=False, members=[])  # not for the new annotator
    make_user("boss", "manager", password="boss-secret-1")
    (tmp_path / "bundle.json").write_text(json.dumps(BUNDLE))
    (tmp_path / "prod.run").write_text(run_text("prod", 0, QUERIES))
    (tmp_path / "cand.run").write_text(run_text("cand", 1, QUERIES[:-1]))  # q6 missing: a warning
    page, shots = browser_page, screenshot_dir

    # The manager uploads a bundle and two runs and reads the preview.
    sign_in(page, "boss", "boss-secret-1")
    page.get_by_role("link", name="New campaign").click()
    page.set_input_files("input[name=bundle]", tmp_path / "bundle.json")
    page.fill("input[name=run_model_0]", "prod")
    page.set_input_files("input[name=run_file_0]", tmp_path / "prod.run")
    page.fill("input[name=run_model_1]", "cand")
    page.set_input_files("input[name=run_file_1]", tmp_path / "cand.run")
    shoot(page, shots, "campaign_new")
    page.get_by_role("button", name="Check the files").click()
    page.wait_for_selector("text=Checking the files")
    work_off_the_queue()
    page.wait_for_selector("#import-warnings")  # the page polled, saw the change and reloaded
    assert "1 of 6 queries lack the 'prod' or 'cand' list" in page.inner_text("#import-warnings")
    assert "fewer than min_queries" in page.inner_text("#import-warnings")  # 5 decidable queries
    assert BUNDLE["name"] in page.inner_text("#import-campaign")
    assert "labels to collect" in page.inner_text("#import-budget")
    assert not Campaign.objects.filter(name=BUNDLE["name"]).exists()
    shoot(page, shots, "campaign_preview")

    page.get_by_role("button", name="Create the campaign").click()
    page.wait_for_selector("text=Importing")
    work_off_the_queue()
    page.wait_for_selector("text=Choose its members")
    campaign = Campaign.objects.get(name=BUNDLE["name"])
    assert CampaignImport.objects.get().status == CampaignImport.Status.DONE

    # A new annotator, handed a one-time link, made the campaign's only member.
    page.goto("/people/")
    page.fill("#id_username", "nora")
    page.fill("#id_name", "Nora Diaz")
    page.select_option("#id_role", "annotator")
    page.get_by_role("button", name="Add").click()
    link = re.search(r"http://\S+/password/set/\S+", page.inner_text(".messages")).group(0)
    shoot(page, shots, "people")
    page.goto(f"/campaigns/{campaign.pk}/members/")
    page.uncheck("input[name=open_to_all]")
    page.get_by_label("nora").check()
    page.get_by_role("button", name="Save members").click()
    page.wait_for_selector("text=Members of")

    annotator = browser.new_context(base_url=live_server.url, viewport={"width": 390, "height": 844})
    nora = annotator.new_page()
    nora.set_default_timeout(10_000)
    nora.goto(link)
    nora.fill("#id_new_password1", "nora-secret-42")
    nora.fill("#id_new_password2", "nora-secret-42")
    nora.get_by_role("button", name="Set password").click()
    nora.wait_for_selector("text=Password set")
    sign_in(nora, "nora", "nora-secret-42")
    home = nora.inner_text("main")
    assert BUNDLE["name"] in home and "Small" not in home  # only her campaign

    # Side-by-side tasks come early (interleaved), and the progress bar moves.
    random.seed(3)
    nora.get_by_role("link", name="Start").click()
    kinds = []
    for step in range(6):
        nora.wait_for_selector(".wb-progress-kind")
        if step == 0:
            shoot(nora, shots, "workbench_phone")
        relevance = nora.query_selector(".wb-grade") is not None
        kinds.append("relevance" if relevance else "side_by_side")
        main = nora.query_selector("main")
        nora.keyboard.press("1")
        nora.wait_for_function("main => !main.isConnected", arg=main)
    assert "side_by_side" in kinds
    done = Judgment.objects.filter(annotator__username="nora").count()
    done += Preference.objects.filter(annotator__username="nora").count()
    assert done == 6
    bar = nora.inner_text(".wb-progress")
    assert re.search(r"Grades \d+/\d+", bar) and re.search(r"Side by side \d+/5", bar)
    annotator.close()

    # The manager downloads the labels from the overview.
    page.goto(f"/metrics/campaigns/{campaign.pk}/")
    with page.expect_download() as download:
        page.get_by_role("link", name="Labels (JSONL)").click()
    lines = Path(download.value.path()).read_text().splitlines()
    assert len(lines) == 6 and all(json.loads(line)["annotator"] == "nora" for line in lines)
    shoot(page, shots, "overview")
