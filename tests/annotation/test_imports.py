"""A manager creates a campaign in the browser: upload, background check into a preview, confirm or cancel,
background import in one transaction. The Tasks framework's database backend queues the work and its
`db_worker` runs it, as in production."""

import copy
import gzip
import json
import tempfile
from datetime import UTC, datetime, timedelta

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import transaction
from django.urls import reverse
from django.utils import timezone
from django_tasks_db.models import DBTaskResult
from hypothesis import HealthCheck, given
from hypothesis import settings as examples
from hypothesis import strategies as st

from annotation.bundle import parse_bundle
from annotation.models import Campaign, CampaignImport, Ranking
from annotation.previews import import_preview
from annotation.selectors.campaigns import kinds_progress
from annotation.selectors.imports import (
    STOPPED_CHECKING,
    STOPPED_IMPORTING,
    Worker,
    heartbeat_path,
    import_view,
    import_worker,
    progress_path,
    worker_state,
)
from annotation.services.campaigns import campaign_import
from annotation.services.imports import import_check, import_run, import_stage
from tests.factories import SMALL_BUNDLE, gzip_bomb, peak_memory, work_off_the_queue
from trec.files import read_run_ranked

RUN = "".join(
    f"{q} Q0 {d} {rank} {10 - rank} exp-run\n"
    for q, docs in (("q1", ["d3", "d1", "d2"]), ("q2", ["d6", "d8", "d7"]))
    for rank, d in enumerate(docs, start=1)
)


@pytest.fixture
def manager(transactional_db, client, make_user, settings, tmp_path):
    """Transactional: the worker commits and reconnects as a real one does, outside any test transaction."""
    settings.IMPORTS_DIR = tmp_path / "imports"
    client.force_login(make_user("boss", "manager"))
    return client


def bundle_file(data: dict, name: str = "small.json", zipped: bool = False) -> SimpleUploadedFile:
    raw = json.dumps(data).encode()
    return SimpleUploadedFile(name, gzip.compress(raw) if zipped else raw)


def upload(client, django_capture_on_commit_callbacks, data, runs=()):
    body = {"bundle": bundle_file(data)}
    for index, (model, text) in enumerate(runs):
        body[f"run_model_{index}"] = model
        body[f"run_file_{index}"] = SimpleUploadedFile(f"{model}.run", text.encode())
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(reverse("annotation:campaign_new"), body)
    assert response.status_code == 302, response.content.decode()[:2000]
    staged = CampaignImport.objects.get()
    work_off_the_queue()
    staged.refresh_from_db()
    return staged


def test_upload_preview_confirm_creates_what_the_preview_said(manager, django_capture_on_commit_callbacks):
    data = copy.deepcopy(SMALL_BUNDLE)
    data["rankings"] = [r for r in data["rankings"] if r["model"] != "exp"]
    staged = upload(manager, django_capture_on_commit_callbacks, data, runs=[("exp", RUN)])
    assert staged.status == CampaignImport.Status.READY and not Campaign.objects.exists()
    page = manager.get(reverse("annotation:campaign_import", args=[staged.pk])).content.decode()
    assert "What will be created" in page and "Create the campaign" in page
    preview = staged.preview
    assert [(m["name"], m["rankings"]) for m in preview["models"]] == [("online", 7), ("exp", 6)]

    with django_capture_on_commit_callbacks(execute=True):
        manager.post(reverse("annotation:campaign_import", args=[staged.pk]), {"action": "confirm"})
    assert CampaignImport.objects.get().status == CampaignImport.Status.IMPORTING
    work_off_the_queue()
    staged.refresh_from_db()
    assert staged.status == CampaignImport.Status.DONE
    campaign = staged.campaign
    assert campaign.queries.count() == preview["queries"]
    assert campaign.documents.count() == preview["documents"]
    lists = Ranking.objects.filter(model__campaign=campaign)
    assert sum(ranking.document_pks.size for ranking in lists) == preview["rankings"] == 13
    assert campaign.relevance_tasks.count() == preview["relevance_tasks"]
    assert campaign.side_by_side_tasks.count() == preview["side_by_side_tasks"]
    assert not (manager_imports_dir := staged_folder(staged)).exists(), manager_imports_dir
    assert (
        "Choose its members"
        in manager.get(reverse("annotation:campaign_import", args=[staged.pk])).content.decode()
    )


