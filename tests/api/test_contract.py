"""The API contract: tokens, campaigns from bundles and runs, the annotator's tasks and labels, review."""

import gzip
import json

import pytest
from django.core.cache import cache
from django.urls import get_resolver
from rest_framework.test import APIClient

from annotation.models import Adjudication, Campaign, Judgment, LabelRevision, Preference, Ranking
from tests.factories import gzip_bomb, ranked_ids


def _next(client, campaign):
    return client.post(f"/api/campaigns/{campaign.pk}/next-task/")


def _label_all(client, campaign) -> list[int]:
    """Label every task the client is given until none is left; the statuses of the labels."""
    statuses = []
    while (response := _next(client, campaign)).status_code == 200:
        task = response.json()
        body = {"grade": 1} if task["kind"] == "relevance" else {"verdict": "left"}
        statuses.append(client.post(f"/api/tasks/{task['id']}/judgment/", body, format="json").status_code)
    assert response.status_code == 204
    return statuses


def test_token_is_given_for_the_password_and_throttled(make_user, settings):
    make_user("ann", "annotator", password="s3cret-pass")
    client = APIClient()
    response = client.post("/api/auth/token/", {"username": "ann", "password": "s3cret-pass"}, format="json")
    assert response.status_code == 200
    token = response.json()["token"]
    client.credentials(HTTP_AUTHORIZATION=f"Token {token}")
    assert client.get("/api/campaigns/").status_code == 200
    wrong = APIClient().post("/api/auth/token/", {"username": "ann", "password": "no"}, format="json")
    assert wrong.status_code == 400
    cache.clear()
    statuses = [
        APIClient().post("/api/auth/token/", {"username": "ann", "password": "x"}, format="json").status_code
        for _ in range(12)
    ]
    assert statuses[:10] == [400] * 10 and statuses[10:] == [429, 429]


def test_session_auth_works_too(campaign, make_user):
    client = APIClient()
    client.force_login(make_user("rev", "reviewer"))
    assert client.get(f"/api/campaigns/{campaign.pk}/progress/").status_code == 200


def test_manager_creates_a_campaign_from_a_bundle(manager, bundle_data):
    bundle_data["name"] = "From the API"
    response = manager.post("/api/campaigns/", bundle_data, format="json")
    assert response.status_code == 201, response.json()
    body = response.json()
    assert body["name"] == "From the API" and {m["name"] for m in body["models"]} == {"online", "exp"}
    assert Campaign.objects.get(pk=body["id"]).relevance_tasks.exists()
    again = manager.post("/api/campaigns/", bundle_data, format="json")
    assert again.status_code == 400 and again.json()["code"] == "already_exists"


@pytest.mark.parametrize(
    ("change", "field", "code"),
    [
        (lambda b: b["rankings"][3].update(query="q9"), "rankings[3].query", "unknown_query"),
        (lambda b: b["queries"][0].pop("text"), "queries[0].text", "missing_field"),
        (lambda b: b["settings"].update(overlap="3"), "settings.overlap", "wrong_type"),
        (lambda b: b["models"].append("exp2"), "models[2]", "wrong_type"),
        (lambda b: b["documents"][0].update(title="a\x00b"), "documents[0].title", "invalid_value"),
        (lambda b: b["documents"][0].update(title="a\ud800b"), "documents[0].title", "invalid_value"),
        (lambda b: b["settings"].update(launch_min_gsb=-5), "settings.launch_min_gsb", "invalid_value"),
        (lambda b: b["settings"].update(launch_min_gsb=1e309), "settings.launch_min_gsb", "invalid_value"),
        (
            lambda b: b["settings"].update(primary_measure="banana"),
            "settings.primary_measure",
            "invalid_value",
        ),
        (lambda b: b["scale"][0].update(value=40000), "scale[0].value", "invalid_value"),
    ],
    ids=[
        "unknown query",
        "missing text",
        "string overlap",
        "model not object",
        "NUL",
        "surrogate",
        "gsb -5",
        "gsb 1e309",
        "measure",
        "smallint grade",
    ],
)
def test_a_bad_bundle_names_the_field_and_writes_nothing(manager, bundle_data, change, field, code):
    bundle_data.setdefault("scale", [{"value": 0, "label": "No"}, {"value": 1, "label": "Yes"}])
    change(bundle_data)
    body = json.dumps(bundle_data)  # as a client sends it: 1e309 as a literal, "\ud800" as an escape
    response = manager.post(
        "/api/campaigns/", body.replace("Infinity", "1e309"), content_type="application/json"
    )
    assert response.status_code == 400
    assert response.json()["field"] == field and response.json()["code"] == code
    assert not Campaign.objects.exists()


