import gzip
import io
import json
import re
import threading

import numpy as np
import pytest
from django.core.management import CommandError, call_command
from django.db import IntegrityError, OperationalError, connection, connections, transaction
from django.urls import reverse

from annotation.bundle import parse_bundle
from annotation.bundle.reading import read_text_file
from annotation.errors import InputError, InputErrorCode
from annotation.models import (
    Campaign,
    Document,
    Judgment,
    Preference,
    Query,
    Ranking,
    RankingModel,
    RelevanceTask,
    SideBySideTask,
)
from annotation.services.campaigns import campaign_import, campaign_pool_tasks
from plumbing.bulk import columns_insert, rows_insert
from tests.factories import gzip_bomb, peak_memory, ranked_ids


def test_pooling_judges_shared_pairs_once_and_respects_depth(campaign):
    pairs = set(
        RelevanceTask.objects.filter(campaign=campaign).values_list(
            "query__external_id", "document__external_id"
        )
    )
    # q1: online top 3 = d1 d2 d3, exp top 3 = d2 d1 d5 -> {d1, d2, d3, d5}; d4 is below the pool depth.
    assert {d for q, d in pairs if q == "q1"} == {"d1", "d2", "d3", "d5"}
    assert {d for q, d in pairs if q == "q2"} == {"d6", "d7", "d8", "d1"}
    assert len(pairs) == RelevanceTask.objects.filter(campaign=campaign).count()


def test_side_by_side_tasks_mark_identical_lists(campaign):
    tasks = {
        t.query.external_id: t
        for t in SideBySideTask.objects.filter(campaign=campaign).select_related("query")
    }
    assert set(tasks) == {"q1", "q2"}
    assert tasks["q2"].lists_identical  # top-2 d6 d7 in both
    assert not tasks["q1"].lists_identical


def test_pooling_is_idempotent(campaign):
    assert campaign_pool_tasks(campaign=campaign) == (0, 0)


def test_import_keeps_settings_scale_and_rankings(campaign):
    assert campaign.overlap == 2 and campaign.pool_depth == 3 and campaign.gain == "exponential"
    assert campaign.cutoffs == [1, 3, 5, 10]
    assert [g["value"] for g in campaign.scale] == [0, 1, 2, 3]
    assert campaign.guidelines.splitlines() == ["Grade each page.", "Skip what you cannot read."]
    assert ranked_ids(model__name="exp", query__external_id="q1") == ["d2", "d1", "d5", "d3"]
    assert Query.objects.get(campaign=campaign, external_id="q2").description == "a recipe"


def test_negative_grades_are_allowed_on_the_scale(db, bundle_data):
    bundle_data["scale"] = [
        {"value": -1, "label": "Unwanted", "description": "relevant but must not be shown"},
        {"value": 0, "label": "Irrelevant"},
        {"value": 1, "label": "Relevant"},
    ]
    campaign = campaign_import(bundle=parse_bundle(bundle_data, "b.json"))
    assert campaign.grade_values == [-1, 0, 1]


@pytest.mark.parametrize(
    ("mutate", "code", "field"),
    [
        (
            lambda b: b["queries"].append({"id": "q1", "text": "again"}),
            InputErrorCode.DUPLICATE_ID,
            "queries[2].id",
        ),
        (lambda b: b["rankings"][0].update(query="nope"), InputErrorCode.UNKNOWN_QUERY, "rankings[0].query"),
        (lambda b: b["rankings"][1].update(model="nope"), InputErrorCode.UNKNOWN_MODEL, "rankings[1].model"),
        (
            lambda b: b["rankings"][0]["documents"].append("zz"),
            InputErrorCode.UNKNOWN_DOCUMENT,
            "rankings[0].documents[4]",
        ),
        (lambda b: b["settings"].update(overlap="3"), InputErrorCode.WRONG_TYPE, "settings.overlap"),
        (lambda b: b["settings"].update(gain="cubic"), InputErrorCode.INVALID_VALUE, "settings.gain"),
        (
            lambda b: b["models"].append({"name": "other", "role": "online"}),
            InputErrorCode.INVALID_VALUE,
            "models",
        ),
        (lambda b: b.pop("queries"), InputErrorCode.MISSING_FIELD, "queries"),
        (lambda b: b["queries"][0].pop("text"), InputErrorCode.MISSING_FIELD, "queries[0].text"),
        (
            lambda b: b.update(scale=[{"value": 0, "label": "a"}, {"value": 0, "label": "b"}]),
            InputErrorCode.DUPLICATE_ID,
            "scale[1].value",
        ),
    ],
)
def test_bad_bundles_name_the_field(bundle_data, mutate, code, field):
    mutate(bundle_data)
    with pytest.raises(InputError) as caught:
        parse_bundle(bundle_data, "bad.json")
    assert caught.value.code == code
    assert caught.value.field == field
    assert str(caught.value).startswith(f"bad.json: {field}: ")


