"""A client generated from the served schema by openapi-python-client (pinned in requirements-dev.txt) runs a
whole launch job, and nothing else talks to the server: a manager creates a campaign and uploads a run,
three annotators label until nothing is left (grades, verdicts, a skip, a changed label, a stale answer
refused), a reviewer adjudicates, the manager changes a setting, then the decision, the report in every
format and the exports are read. The client is generated into the test's temporary folder, never kept."""

import copy
import importlib
import io
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from config.wsgi import application
from tests.factories import SMALL_BUNDLE

GENERATOR = Path(sys.executable).with_name("openapi-python-client")
PASSWORD = "a-long-pass-1"
ANNOTATORS = ("gen-ann1", "gen-ann2", "gen-ann3")


@pytest.fixture
def served(transactional_db, make_user):
    """The server in this process (Django's WSGI application behind httpx), each request committing as in
    production (the sign-in counts failures on a connection of its own); the people the job signs in as."""
    for name, role in (
        ("gen-boss", "manager"),
        ("gen-rev", "reviewer"),
        *((a, "annotator") for a in ANNOTATORS),
    ):
        make_user(name, role, password=PASSWORD)
    return httpx.WSGITransport(app=application)


@pytest.fixture
def generated(client, tmp_path):
    """The package openapi-python-client generates from `/api/schema/`, imported; no warning allowed (a
    warning means an operation or a body it could not type)."""
    schema = client.get("/api/schema/?format=json")
    assert schema.status_code == 200
    (tmp_path / "schema.json").write_bytes(schema.content)
    (tmp_path / "config.yaml").write_text("package_name_override: jbclient\npost_hooks: []\n")
    command = [str(GENERATOR), "generate", "--path", "schema.json", "--meta", "none"]
    command += ["--output-path", "jbclient", "--config", "config.yaml"]
    done = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=120)
    output = done.stdout + done.stderr
    assert done.returncode == 0 and "Warning" not in output and "Error" not in output, output
    sys.path.insert(0, str(tmp_path))
    try:
        yield lambda name: importlib.import_module(f"jbclient.{name}".rstrip("."))
    finally:
        sys.path.remove(str(tmp_path))
        for name in [name for name in sys.modules if name == "jbclient" or name.startswith("jbclient.")]:
            del sys.modules[name]


def _bundle() -> dict:
    bundle = copy.deepcopy(SMALL_BUNDLE)
    bundle["name"] = "Generated client's launch"
    bundle["settings"].update({"overlap": 2, "gsb_overlap": 2, "min_queries": 1, "min_coverage": 0.5})
    return bundle


RUN = "q1 Q0 d5 1 3.0 exp\nq1 Q0 d2 2 2.0 exp\nq1 Q0 d1 3 1.0 exp\nq2 Q0 d6 1 2.0 exp\nq2 Q0 d8 2 1.0 exp\n"