def test_the_import_reads_the_runs_its_check_kept_not_their_files(
    manager, django_capture_on_commit_callbacks
):
    data = copy.deepcopy(SMALL_BUNDLE)
    data["rankings"] = [r for r in data["rankings"] if r["model"] != "exp"]
    staged = upload(manager, django_capture_on_commit_callbacks, data, runs=[("exp", RUN)])
    assert staged.status == CampaignImport.Status.READY
    (staged_folder(staged) / "run-0").write_text("not a run\n")  # read again, it would fail
    with django_capture_on_commit_callbacks(execute=True):
        manager.post(reverse("annotation:campaign_import", args=[staged.pk]), {"action": "confirm"})
    work_off_the_queue()
    staged.refresh_from_db()
    assert staged.status == CampaignImport.Status.DONE, staged.error
    model = staged.campaign.models.get(name="exp")
    lists = {
        r.query.external_id: [staged.campaign.documents.get(pk=pk).external_id for pk in r.document_pks]
        for r in Ranking.objects.filter(model=model)
    }
    assert lists == {"q1": ["d3", "d1", "d2"], "q2": ["d6", "d8", "d7"]}


def staged_folder(staged):
    from annotation.selectors.imports import import_folder

    return import_folder(staged)


def test_a_bad_run_line_is_refused_naming_file_and_line(manager, django_capture_on_commit_callbacks):
    staged = upload(manager, django_capture_on_commit_callbacks, SMALL_BUNDLE, runs=[("exp", "q1 Q0 d1 1\n")])
    assert staged.status == CampaignImport.Status.INVALID
    assert staged.error == "exp.run, line 1: expected at least 6 fields, found 4"
    page = manager.get(reverse("annotation:campaign_import", args=[staged.pk])).content.decode()
    assert "exp.run, line 1: expected at least 6 fields" in page and "Nothing was written" in page
    assert not Campaign.objects.exists() and not staged_folder(staged).exists()


def _small_with(**changes) -> bytes:
    data = copy.deepcopy(SMALL_BUNDLE)
    data["settings"].update(changes)
    return json.dumps(data).encode()


BOMB = object()  # a run that inflates past the bound: generated in the test
REFUSED = {
    "unknown-model": (
        json.dumps(SMALL_BUNDLE).encode(),
        [("exp2", RUN)],
        "exp2.run: the run is for model 'exp2', which the bundle does not list (its models: exp, online)",
    ),
    "unknown-query": (
        json.dumps(SMALL_BUNDLE).encode(),
        [("exp", RUN + "q9 Q0 d1 1 1 x\n")],
        "exp.run: the run ranks query 'q9', which the bundle does not list",
    ),
    "name-taken": (
        json.dumps(SMALL_BUNDLE).encode(),
        [],
        "small.json, field name: a campaign named 'Small' already exists",
    ),
    "bad-run-line": (
        json.dumps(SMALL_BUNDLE).encode(),
        [("exp", "q1 Q0 d1 1\n")],
        "exp.run, line 1: expected at least 6 fields, found 4",
    ),
    "second-run-for-a-model": (
        json.dumps(SMALL_BUNDLE).encode(),
        [("exp", RUN), ("exp", RUN)],
        "exp.run: a second run for model 'exp'",
    ),
    "bad-setting": (
        _small_with(overlap=0),
        [],
        "small.json, field settings.overlap: must be between 1 and 1000",
    ),
    "malformed-json": (b'{\n  "name": }', [], "small.json, line 2: malformed JSON: Expecting value"),
    "inflates-past-the-bound": (
        json.dumps(SMALL_BUNDLE).encode(),
        [("exp", BOMB)],
        "exp.run: inflates to more than 1048576 bytes",
    ),
}