def test_malformed_json_is_a_400(manager):
    response = manager.post("/api/campaigns/", "{not json", content_type="application/json")
    assert response.status_code == 400 and response.json()["code"] == "parse_error"


@pytest.mark.parametrize(
    "body",
    [
        "[" * 100_000 + "]" * 100_000,  # past Python's recursion limit while parsing
        '{"name": ' * 40 + "1" + "}" * 40,  # parses, then is deeper than allowed
    ],
    ids=["recursion", "depth"],
)
def test_deeply_nested_json_is_a_400(manager, body):
    response = manager.post("/api/campaigns/", body, content_type="application/json")
    assert response.status_code == 400 and "nested deeper than 32" in response.json()["detail"]


def test_manager_changes_settings_and_a_deeper_pool_adds_tasks(manager, campaign):
    tasks = campaign.relevance_tasks.count()
    body = {"guidelines": "Grade for a new visitor.", "settings": {"overlap": 4, "pool_depth": 10}}
    response = manager.patch(f"/api/campaigns/{campaign.pk}/", body, format="json")
    assert response.status_code == 200
    assert (response.json()["overlap"], response.json()["guidelines"]) == (4, "Grade for a new visitor.")
    campaign.refresh_from_db()
    assert campaign.overlap == 4 and campaign.gsb_overlap == 2  # what was not named stays
    assert campaign.relevance_tasks.count() > tasks


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"settings": {"overlap": 0}}, "settings.overlap"),
        ({"settings": {"gain": "cubic"}}, "settings.gain"),
        ({"settings": {"colour": "red"}}, "settings.colour"),
        ({"settings": {"launch_alpha": 1.5}}, "settings.launch_alpha"),
        ({"settings": {"min_queries": 0}}, "settings.min_queries"),
        ({"settings": {"min_queries": 2.5}}, "settings.min_queries"),
        ({"settings": {"min_coverage": 1.2}}, "settings.min_coverage"),
        ({"settings": {"task_order": "random"}}, "settings.task_order"),
        ({"settings": {"launch_min_gsb": 2}}, "settings.launch_min_gsb"),
        ({"settings": {"primary_measure": "nDCG@0"}}, "settings.primary_measure"),
        ({"settings": {"primary_measure": "nDCG@" + "9" * 30}}, "settings.primary_measure"),  # too long
        ({"name": "renamed"}, "name"),
        ({"guidelines": 3}, "guidelines"),
        ([1, 2], "(top level)"),
    ],
)
def test_bad_setting_changes_are_400_naming_the_field(manager, campaign, body, field):
    before = manager.get(f"/api/campaigns/{campaign.pk}/").json()
    response = manager.patch(f"/api/campaigns/{campaign.pk}/", body, format="json")
    assert response.status_code == 400 and response.json()["field"] == field
    assert manager.get(f"/api/campaigns/{campaign.pk}/").json() == before


def test_a_lone_surrogate_or_1e309_in_a_change_is_a_400_and_nothing_changes(manager, campaign):
    before = manager.get(f"/api/campaigns/{campaign.pk}/").json()
    url = f"/api/campaigns/{campaign.pk}/"
    for body, field in (
        ('{"guidelines": "a\\ud800"}', "guidelines"),
        ('{"settings": {"launch_min_gsb": 1e309}}', "settings.launch_min_gsb"),
    ):
        response = manager.patch(url, body, content_type="application/json")
        assert response.status_code == 400 and response.json()["field"] == field
    assert manager.get(url).json() == before


def test_manager_sets_the_task_order(manager, campaign):
    assert manager.get(f"/api/campaigns/{campaign.pk}/").json()["task_order"] == "relevance_first"
    body = {"settings": {"task_order": "interleaved"}}
    response = manager.patch(f"/api/campaigns/{campaign.pk}/", body, format="json")
    assert response.status_code == 200 and response.json()["task_order"] == "interleaved"