def test_a_generated_client_runs_a_whole_launch_job(served, generated):
    jb, models, types = generated(""), generated("models"), generated("types")

    def api(name: str):
        return generated(f"api.{name}")

    def signed_in(username: str):
        anonymous = jb.Client(base_url="http://testserver", httpx_args={"transport": served})
        token = api("auth.auth_token_create").sync(
            client=anonymous, body=models.TokenRequestRequest(username=username, password=PASSWORD)
        )
        assert isinstance(token, models.Token), token
        return jb.AuthenticatedClient(
            base_url="http://testserver", token=token.token, prefix="Token", httpx_args={"transport": served}
        )

    # The manager: a campaign from a bundle, and the experimental model's run.
    boss = signed_in("gen-boss")
    created = api("campaigns.campaigns_create").sync(
        client=boss, body=models.BundleRequest.from_dict(_bundle())
    )
    assert isinstance(created, models.CampaignChanged), created
    campaign = created.id
    run = types.File(payload=io.BytesIO(RUN.encode()), file_name="exp.run")
    uploaded = api("campaigns.campaigns_runs_create").sync(
        campaign_id=campaign, client=boss, body=models.RunUploadRequest(model="exp", file=run)
    )
    assert isinstance(uploaded, models.RunUploaded) and uploaded.rankings == len(RUN.splitlines())

    # Three annotators until nothing is left for them.
    next_task, label = api("tasks.campaigns_next_task_create"), api("tasks.tasks_judgment_create")
    seen = {"skip": 0, "changed": 0, "stale": 0, "grades": 0, "verdicts": 0}
    for number, username in enumerate(ANNOTATORS):
        annotator = signed_in(username)
        while isinstance(task := next_task.sync(campaign_id=campaign, client=annotator), models.Task):
            if number == 0 and not seen["skip"]:
                skipped = api("tasks.tasks_skip_create").sync(
                    task_id=task.id,
                    client=annotator,
                    body=models.SkipRequestRequest.from_dict({"reason": "cant_load"}),
                )
                assert isinstance(skipped, models.Assignment) and skipped.status == "skipped"
                seen["skip"] += 1
                continue
            relevance = task.kind == "relevance"
            answer = {"grade": task.scale[-1].value} if relevance else {"verdict": "right"}
            body = models.LabelRequestRequest.from_dict({**answer, "version": task.version})
            given = label.sync_detailed(task_id=task.id, client=annotator, body=body)
            assert given.status_code == 201, given.content
            seen["grades" if relevance else "verdicts"] += 1
            if relevance and number == 1 and not seen["changed"]:
                changed = models.LabelRequestRequest.from_dict({"grade": task.scale[0].value})
                again = label.sync_detailed(task_id=task.id, client=annotator, body=changed)
                assert again.status_code == 200 and again.parsed.grade == task.scale[0].value
                seen["changed"] += 1
            elif relevance and number == 2 and not seen["stale"]:
                # The label changed since this version was read: a second tab's answer is refused.
                stale = models.LabelRequestRequest.from_dict(
                    {"grade": task.scale[0].value, "version": task.version}
                )
                refused = label.sync_detailed(task_id=task.id, client=annotator, body=stale)
                assert refused.status_code == 409 and refused.parsed.code == "stale"
                seen["stale"] += 1
    assert all(seen.values()), seen

    # The reviewer settles a task.
    reviewer = signed_in("gen-rev")
    queue = api("review.campaigns_review_queue_list").sync(
        campaign_id=campaign, client=reviewer, state=models.CampaignsReviewQueueListState("all")
    )
    assert isinstance(queue, models.PaginatedQueueItemList) and queue.results
    item = next(item for item in queue.results if item.kind == "relevance")
    task = api("review.review_retrieve").sync(
        kind=models.ReviewRetrieveKind("relevance"), task_id=item.task_id, client=reviewer
    )
    kind = models.ReviewAdjudicationCreateKind("relevance")
    settled = api("review.review_adjudication_create").sync(
        kind=kind,
        task_id=item.task_id,
        client=reviewer,
        body=models.AdjudicationRequestRequest(
            grade=0, reason="The page is off topic.", version=task.version
        ),
    )
    assert isinstance(settled, models.ReviewTask) and settled.adjudication.value == "0"

    # The manager changes a setting of the launch rule.
    change = models.PatchedCampaignChangeRequest.from_dict({"settings": {"launch_alpha": 0.1}})
    changed = api("campaigns.campaigns_partial_update").sync(campaign_id=campaign, client=boss, body=change)
    assert isinstance(changed, models.CampaignChanged) and changed.launch_alpha == 0.1

    # The decision, the report in every format, the exports.
    decision = api("results.campaigns_decision_retrieve").sync(campaign_id=campaign, client=reviewer)
    assert isinstance(decision, models.Decision), decision
    assert decision.status.value in ("launch", "no_launch", "inconclusive") and decision.reasons
    report = api("results.campaigns_report_retrieve").sync(campaign_id=campaign, client=reviewer)
    assert isinstance(report, models.Report) and report.decision.value == decision.status.value
    assert report.settings.launch_alpha == 0.1
    files = api("results.campaigns_report_file_retrieve")
    starts = {"html": "<!doctype html>", "csv": "model,role,query", "summary.csv": "field,value", "md": "# "}
    for format, start in starts.items():
        text = files.sync(
            campaign_id=campaign, format_path=models.CampaignsReportFileRetrieveFormat(format), client=boss
        )
        assert isinstance(text, str) and text.startswith(start), (format, text[:80])
    labels = api("results.campaigns_export_judgments_retrieve").sync(campaign_id=campaign, client=reviewer)
    assert isinstance(labels, str) and '"record": "skip"' in labels and '"record": "final"' in labels
    qrels = api("results.campaigns_export_qrels_retrieve").sync(campaign_id=campaign, client=reviewer)
    assert isinstance(qrels, str) and qrels.splitlines()[0].split()[:2] == ["q1", "0"]