@pytest.mark.parametrize("case", REFUSED)
def test_the_preview_refuses_what_create_refuses_with_the_same_words(db, make_user, settings, tmp_path, case):
    """Each file Create refuses is refused by the preview already, by the same check and in the same words,
    worded for the page: file, then line and field named as such."""
    settings.IMPORTS_DIR = tmp_path / "imports"
    settings.IMPORT_UPLOAD_MAX_BYTES = 1 << 20
    bundle, runs, message = REFUSED[case]
    if case == "name-taken":
        campaign_import(bundle=parse_bundle(copy.deepcopy(SMALL_BUNDLE), "other.json"))
    bomb = gzip_bomb(tmp_path / "bomb.gz", 8 << 20).read_bytes()
    user = make_user("boss", "manager")

    def staged() -> CampaignImport:
        files = [
            (model, SimpleUploadedFile(f"{model}.run", bomb if text is BOMB else text.encode()))
            for model, text in runs
        ]
        return import_stage(user=user, bundle=SimpleUploadedFile("small.json", bundle), runs=files)

    previewed = staged()
    import_check(staged=previewed, attempt=previewed.attempt)
    previewed.refresh_from_db()
    created = staged()
    CampaignImport.objects.filter(pk=created.pk).update(status=CampaignImport.Status.IMPORTING)
    import_run(staged=created, attempt=created.attempt)
    created.refresh_from_db()
    assert (previewed.status, created.status) == (CampaignImport.Status.INVALID, CampaignImport.Status.FAILED)
    assert previewed.error == created.error == message
    assert Campaign.objects.count() == (case == "name-taken")


def test_cancel_writes_nothing(manager, django_capture_on_commit_callbacks):
    staged = upload(manager, django_capture_on_commit_callbacks, SMALL_BUNDLE)
    manager.post(reverse("annotation:campaign_import", args=[staged.pk]), {"action": "cancel"})
    staged.refresh_from_db()
    assert staged.status == CampaignImport.Status.CANCELLED
    assert not Campaign.objects.exists() and not staged_folder(staged).exists()
    page = manager.post(
        reverse("annotation:campaign_import", args=[staged.pk]), {"action": "confirm"}, follow=True
    )
    assert "this import is cancelled" in page.content.decode()


def test_a_failed_import_keeps_its_error_and_writes_nothing(manager, django_capture_on_commit_callbacks):
    staged = upload(manager, django_capture_on_commit_callbacks, SMALL_BUNDLE)
    campaign_import(
        bundle=parse_bundle(copy.deepcopy(SMALL_BUNDLE), "other.json")
    )  # the name is taken meanwhile
    with django_capture_on_commit_callbacks(execute=True):
        manager.post(reverse("annotation:campaign_import", args=[staged.pk]), {"action": "confirm"})
    work_off_the_queue()
    staged.refresh_from_db()
    assert staged.status == CampaignImport.Status.FAILED and "already exists" in staged.error
    assert Campaign.objects.count() == 1 and not staged_folder(staged).exists()


def test_warnings_in_the_preview(manager, django_capture_on_commit_callbacks):
    data = copy.deepcopy(SMALL_BUNDLE)
    data["guidelines"] = "Compare with what Online shows."
    data["settings"]["cutoffs"] = [5, 10]
    data["models"].append({"name": "idle", "role": "experimental"})
    staged = upload(manager, django_capture_on_commit_callbacks, data)
    page = manager.get(reverse("annotation:campaign_import", args=[staged.pk])).content.decode()
    for warning in (
        "model &#x27;idle&#x27; has no rankings",
        "guidelines names the model &#x27;online&#x27;",
        "cut-off 10 is deeper than pool_depth 3",
        "queries lack the &#x27;online&#x27; or &#x27;idle&#x27; list",
    ):
        assert warning in page