def test_manager_sets_the_sufficiency_thresholds(manager, campaign):
    assert manager.get(f"/api/campaigns/{campaign.pk}/").json()["min_queries"] == 30
    body = {"settings": {"min_queries": 12, "min_coverage": 0.75}}
    response = manager.patch(f"/api/campaigns/{campaign.pk}/", body, format="json")
    assert response.status_code == 200
    assert (response.json()["min_queries"], response.json()["min_coverage"]) == (12, 0.75)
    campaign.refresh_from_db()
    assert (campaign.min_queries, campaign.min_coverage) == (12, 0.75)


def test_side_by_side_shape_is_fixed_once_handed_out(manager, annotator, campaign):
    response = manager.patch(f"/api/campaigns/{campaign.pk}/", {"settings": {"gsb_depth": 2}}, format="json")
    assert response.status_code == 200  # nobody saw a side-by-side task yet: they are built again
    assert campaign.side_by_side_tasks.exists()
    while (task := annotator.post(f"/api/campaigns/{campaign.pk}/next-task/")).status_code == 200:
        if task.json()["kind"] == "side_by_side":
            break
        annotator.post(f"/api/tasks/{task.json()['id']}/judgment/", {"grade": 1}, format="json")
    response = manager.patch(f"/api/campaigns/{campaign.pk}/", {"settings": {"gsb_depth": 3}}, format="json")
    assert response.status_code == 400 and response.json()["field"] == "settings.gsb_depth"


def test_an_oversized_body_is_a_413(manager, bundle_data, settings):
    settings.MAX_UPLOAD_BYTES = 100
    response = manager.post("/api/campaigns/", bundle_data, format="json")
    assert response.status_code == 413 and "100 bytes" in response.json()["detail"]


def _run(*lines: str) -> bytes:
    return "".join(line + "\n" for line in lines).encode()


def _upload(client, campaign, content: bytes, model="exp", name="run.trec"):
    from django.core.files.uploadedfile import SimpleUploadedFile

    upload = SimpleUploadedFile(name, content)
    return client.post(
        f"/api/campaigns/{campaign.pk}/runs/", {"model": model, "file": upload}, format="multipart"
    )


def test_manager_uploads_a_run(manager, campaign):
    content = gzip.compress(_run("q1 Q0 d3 1 9.0 x", "q1 Q0 d1 2 8.0 x", "q2 Q0 new-doc 1 5 x"))
    response = _upload(manager, campaign, content, name="run.trec.gz")
    assert response.status_code == 200, response.json()
    assert response.json() == {"model": "exp", "rankings": 3}
    assert ranked_ids(model__name="exp", query__external_id="q1") == ["d3", "d1"]


@pytest.mark.parametrize(
    ("content", "model", "field", "line"),
    [
        (_run("q1 Q0 d1 1 9.0 x", "q1 Q0 d2 2 x"), "exp", "file", 2),
        (_run("q1 Q0 d1 1 nope x"), "exp", "file", 1),
        (_run("q9 Q0 d1 1 1 x"), "exp", "run", None),
        (_run("q1 Q0 d1 1 1 x"), "nobody", "model", None),
        (b"", "exp", "file", None),
        (b"q1 Q0 \xff\xfe 1 1 x\n", "exp", "file", None),
        (_run(f"q1 Q0 {'d' * 201} 1 1 x"), "exp", "file", None),
    ],
)
def test_a_bad_run_is_a_400_naming_the_line(manager, campaign, content, model, field, line):
    before = Ranking.objects.count()
    response = _upload(manager, campaign, content, model=model)
    assert response.status_code == 400, response.content
    assert response.json()["field"] == field
    assert response.json().get("line") == line
    if line:
        assert f"run.trec:{line}:" in response.json()["detail"]
    assert Ranking.objects.count() == before


def test_an_oversized_run_is_a_413(manager, campaign, settings):
    settings.MAX_UPLOAD_BYTES = 1000
    response = _upload(manager, campaign, _run(*["q1 Q0 d1 1 1 x"] * 200))
    assert response.status_code == 413