@pytest.mark.parametrize(
    "name", ["team/exp-v2", ".", "..", "a\r\nb", 'a"b', "=HYPERLINK(1)", " exp", "exp v2"]
)
def test_model_names_that_would_break_addresses_or_file_names_are_refused(bundle_data, name):
    bundle_data["models"][1]["name"] = name
    with pytest.raises(InputError, match=r"models\[1\]\.name: must start with a letter or digit"):
        parse_bundle(bundle_data, "bad.json")


def test_a_model_name_of_the_safe_set_reaches_every_page_and_download(db, bundle_data, client, make_user):
    name = "team:exp+2@v1.0_b"
    bundle_data["models"][1]["name"] = name
    for ranking in bundle_data["rankings"]:
        ranking["model"] = name if ranking["model"] == "exp" else ranking["model"]
    campaign = campaign_import(bundle=parse_bundle(bundle_data, "ok.json"))
    client.force_login(make_user("rev", "reviewer"))
    assert client.get(reverse("metrics:campaign_overview", args=[campaign.pk])).status_code == 200
    assert client.get(reverse("metrics:comparison", args=[campaign.pk, name])).status_code == 200
    response = client.get(reverse("metrics:launch_report", args=[campaign.pk, name, "csv"]))
    assert response.status_code == 200
    assert (
        response["Content-Disposition"]
        == f'attachment; filename="launch-report-campaign-{campaign.pk}-{name}.csv"'
    )


def write_bundle(tmp_path, data, name="bundle.json"):
    path = tmp_path / name
    path.write_text(json.dumps(data, indent=1))
    return path


def test_import_campaign_command_prints_id(db, tmp_path, bundle_data, capsys):
    call_command("import_campaign", str(write_bundle(tmp_path, bundle_data)))
    campaign = Campaign.objects.get(name="Small")
    assert capsys.readouterr().out.strip() == str(campaign.pk)


def test_malformed_json_names_file_and_line(db, tmp_path):
    path = tmp_path / "broken.json"
    path.write_text('{"name": "x",\n "models": [}\n')
    with pytest.raises(CommandError, match=r"broken\.json:2: malformed JSON"):
        call_command("import_campaign", str(path))
    assert not Campaign.objects.exists()


def _text(bundle: dict, **changes) -> str:
    return json.dumps({**bundle, **changes}, ensure_ascii=False)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (lambda bundle: gzip.compress(_text(bundle).encode())[:-12], r"b\.json: not a valid gzip file"),
        (lambda bundle: b"\x1f\x8b" + b"junk" * 10, r"b\.json: not a valid gzip file"),
        (
            lambda bundle: ("[" * 100_000 + "]" * 100_000).encode(),
            r"b\.json: malformed JSON: nested too deeply",
        ),
        (lambda bundle: _text(bundle, name="Sm\x00all").encode(), r"name: must not contain NUL"),
        (
            lambda bundle: _text(bundle).replace("Small", "Sm\\ud800all").encode(),
            r"name: is not valid Unicode",
        ),
        (lambda bundle: _text(bundle, name="Sm\xffall").encode("latin-1"), r"b\.json: not UTF-8 text"),
        (
            lambda bundle: _text(
                bundle, scale=[{"value": 0, "label": "no"}, {"value": 40000, "label": "yes"}]
            ).encode(),
            r"scale\[1\]\.value: must be between -100 and 100",
        ),
    ],
    ids=["truncated-gzip", "corrupt-gzip", "deep-nesting", "nul", "lone-surrogate", "latin-1", "smallint"],
)
def test_unreadable_bundles_are_one_line_errors(db, tmp_path, bundle_data, content, message):
    path = tmp_path / "b.json"
    path.write_bytes(content(bundle_data))
    with pytest.raises(CommandError, match=message):
        call_command("import_campaign", str(path))
    assert not Campaign.objects.exists()