def test_preview_counts_equal_what_the_import_creates(db):
    bundle = parse_bundle(copy.deepcopy(SMALL_BUNDLE), "small.json")
    preview = import_preview(bundle, {})
    campaign = campaign_import(bundle=bundle)
    assert (preview.relevance_tasks, preview.side_by_side_tasks, preview.identical_lists) == (
        campaign.relevance_tasks.count(),
        campaign.side_by_side_tasks.count(),
        campaign.side_by_side_tasks.filter(lists_identical=True).count(),
    )
    assert preview.documents == campaign.documents.count()
    assert preview.warnings == [
        "2 queries with both lists, fewer than min_queries 30: no launch decision can ever be reached "
        "(add queries or lower min_queries)",
        "cut-off 10 is deeper than pool_depth 3: documents below the pool are unjudged",
    ]
    # The label budget is what the new campaign's progress says is left to collect.
    assert preview.label_budget == sum(kind.labels_left for kind in kinds_progress(campaign=campaign)) > 0
    assert (preview.overlap, preview.gsb_overlap) == (campaign.overlap, campaign.gsb_overlap)


def test_the_preview_names_the_campaign_its_budget_and_warns_of_too_few_queries(
    manager, django_capture_on_commit_callbacks
):
    data = copy.deepcopy(SMALL_BUNDLE)
    data["settings"]["min_queries"] = 30
    staged = upload(manager, django_capture_on_commit_callbacks, data)
    page = manager.get(reverse("annotation:campaign_import", args=[staged.pk])).content.decode()
    preview = import_preview(parse_bundle(copy.deepcopy(data), "small.json"), {})
    n = len({query["id"] for query in data["queries"]})
    assert preview.warnings[0].startswith(f"{n} queries with both lists, fewer than min_queries 30")
    assert "no launch decision can ever be reached" in page
    budget = page[page.index('id="import-campaign"') :].split("</p>")[0]
    assert data["name"] in budget and f"{preview.label_budget} labels to collect" in budget


def test_the_status_poll_and_the_template(manager, django_capture_on_commit_callbacks):
    staged = upload(manager, django_capture_on_commit_callbacks, SMALL_BUNDLE)
    status = manager.get(reverse("annotation:campaign_import_status", args=[staged.pk])).json()
    assert status == {"status": "ready", "actions": ["confirm", "cancel"], "progress": None}
    confirm(manager, django_capture_on_commit_callbacks, staged)
    worker_takes(staged)
    progress_path(staged).write_text(json.dumps({"rows": 3, "total": 10}))
    status = manager.get(reverse("annotation:campaign_import_status", args=[staged.pk])).json()
    assert status == {"status": "importing", "actions": [], "progress": {"rows": 3, "total": 10}}
    page = manager.get(reverse("annotation:campaign_import", args=[staged.pk])).content.decode()
    assert 'value="3" max="10"' in page and "3 of 10 ranking rows" in page
    template = manager.get(reverse("annotation:campaign_template"))
    assert json.loads(template.content)["models"]