def test_a_run_that_inflates_past_the_upload_bound_is_a_413_naming_it(manager, campaign, settings, tmp_path):
    settings.MAX_UPLOAD_BYTES = 4 << 20
    bomb = gzip_bomb(tmp_path / "bomb.run.gz", 200 << 20).read_bytes()
    before = Ranking.objects.count()
    response = _upload(manager, campaign, bomb, name="bomb.run.gz")
    assert response.status_code == 413
    assert response.json() == {
        "code": "too_large",
        "detail": "bomb.run.gz: file: inflates to more than 4194304 bytes",
        "field": "file",
    }
    assert Ranking.objects.count() == before


def test_annotator_labels_a_relevance_task_then_changes_it(annotator, campaign):
    task = _next(annotator, campaign).json()
    assert task["kind"] == "relevance" and {"document", "scale", "query"} <= set(task)
    url = f"/api/tasks/{task['id']}/judgment/"
    first = annotator.post(url, {"grade": 2, "comment": "ok"}, format="json")
    assert first.status_code == 201 and first.json()["grade"] == 2
    second = annotator.post(url, {"grade": 3}, format="json")
    assert second.status_code == 200 and second.json()["grade"] == 3
    assert Judgment.objects.get().grade == 3
    history = LabelRevision.objects.order_by("pk").values_list("old_value", "new_value")
    assert list(history) == [("", "2"), ("2", "3")]
    assert annotator.get(f"/api/tasks/{task['id']}/").json()["current"]["grade"] == 3


def test_side_by_side_shows_two_lists_and_no_model(client_for, bundle_data):
    bundle_data["models"] = [
        {"name": "prod-ranker-secret", "role": "online"},
        {"name": "exp-ranker-secret", "role": "experimental"},
    ]
    for ranking in bundle_data["rankings"]:
        ranking["model"] = {"online": "prod-ranker-secret", "exp": "exp-ranker-secret"}[ranking["model"]]
    from annotation.bundle import parse_bundle
    from annotation.services.campaigns import campaign_import

    campaign = campaign_import(bundle=parse_bundle(bundle_data, "b.json"))
    annotator = client_for("ann", "annotator")
    seen = []
    while (response := _next(annotator, campaign)).status_code == 200:
        task = response.json()
        seen.append(task["kind"])
        text = json.dumps(task)
        assert "secret" not in text and "online" not in text and "experimental" not in text
        if task["kind"] == "side_by_side":
            assert isinstance(task["left"], list) and isinstance(task["right"], list) and task["left"]
            url = f"/api/tasks/{task['id']}/judgment/"
            assert annotator.post(url, {"verdict": "left"}, format="json").status_code == 201
            changed = annotator.post(url, {"verdict": "same", "comment": "hm"}, format="json")
            assert changed.status_code == 200 and changed.json()["verdict"] == "same"
        else:
            annotator.post(f"/api/tasks/{task['id']}/judgment/", {"grade": 0}, format="json")
    assert response.status_code == 204
    assert "side_by_side" in seen and Preference.objects.filter(verdict="same").exists()
    assert "secret" not in json.dumps(annotator.get("/api/tasks/").json())
    assert annotator.get(f"/api/campaigns/{campaign.pk}/").json().get("models") is None


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"grade": 7}, "grade"),
        ({"grade": -1}, "grade"),
        ({"grade": "2"}, "grade"),
        ({"grade": 2.5}, "grade"),
        ({"grade": True}, "grade"),
        ({"grade": None}, "grade"),
        ({}, "grade"),
        ({"verdict": "left"}, "grade"),
        ({"grade": 1, "verdict": "left"}, "verdict"),
        ({"grade": 1, "comment": 5}, "comment"),
        ({"grade": 1, "comment": "x" * 5001}, "comment"),
        ({"grade": 1, "seconds_spent": -3}, "seconds_spent"),
        ({"grade": 1, "strength": 3}, "strength"),
        ([1, 2], ""),
    ],
)
def test_bad_labels_are_400_naming_the_field(annotator, campaign, body, field):
    task = _next(annotator, campaign).json()
    response = annotator.post(f"/api/tasks/{task['id']}/judgment/", body, format="json")
    assert response.status_code == 400, response.json()
    assert response.json().get("field", "") == field
    assert not Judgment.objects.exists()