def test_a_gzip_bomb_bundle_is_refused_as_it_inflates_in_bounded_memory(tmp_path):
    bomb = gzip_bomb(tmp_path / "b.json.gz", 200 << 20)
    error, peak = peak_memory(lambda: read_text_file(bomb, "b.json.gz", max_bytes=4 << 20))
    assert isinstance(error, InputError) and error.code == InputErrorCode.TOO_LARGE
    assert str(error) == "b.json.gz: inflates to more than 4194304 bytes"
    assert peak < 8 << 20  # the bound and a mebibyte read past it, not the 200 MiB inflated
    plain = tmp_path / "b.json"
    plain.write_text('{"name": "x"}')
    assert read_text_file(plain, "b.json", max_bytes=13) == '{"name": "x"}'
    with pytest.raises(InputError, match=r"^b\.json: is more than 12 bytes$"):
        read_text_file(plain, "b.json", max_bytes=12)


def test_failed_import_writes_nothing(db, tmp_path, bundle_data):
    # The second campaign fails inside the transaction (its name is taken); nothing of it may remain.
    call_command("import_campaign", str(write_bundle(tmp_path, bundle_data)))
    counts = [m.objects.count() for m in (Campaign, Query, Document, Ranking, RelevanceTask)]
    again = write_bundle(tmp_path, bundle_data, "again.json")
    with pytest.raises(CommandError, match=f"^{again}: name: a campaign named 'Small' already exists$"):
        call_command("import_campaign", str(again))
    assert [m.objects.count() for m in (Campaign, Query, Document, Ranking, RelevanceTask)] == counts


def test_database_keeps_one_online_model_per_campaign(campaign):
    with pytest.raises(IntegrityError), transaction.atomic():
        RankingModel.objects.create(campaign=campaign, name="second", role=RankingModel.Role.ONLINE)


def test_database_keeps_one_relevance_task_per_query_and_document(campaign):
    task = RelevanceTask.objects.filter(campaign=campaign).first()
    # PostgreSQL names the constraint, SQLite its columns.
    said = "relevance_task_pair_unique|UNIQUE constraint failed: annotation_relevancetask"
    with pytest.raises(IntegrityError, match=said), transaction.atomic():
        RelevanceTask.objects.create(campaign=campaign, query_id=task.query_id, document_id=task.document_id)


def test_pooled_tasks_are_written_in_their_unique_index_order(campaign):
    # Each task's (document, query) entry goes in at the index's end: the import's COPY pays for one index
    # taking rows at random places (the shuffle order), not two.
    written = RelevanceTask.objects.filter(campaign=campaign).order_by("pk")
    pairs = list(written.values_list("document_id", "query_id"))
    assert pairs == sorted(pairs) and len(set(pairs)) > 2


def test_database_keeps_one_judgment_per_annotator_and_task(campaign, make_user):
    user = make_user("ann", "annotator")
    task = RelevanceTask.objects.filter(campaign=campaign).first()
    Judgment.objects.create(campaign_id=task.campaign_id, task=task, annotator=user, grade=2)
    with pytest.raises(IntegrityError), transaction.atomic():
        Judgment.objects.create(campaign_id=task.campaign_id, task=task, annotator=user, grade=1)


