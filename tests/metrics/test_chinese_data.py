"""A campaign in Chinese end to end. Its models named in Chinese: imported by the command, the API and the
new-campaign page, named in the pages' addresses, the downloads' file names and every format of the report.
Its texts: found by a part of them (in the database's search on SQLite and PostgreSQL, and the explorer's),
exported as written, and its dates in the reader's language."""

import copy
import json
from datetime import date
from urllib.parse import quote

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.urls import reverse
from rest_framework.test import APIClient

from annotation.bundle import JudgmentRow, PreferenceRow, parse_bundle
from annotation.errors import InputError
from annotation.forms import CampaignUploadForm
from annotation.models import Campaign
from annotation.services.label_import import labels_import
from tests.factories import CHINESE_BUNDLE, EXPERIMENTAL_ZH, ONLINE_ZH

ENCODED = quote(EXPERIMENTAL_ZH)  # %E5%AE%9E%E9%AA%8C%E6%A8%A1%E5%9E%8B


@pytest.fixture
def campaign(db, tmp_path):
    """The Chinese campaign imported by `import_campaign` from a file written as a person would (UTF-8, not
    \\u escapes), every task labelled."""
    path = tmp_path / "中文.json"
    path.write_text(json.dumps(CHINESE_BUNDLE, ensure_ascii=False), encoding="utf-8")
    call_command("import_campaign", str(path))
    campaign = Campaign.objects.get(name=CHINESE_BUNDLE["name"])
    judgments = [
        JudgmentRow(0, "ann", f"q{n // 2 + 1}", f"d{n + 1}", n % 3, "第一页就答到了") for n in range(8)
    ]
    preferences = [PreferenceRow(0, "ann", f"q{i}", EXPERIMENTAL_ZH, "good") for i in range(1, 5)]
    labels_import(campaign=campaign, judgments=judgments, preferences=preferences, source="test")
    return campaign


@pytest.fixture
def reviewer(client, make_user):
    client.force_login(make_user("rev", "reviewer"))
    return client


def test_the_command_imports_models_named_in_chinese(campaign):
    assert sorted(campaign.models.values_list("name", "role")) == sorted(
        [(ONLINE_ZH, "online"), (EXPERIMENTAL_ZH, "experimental")]
    )


def test_the_api_imports_models_named_in_chinese(db, make_user):
    client = APIClient()
    client.force_authenticate(make_user("boss", "manager"))
    response = client.post("/api/campaigns/", CHINESE_BUNDLE, format="json")
    assert response.status_code == 201, response.json()
    assert {model["name"] for model in response.json()["models"]} == {ONLINE_ZH, EXPERIMENTAL_ZH}
    models = client.get(f"/api/campaigns/{response.json()['id']}/models/", {"name": "实验"}).json()
    assert [model["name"] for model in models["results"]] == [EXPERIMENTAL_ZH]


def test_the_new_campaign_page_takes_a_run_of_a_model_named_in_chinese():
    bundle = SimpleUploadedFile("b.json", json.dumps(CHINESE_BUNDLE).encode())
    run = SimpleUploadedFile("实验.run", "q1 Q0 d1 1 2 实验\n".encode())
    form = CampaignUploadForm(
        data={"run_model_0": EXPERIMENTAL_ZH}, files={"bundle": bundle, "run_file_0": run}
    )
    assert form.is_valid(), form.errors
    assert [model for model, _upload in form.cleaned_data["runs"]] == [EXPERIMENTAL_ZH]


@pytest.mark.parametrize(
    "name",
    ["线上/实验", "实验 模型", "实验\u3000模型", "“实验”", "实验\u200b模型", "实验\n模型", "_实验", "．"],
)
def test_chinese_names_that_would_break_addresses_or_file_names_are_refused(name):
    bundle = copy.deepcopy(CHINESE_BUNDLE)
    bundle["models"][1]["name"] = name
    with pytest.raises(InputError, match=r"models\[1\]\.name: must start with a letter or digit"):
        parse_bundle(bundle, "bad.json")
    form = CampaignUploadForm(
        data={"run_model_0": name},
        files={"bundle": SimpleUploadedFile("b.json", b"{}"), "run_file_0": SimpleUploadedFile("r", b"")},
    )
    assert not form.is_valid()