def test_bad_verdicts_are_400(annotator, campaign):
    while (task := _next(annotator, campaign).json())["kind"] == "relevance":
        annotator.post(f"/api/tasks/{task['id']}/judgment/", {"grade": 1}, format="json")
    url = f"/api/tasks/{task['id']}/judgment/"
    for body, field in [
        ({"verdict": "better"}, "verdict"),
        ({"verdict": "left", "strength": 1}, "strength"),
        ({"grade": 1}, "verdict"),
    ]:
        response = annotator.post(url, body, format="json")
        assert response.status_code == 400 and response.json()["field"] == field, response.json()


def test_a_field_of_the_other_kind_is_a_400_naming_it(annotator, reviewer, campaign):
    """The label service's kind check, as the API answers it; a final label's too."""
    task = _next(annotator, campaign).json()
    url = f"/api/tasks/{task['id']}/judgment/"
    for body, detail in [
        ({"verdict": "left"}, "grade: is required for this kind of task."),
        ({"grade": 1, "strength": 1}, "strength: is not for this kind of task."),
    ]:
        response = annotator.post(url, body, format="json")
        assert response.status_code == 400 and response.json()["detail"] == detail, response.json()
    for kind, task_pk, field in [
        ("relevance", campaign.relevance_tasks.first().pk, "grade"),
        ("side-by-side", campaign.side_by_side_tasks.first().pk, "verdict"),
    ]:
        url = f"/api/review/{kind}/{task_pk}/adjudication/"
        response = reviewer.post(url, {"reason": "why"}, format="json")
        assert response.status_code == 400 and response.json() == {
            "code": "invalid_label",
            "detail": f"{field}: is required for this kind of task.",
            "field": field,
        }
    assert not Judgment.objects.exists() and not Adjudication.objects.exists()


def test_nothing_left_is_204_and_every_label_is_201(annotator, campaign):
    statuses = _label_all(annotator, campaign)
    assert statuses and set(statuses) == {201}
    assert _next(annotator, campaign).status_code == 204


def test_unknown_and_other_annotators_ids_are_404(client_for, campaign):
    mine, other = client_for("a1", "annotator"), client_for("a2", "annotator")
    task = _next(mine, campaign).json()
    assert other.get(f"/api/tasks/{task['id']}/").status_code == 404
    assert other.post(f"/api/tasks/{task['id']}/judgment/", {"grade": 1}, format="json").status_code == 404
    assert mine.post("/api/tasks/999999/judgment/", {"grade": 1}, format="json").status_code == 404
    assert mine.post("/api/campaigns/999999/next-task/").status_code == 404
    assert other.get("/api/tasks/").json()["count"] == 0


def test_skip_then_labelling_is_a_409(annotator, campaign):
    task = _next(annotator, campaign).json()
    skipped = annotator.post(f"/api/tasks/{task['id']}/skip/", {"reason": "cant_load"}, format="json")
    assert skipped.status_code == 200 and skipped.json()["status"] == "skipped"
    response = annotator.post(f"/api/tasks/{task['id']}/judgment/", {"grade": 1}, format="json")
    assert response.status_code == 409 and response.json()["code"] == "skipped"
    bad = annotator.post(f"/api/tasks/{task['id']}/skip/", {"reason": "bored"}, format="json")
    assert bad.status_code == 400 and bad.json()["field"] == "reason"


def test_reviewer_reads_labels_adjudicates_and_sees_history(annotator, reviewer, campaign):
    task = _next(annotator, campaign).json()
    annotator.post(f"/api/tasks/{task['id']}/judgment/", {"grade": 1}, format="json")
    annotator.post(f"/api/tasks/{task['id']}/judgment/", {"grade": 2}, format="json")
    task_pk = Judgment.objects.get().task_id
    review = reviewer.get(f"/api/review/relevance/{task_pk}/").json()
    assert [label["username"] for label in review["labels"]] == ["ann"]
    url = f"/api/review/relevance/{task_pk}/adjudication/"
    assert reviewer.post(url, {"grade": 3}, format="json").json()["field"] == "reason"
    assert reviewer.post(url, {"grade": 9, "reason": "x"}, format="json").json()["field"] == "grade"
    settled = reviewer.post(url, {"grade": 3, "reason": "clearly perfect"}, format="json")
    assert settled.status_code == 200 and settled.json()["adjudication"]["value"] == "3"
    history = reviewer.get(f"/api/review/relevance/{task_pk}/history/").json()
    rows = [(row["changed_by"], row["old_value"], row["new_value"]) for row in history["results"]]
    assert rows == [("rev", "", "3"), ("ann", "1", "2"), ("ann", "", "1")]
    assert reviewer.get(f"/api/review/nonsense/{task_pk}/").status_code == 404
    queue = reviewer.get(f"/api/campaigns/{campaign.pk}/review-queue/")
    assert queue.status_code == 200 and "results" in queue.json()