@pytest.mark.postgres
@pytest.mark.parametrize("foreign", ["query", "document", "campaign"])
def test_database_refuses_a_relevance_task_outside_its_campaign(campaign, bundle_data, foreign):
    if connection.vendor != "postgresql":
        pytest.skip("needs PostgreSQL (DATABASE_URL=postgres://...): SQLite keeps no composite key")
    bundle_data["name"] = "other"
    other = campaign_import(bundle=parse_bundle(bundle_data, "small.json"))
    task = RelevanceTask.objects.filter(campaign=campaign).first()
    moved = {
        "query": {"query": other.queries.get(external_id=task.query.external_id)},
        "document": {"document": other.documents.get(external_id=task.document.external_id)},
        "campaign": {"campaign": other},  # its query and document stay in the first campaign
    }[foreign]
    # The keys are checked per statement (migration 0028), by the statement that breaks them.
    with pytest.raises(IntegrityError, match="_in_campaign"), transaction.atomic():
        RelevanceTask.objects.filter(pk=task.pk).update(**moved)
    with pytest.raises(IntegrityError, match="_in_campaign"), transaction.atomic():
        RelevanceTask.objects.create(
            campaign=campaign, query=other.queries.first(), document=campaign.documents.last()
        )


@pytest.mark.postgres
def test_database_refuses_tasks_copied_outside_their_campaign_and_their_parents_gone(campaign, bundle_data):
    if connection.vendor != "postgresql":
        pytest.skip("needs PostgreSQL (DATABASE_URL=postgres://...): SQLite keeps no composite key")
    bundle_data["name"] = "other"
    other = campaign_import(bundle=parse_bundle(bundle_data, "small.json"))
    task = RelevanceTask.objects.filter(campaign=campaign).first()
    query, document = task.query_id, other.documents.first().pk
    # One row of a COPY that names another campaign's document refuses the whole COPY.
    good = RelevanceTask.objects.filter(campaign=campaign).exclude(pk=task.pk).first()
    with pytest.raises(IntegrityError, match="relevance_task_document_in_campaign"), transaction.atomic():
        RelevanceTask.objects.filter(pk__in=[task.pk, good.pk]).delete()
        columns_insert(
            RelevanceTask,
            {
                "campaign_id": np.array([campaign.pk, campaign.pk]),
                "query_id": np.array([good.query_id, query]),
                "document_id": np.array([good.document_id, document]),
                "slots_spent": np.zeros(2, dtype=np.int64),
                "shuffle_key": np.zeros(2, dtype=np.int64),
            },
        )
    # A query or document that tasks name cannot go, nor leave their campaign, while they stay.
    with pytest.raises(IntegrityError, match="violates foreign key constraint"), transaction.atomic():
        Query.objects.filter(pk=query)._raw_delete(Query.objects.db)
    with pytest.raises(IntegrityError, match="relevance_task_document_in_campaign"), transaction.atomic():
        Document.objects.filter(pk=task.document_id).update(campaign=other, external_id="moved")
    campaign.delete()  # Django deletes the tasks first
    assert not RelevanceTask.objects.filter(campaign_id=campaign.pk).exists()


