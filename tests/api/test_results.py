"""The launch decision and the launch report over the API, in every format of the download, for a token."""

import csv
import io

import pytest

from tests.factories import worked_campaign

REPORT_TYPES = {"json": "application/json", "html": "text/html", "csv": "text/csv", "md": "text/markdown"}
FORMATS = [*REPORT_TYPES, "summary.csv"]


@pytest.fixture
def worked(db):
    return worked_campaign()


def test_the_decision_of_a_finished_campaign(worked, reviewer):
    decision = reviewer.get(f"/api/campaigns/{worked.pk}/decision/")
    assert decision.status_code == 200, decision.content
    body = decision.json()
    report = reviewer.get(f"/api/campaigns/{worked.pk}/report/").json()
    assert body["status"] == report["decision"] == "no_launch"
    assert body["reasons"] == report["reasons"] and body["headline"] == report["headline"]
    assert body["campaign"] == worked.pk and body["model"] == "exp"
    assert body["fingerprint"] == report["fingerprint"] and body["coverage"] == report["coverage"]
    assert "provisional" not in body


def test_a_campaign_without_labels_is_collecting_without_a_provisional_decision(campaign, reviewer):
    body = reviewer.get(f"/api/campaigns/{campaign.pk}/decision/").json()
    assert body["status"] == "collecting" and body["reasons"]
    assert "provisional" not in body  # nobody labelled yet
    assert body["coverage"]["labels_outstanding"] > 0


def test_the_decision_names_an_unknown_model(worked, manager):
    response = manager.get(f"/api/campaigns/{worked.pk}/decision/?model=nope")
    assert response.status_code == 400 and response.json()["field"] == "model"


def _check(format: str, response) -> None:
    assert response.status_code == 200, response.content
    assert response["Content-Type"] == f"{REPORT_TYPES[format.removeprefix('summary.')]}; charset=utf-8"
    text = response.content.decode()
    if format == "json":
        assert response.json()["decision"] == "no_launch"
    elif format == "html":
        assert text.startswith("<!doctype html>") and "Do not launch" in text
    elif format == "summary.csv":
        rows = list(csv.reader(io.StringIO(text)))
        assert rows[0] == ["field", "value"] and ["decision", "no_launch"] in rows
    elif format == "csv":
        assert next(csv.reader(io.StringIO(text)))[:3] == ["model", "role", "query"]
    else:
        assert text.startswith("# Launch review: Worked example") and "Do not launch" in text
    if format != "json":
        assert response["Content-Disposition"].startswith("attachment")


@pytest.mark.parametrize("format", FORMATS)
def test_a_token_reads_the_report_in_every_format_by_query(worked, reviewer, format):
    _check(format, reviewer.get(f"/api/campaigns/{worked.pk}/report/?format={format}"))


@pytest.mark.parametrize("format", REPORT_TYPES)
def test_a_token_reads_the_report_in_every_format_by_accept(worked, manager, format):
    _check(format, manager.get(f"/api/campaigns/{worked.pk}/report/", HTTP_ACCEPT=REPORT_TYPES[format]))


def test_json_by_default_and_for_any_type(worked, reviewer):
    _check("json", reviewer.get(f"/api/campaigns/{worked.pk}/report/", HTTP_ACCEPT="*/*"))


@pytest.mark.parametrize(
    ("query", "accept"),
    [("?format=pdf", "*/*"), ("", "application/pdf"), ("?format=html", "application/json")],  # the last: both
)
def test_a_format_the_report_has_not_is_406_in_json(worked, reviewer, query, accept):
    response = reviewer.get(f"/api/campaigns/{worked.pk}/report/{query}", HTTP_ACCEPT=accept)
    assert response.status_code == 406 and response["Content-Type"] == "application/json"
    assert response.json()["code"] == "not_acceptable"


def test_an_error_asked_as_html_is_json(reviewer):
    response = reviewer.get("/api/campaigns/999999/report/", HTTP_ACCEPT="text/html")
    assert response.status_code == 404 and response["Content-Type"] == "application/json"


@pytest.mark.parametrize(
    ("path", "accept"),
    [("judgments", "application/x-ndjson"), ("judgments", "text/plain"), ("qrels", "text/plain")],
)
def test_an_export_is_text_and_not_json(worked, reviewer, path, accept):
    url = f"/api/campaigns/{worked.pk}/export/{path}/"
    assert reviewer.get(url).status_code == 200
    response = reviewer.get(url, HTTP_ACCEPT=accept)
    assert response.status_code == 200 and response["Content-Type"] == f"{accept}; charset=utf-8"
    assert reviewer.get(f"{url}?format=json").status_code == 406
    assert reviewer.get(url, HTTP_ACCEPT="application/json").status_code == 406


@pytest.mark.parametrize("path", ["decision/", "report/?format=md"])
def test_a_superuser_may_and_an_annotator_may_not(worked, client_for, django_user_model, path):
    root = client_for("root")
    django_user_model.objects.filter(pk=root.user.pk).update(is_superuser=True)
    assert root.get(f"/api/campaigns/{worked.pk}/{path}").status_code == 200
    assert client_for("annie", "annotator").get(f"/api/campaigns/{worked.pk}/{path}").status_code == 403


@pytest.mark.parametrize("format", ["html", "csv", "summary.csv", "md"])
def test_the_report_as_a_file_named_in_the_path(worked, reviewer, format):
    _check(format, reviewer.get(f"/api/campaigns/{worked.pk}/report/{format}/"))


@pytest.mark.parametrize("format", ["json", "pdf"])
def test_a_file_the_report_has_not_is_406(worked, reviewer, format):
    assert reviewer.get(f"/api/campaigns/{worked.pk}/report/{format}/").status_code == 406