def test_exports(annotator, reviewer, campaign):
    _label_all(annotator, campaign)
    jsonl = reviewer.get(f"/api/campaigns/{campaign.pk}/export/judgments/")
    assert jsonl.status_code == 200 and jsonl["Content-Type"].startswith("application/x-ndjson")
    rows = [json.loads(line) for line in b"".join(jsonl.streaming_content).decode().splitlines()]
    assert {row["annotator"] for row in rows} == {"ann"} and any("verdict" in row for row in rows)
    qrels = reviewer.get(f"/api/campaigns/{campaign.pk}/export/qrels/", HTTP_ACCEPT="text/plain")
    assert qrels.status_code == 200
    assert all(len(line.split()) == 4 for line in qrels.content.decode().splitlines())
    url = f"/api/campaigns/{campaign.pk}/export/qrels/?integer=round"
    rounded = reviewer.get(url, HTTP_ACCEPT="text/plain").content.decode().splitlines()
    assert [line.split()[:3] for line in rounded] == [
        line.split()[:3] for line in qrels.content.decode().splitlines()
    ]
    assert all(line.split()[3].lstrip("-").isdigit() for line in rounded)
    bad = reviewer.get(f"/api/campaigns/{campaign.pk}/export/qrels/?integer=ceil")
    assert bad.status_code == 400 and bad.json()["field"] == "integer"


def test_lists_are_paginated_and_filtered(reviewer, campaign, bundle_data, settings):
    assert reviewer.get("/api/campaigns/?name=sma").json()["count"] == 1
    assert reviewer.get("/api/campaigns/?name=nothing").json()["count"] == 0
    models = reviewer.get(f"/api/campaigns/{campaign.pk}/models/?role=online").json()
    assert [m["name"] for m in models["results"]] == ["online"]
    assert reviewer.get(f"/api/campaigns/{campaign.pk}/models/?role=boss").status_code == 400
    queries = reviewer.get(f"/api/campaigns/{campaign.pk}/queries/?segment=tail").json()
    assert [q["id"] for q in queries["results"]] == ["q2"]
    page = reviewer.get(f"/api/campaigns/{campaign.pk}/queries/?page=1").json()
    assert page["count"] == 2 and page["next"] is None
    assert reviewer.get(f"/api/campaigns/{campaign.pk}/queries/?page=9").status_code == 404


def test_a_campaign_filter_past_the_id_range_is_a_400(annotator):
    response = annotator.get("/api/tasks/", {"campaign": 2**64})
    assert response.status_code == 400 and response.json()["field"] == "campaign"


def test_a_stale_client_gets_409_with_the_current_answer(annotator, campaign):
    task = annotator.post(f"/api/campaigns/{campaign.pk}/next-task/").json()
    assert task["version"] == "new"
    url = f"/api/tasks/{task['id']}/judgment/"
    assert annotator.post(url, {"grade": 2, "version": "new"}, format="json").status_code == 201
    stale = annotator.post(url, {"grade": 0, "version": "new"}, format="json")
    assert (
        stale.status_code == 409 and stale.json()["code"] == "stale" and "now is 2" in stale.json()["detail"]
    )
    current = annotator.get(f"/api/tasks/{task['id']}/").json()
    assert current["current"]["grade"] == 2
    assert annotator.post(url, {"grade": 0, "version": current["version"]}, format="json").status_code == 200
    assert annotator.post(url, {"grade": 1}, format="json").status_code == 200  # no version: no check


def test_annotators_never_read_the_description(annotator, reviewer, campaign):
    Campaign.objects.filter(pk=campaign.pk).update(description="exp against online")
    assert "description" not in annotator.get("/api/campaigns/").json()["results"][0]
    assert "description" not in annotator.get(f"/api/campaigns/{campaign.pk}/").json()
    assert reviewer.get("/api/campaigns/").json()["results"][0]["description"] == "exp against online"
    assert reviewer.get(f"/api/campaigns/{campaign.pk}/").json()["description"] == "exp against online"


