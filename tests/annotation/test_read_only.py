"""An archived campaign is read-only: every write path, through every surface (API, pages, command) and
through the services themselves, is refused the same way (API 409 `archived`, a page's message, a command's
error), and nothing in the database changes.

Every public function of `annotation.services` is either walked here (the walk sees it entered) or named in
EXEMPT with the reason it writes nothing of an existing campaign: a new service fails
`test_every_service_is_walked_or_exempt` until it is one or the other.
"""

import importlib
import inspect
import json
import pkgutil
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import SimpleNamespace

import pytest
from django.apps import apps
from django.contrib.auth import get_user_model
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command
from django.db import connection, connections, transaction
from django.test import Client
from django.urls import reverse
from rest_framework.test import APIClient

import annotation.services
from annotation.bundle import parse_bundle
from annotation.errors import TaskError, TaskErrorCode
from annotation.models import Assignment, Campaign, Judgment, RelevanceTask
from annotation.services.adjudication import adjudication_set
from annotation.services.assignment import task_next, task_skip
from annotation.services.campaigns import campaign_archive, campaign_import, campaign_pool_tasks
from annotation.services.exclusions import annotator_exclude
from annotation.services.interactions import interaction_log_import
from annotation.services.label_pool import labels_reuse, reused_labels_refresh
from annotation.services.labels import judgment_submit, label_submit
from annotation.services.leases import task_slots_recount
from tests.factories import form_data, threads_run

MESSAGE = "This campaign is archived: nothing in it changes until a manager restores it."


def _services() -> dict[str, Callable]:
    """Every public function defined in a module of `annotation.services`, as "module.function"."""
    found = {}
    for module_info in pkgutil.iter_modules(annotation.services.__path__):
        module = importlib.import_module(f"annotation.services.{module_info.name}")
        for name, function in inspect.getmembers(module, inspect.isfunction):
            if function.__module__ == module.__name__ and not name.startswith("_"):
                found[f"{module_info.name}.{name}"] = function
    return found


SERVICES = _services()

_INSIDE_LABELS = "runs inside judgment_submit / preference_submit, after their check"
_PEOPLE = "people and sign-in: no campaign's rows"
_NEW_CAMPAIGN = "creates a new campaign (or stages its import); never changes an existing one"
EXEMPT = {
    "leases.lease_claim": _INSIDE_LABELS,
    "leases.lease_finish": _INSIDE_LABELS,
    "leases.slot_open": "reads a locked task's slots, writes nothing",
    "leases.slots_change": "runs inside the hand-out, task_skip, skip_undo and lease_finish, after checks",
    "assignment.repeat_lease_live": _INSIDE_LABELS,
    "adjudication.review_lease_take": "a reviewer's hold on a task, no label: none taken in an archived one",
    "adjudication.review_lease_next": "holds a task through review_lease_take",
    "locks.task_lock": _INSIDE_LABELS + ", task_skip's and adjudication_set's",
    "locks.campaign_lock": "inside read_only.campaign_writable_lock",
    "leases.leases_expire": "gives back the slots of leases past their time, whatever the campaign; "
    "archiving ends an archived campaign's leases, and it is handed out no more",
    "leases.leases_end": "ends the leases its caller chose: an exclusion (checked) or archiving",
    "campaigns.campaign_archive": "archiving and restoring: the one write an archived campaign takes",
    "campaigns.campaign_import": _NEW_CAMPAIGN,
    "campaigns.campaign_import_check": _NEW_CAMPAIGN,
    "campaigns.bare_documents_insert": "runs inside campaign_import (a new campaign) and an interaction "
    "log's import, after its check",
    "demo.demo_load": _NEW_CAMPAIGN,
    "demo.demo_zh_load": _NEW_CAMPAIGN,
    "demo.demo_users_ensure": _PEOPLE,
    **{f"imports.{name}": _NEW_CAMPAIGN for name in ("import_cancel", "import_check", "import_confirm")},
    **{f"imports.{name}": _NEW_CAMPAIGN for name in ("import_queued", "import_retry", "import_run")},
    "imports.import_stage": _NEW_CAMPAIGN,
    "label_import.annotators_get_or_create": _PEOPLE + "; labels_import calls it after its check",
    "label_pool.lists_hash": "a hash, written nowhere",
    "label_pool.side_by_side_hashes_set": "runs inside campaign_pool_tasks, after its check",
    "label_pool.standard_for": "a judging standard, shared by campaigns: no campaign's rows",
    "labels.field_needed": "builds an error",
    "labels.duplicates_checked": "checks input, writes nothing",
    "labels.intents_checked": "checks input, writes nothing",
    "logins.client_address": _PEOPLE,
    "logins.user_authenticate": _PEOPLE,
    **{f"people.{name}": _PEOPLE for name in ("password_set_path", "person_active_set", "person_create")},
    **{
        f"people.{name}": _PEOPLE
        for name in ("person_language_set", "person_password_reset", "person_role_set")
    },
    "read_only.campaign_writable_check": "the check itself, which every walk enters",
    "read_only.campaign_writable_lock": "locks the campaign's row, then the check",
    "round_trip.enabled": "reads a setting",
    "round_trip.first_label_store": _INSIDE_LABELS,
    "round_trip.lease_new": "runs inside task_next; reads the campaign archived itself (`_OPEN`)",
    "round_trip.repeat_lease_new": "runs inside task_next; reads the campaign archived itself (`_OPEN`)",
    **{f"tokens.{name}": _PEOPLE for name in ("password_links_revoke", "token_cache_forget")},
    **{f"tokens.{name}": _PEOPLE for name in ("token_cache_key", "token_expired", "token_get_or_create")},
    **{f"tokens.{name}": _PEOPLE for name in ("tokens_revoke", "user_deactivate", "user_password_set")},
}