@pytest.mark.postgres
@pytest.mark.parametrize("label_model", [Judgment, Preference])
def test_database_refuses_a_label_outside_its_tasks_campaign(campaign, bundle_data, make_user, label_model):
    if connection.vendor != "postgresql":
        pytest.skip("needs PostgreSQL (DATABASE_URL=postgres://...): SQLite keeps no composite key")
    bundle_data["name"] = "other"
    other = campaign_import(bundle=parse_bundle(bundle_data, "small.json"))
    tasks = RelevanceTask if label_model is Judgment else SideBySideTask
    task = tasks.objects.filter(campaign=campaign).first()
    name = f"{label_model._meta.model_name}_task_in_campaign"
    answer = {"grade": 2} if label_model is Judgment else {"verdict": "good", "experimental_on_left": True}
    ann = make_user("ann", "annotator")
    fields = ["campaign_id", "task_id", "annotator_id", *answer, "comment", "created_at", "updated_at"]
    now = campaign.created_at
    # Written one at a time (the round trip) or by COPY (an import): the statement that breaks the key fails.
    with pytest.raises(IntegrityError, match=name), transaction.atomic():
        label_model.objects.create(campaign=other, task=task, annotator=ann, **answer)
    with pytest.raises(IntegrityError, match=name), transaction.atomic():
        rows_insert(label_model, fields, [(campaign.pk, 10**9, ann.pk, *answer.values(), "", now, now)])
    label = label_model.objects.create(campaign=campaign, task=task, annotator=ann, **answer)
    with pytest.raises(IntegrityError, match=name), transaction.atomic():
        label_model.objects.filter(pk=label.pk).update(campaign=other)
    # Its task cannot go, nor leave the campaign, while the label names it.
    with pytest.raises(IntegrityError, match=name), transaction.atomic():
        tasks.objects.filter(pk=task.pk)._raw_delete(tasks.objects.db)
    with pytest.raises(IntegrityError, match=name), transaction.atomic():
        tasks.objects.filter(pk=task.pk).update(campaign=other)
    campaign.delete()  # Django deletes the labels first
    assert not label_model.objects.filter(pk=label.pk).exists()


@pytest.mark.postgres
def test_database_refuses_an_imported_row_whose_parent_is_missing_or_goes(campaign):
    if connection.vendor != "postgresql":
        pytest.skip("needs PostgreSQL (DATABASE_URL=postgres://...): the keys' triggers (migration 0029)")
    query, model = campaign.queries.first(), campaign.models.first()
    missing = 10**9
    # Written by COPY, as an import writes them: one check a statement (migration 0029).
    refused = [
        (
            "document_campaign",
            Document,
            ["campaign_id", "external_id", "title", "url", "body"],
            (missing, "new", "", "", ""),
        ),
        (
            "query_campaign",
            Query,
            ["campaign_id", "external_id", "text", "description", "segment", "weight"],
            (missing, "new", "", "", "", 1.0),
        ),
        ("ranking_model", Ranking, ["model_id", "query_id", "documents"], (missing, query.pk, b"")),
        ("ranking_query", Ranking, ["model_id", "query_id", "documents"], (model.pk, missing, b"")),
    ]
    for name, model_class, fields, row in refused:
        with pytest.raises(IntegrityError, match=name), transaction.atomic():
            rows_insert(model_class, fields, [row])
    with pytest.raises(IntegrityError, match="side_by_side_task_model"), transaction.atomic():
        SideBySideTask.objects.create(campaign=campaign, query=query, experimental_model_id=missing)
    with pytest.raises(IntegrityError, match="_campaign"), transaction.atomic():
        Campaign.objects.filter(pk=campaign.pk)._raw_delete(Campaign.objects.db)
    with pytest.raises(IntegrityError, match="ranking_query"), transaction.atomic():
        Query.objects.filter(pk=query.pk).update(id=missing)