def test_model_names_in_annotator_visible_text_are_warned_about(manager, bundle_data):
    bundle_data["guidelines"] = "Prefer what EXP shows."
    bundle_data["queries"][0]["text"] = "online banking"
    response = manager.post("/api/campaigns/", bundle_data, format="json")
    assert response.status_code == 201
    assert response.json()["warnings"][1:] == [
        "cut-off 10 is deeper than pool_depth 3: documents below the pool are unjudged",
        "guidelines names the model 'exp', which annotators would see",
        "queries[q1].text names the model 'online', which annotators would see",
    ]
    url = f"/api/campaigns/{response.json()['id']}/"
    changed = manager.patch(url, {"guidelines": "Grade the page."}, format="json").json()
    assert changed["warnings"] == []
    changed = manager.patch(url, {"guidelines": "Is exp-like better?"}, format="json").json()
    assert changed["warnings"] == ["guidelines names the model 'exp', which annotators would see"]
    scale = [{"value": 0, "label": "Bad"}, {"value": 1, "label": "Good", "description": "as online has it"}]
    changed = manager.patch(url, {"guidelines": "", "scale": scale}, format="json").json()
    assert changed["warnings"] == [
        "scale[1].description names the model 'online', which annotators would see"
    ]


def test_every_text_an_annotator_sees_is_scanned_for_model_names(manager, bundle_data):
    documents = bundle_data["documents"]
    documents[0]["title"] = "exp picks: the best of the web"
    documents[1]["title"], documents[2]["body"] = "Exp vs rivals", "from https://online.example/"
    bundle_data["scale"] = [{"value": 0, "label": "Off"}, {"value": 1, "label": "ONLINE-grade"}]
    bundle_data["settings"]["cutoffs"] = [3]
    response = manager.post("/api/campaigns/", bundle_data, format="json")
    assert response.json()["warnings"][1:] == [  # after "fewer than min_queries"
        "scale[1].label names the model 'online', which annotators would see",
        f"2 documents' titles name the model 'exp', which annotators would see "
        f"(e.g. documents[{documents[0]['id']}].title)",
        f"documents[{documents[2]['id']}].body names the model 'online', which annotators would see",
    ]


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"grade": 1, "seconds_spent": "5"}, "seconds_spent"),
        ({"grade": 1, "seconds_spent": True}, "seconds_spent"),
        ({"grade": 1, "strength": 2}, "strength"),
    ],
)
def test_label_fields_are_strict(annotator, campaign, body, field):
    task = annotator.post(f"/api/campaigns/{campaign.pk}/next-task/").json()
    response = annotator.post(f"/api/tasks/{task['id']}/judgment/", body, format="json")
    assert response.status_code == 400 and response.json()["field"] == field
    assert not Judgment.objects.exists()


def test_a_label_with_next_answers_with_the_next_task_until_none_is_left(annotator, campaign):
    """One request per label: `?next=true` leases and shows the next task, null once nothing is left."""
    task = _next(annotator, campaign).json()
    seen = [task["id"]]
    while task is not None:
        body = {"grade": 2} if task["kind"] == "relevance" else {"verdict": "same"}
        response = annotator.post(f"/api/tasks/{task['id']}/judgment/?next=true", body, format="json")
        assert response.status_code == 201, response.content
        task = response.json()["next"]
        if task is not None:
            assert (
                task["id"] not in seen
                and task["status"] == "leased"
                and task["progress"]["done"] == len(seen)
            )
            seen.append(task["id"])
    assert Judgment.objects.count() + Preference.objects.count() == len(seen)
    assert _next(annotator, campaign).status_code == 204
    plain = annotator.post(f"/api/tasks/{seen[0]}/judgment/", {"grade": 0}, format="json")
    assert plain.status_code == 200 and plain.json()["next"] is None  # not asked for: no task leased


def test_a_label_and_the_next_task_are_the_first_routes_tried():
    """Django tries the URL patterns in order, each a few microseconds; every label asks for these two."""
    first = get_resolver().url_patterns[0]
    assert str(first.pattern) == "api/"
    assert [pattern.name for pattern in first.url_patterns[:2]] == ["judgment", "next_task"]
