"""The `judgeboard` command against a live server, as a release pipeline runs it: each command a process
of its own, real requests, the exit codes a CI job gates on."""

import gzip
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import requests

from annotation.bundle import JudgmentRow, PreferenceRow
from annotation.models import Campaign, Ranking
from annotation.services.label_import import labels_import
from judgeboard.client import OPERATIONS
from judgeboard.errors import Exit
from tests.factories import GRADES, VERDICTS, WORKED

ROOT = Path(__file__).resolve().parent.parent.parent
PASSWORD = "release-gate-1"

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def server(live_server, make_user):
    make_user("release", "manager", password=PASSWORD)
    return live_server.url


def judgeboard(server: str, *args: str, token: str = "", stdin: str = "") -> subprocess.CompletedProcess:
    environment = {"PATH": os.environ["PATH"], "PYTHONPATH": str(ROOT), "JUDGEBOARD_URL": server}
    if token:
        environment["JUDGEBOARD_TOKEN"] = token
    return subprocess.run(
        [sys.executable, "-m", "judgeboard", *args],
        input=stdin,
        env=environment,
        capture_output=True,
        text=True,
        timeout=120,
    )


def bundle_and_run(folder: Path) -> tuple[str, str]:
    """The worked example's bundle without the experimental model's rankings, and those as a TREC run."""
    bundle = json.loads(json.dumps(WORKED))
    ranked = [ranking for ranking in bundle["rankings"] if ranking["model"] == "exp"]
    bundle["rankings"] = [ranking for ranking in bundle["rankings"] if ranking["model"] != "exp"]
    (folder / "bundle.json.gz").write_bytes(gzip.compress(json.dumps(bundle).encode()))
    lines = [
        f"{ranking['query']} Q0 {document} {rank} {100 - rank} exp"
        for ranking in ranked
        for rank, document in enumerate(ranking["documents"], start=1)
    ]
    (folder / "exp.trec").write_text("\n".join(lines) + "\n")
    return str(folder / "bundle.json.gz"), str(folder / "exp.trec")


def label(campaign: Campaign) -> None:
    """The worked example's labels: q1 graded, the rest 1, and the verdicts (the decision: no launch)."""
    judgments = [JudgmentRow(0, "ann", "q1", document, grade) for document, grade in GRADES.items()]
    judgments += [
        JudgmentRow(0, "ann", query, document, 1)
        for query in ("q2", "q3", "q4")
        for document in ("x", "y", "z")
    ]
    preferences = [PreferenceRow(0, "ann", query, "exp", verdict) for query, verdict in VERDICTS.items()]
    labels_import(campaign=campaign, judgments=judgments, preferences=preferences, source="test")


def test_a_release_gate_from_campaign_to_decision(server, tmp_path):
    signed_in = judgeboard(
        server, "login", "--username", "release", "--password-stdin", stdin=PASSWORD + "\n"
    )
    assert signed_in.returncode == Exit.OK, signed_in.stderr
    token = signed_in.stdout.strip()
    bundle, run = bundle_and_run(tmp_path)

    created = judgeboard(server, "campaign", "create", bundle, "--run", f"exp={run}", token=token)
    assert created.returncode == Exit.OK, created.stderr
    campaign = Campaign.objects.get(pk=int(created.stdout))
    assert campaign.name == WORKED["name"]
    assert Ranking.objects.filter(model__campaign=campaign, model__name="exp").count() == 4
    campaign_id = str(campaign.pk)

    collecting = judgeboard(server, "decision", campaign_id, token=token)
    assert collecting.returncode == Exit.COLLECTING, collecting.stderr
    assert json.loads(collecting.stdout)["status"] == "collecting"
    waited = judgeboard(
        server, "campaign", "wait", campaign_id, "--timeout", "0.5", "--interval", "0.1", token=token
    )
    assert waited.returncode == Exit.COLLECTING and json.loads(waited.stdout)["status"] == "collecting"

    label(campaign)
    waited = judgeboard(
        server, "campaign", "wait", campaign_id, "--until", "decided", "--timeout", "60", "--interval", "0.2",
        token=token,
    )  # fmt: skip
    assert waited.returncode == Exit.OK, waited.stderr
    decided = judgeboard(server, "decision", campaign_id, token=token)
    assert decided.returncode == Exit.NO_LAUNCH, decided.stderr
    answer, awaited = json.loads(decided.stdout), json.loads(waited.stdout)
    assert answer.pop("generated_at") and awaited.pop("generated_at") and answer == awaited
    assert answer["status"] == "no_launch" and answer["campaign"] == campaign.pk and answer["reasons"]

    reports = {}
    for format in ("json", "html", "csv", "md"):
        done = judgeboard(server, "report", campaign_id, "--format", format, token=token)
        assert done.returncode == Exit.OK, (format, done.stderr)
        reports[format] = done.stdout
    assert json.loads(reports["json"])["decision"] == "no_launch"
    assert reports["html"].lstrip().lower().startswith("<!doctype html")
    assert reports["csv"].splitlines()[0].count(",") >= 1
    assert reports["md"].lstrip().startswith("#")
    saved = tmp_path / "report.html"
    assert (
        judgeboard(
            server, "report", campaign_id, "--format", "html", "-o", str(saved), token=token
        ).returncode
        == 0
    )
    stamp = re.compile(r"\d{4}-\d\d-\d\d[T ][\d:.+]+")  # when each report was made, ISO or as written
    assert stamp.sub("", saved.read_text()) == stamp.sub("", reports["html"])

    labels = judgeboard(server, "export", campaign_id, "--labels", token=token)
    assert labels.returncode == Exit.OK, labels.stderr
    rows = [json.loads(line) for line in labels.stdout.splitlines()]
    assert len(rows) == len(GRADES) + 9 + len(VERDICTS) and {row["annotator"] for row in rows} == {"ann"}
    qrels = judgeboard(server, "export", campaign_id, "--qrels", "--integer", "round", token=token)
    assert qrels.returncode == Exit.OK, qrels.stderr
    assert {f"q1 0 {document} {grade}" for document, grade in GRADES.items()} <= set(
        qrels.stdout.splitlines()
    )

    # The exported qrels score the run with the same command, offline.
    (tmp_path / "qrels").write_text(qrels.stdout)
    qrels_file = str(tmp_path / "qrels")
    scored = judgeboard(
        server, "evaluate", qrels_file, run, "-m", "ndcg_cut.6", "--gain", "linear", "-q", "--format", "json"
    )
    assert scored.returncode == Exit.OK, scored.stderr
    assert json.loads(scored.stdout)["runs"][run]["per_query"]["q1"]["nDCG@6"] == pytest.approx(1.0)