@pytest.mark.parametrize("name", ["मॉडल-२", "モデル_v2", "Modèle:α"])
def test_names_in_other_scripts_with_their_marks_are_model_names(name):
    bundle = copy.deepcopy(CHINESE_BUNDLE)
    bundle["models"][1]["name"] = name
    for ranking in bundle["rankings"]:
        ranking["model"] = name if ranking["model"] == EXPERIMENTAL_ZH else ranking["model"]
    assert parse_bundle(bundle, "ok.json").models[1].name == name


def test_the_pages_link_the_comparison_of_a_model_named_in_chinese(campaign, reviewer):
    comparison = reverse("metrics:comparison", args=[campaign.pk, EXPERIMENTAL_ZH])
    assert comparison == f"/metrics/campaigns/{campaign.pk}/compare/{ENCODED}/"
    overview = reviewer.get(reverse("metrics:campaign_overview", args=[campaign.pk])).content.decode()
    assert f'href="{comparison}"' in overview
    page = reviewer.get(comparison)
    assert page.status_code == 200
    html = page.content.decode()
    assert f"<h1>{EXPERIMENTAL_ZH} " in html or f">{EXPERIMENTAL_ZH} <span" in html
    assert f"/compare/{ENCODED}/report.csv" in html
    explorer = reviewer.get(reverse("metrics:query_explorer", args=[campaign.pk]), {"model": EXPERIMENTAL_ZH})
    assert explorer.status_code == 200 and EXPERIMENTAL_ZH in explorer.content.decode()


@pytest.mark.parametrize("format", ["json", "html", "csv", "summary.csv", "md"])
def test_every_download_of_the_report_names_the_chinese_model(campaign, reviewer, format):
    response = reviewer.get(reverse("metrics:launch_report", args=[campaign.pk, EXPERIMENTAL_ZH, format]))
    assert response.status_code == 200
    assert response["Content-Disposition"] == (
        f"attachment; filename*=utf-8''launch-report-campaign-{campaign.pk}-{ENCODED}.{format}"
    )
    text = response.content.decode("utf-8")
    assert text.startswith("\ufeff") == format.endswith("csv")
    assert EXPERIMENTAL_ZH in text and (ONLINE_ZH in text or format == "summary.csv")
    if format == "html":  # the charts name the models in a font that has their glyphs
        assert text.count("<svg") >= 3 and "Noto Sans CJK SC" in text
        svgs = text[text.index("<svg") :]
        assert EXPERIMENTAL_ZH in svgs and ONLINE_ZH in svgs
    if format == "md":
        assert f"| {EXPERIMENTAL_ZH} |" in text or f"{EXPERIMENTAL_ZH} " in text


def test_the_api_report_of_a_model_named_in_chinese_names_its_file(campaign, make_user):
    client = APIClient()
    client.force_authenticate(make_user("rev", "reviewer"))
    response = client.get(
        f"/api/campaigns/{campaign.pk}/report/", {"model": EXPERIMENTAL_ZH, "format": "csv"}
    )
    assert response.status_code == 200
    assert response["Content-Disposition"].endswith(f"''launch-report-campaign-{campaign.pk}-{ENCODED}.csv")
    assert client.get(f"/api/campaigns/{campaign.pk}/report/").json()["campaign"]["model"] == EXPERIMENTAL_ZH


def test_the_launch_report_command_writes_a_chinese_report_of_a_chinese_model(campaign, tmp_path):
    path = tmp_path / "报告.md"
    call_command(
        "launch_report", str(campaign.pk), "--model", EXPERIMENTAL_ZH, "--format", "md", "--language",
        "zh-hans", "--output", str(path),
    )  # fmt: skip
    text = path.read_text(encoding="utf-8")
    assert EXPERIMENTAL_ZH in text and "上线" in text


