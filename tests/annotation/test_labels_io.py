import io
import json

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command

from annotation.bundle import parse_bundle
from annotation.choices import SkipReason
from annotation.models import Judgment, Preference, RelevanceTask, SideBySideTask
from annotation.services.adjudication import adjudication_set
from annotation.services.assignment import task_next, task_skip
from annotation.services.campaigns import campaign_import

LABELS = [
    {
        "annotator": "alice",
        "query": "q1",
        "document": "d1",
        "grade": 3,
        "comment": "spot on",
        "seconds_spent": 12.5,
    },
    {"annotator": "bob", "query": "q1", "document": "d1", "grade": 2},
    {"annotator": "alice", "query": "q1", "document": "d5", "grade": 0},
    {"annotator": "alice", "query": "q1", "model": "exp", "verdict": "good", "experimental_side": "left"},
    {
        "annotator": "bob",
        "query": "q1",
        "model": "exp",
        "verdict": "same",
        "experimental_side": "right",
        "comment": "both fine",
    },
]


def write_jsonl(path, rows):
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


def export(campaign, tmp_path, name="out.jsonl"):
    out = tmp_path / name
    call_command("export_judgments", str(campaign.pk), "-o", str(out))
    return [json.loads(line) for line in out.read_text().splitlines()]


def test_import_creates_labels_and_unknown_annotators(campaign, tmp_path):
    call_command("import_judgments", campaign.name, str(write_jsonl(tmp_path / "l.jsonl", LABELS)))
    alice = get_user_model().objects.get(username="alice")
    assert not alice.has_usable_password()
    assert list(alice.groups.values_list("name", flat=True)) == ["annotator"]
    assert Judgment.objects.filter(task__campaign=campaign).count() == 3
    preference = Preference.objects.get(annotator=alice)
    assert (preference.verdict, preference.experimental_on_left) == ("good", True)
    # imported labels spend their tasks' slots like labels from the workbench
    assert preference.task.slots_spent == 2
    assert all(t.slots_spent == t.judgments.count() for t in campaign.relevance_tasks.all())


def test_export_then_import_is_lossless(campaign, tmp_path, bundle_data):
    call_command("import_judgments", str(campaign.pk), str(write_jsonl(tmp_path / "l.jsonl", LABELS)))
    first = export(campaign, tmp_path)
    bundle_data["name"] = "Copy"
    copy = campaign_import(bundle=parse_bundle(bundle_data, "copy.json"))
    call_command("import_judgments", str(copy.pk), str(write_jsonl(tmp_path / "again.jsonl", first)))
    assert export(copy, tmp_path, "second.jsonl") == first
    assert sorted(first, key=json.dumps) == sorted(LABELS, key=json.dumps)


def test_the_export_holds_the_reviewers_final_labels_and_the_skips_and_imports_without_them(
    campaign, tmp_path, bundle_data, make_user
):
    call_command("import_judgments", str(campaign.pk), str(write_jsonl(tmp_path / "l.jsonl", LABELS)))
    reviewer, carol = make_user("rev", "reviewer"), make_user("carol", "annotator")
    task = RelevanceTask.objects.get(campaign=campaign, query__external_id="q1", document__external_id="d1")
    adjudication_set(reviewer=reviewer, task=task, grade=2, reason="bob read the guidelines")
    pair = SideBySideTask.objects.get(campaign=campaign, query__external_id="q1")
    adjudication_set(reviewer=reviewer, task=pair, verdict="bad", reason="exp drops the answer")
    lease = task_next(annotator=carol, campaign=campaign)
    task_skip(annotator=carol, assignment=lease, reason=SkipReason.FOREIGN_LANGUAGE)
    rows = export(campaign, tmp_path)
    finals = [row for row in rows if row.get("record") == "final"]
    assert finals == [
        {"record": "final", "query": "q1", "document": "d1", "grade": 2, "reviewer": "rev",
         "reason": "bob read the guidelines", "overrides": 1},  # alice's 3; bob's 2 stands
        {"record": "final", "query": "q1", "model": "exp", "verdict": "bad", "reviewer": "rev",
         "reason": "exp drops the answer", "overrides": 2},
    ]  # fmt: skip
    (skip,) = [row for row in rows if row.get("record") == "skip"]
    assert skip["annotator"] == "carol" and skip["reason"] == "foreign_language" and skip["query"]
    assert ("document" in skip) != ("model" in skip)
    bundle_data["name"] = "Copy"
    copy = campaign_import(bundle=parse_bundle(bundle_data, "copy.json"))
    call_command("import_judgments", str(copy.pk), str(write_jsonl(tmp_path / "again.jsonl", rows)))
    assert Judgment.objects.filter(task__campaign=copy).count() == 3  # the raw labels only
    with pytest.raises(CommandError, match="record"):
        call_command(
            "import_judgments", str(copy.pk), str(write_jsonl(tmp_path / "bad.jsonl", [{"record": "x"}]))
        )


def test_grade_of_an_unpooled_document_creates_its_task(campaign, tmp_path):
    # d4 is ranked 4th by online, below pool_depth 3: a human label for it is still kept.
    rows = [{"annotator": "alice", "query": "q1", "document": "d4", "grade": 1}]
    call_command("import_judgments", str(campaign.pk), str(write_jsonl(tmp_path / "l.jsonl", rows)))
    assert RelevanceTask.objects.filter(campaign=campaign, document__external_id="d4").exists()