@contextmanager
def services_entered() -> Iterator[set[str]]:
    """The names of the services (SERVICES) called inside the block, whatever module imported them."""
    codes = {inspect.unwrap(function).__code__: name for name, function in SERVICES.items()}
    entered: set[str] = set()

    def profile(frame, event, arg):
        if event == "call" and frame.f_code in codes:
            entered.add(codes[frame.f_code])

    previous = sys.getprofile()
    sys.setprofile(profile)
    try:
        yield entered
    finally:
        sys.setprofile(previous)


def database_rows() -> dict[str, list[tuple]]:
    """Every row of every table of the annotation app (many-to-many tables too) and of the users."""
    models = [*apps.get_app_config("annotation").get_models(include_auto_created=True)]
    user = get_user_model()
    models += [user, user.groups.through]
    return {model._meta.db_table: list(model._base_manager.order_by("pk").values_list()) for model in models}


@pytest.fixture
def world(campaign, make_user, tmp_path):
    """The campaign as work left it, then archived: an annotator's earlier grade and verdict, another's
    lease, an exclusion in force; signed-in clients for each role."""
    ann, bo = make_user("ann", "annotator"), make_user("bo", "annotator")
    rita, boss = make_user("rita", "reviewer"), make_user("boss", "manager")
    earlier = {}
    while (lease := task_next(annotator=ann, campaign=campaign)) is not None:
        kind = "relevance" if lease.relevance_task_id else "side_by_side"
        label_submit(
            annotator=ann, assignment=lease, **({"grade": 1} if kind == "relevance" else {"verdict": "left"})
        )
        earlier.setdefault(kind, lease.pk)
    held = task_next(annotator=bo, campaign=campaign)
    cy = make_user("cy", "annotator")
    skipped = task_skip(
        annotator=cy, assignment=task_next(annotator=cy, campaign=campaign), reason="foreign_language"
    )
    impression = {"query": "q1", "model": "online", "request": "r1", "position": 1, "document": "d9"}
    log = interaction_log_import(
        campaign=campaign, lines=[(1, json.dumps(impression | {"clicked": False}))], source="earlier.jsonl"
    )
    make_user("speedy", "annotator")
    annotator_exclude(campaign=campaign, username="speedy", by=boss, reason="0.1 s a label")
    campaign = campaign_archive(campaign=campaign, archived=True)
    clients = {}
    for user in (ann, bo, cy, rita, boss):
        api_client, page_client = APIClient(), Client()
        api_client.force_authenticate(user)
        page_client.force_login(user)
        clients[user.username] = SimpleNamespace(api=api_client, page=page_client)
    judgments = tmp_path / "labels.jsonl"
    judgments.write_text('{"annotator": "newbie", "query": "q1", "document": "d4", "grade": 2}\n')
    interactions = tmp_path / "log.jsonl"
    interactions.write_text(json.dumps(impression | {"clicked": True}) + "\n")
    return SimpleNamespace(
        campaign=campaign,
        earlier=earlier,
        held=held,
        skipped=skipped.pk,
        log=log.pk,
        task=RelevanceTask.objects.filter(campaign=campaign).order_by("pk").first(),
        clients=clients,
        judgments=str(judgments),
        interactions=str(interactions),
        ann=ann,
    )