def test_a_part_of_a_chinese_text_finds_it_in_the_database(campaign, make_user):
    client = APIClient()
    client.force_authenticate(make_user("rev", "reviewer"))
    queries = client.get(f"/api/campaigns/{campaign.pk}/queries/", {"text": "旅游"}).json()["results"]
    assert [query["text"] for query in queries] == ["北京旅游攻略"]
    assert not client.get(f"/api/campaigns/{campaign.pk}/queries/", {"text": "旅行"}).json()["results"]
    campaigns = client.get("/api/campaigns/", {"name": "评测"}).json()["results"]
    assert [row["name"] for row in campaigns] == [CHINESE_BUNDLE["name"]]


def test_the_explorer_finds_a_query_by_a_part_of_its_chinese_text(campaign, reviewer):
    url = reverse("metrics:query_explorer", args=[campaign.pk])
    rows = reviewer.get(url, {"q": "学习"}).content.decode().split("<tbody", 1)[1]
    assert "机器学习教程" in rows and "北京旅游攻略" not in rows
    assert "北京旅游攻略" in reviewer.get(url).content.decode().split("<tbody", 1)[1]


def test_the_labels_export_writes_chinese_as_written(campaign, make_user):
    client = APIClient()
    client.force_authenticate(make_user("rev", "reviewer"))
    response = client.get(f"/api/campaigns/{campaign.pk}/export/judgments/")
    text = b"".join(response.streaming_content).decode("utf-8")
    assert "第一页就答到了" in text and EXPERIMENTAL_ZH in text and "\\u" not in text


def test_a_chinese_page_writes_dates_as_chinese_pages_do(campaign, reviewer):
    today = date.today()
    url = reverse("metrics:campaign_overview", args=[campaign.pk])
    chinese = reviewer.get(url, headers={"accept-language": "zh-hans"}).content.decode()
    english = reviewer.get(url, headers={"accept-language": "en"}).content.decode()
    assert f"{today.year}年{today.month}月{today.day}日" in chinese
    assert today.isoformat() in english and f"{today.year}年" not in english
    # When the report was made, in the comparison page and the reports people read.
    chinese_day = f"{today.year}年{today.month}月{today.day}日 "
    comparison = reverse("metrics:comparison", args=[campaign.pk, EXPERIMENTAL_ZH])
    for url in (comparison, comparison + "report.html", comparison + "report.md"):
        page = reviewer.get(url, headers={"accept-language": "zh-hans"}).content.decode()
        assert f"生成于 {chinese_day}" in page, url
        assert "T" not in page.split("生成于 ", 1)[1].split("，", 1)[0], url  # not an ISO timestamp


def test_a_model_named_in_a_chinese_text_is_warned_about(db, make_user):
    """Chinese puts no spaces between words: a model's name in a sentence is still found, Latin or Chinese."""
    bundle = copy.deepcopy(CHINESE_BUNDLE)
    bundle["models"][0]["name"] = "bm25-prod"
    for ranking in bundle["rankings"]:
        ranking["model"] = "bm25-prod" if ranking["model"] == ONLINE_ZH else ranking["model"]
    bundle["guidelines"] = "不要按实验模型的习惯打分。"
    bundle["queries"][0]["text"] = "用bm25-prod搜北京"
    bundle["queries"][1]["text"] = "bm25-products"  # a longer Latin word: not the name
    client = APIClient()
    client.force_authenticate(make_user("boss", "manager"))
    warnings = client.post("/api/campaigns/", bundle, format="json").json()["warnings"]
    named = [warning for warning in warnings if "names the model" in warning]
    assert named == [
        f"guidelines names the model '{EXPERIMENTAL_ZH}', which annotators would see",
        "queries[q1].text names the model 'bm25-prod', which annotators would see",
    ]
