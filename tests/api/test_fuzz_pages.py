"""Generated bad input through every form of the browser's pages (new campaign, settings, people, members,
final label, exclusions): any text, bytes (invalid UTF-8 and lone surrogates included), numbers and deep
nesting in any field, unknown fields too. The answer is a 4xx, the page again with its errors, or a
redirect with a message, never a 500, and nothing is written when the form is refused (hypothesis,
derandomized: every run tries the same examples)."""

import json
from urllib.parse import quote_from_bytes

import pytest
from django.contrib.auth import get_user_model
from django.contrib.messages import get_messages
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import transaction
from django.test import Client
from django.urls import reverse
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from annotation.models import Adjudication, AnnotatorExclusion, Campaign, CampaignImport, PasswordLink
from annotation.services.assignment import task_next
from annotation.services.labels import judgment_submit
from tests.factories import SMALL_BUNDLE, form_data

PAGES = settings(
    max_examples=30,
    deadline=None,
    derandomize=True,  # the same examples on every run: a failure here is reproducible
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
User = get_user_model()


def _deep(depth: int) -> str:
    return "[" * depth + "]" * depth


# What a careless or hostile browser posts: any text (NUL and lone surrogates too), bytes that are no
# UTF-8, numbers that overflow or are no number, JSON nested deeper than any parser's recursion.
TEXT = st.text(alphabet=st.characters(exclude_categories=()), max_size=20)
ODD = st.sampled_from(
    [
        "",
        " ",
        "\x00",
        "a\x00b",
        "\ud800",
        "²",
        "-1",
        "0",
        "1e999",
        "NaN",
        "9" * 40,
        "x" * 6000,
        "manager",
        "annotator",
        "on",
        "../../etc",
        "//evil.example/x",
        _deep(3_000),
        "[" * 100_000,
        '[{"value": 0, "label": "\\ud800"}, {"value": 1, "label": "Yes"}]',
        '[{"value": 0, "label": "No"}, {"value": 1, "label": "Yes"}]',
    ]
)
VALUE = st.one_of(TEXT, ODD, st.binary(max_size=20))


def _encoded(value: str | bytes) -> str:
    raw = value if isinstance(value, bytes) else value.encode("utf-8", "surrogatepass")
    return quote_from_bytes(raw, safe="")


def _as_received(value: str | bytes) -> str:
    """A multipart text field as the server reads it (Django's client sends text only as UTF-8)."""
    raw = value if isinstance(value, bytes) else value.encode("utf-8", "surrogatepass")
    return raw.decode("utf-8", "replace")


def _post(client: Client, url: str, fields: dict):
    """Posts `fields` as a browser's form would, each value's bytes as they are (not re-encoded)."""
    pairs = [
        (key, item)
        for key, value in fields.items()
        for item in (value if isinstance(value, list) else [value])
    ]
    body = "&".join(f"{_encoded(key)}={_encoded(value)}" for key, value in pairs)
    return client.generic("POST", url, body, content_type="application/x-www-form-urlencoded")


def _messages(response) -> list[str]:
    return [message.level_tag for message in get_messages(response.wsgi_request)]


def _rows(*models) -> list:
    """The rows of the tables a form may write, to compare before and after a refused post."""
    return [list(model.objects.order_by("pk").values()) for model in models]


def _people_rows() -> list:
    groups = User.groups.through.objects.order_by("pk").values()
    return [*_rows(User, PasswordLink), list(groups)]


@pytest.fixture
def staff(make_user, campaign) -> dict:
    """A person of each kind; nothing is graded yet, so that the settings page takes a new scale."""
    return {
        "root": User.objects.create_superuser("root", password="pw-root-1"),
        "boss": make_user("boss", "manager"),
        "ann": make_user("ann", "annotator"),
        "rita": make_user("rita", "reviewer"),
    }


@pytest.fixture
def labelled_task(staff, campaign):
    task = task_next(annotator=staff["ann"], campaign=campaign).relevance_task
    judgment_submit(annotator=staff["ann"], task=task, grade=1)
    return task


@pytest.fixture
def settings_shown(boss, campaign) -> dict:
    """What the settings page's form posts as shown; nothing is graded, so its scale can change."""
    page = boss.get(reverse("annotation:campaign_settings", args=[campaign.pk])).content.decode()
    shown = form_data(page, "settings-form")
    assert "scale-0-label" in shown
    return shown


@pytest.fixture
def boss(staff) -> Client:
    client = Client()
    client.force_login(staff["boss"])
    return client


@PAGES
@given(
    bundle=st.one_of(st.binary(max_size=200), st.just(json.dumps(SMALL_BUNDLE).encode())),
    runs=st.dictionaries(
        st.one_of(st.sampled_from(["run_model_0", "run_model_1", "run_model_²"]), TEXT), VALUE
    ),
    files=st.dictionaries(
        st.sampled_from(["run_file_0", "run_file_1", "run_file_12", "bundle"]), st.binary()
    ),
)
@example(bundle=b"{}", runs={"run_model_\u00b2": "exp", "run_model_0": "ex\x00p"}, files={"run_file_0": b""})
def test_the_new_campaign_page(boss, settings, tmp_path_factory, bundle, runs, files):
    settings.IMPORTS_DIR = folder = tmp_path_factory.mktemp("imports")
    body = {
        "bundle": SimpleUploadedFile("b.json", bundle),
        **{_as_received(key): _as_received(value) for key, value in runs.items()},
        **{key: SimpleUploadedFile(f"{key}.txt", content) for key, content in files.items()},
    }
    with transaction.atomic():
        response = boss.post(reverse("annotation:campaign_new"), body)
        assert response.status_code in (200, 302), response.content[:300]
        if response.status_code == 200:
            assert not CampaignImport.objects.exists() and not any(folder.iterdir())
        transaction.set_rollback(True)


SETTINGS_FIELDS = [
    "scale-0-value",
    "scale-1-label",
    "description",
    "guidelines",
    "overlap",
    "cutoffs",
    "launch_min_gsb",
    "task_order",
]


@PAGES
@given(
    scale=VALUE,
    changes=st.dictionaries(st.one_of(st.sampled_from(SETTINGS_FIELDS), TEXT), VALUE, max_size=3),
)
@example(scale=_deep(3_000), changes={})  # cases found by hand once, kept so that every run tries them
@example(scale="x" * 300, changes={"overlap": "x"})
def test_the_settings_page(boss, campaign, settings_shown, scale, changes):
    url = reverse("annotation:campaign_settings", args=[campaign.pk])
    before = _rows(Campaign)
    with transaction.atomic():
        response = _post(boss, url, {**settings_shown, "scale-0-label": scale, **changes})
        assert response.status_code in (200, 302), response.content[:300]
        if response.status_code == 200:
            assert _rows(Campaign) == before
        transaction.set_rollback(True)


@PAGES
@given(fields=st.dictionaries(st.sampled_from(["username", "name", "role"]), VALUE))
def test_the_people_page_adding_a_person(boss, fields):
    before = _people_rows()
    with transaction.atomic():
        response = _post(boss, reverse("annotation:people"), fields)
        assert response.status_code in (200, 302), response.content[:300]
        if response.status_code == 200:
            assert _people_rows() == before
        transaction.set_rollback(True)


@PAGES
@given(
    target=st.sampled_from(["ann", "rita", "root", "boss"]),
    fields=st.dictionaries(
        st.sampled_from(["action", "role"]),
        st.one_of(VALUE, st.sampled_from(["password_reset", "deactivate", "activate", "role", "reviewer"])),
    ),
)
def test_the_people_page_acting_on_a_person(boss, staff, target, fields):
    before = _people_rows()
    with transaction.atomic():
        response = _post(boss, reverse("annotation:person", args=[staff[target].pk]), fields)
        assert response.status_code in (302, 403), response.content[:300]
        if response.status_code == 403 or "error" in _messages(response):
            assert _people_rows() == before
        transaction.set_rollback(True)


@PAGES
@given(
    fields=st.dictionaries(
        st.sampled_from(["open_to_all", "members"]),
        st.one_of(VALUE, st.lists(st.one_of(VALUE, st.integers(-(2**70), 2**70).map(str)), max_size=3)),
    )
)
def test_the_members_page(boss, campaign, fields):
    before = _rows(Campaign, Campaign.members.through)
    with transaction.atomic():
        response = _post(boss, reverse("annotation:campaign_members", args=[campaign.pk]), fields)
        assert response.status_code in (200, 302), response.content[:300]
        if response.status_code == 200:
            assert _rows(Campaign, Campaign.members.through) == before
        transaction.set_rollback(True)


@PAGES
@given(fields=st.dictionaries(st.sampled_from(["label", "reason", "version"]), VALUE))
def test_the_final_label(staff, labelled_task, fields):
    client = Client()
    client.force_login(staff["rita"])
    task = labelled_task
    with transaction.atomic():
        response = _post(client, reverse("annotation:review_relevance", args=[task.pk]), fields)
        assert response.status_code == 302, response.content[:300]
        if "error" in _messages(response):
            assert not Adjudication.objects.exists()
        transaction.set_rollback(True)


@PAGES
@given(
    fields=st.dictionaries(
        st.sampled_from(["action", "annotator", "reason", "next"]),
        st.one_of(
            VALUE, st.sampled_from(["exclude", "reinstate", "confirm", "ann", "https://evil.example/"])
        ),
    )
)
def test_the_exclusions(boss, campaign, fields):
    before = _rows(AnnotatorExclusion)
    with transaction.atomic():
        response = _post(boss, reverse("annotation:campaign_exclusions", args=[campaign.pk]), fields)
        assert response.status_code == 302, response.content[:300]
        assert response["Location"].startswith("/"), response["Location"]  # never to another site
        if "error" in _messages(response):
            assert _rows(AnnotatorExclusion) == before
        transaction.set_rollback(True)