def test_a_gzipped_bundle_is_read(manager, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        manager.post(
            reverse("annotation:campaign_new"), {"bundle": bundle_file(SMALL_BUNDLE, "b.json.gz", True)}
        )
    work_off_the_queue()
    assert CampaignImport.objects.get().status == CampaignImport.Status.READY


def test_files_that_inflate_past_the_upload_bound_are_refused_in_bounded_memory(
    manager, django_capture_on_commit_callbacks, settings, tmp_path
):
    settings.IMPORT_UPLOAD_MAX_BYTES = 4 << 20
    bomb = gzip_bomb(tmp_path / "bomb.gz", 200 << 20).read_bytes()
    for body, name in (
        ({"bundle": SimpleUploadedFile("bomb.json.gz", bomb)}, "bomb.json.gz"),
        (
            {
                "bundle": bundle_file(SMALL_BUNDLE),
                "run_model_0": "exp",
                "run_file_0": SimpleUploadedFile("bomb.run.gz", bomb),
            },
            "bomb.run.gz",
        ),
    ):
        with django_capture_on_commit_callbacks(execute=True):
            manager.post(reverse("annotation:campaign_new"), body)
        _, peak = peak_memory(work_off_the_queue)
        staged = CampaignImport.objects.latest("pk")
        assert staged.status == CampaignImport.Status.INVALID
        assert staged.error == f"{name}: inflates to more than 4194304 bytes"
        assert peak < 24 << 20  # a few mebibytes past the bound, not the 200 MiB the file inflates to
        assert not staged_folder(staged).exists()


def test_a_run_without_a_model_name_is_a_form_error(manager):
    body = {"bundle": bundle_file(SMALL_BUNDLE), "run_file_0": SimpleUploadedFile("x.run", RUN.encode())}
    response = manager.post(reverse("annotation:campaign_new"), body)
    assert response.status_code == 200 and "give both the model" in response.content.decode()
    assert not CampaignImport.objects.exists()


T0 = datetime(2026, 1, 1, tzinfo=UTC)


@pytest.mark.parametrize(
    ("task", "started", "beat", "queued", "now", "expected"),
    [
        ("READY", None, None, 0, 86_400, Worker.WAITING),  # no worker has taken it, however long that is
        ("RUNNING", 0, None, 0, 60, Worker.WORKING),
        ("RUNNING", 0, None, 0, 61, Worker.STOPPED),  # taken, then killed before its first beat
        ("RUNNING", 0, 50, 0, 110, Worker.WORKING),
        ("RUNNING", 0, 50, 0, 111, Worker.STOPPED),  # silent for longer than the timeout
        ("SUCCESSFUL", 0, 50, 0, 51, Worker.STOPPED),  # the task ended, the import did not
        ("FAILED", 0, 50, 0, 51, Worker.STOPPED),
        (None, None, 50, 0, 110, Worker.WORKING),  # the task was pruned: the heartbeat alone tells
        (None, None, 50, 0, 111, Worker.STOPPED),
        (None, None, None, 0, 60, Worker.WAITING),  # its task's id not recorded yet
        (None, None, None, 0, 61, Worker.STOPPED),  # nor ever: the queueing failed
        (None, None, None, None, 0, Worker.STOPPED),  # queued before attempts were recorded
    ],
)
def test_the_staleness_rule_on_a_moved_clock(task, started, beat, queued, now, expected):
    def at(seconds):
        return None if seconds is None else T0 + timedelta(seconds=seconds)

    state = worker_state(
        task_status=task,
        task_started_at=at(started),
        beat_at=at(beat),
        queued_at=at(queued),
        now=at(now),
        timeout=60,
    )
    assert state == expected


def worker_takes(staged: CampaignImport) -> None:
    """A worker takes the import's task as db_worker does (here it never runs it: it died, or is about to)."""
    staged.refresh_from_db()
    DBTaskResult.objects.get(id=staged.task_id).claim("killed-worker")


def confirm(client, django_capture_on_commit_callbacks, staged: CampaignImport, action="confirm"):
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(reverse("annotation:campaign_import", args=[staged.pk]), {"action": action})
    staged.refresh_from_db()
    return response


def test_an_import_whose_worker_died_is_shown_stopped_then_cancelled_with_its_files(
    manager, django_capture_on_commit_callbacks, settings, django_assert_max_num_queries
):
    staged = upload(manager, django_capture_on_commit_callbacks, SMALL_BUNDLE)
    confirm(manager, django_capture_on_commit_callbacks, staged)
    # Queued, no worker yet: waiting, however long.
    assert import_worker(staged=staged, now=timezone.now() + timedelta(days=1)) == Worker.WAITING
    worker_takes(staged)
    assert import_worker(staged=staged) == Worker.WORKING
    with django_assert_max_num_queries(4):  # what the page polls each second: session, user, import, task
        status = manager.get(reverse("annotation:campaign_import_status", args=[staged.pk])).json()
    assert status == {"status": "importing", "actions": [], "progress": None}
    refused = confirm(manager, django_capture_on_commit_callbacks, staged, action="cancel")
    assert staged.status == CampaignImport.Status.IMPORTING  # a worker may be writing it: no cancel
    assert "a worker is importing it" in manager.get(refused.url).content.decode()
    after_timeout = timezone.now() + timedelta(seconds=settings.IMPORT_WORKER_TIMEOUT_SECONDS + 1)
    assert import_worker(staged=staged, now=after_timeout) == Worker.STOPPED

    settings.IMPORT_WORKER_TIMEOUT_SECONDS = 0  # the page's clock is past the timeout too
    with django_assert_max_num_queries(6):  # and, found stopped, the import and its task once more
        status = manager.get(reverse("annotation:campaign_import_status", args=[staged.pk])).json()
    assert status == {"status": "stopped", "actions": ["retry", "cancel"], "progress": None}
    page = manager.get(reverse("annotation:campaign_import", args=[staged.pk])).content.decode()
    assert "Stopped: nothing was written" in page and str(STOPPED_IMPORTING) in page
    assert 'value="retry"' in page and 'value="cancel"' in page and 'value="confirm"' not in page
    confirm(manager, django_capture_on_commit_callbacks, staged, action="cancel")
    assert staged.status == CampaignImport.Status.CANCELLED
    assert not staged_folder(staged).exists() and not Campaign.objects.exists()


def test_a_stopped_import_is_retried_to_completion_and_the_dead_attempt_takes_nothing(
    manager, django_capture_on_commit_callbacks, settings
):
    staged = upload(manager, django_capture_on_commit_callbacks, SMALL_BUNDLE)
    confirm(manager, django_capture_on_commit_callbacks, staged)
    worker_takes(staged)
    dead_attempt, dead_task = staged.attempt, staged.task_id
    retried = confirm(manager, django_capture_on_commit_callbacks, staged, action="retry")
    assert "only an import whose worker stopped" in manager.get(retried.url).content.decode()
    assert staged.attempt == dead_attempt

    settings.IMPORT_WORKER_TIMEOUT_SECONDS = 0
    assert (
        'value="retry"'
        in manager.get(reverse("annotation:campaign_import", args=[staged.pk])).content.decode()
    )
    confirm(manager, django_capture_on_commit_callbacks, staged, action="retry")
    settings.IMPORT_WORKER_TIMEOUT_SECONDS = 60
    assert (staged.status, staged.attempt) == (CampaignImport.Status.IMPORTING, dead_attempt + 1)
    assert staged.task_id not in ("", dead_task) and import_worker(staged=staged) == Worker.WAITING
    # Had the dead worker only slept, its attempt would no longer be the import's: it takes nothing.
    import_run(staged=staged, attempt=dead_attempt)
    assert not Campaign.objects.exists() and not heartbeat_path(staged).exists()

    work_off_the_queue()
    staged.refresh_from_db()
    assert staged.status == CampaignImport.Status.DONE and staged.campaign.queries.count() == 2
    assert not staged_folder(staged).exists()


def test_a_check_whose_worker_died_is_retried(manager, django_capture_on_commit_callbacks, settings):
    with django_capture_on_commit_callbacks(execute=True):
        manager.post(reverse("annotation:campaign_new"), {"bundle": bundle_file(SMALL_BUNDLE)})
    staged = CampaignImport.objects.get()
    worker_takes(staged)
    settings.IMPORT_WORKER_TIMEOUT_SECONDS = 0
    page = manager.get(reverse("annotation:campaign_import", args=[staged.pk])).content.decode()
    assert str(STOPPED_CHECKING) in page and 'value="retry"' in page
    confirm(manager, django_capture_on_commit_callbacks, staged, action="retry")
    settings.IMPORT_WORKER_TIMEOUT_SECONDS = 60
    work_off_the_queue()
    staged.refresh_from_db()
    assert staged.status == CampaignImport.Status.READY and staged.preview["queries"] == 2


def test_an_import_no_worker_took_can_be_cancelled_and_a_later_worker_writes_nothing(
    manager, django_capture_on_commit_callbacks
):
    staged = upload(manager, django_capture_on_commit_callbacks, SMALL_BUNDLE)
    confirm(manager, django_capture_on_commit_callbacks, staged)
    page = manager.get(reverse("annotation:campaign_import", args=[staged.pk])).content.decode()
    assert "Waiting for the background worker" in page and 'value="cancel"' in page
    confirm(manager, django_capture_on_commit_callbacks, staged, action="cancel")
    assert staged.status == CampaignImport.Status.CANCELLED and not staged_folder(staged).exists()
    work_off_the_queue()  # the queued import's task runs now: its import was cancelled
    staged.refresh_from_db()
    assert staged.status == CampaignImport.Status.CANCELLED and not Campaign.objects.exists()


def test_an_import_that_ends_while_its_page_is_read_is_not_taken_for_stopped(
    manager, django_capture_on_commit_callbacks
):
    staged = upload(manager, django_capture_on_commit_callbacks, SMALL_BUNDLE)
    confirm(manager, django_capture_on_commit_callbacks, staged)
    read_before = CampaignImport.objects.get(pk=staged.pk)  # "importing", as a page read it
    work_off_the_queue()  # ...then the worker ends the import, and its task
    assert import_view(staged=read_before).status == CampaignImport.Status.DONE


LISTS = st.lists(st.sampled_from([f"d{i}" for i in range(1, 7)]), min_size=1, max_size=5, unique=True)


@examples(
    max_examples=40,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    online=st.dictionaries(st.sampled_from(["q1", "q2", "q3", "q4"]), LISTS),
    exp=st.dictionaries(st.sampled_from(["q1", "q2", "q3", "q4"]), st.none() | LISTS),
    run=st.dictionaries(
        st.sampled_from(["q1", "q2", "q3", "q4"]),
        st.lists(st.sampled_from(["d1", "d2", "x1", "x2", "x3", "x4"]), min_size=1, max_size=5, unique=True),
    ),
    pool_depth=st.integers(1, 4),
    gsb_depth=st.integers(1, 4),
)
def test_the_preview_counts_and_warns_as_the_import_creates(db, online, exp, run, pool_depth, gsb_depth):
    """Any lists, shared documents, lists the same as the online one (None: a copy of it), queries one model
    lacks, a run's documents the bundle does not describe: the preview's counts are the campaign's, and its
    warnings of lists lacking or short are what the campaign's rankings show."""
    exp = {
        query: online.get(query, ["d1"]) if documents is None else documents
        for query, documents in exp.items()
    }
    data = copy.deepcopy(SMALL_BUNDLE)
    data["queries"] += [{"id": "q3", "text": "q3"}, {"id": "q4", "text": "q4"}]
    data["settings"].update(pool_depth=pool_depth, gsb_depth=gsb_depth, min_queries=3, cutoffs=[1])
    data["models"].append({"name": "ranker", "role": "experimental"})
    data["rankings"] = [
        {"model": model, "query": query, "documents": documents}
        for model, lists in (("online", online), ("exp", exp))
        for query, documents in lists.items()
    ]
    with tempfile.NamedTemporaryFile("w", suffix=".run") as file:
        file.write(
            "".join(f"{q} Q0 {d} {r} {-r} t\n" for q, docs in run.items() for r, d in enumerate(docs, 1))
        )
        file.flush()
        runs = {"ranker": read_run_ranked(file.name)}
    bundle = parse_bundle(data, "b.json")
    preview = import_preview(bundle, runs)
    with transaction.atomic():
        campaign = campaign_import(bundle=bundle, runs=runs)
        sides = campaign.side_by_side_tasks
        assert (preview.relevance_tasks, preview.side_by_side_tasks, preview.identical_lists) == (
            campaign.relevance_tasks.count(),
            sides.count(),
            sides.filter(lists_identical=True).count(),
        )
        assert preview.documents == campaign.documents.count()
        for name in ("exp", "ranker"):
            missing = 4 - sides.filter(experimental_model__name=name).count()
            lacking = [
                w.split(" of ")[0] for w in preview.warnings if f"lack the 'online' or '{name}' list" in w
            ]
            assert lacking == ([str(missing)] if missing else [])
        for name in ("online", "exp", "ranker"):
            lengths = [
                len(packed) // 8
                for packed in Ranking.objects.filter(model__campaign=campaign, model__name=name).values_list(
                    "documents", flat=True
                )
            ]
            short = sum(0 < length < gsb_depth for length in lengths)
            stated = [w for w in preview.warnings if f"of '{name}' shorter than gsb_depth" in w]
            assert [w.split()[0] for w in stated] == ([str(short)] if short else [])
        decidable = len(set(sides.values_list("query_id", flat=True)))
        assert any(w.startswith(f"{decidable or 4} queries") for w in preview.warnings) == (
            (decidable or 4) < 3
        )
        transaction.set_rollback(True)