def test_refusals_exit_5_and_nothing_is_created_for_a_bad_run(server, tmp_path):
    token = judgeboard(
        server, "login", "--username", "release", "--password-stdin", stdin=PASSWORD
    ).stdout.strip()
    wrong = judgeboard(server, "login", "--username", "release", "--password-stdin", stdin="wrong")
    assert wrong.returncode == Exit.INPUT and "400" in wrong.stderr and "Traceback" not in wrong.stderr
    bundle, run = bundle_and_run(tmp_path)

    bad = tmp_path / "bad.trec"
    bad.write_text("q1 Q0 a 1 high exp\n")
    unknown = judgeboard(server, "campaign", "create", bundle, "--run", f"nope={run}", token=token)
    assert unknown.returncode == Exit.INPUT and "the bundle has no model 'nope'" in unknown.stderr
    malformed = judgeboard(server, "campaign", "create", bundle, "--run", f"exp={bad}", token=token)
    assert malformed.returncode == Exit.INPUT and f"{bad}:1: score 'high' is not a number" in malformed.stderr
    spec = judgeboard(server, "campaign", "create", bundle, "--run", run, token=token)
    assert spec.returncode == Exit.USAGE and "write it as MODEL=FILE" in spec.stderr
    assert not Campaign.objects.exists()

    elsewhere = tmp_path / "elsewhere.trec"
    elsewhere.write_text("q9 Q0 a 1 1 exp\n")
    refused = judgeboard(server, "campaign", "create", bundle, "--run", f"exp={elsewhere}", token=token)
    assert refused.returncode == Exit.INPUT
    created = Campaign.objects.get()
    assert refused.stdout.strip() == str(created.pk)
    assert f"campaign {created.pk} was created; the run exp={elsewhere}: 400" in refused.stderr

    assert judgeboard(server, "decision", "999999", token=token).returncode == Exit.INPUT
    unauthorised = judgeboard(server, "decision", str(created.pk), token="not-a-token")
    assert unauthorised.returncode == Exit.INPUT and "401" in unauthorised.stderr
    missing = judgeboard(server, "decision", str(created.pk))
    assert missing.returncode == Exit.USAGE and "JUDGEBOARD_TOKEN not set" in missing.stderr


def test_no_server_exits_6_once_the_wait_is_over(tmp_path):
    # Nothing listens on port 9 (discard) here: every ask fails at once and is asked again until the timeout.
    nowhere = "http://127.0.0.1:9"
    waited = judgeboard(nowhere, "campaign", "wait", "1", "--timeout", "0.5", "--interval", "0.1", token="t")
    assert waited.returncode == Exit.SERVER and "no answer" in waited.stderr
    assert waited.stderr.count("asking again") >= 2


def test_the_sdk_calls_only_operations_the_served_schema_has(live_server):
    schema = requests.get(f"{live_server.url}/api/schema/", params={"format": "json"}, timeout=60).json()
    for name, (method, path) in OPERATIONS.items():
        assert method in schema["paths"].get(path, {}), (name, method, path)