@pytest.mark.postgres
def test_rows_lock_only_the_parents_another_transaction_wrote(transactional_db, bundle_data):
    """A parent this transaction wrote needs no lock (no other can see it); one another transaction wrote is
    locked until COMMIT, so a concurrent delete waits instead of leaving the new rows without it."""
    if connection.vendor != "postgresql":
        pytest.skip("needs PostgreSQL (DATABASE_URL=postgres://...): the keys' triggers (migration 0032)")
    campaign = campaign_import(bundle=parse_bundle(bundle_data, "small.json"))
    committed = campaign.documents.exclude(relevance_tasks__isnull=False).first()

    def locked_by_us(document: Document) -> bool:
        with connection.cursor() as cursor:
            sql = "SELECT xmax = pg_current_xact_id()::xid FROM annotation_document WHERE id = %s"
            cursor.execute(sql, [document.pk])
            return cursor.fetchone()[0]

    waited: list[str] = []

    def delete_committed():
        try:
            # LOCAL: the thread's connection goes back to the pool, and the next test may take it.
            with transaction.atomic(), connections["default"].cursor() as cursor:
                cursor.execute("SET LOCAL lock_timeout = '300ms'")
                cursor.execute("DELETE FROM annotation_document WHERE id = %s", [committed.pk])
            waited.append("deleted")
        except OperationalError:
            waited.append("waited")
        finally:
            connections.close_all()

    with transaction.atomic():  # the transaction itself: its rows' xmin is its id
        query = Query.objects.create(campaign=campaign, external_id="new query", text="new")
        new = Document.objects.create(campaign=campaign, external_id="new document")
        # One statement naming both: its own document is found, not locked; the other is locked.
        columns_insert(
            RelevanceTask,
            {
                "campaign_id": np.array([campaign.pk, campaign.pk]),
                "query_id": np.array([query.pk, query.pk]),
                "document_id": np.array([new.pk, committed.pk]),
                "slots_spent": np.zeros(2, dtype=np.int64),
                "shuffle_key": np.zeros(2, dtype=np.int64),
            },
        )
        assert not locked_by_us(new)
        assert locked_by_us(committed)
        thread = threading.Thread(target=delete_committed)
        thread.start()
        thread.join()
    assert waited == ["waited"]
    assert RelevanceTask.objects.filter(query=query).count() == 2
    # A missing parent is refused on this path too.
    with pytest.raises(IntegrityError, match="relevance_task_document_in_campaign"), transaction.atomic():
        other = Document.objects.create(campaign=campaign, external_id="another")
        columns_insert(
            RelevanceTask,
            {
                "campaign_id": np.array([campaign.pk, campaign.pk]),
                "query_id": np.array([query.pk, query.pk]),
                "document_id": np.array([other.pk, 10**9]),
                "slots_spent": np.zeros(2, dtype=np.int64),
                "shuffle_key": np.zeros(2, dtype=np.int64),
            },
        )


@pytest.mark.postgres
def test_database_refuses_truncating_what_tasks_name(transactional_db, bundle_data):
    if connection.vendor != "postgresql":
        pytest.skip("needs PostgreSQL (DATABASE_URL=postgres://...): SQLite keeps no composite key")
    campaign_import(bundle=parse_bundle(bundle_data, "small.json"))
    # (A TRUNCATE of every table at once, as the tests' flush does, passes: the tasks go too.)
    with pytest.raises(IntegrityError, match="violates foreign key constraint"), transaction.atomic():
        connection.cursor().execute("TRUNCATE annotation_query, annotation_document CASCADE")


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("overlap", 0),
        ("pool_depth", 0),
        ("launch_alpha", 1.5),
        ("min_queries", 0),
        ("min_coverage", 1.5),
    ],
)
def test_database_rejects_impossible_campaign_settings(campaign, field, value):
    setattr(campaign, field, value)
    with pytest.raises(IntegrityError), transaction.atomic():
        campaign.save()


def _bundle_without_rankings(tmp_path, bundle_data):
    bundle_data.pop("rankings")
    return write_bundle(tmp_path, bundle_data)


def _run_file(tmp_path, name: str, lines: list[str]):
    path = tmp_path / name
    path.write_text("".join(line + "\n" for line in lines))
    return path


def test_import_campaign_reads_trec_runs(db, tmp_path, bundle_data):
    bundle = _bundle_without_rankings(tmp_path, bundle_data)
    online = _run_file(tmp_path, "online.run", ["q1 Q0 d1 1 2.0 on", "q1 Q0 d2 2 1.0 on"])
    exp = _run_file(tmp_path, "exp.run", ["q1 Q0 d2 1 5.0 x", "q1 Q0 d9 2 4.0 x"])
    call_command("import_campaign", str(bundle), "--run", f"online={online}", "--run", f"exp={exp}")
    assert ranked_ids(model__name="exp") == ["d2", "d9"]  # d9: a bare document, created
    bare = Document.objects.get(external_id="d9")
    assert (bare.title, bare.url, bare.body, bare.attributes, bare.popularity) == ("", "", "", {}, None)
    assert Document.objects.get(external_id="d2").title == "Doc 2"  # the bundle's, written beside them


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        (["q1 Q0 d1 1 2.0 on", "q1 Q0 d2 2"], r"online\.run:2: .*6"),
        (["q1 Q0 d1 1 2.0 on", "q1 Q0 d\x002 2 1.0 on"], r"online\.run:2: the line holds a NUL byte"),
        (
            ["q1 Q0 " + "d" * 201 + " 1 2.0 on"],
            r"online\.run: document id 'd{40}'\.\.\. is longer than 200",
        ),
        ([], r"online\.run: the run is empty"),
    ],
)
def test_bad_run_file_names_it_and_writes_nothing(db, tmp_path, bundle_data, lines, message):
    bundle = _bundle_without_rankings(tmp_path, bundle_data)
    online = _run_file(tmp_path, "online.run", lines)
    exp = _run_file(tmp_path, "exp.run", ["q1 Q0 d2 1 5.0 x"])
    with pytest.raises(CommandError, match=message):
        call_command("import_campaign", str(bundle), "--run", f"online={online}", "--run", f"exp={exp}")
    assert not Campaign.objects.exists() and not Document.objects.exists()


