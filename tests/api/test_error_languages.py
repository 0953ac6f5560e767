"""A bad file's error in the reader's language: the API's detail follows Accept-Language, still naming the
file, the line and the field, its code English; a command line (no language active) reads English."""

import copy
import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.utils import translation

from annotation.bundle import load_run, parse_judgment_lines
from annotation.errors import InputError
from tests.factories import SMALL_BUNDLE

CHINESE = {"HTTP_ACCEPT_LANGUAGE": "zh-Hans"}


def test_a_bad_run_line_is_said_in_chinese_with_its_file_and_line(manager, campaign):
    run = SimpleUploadedFile("run.trec", b"q1 Q0 d1 1 9.0 x\nq1 Q0 d2 2 x\n")
    response = manager.post(
        f"/api/campaigns/{campaign.pk}/runs/", {"model": "exp", "file": run}, format="multipart", **CHINESE
    )
    assert response.status_code == 400
    assert response.json() == {
        "code": "malformed",
        "detail": "run.trec:2: file: 应至少有 6 个字段，实际为 5 个",
        "field": "file",
        "line": 2,
    }


def test_a_run_whose_score_is_no_number_names_the_column_in_chinese(manager, campaign):
    run = SimpleUploadedFile("run.trec", b"q1 Q0 d1 1 nope x\n")
    response = manager.post(
        f"/api/campaigns/{campaign.pk}/runs/", {"model": "exp", "file": run}, format="multipart", **CHINESE
    )
    assert response.json()["detail"] == "run.trec:1: file: 分数 'nope' 不是数字"


def test_a_bad_bundle_field_is_said_in_chinese_with_its_path(manager):
    data = copy.deepcopy(SMALL_BUNDLE)
    data["queries"][0]["weight"] = True
    response = manager.post("/api/campaigns/", data, format="json", **CHINESE)
    assert response.status_code == 400
    body = response.json()
    assert body["code"] == "wrong_type" and body["field"] == "queries[0].weight"
    assert body["detail"] == "bundle: queries[0].weight: 必须是整数或数字，而不是布尔值", body


def test_a_bad_judgment_line_is_said_in_chinese_with_its_line_and_field(manager, campaign):
    lines = [
        {"annotator": "imp1", "query": "q1", "document": "d1", "grade": 2},
        {"annotator": "imp1", "query": "q1", "model": "exp", "verdict": "better"},
    ]
    body = "".join(json.dumps(line) + "\n" for line in lines).encode()
    english, chinese = (
        manager.generic(
            "POST",
            f"/api/campaigns/{campaign.pk}/judgments/",
            body,
            content_type="application/x-ndjson",
            HTTP_ACCEPT_LANGUAGE=language,
        ).json()
        for language in ("en", "zh-Hans")
    )
    assert english["code"] == chinese["code"] == "invalid_value"
    assert english["line"] == chinese["line"] == 2 and english["field"] == chinese["field"] == "verdict"
    assert english["detail"] == "request:2: verdict: must be 'good', 'same' or 'bad'"
    assert chinese["detail"] == "request:2: verdict: 必须是 'good'（好）、'same'（同）或 'bad'（差）"


def test_an_error_is_worded_when_shown_not_when_the_file_was_read(tmp_path):
    """A run is read on a thread of its own, where no language is active: the words wait for the page."""
    bad = tmp_path / "exp.run"
    bad.write_text("q1 Q0 d1 1 9.0 x\nq1 Q0 d1 2 8.0 x\n")
    with pytest.raises(InputError) as caught:
        load_run(str(bad), "exp.run")
    error = caught.value
    assert str(error) == "exp.run:2: document 'd1' appears twice for query 'q1' (also on line 1)"
    with translation.override("zh-hans"):
        assert error.for_page() == "exp.run，第 2 行：文档 'd1' 在查询 'q1' 下出现了两次（另见第 1 行）"
    assert str(error) == "exp.run:2: document 'd1' appears twice for query 'q1' (also on line 1)"


def test_json_that_is_no_json_is_said_in_chinese_the_decoders_own_words_kept():
    with pytest.raises(InputError) as caught:
        parse_judgment_lines(['{"grade": NaN}'], "labels.jsonl", scale_values={0, 1})
    with translation.override("zh-hans"):
        assert caught.value.for_page() == "labels.jsonl，第 1 行：JSON 格式错误：NaN 不是 JSON 允许的数字"
    with pytest.raises(InputError) as caught:
        parse_judgment_lines(['{"grade": 1'], "labels.jsonl", scale_values={0, 1})
    with translation.override("zh-hans"):
        assert caught.value.for_page().startswith("labels.jsonl，第 1 行：JSON 格式错误：Expecting")


@pytest.mark.parametrize(
    ("settings", "field", "chinese"),
    [
        ({"primary_measure": "nDCG@0"}, "settings.primary_measure", "指标 'nDCG@0'：截断位置必须至少为 1"),
        ({"guardrails": "CTR@10 >= x"}, "settings.guardrails", "'x' 不是数字"),
        ({"behaviour_grades": "click=often"}, "settings.behaviour_grades", "'click=often'：'often' 不是数字"),
    ],
)
def test_a_bad_setting_is_said_in_chinese_naming_its_field(manager, campaign, settings, field, chinese):
    url = f"/api/campaigns/{campaign.pk}/"
    response = manager.patch(url, {"settings": settings}, format="json", **CHINESE)
    assert response.status_code == 400
    assert response.json() == {
        "code": "invalid_value",
        "detail": f"request: {field}: {chinese}",
        "field": field,
    }
    english = manager.patch(url, {"settings": settings}, format="json", HTTP_ACCEPT_LANGUAGE="en").json()
    assert english["detail"].isascii() and english["field"] == field


def test_a_label_for_an_unknown_query_is_said_in_chinese(manager, campaign):
    body = json.dumps({"annotator": "imp1", "query": "q9", "document": "d1", "grade": 2}).encode()
    response = manager.generic(
        "POST",
        f"/api/campaigns/{campaign.pk}/judgments/",
        body,
        content_type="application/x-ndjson",
        **CHINESE,
    )
    assert response.json() == {
        "code": "unknown_query",
        "detail": "request:1: query: 未知查询 'q9'",
        "field": "query",
        "line": 1,
    }