def api_refused(response) -> None:
    assert response.status_code == 409, response.content
    assert response.json() == {"code": "archived", "detail": MESSAGE}


def page_refused(response) -> None:
    assert response.status_code == 200, response.status_code
    assert response.content.decode().count(MESSAGE) == 1


def api(user: str, url: Callable[[SimpleNamespace], str], body=None, method: str = "post", fmt: str = "json"):
    """A request of `user` to the API, answered 409 `archived`."""

    def walk(w):
        client = w.clients[user].api
        api_refused(getattr(client, method)(url(w), body(w) if callable(body) else body, format=fmt))

    return walk


def page(user: str, url: Callable[[SimpleNamespace], str], data=None, **headers: str):
    """A form `user` posts (a GET without `data`), answered with the message on the page it leads to."""

    def walk(w):
        client = w.clients[user].page
        posted = data(w) if callable(data) else data
        if posted is None:
            page_refused(client.get(url(w), follow=True))
        else:
            page_refused(client.post(url(w), posted, headers=headers, follow=True))

    return walk


def service(function: Callable[..., object]):
    """The service called directly, refusing with TaskError `archived`."""

    def walk(w):
        with pytest.raises(TaskError) as refused:
            function(campaign=w.campaign)
        assert refused.value.code == TaskErrorCode.ARCHIVED and str(refused.value) == MESSAGE

    return walk


def command(name: str, file: str):
    """The command run on the campaign and a file of the world's, exiting with the message."""

    def walk(w):
        with pytest.raises(CommandError, match=MESSAGE):
            call_command(name, str(w.campaign.pk), getattr(w, file))

    return walk


def task_url(name: str, assignment: Callable[[SimpleNamespace], int]) -> Callable[[SimpleNamespace], str]:
    return lambda w: reverse(f"annotation:{name}", args=[w.campaign.pk, assignment(w)])


def campaign_api(tail: str) -> Callable[[SimpleNamespace], str]:
    return lambda w: f"/api/campaigns/{w.campaign.pk}/{tail}"


def campaign_url(name: str) -> Callable[[SimpleNamespace], str]:
    return lambda w: reverse(f"annotation:{name}", args=[w.campaign.pk])


def settings_form(w) -> dict:
    shown = w.clients["boss"].page.get(campaign_url("campaign_settings")(w)).content.decode()
    return {**form_data(shown, "settings-form"), "overlap": "3"}


def log_upload(w) -> dict:
    with open(w.interactions, "rb") as log:
        return {"file": SimpleUploadedFile("log.jsonl", log.read())}


def run_upload(w) -> dict:
    return {
        "model": "exp",
        "file": SimpleUploadedFile("exp.trec", b"q1 Q0 d9 1 1.0 exp\nq1 Q0 d1 2 0.5 exp\n"),
    }


def earlier(kind: str) -> Callable[[SimpleNamespace], int]:
    return lambda w: w.earlier[kind]


def held(w) -> int:
    return w.held.pk