@pytest.mark.parametrize(
    ("row", "message"),
    [
        (
            {"annotator": "a", "query": "q9", "document": "d1", "grade": 1},
            r"bad\.jsonl:2: query: unknown query 'q9'",
        ),
        (
            {"annotator": "a", "query": "q1", "document": "d1", "grade": 7},
            r"bad\.jsonl:2: grade: 7 is not on the scale",
        ),
        (
            {"annotator": "a", "query": "q1", "document": "d1", "grade": "2"},
            r"bad\.jsonl:2: grade: must be an integer",
        ),
        (
            {"annotator": "a", "query": "q1", "model": "online", "verdict": "good"},
            r"bad\.jsonl:2: model: 'online' is not an experimental model",
        ),
        (
            {"annotator": "a", "query": "q1", "model": "exp", "verdict": "better"},
            r"bad\.jsonl:2: verdict: must be 'good', 'same' or 'bad'",
        ),
        (
            {"annotator": "alice", "query": "q1", "document": "d1", "grade": 1},
            r"bad\.jsonl:2: annotator: 'alice' already graded q1/d1",
        ),
        (
            {"annotator": "ALICE", "query": "q1", "document": "d5", "grade": 1},
            r"bad\.jsonl:2: annotator: 'ALICE' and 'alice' differ only in case; a username is unique",
        ),
        (
            {"annotator": "<b>eve</b> x", "query": "q1", "document": "d1", "grade": 1},
            r"bad\.jsonl:2: annotator: may hold only letters, digits and @ \. \+ - _",
        ),
        (
            {"annotator": "a", "query": "q1", "document": "d1", "grade": 1, "seconds_spent": float("inf")},
            r"bad\.jsonl:2: malformed JSON: Infinity is not a number JSON allows",
        ),
        (
            {"annotator": "a", "query": "q1", "document": "d1", "grade": 1, "seconds_spent": float("nan")},
            r"bad\.jsonl:2: malformed JSON: NaN is not a number JSON allows",
        ),
    ],
)
def test_bad_label_files_name_line_and_field_and_write_nothing(campaign, tmp_path, row, message):
    rows = [LABELS[0], row]
    with pytest.raises(CommandError, match=message):
        call_command("import_judgments", str(campaign.pk), str(write_jsonl(tmp_path / "bad.jsonl", rows)))
    assert not Judgment.objects.exists()
    assert not get_user_model().objects.filter(username__in=["a", "alice"]).exists()


def test_malformed_jsonl_line(campaign, tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps(LABELS[0]) + "\n{not json\n")
    with pytest.raises(CommandError, match=r"bad\.jsonl:2: malformed JSON"):
        call_command("import_judgments", str(campaign.pk), str(path))


def test_unknown_campaign(db, tmp_path):
    with pytest.raises(CommandError, match="no campaign with id or name 'nope'"):
        call_command("import_judgments", "nope", str(write_jsonl(tmp_path / "l.jsonl", LABELS)))


def test_bundle_gold_marks_tasks(db, bundle_data):
    bundle_data["gold"] = [
        {"query": "q1", "document": "d1", "grade": 3},
        {"query": "q2", "document": "d2", "grade": 0},  # not pooled for q2: becomes a task of its own
        {"query": "q1", "model": "exp", "verdict": "good"},
    ]
    campaign = campaign_import(bundle=parse_bundle(bundle_data, "gold.json"))
    gold = dict(
        RelevanceTask.objects.filter(campaign=campaign, gold_grade__isnull=False).values_list(
            "document__external_id", "gold_grade"
        )
    )
    assert gold == {"d1": 3, "d2": 0}
    assert SideBySideTask.objects.get(campaign=campaign, query__external_id="q1").gold_verdict == "good"


def test_qrels_export_exact_or_integer_for_trec_eval(campaign, tmp_path):
    # q1/d1 has grades 3 and 2: mean 2.5, which trec_eval would read as 2.
    call_command("import_judgments", campaign.name, str(write_jsonl(tmp_path / "l.jsonl", LABELS)))
    labels = {}
    for integer in (None, "round", "floor"):
        out = tmp_path / f"{integer}.qrels"
        options = {"integer": integer} if integer else {}
        call_command("export_judgments", str(campaign.pk), "--format", "qrels", "-o", str(out), **options)
        labels[integer] = {tuple(line.split()[::2]): line.split()[3] for line in out.read_text().splitlines()}
    assert labels[None][("q1", "d1")] == "2.5"
    assert labels["round"][("q1", "d1")] == "3" and labels["floor"][("q1", "d1")] == "2"
    assert labels[None][("q1", "d5")] == labels["round"][("q1", "d5")] == "0"
    with pytest.raises(CommandError, match="invalid choice"):
        call_command("export_judgments", str(campaign.pk), "--format", "qrels", "--integer", "ceil")


def test_a_command_speaks_the_language_it_is_asked_for_and_english_by_default(campaign, tmp_path):
    bad = write_jsonl(tmp_path / "bad.jsonl", [LABELS[0], {**LABELS[1], "grade": 9}])
    with pytest.raises(CommandError) as english:
        call_command("import_judgments", str(campaign.pk), str(bad))
    assert str(english.value).startswith(f"{bad}:2: grade: 9 is not on the scale (")
    with pytest.raises(CommandError) as chinese:
        call_command("import_judgments", str(campaign.pk), str(bad), language="zh-hans")
    assert str(chinese.value).startswith(f"{bad}:2: grade: 9 不在评分档位中（可用评分："), chinese.value
    good = write_jsonl(tmp_path / "good.jsonl", LABELS)
    out = io.StringIO()
    call_command("import_judgments", str(campaign.pk), str(good), language="zh-hans", stdout=out)
    assert out.getvalue() == "已导入 3 条相关性评分和 2 条并排对比评判\n"