@pytest.mark.parametrize(
    ("runs", "message"),
    [
        (
            [("nope", ["q1 Q0 d1 1 2.0 x"])],
            r"nope\.run: the run is for model 'nope', which the bundle does not list"
            r" \(its models: exp, online\)",
        ),
        (
            [("exp", ["q9 Q0 d1 1 2.0 x"])],
            r"exp\.run: the run ranks query 'q9', which the bundle does not list",
        ),
        ([("exp", ["q1 Q0 d1 1 2.0 x"]), ("exp", ["q1 Q0 d2 1 2.0 x"])], r"exp\.run: a second run for model"),
    ],
)
def test_runs_are_checked_against_the_bundle(db, tmp_path, bundle_data, runs, message):
    bundle = _bundle_without_rankings(tmp_path, bundle_data)
    arguments = []
    for index, (model, lines) in enumerate(runs):
        folder = tmp_path / str(index)
        folder.mkdir()
        arguments += ["--run", f"{model}={_run_file(folder, f'{model}.run', lines)}"]
    with pytest.raises(CommandError, match=message):
        call_command("import_campaign", str(bundle), *arguments)
    assert not Campaign.objects.exists() and not Document.objects.exists()


TIMINGS = r"files read and checked in \d+\.\d\d s, imported in \d+\.\d\d s"
TIMINGS_ZH = r"文件读取并检查用时 \d+\.\d\d 秒，导入用时 \d+\.\d\d 秒"


@pytest.mark.parametrize(
    ("options", "said", "lines"),
    [
        ({}, TIMINGS, 0),
        ({"verbosity": 2}, TIMINGS, 1),
        ({"verbosity": 2, "language": "zh-hans"}, TIMINGS_ZH, 1),
    ],
)
def test_the_cli_says_how_long_its_steps_took_when_asked(db, bundle_data, tmp_path, options, said, lines):
    path = tmp_path / "b.json"
    path.write_text(json.dumps(bundle_data))
    out, err = io.StringIO(), io.StringIO()
    call_command("import_campaign", str(path), stdout=out, stderr=err, **options)
    assert out.getvalue().strip() == str(Campaign.objects.get().pk)
    assert sum(bool(re.fullmatch(said, line)) for line in err.getvalue().splitlines()) == lines


def test_the_cli_warns_about_a_model_without_rankings_and_the_overview_shows_it(
    bundle_data, tmp_path, client, make_user
):
    bundle_data["models"].append({"name": "idle", "role": "experimental"})
    path = tmp_path / "b.json"
    path.write_text(json.dumps(bundle_data))
    err = io.StringIO()
    call_command("import_campaign", str(path), stdout=io.StringIO(), stderr=err)
    assert "warning: model 'idle' has no rankings" in err.getvalue()
    client.force_login(make_user("rev", "reviewer"))
    campaign = Campaign.objects.get(name=bundle_data["name"])
    page = client.get(reverse("metrics:campaign_overview", args=[campaign.pk])).content.decode()
    assert 'id="models-without-rankings"' in page and "idle has no rankings" in page