GRADE = {"labels.label_submit", "labels.judgment_submit"}
VERDICT = {"labels.label_submit", "labels.preference_submit"}
NEXT = {"assignment.task_next", "assignment.member_check"}
NEXT_HEADER = {"X-Workbench": "next"}
SKIP = {"reason": "foreign_language"}
FINAL = {"grade": 2, "reason": "the guidelines say so"}
EXCLUSIONS = campaign_url("campaign_exclusions")
WALKS: dict[str, tuple[set[str], Callable[[SimpleNamespace], None]]] = {
    # an annotator
    "api_grade_change": (
        GRADE,
        api("ann", lambda w: f"/api/tasks/{w.earlier['relevance']}/judgment/", {"grade": 3}),
    ),
    "api_verdict_change": (
        VERDICT,
        api("ann", lambda w: f"/api/tasks/{w.earlier['side_by_side']}/judgment/", {"verdict": "right"}),
    ),
    "api_first_grade_on_the_lease_held": (
        GRADE,
        api("bo", lambda w: f"/api/tasks/{held(w)}/judgment/?next=true", {"grade": 2}),
    ),
    "api_skip": ({"assignment.task_skip"}, api("bo", lambda w: f"/api/tasks/{held(w)}/skip/", SKIP)),
    "api_next_task": (
        {"assignment.task_next_in", "assignment.member_check"},
        api("ann", campaign_api("next-task/")),
    ),
    "page_grade_change": (
        GRADE,
        page("ann", task_url("task", earlier("relevance")), {"grade": "3"}, **NEXT_HEADER),
    ),
    "page_verdict_change": (
        VERDICT,
        page("ann", task_url("task", earlier("side_by_side")), {"side": "right"}),
    ),
    "page_first_grade_on_the_lease_held": (
        GRADE,
        page("bo", task_url("task", held), {"grade": "2"}, **NEXT_HEADER),
    ),
    "page_skip": ({"assignment.task_skip"}, page("bo", task_url("task_skip", held), SKIP)),
    "page_skip_undo": ({"assignment.skip_undo"}, page("cy", task_url("skip_undo", lambda w: w.skipped), {})),
    "page_work": (NEXT, page("ann", campaign_url("work"))),
    # a reviewer
    "api_final_label": (
        {"adjudication.adjudication_set"},
        api("rita", lambda w: f"/api/review/relevance/{w.task.pk}/adjudication/", FINAL),
    ),
    "page_final_label": (
        {"adjudication.adjudication_set"},
        page(
            "rita",
            lambda w: reverse("annotation:review_relevance", args=[w.task.pk]),
            {"label": "2", "reason": "so"},
        ),
    ),
    # a manager
    "api_settings": (
        {"campaigns.campaign_change"},
        api("boss", campaign_api(""), {"settings": {"overlap": 3}}, method="patch"),
    ),
    "api_run_upload": (
        {"campaigns.model_rankings_replace"},
        api("boss", campaign_api("runs/"), run_upload, fmt="multipart"),
    ),
    "page_settings": (
        {"campaigns.campaign_change"},
        page("boss", campaign_url("campaign_settings"), settings_form),
    ),
    "page_members": (
        {"people.campaign_members_set"},
        page("boss", campaign_url("campaign_members"), lambda w: {"members": [w.ann.pk]}),
    ),
    "page_exclude": (
        {"exclusions.annotator_exclude"},
        page("boss", EXCLUSIONS, {"action": "exclude", "annotator": "ann", "reason": "too fast"}),
    ),
    "page_reinstate": (
        {"exclusions.annotator_reinstate"},
        page("boss", EXCLUSIONS, {"action": "reinstate", "annotator": "speedy"}),
    ),
    "page_confirm_exclusions": (
        {"exclusions.exclusions_confirm"},
        page("boss", EXCLUSIONS, {"action": "confirm"}),
    ),
    "command_import_judgments": ({"label_import.labels_import"}, command("import_judgments", "judgments")),
    "api_interaction_log": (
        {"interactions.interaction_log_import"},
        api("boss", campaign_api("interactions/"), log_upload, fmt="multipart"),
    ),
    "page_interaction_log_delete": (
        {"interactions.interaction_log_delete"},
        page("boss", lambda w: reverse("annotation:interaction_log_delete", args=[w.campaign.pk, w.log]), {}),
    ),
    "page_interaction_log": (
        {"interactions.interaction_log_import"},
        page("boss", campaign_url("campaign_interactions"), log_upload),
    ),
    "command_import_interactions": (
        {"interactions.interaction_log_import"},
        command("import_interactions", "interactions"),
    ),
    # services no surface reaches on their own
    "service_pool_tasks": ({"campaigns.campaign_pool_tasks"}, service(campaign_pool_tasks)),
    "service_labels_reuse": ({"label_pool.labels_reuse"}, service(labels_reuse)),
    "service_reused_labels_refresh": ({"label_pool.reused_labels_refresh"}, service(reused_labels_refresh)),
    "service_slots_recount": ({"leases.task_slots_recount"}, service(task_slots_recount)),
}


@pytest.mark.parametrize("name", WALKS)
def test_an_archived_campaign_refuses_every_write_path(world, name):
    """Refused as its surface refuses (the API 409 `archived`, a page's message, the command's error), by
    the shared check inside the services it names, and nothing in the database changed."""
    before = database_rows()
    services, walk = WALKS[name]
    with services_entered() as entered:
        walk(world)
    assert services | {"read_only.campaign_writable_check"} <= entered
    assert database_rows() == before


def test_every_service_is_walked_or_exempt():
    walked = set().union(*(services for services, _ in WALKS.values()))
    assert not walked & set(EXEMPT), "a walked service is not exempt"
    unknown = (walked | set(EXEMPT)) - set(SERVICES)
    assert not unknown, f"no such service: {sorted(unknown)}"
    missing = set(SERVICES) - walked - set(EXEMPT)
    assert not missing, f"a service neither walked against an archived campaign nor exempt: {sorted(missing)}"


def test_archiving_ends_the_leases_in_force_and_restoring_reopens(campaign, make_user):
    """Nothing of an archived campaign moves: its leases end when it is archived, their slots given back."""
    ann = make_user("ann", "annotator")
    lease = task_next(annotator=ann, campaign=campaign)
    campaign_archive(campaign=campaign, archived=True)
    lease.refresh_from_db()
    assert lease.status == Assignment.Status.EXPIRED
    assert RelevanceTask.objects.get(pk=lease.relevance_task_id).slots_spent == 0
    campaign = campaign_archive(campaign=campaign, archived=False)
    assert task_next(annotator=ann, campaign=campaign) is not None


STALE_WORK = {
    "first label": lambda task, held, ann, rita: judgment_submit(annotator=ann, task=held, grade=1),
    "label change": lambda task, held, ann, rita: judgment_submit(annotator=ann, task=task, grade=3),
    "hand-out": lambda task, held, ann, rita: task_next(annotator=ann, campaign=task.campaign),
    "final label": lambda task, held, ann, rita: adjudication_set(
        reviewer=rita, task=task, grade=2, reason="x"
    ),
}


@pytest.mark.parametrize("work", STALE_WORK)
def test_work_that_read_the_campaign_before_it_was_archived_is_refused(campaign, make_user, work):
    """A request that read the campaign just before the archiving committed: the campaign's row, read again
    under the lock every label, hand-out and final label takes, says archived (on PostgreSQL the lock also
    waits for an archiving under way, `test_a_label_in_flight_waits_for_the_archiving_and_is_refused`)."""
    ann, rita = make_user("ann", "annotator"), make_user("rita", "reviewer")
    answered = task_next(annotator=ann, campaign=campaign)
    judgment_submit(annotator=ann, task=answered.relevance_task, grade=1)
    held = task_next(annotator=ann, campaign=campaign)
    stale = Campaign.objects.get(pk=campaign.pk)
    campaign_archive(campaign=campaign, archived=True)
    task, held_task = (
        RelevanceTask.objects.get(pk=pk) for pk in (answered.relevance_task_id, held.relevance_task_id)
    )
    task.campaign = held_task.campaign = stale
    before = database_rows()
    with pytest.raises(TaskError) as refused:
        STALE_WORK[work](task, held_task, ann, rita)
    assert refused.value.code == TaskErrorCode.ARCHIVED
    assert database_rows() == before


@pytest.mark.postgres
@pytest.mark.parametrize("work", ["first label", "hand-out"])
def test_work_in_flight_waits_for_the_archiving_and_is_refused(
    transactional_db, bundle_data, make_user, work
):
    """The archiving holds the campaign's row until it commits; a first label or a hand-out sent meanwhile,
    by a request that read the campaign before, waits on that row, then reads it archived and stores
    nothing (before, a label took the lease the archiving had just ended as a late one, and stored the
    label). The hand-out's lock and lease go in one string (`round_trip._LOCK`): the lease reads the
    campaign anew once the lock is granted."""
    if connection.vendor != "postgresql":
        pytest.skip("needs PostgreSQL (DATABASE_URL=postgres://...)")
    campaign = campaign_import(bundle=parse_bundle(bundle_data, "small.json"))
    ann, bob = make_user("ann", "annotator"), make_user("bob", "annotator")
    held = task_next(annotator=ann, campaign=campaign)
    archiving, sent = threading.Event(), threading.Event()
    outcome: list = []

    def archive() -> None:
        try:
            with transaction.atomic():
                campaign_archive(campaign=campaign, archived=True)
                archiving.set()
                sent.wait(10)
                time.sleep(0.5)  # the label waits meanwhile
        finally:
            connections.close_all()

    def label() -> None:
        try:
            archiving.wait(10)
            sent.set()
            if work == "first label":
                judgment_submit(annotator=ann, task=held.relevance_task, grade=1)
            else:
                task_next(annotator=bob, campaign=campaign)
            outcome.append("stored")
        except TaskError as error:
            outcome.append(error.code)
        finally:
            connections.close_all()

    threads_run([threading.Thread(target=archive), threading.Thread(target=label)], timeout=60)
    assert outcome == [TaskErrorCode.ARCHIVED]
    assert not Judgment.objects.exists()
    assert not Assignment.objects.filter(annotator=bob).exists()
