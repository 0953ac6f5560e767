"""Generated bad input through every importer and endpoint: a 4xx or a one-line error, never a 500 or a
traceback, and nothing written when refused (hypothesis, derandomized: every run tries the same examples)."""

import copy
import json

import pytest
from django.core.management import CommandError, call_command
from django.db import transaction
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from annotation.bundle import parse_bundle, parse_judgment_lines
from annotation.errors import InputError
from annotation.models import Adjudication, Campaign, Judgment, Preference
from annotation.services.campaigns import campaign_import
from tests.factories import SMALL_BUNDLE

FUZZ = settings(
    max_examples=40,
    deadline=None,
    derandomize=True,  # the same examples on every run: a failure here is reproducible
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


def _nested(depth: int):
    value: list = []
    for _ in range(depth):
        value = [value]
    return value


# Values a careless file or a hostile client sends: wrong types, non-finite and huge numbers, NUL, lone
# surrogates, long and empty strings, deep nesting.
ODD = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(alphabet=st.characters(exclude_categories=()), max_size=20),
    st.sampled_from(["\x00", "a\x00b", "\ud800", "x" * 6000, "", " ", "2", "-1", "=1+1", "team/exp"]),
    st.integers(min_value=50, max_value=5000).map(_nested),
    st.lists(st.integers(), max_size=3),
    st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
)
BUNDLE_PATHS = [
    ("name",),
    ("description",),
    ("scale",),
    ("settings",),
    *(("settings", key) for key in ("overlap", "pool_depth", "cutoffs", "gain", "launch_min_gsb")),
    *(("settings", key) for key in ("primary_measure", "min_coverage", "task_order", "auto_same_identical")),
    ("models",),
    ("models", 1, "name"),
    ("models", 0, "role"),
    ("queries", 0, "id"),
    ("queries", 0, "text"),
    ("queries", 1, "weight"),
    ("documents", 0, "url"),
    ("documents", 2),
    ("rankings", 0, "documents"),
    ("rankings", 0, "documents", 1),
    ("rankings", 2, "model"),
    ("gold",),
]


def _changed(path: tuple, value) -> dict:
    bundle = copy.deepcopy(SMALL_BUNDLE)
    target = bundle
    for key in path[:-1]:
        target = target.setdefault(key, {}) if isinstance(key, str) else target[key]
    target[path[-1]] = value
    return bundle


def _body(value) -> bytes:
    """JSON as a client would send it; Python's encoder writes NaN and Infinity, as some clients do."""
    try:
        return json.dumps(value).encode("utf-8", "surrogatepass")
    except RecursionError:
        return ("[" * 100_000).encode()


@pytest.fixture(autouse=True)
def _quiet_throttles(settings):
    settings.REST_FRAMEWORK = {**settings.REST_FRAMEWORK, "DEFAULT_THROTTLE_CLASSES": []}


# Cases found by hand once, kept so that every run tries them.
KNOWN = [(("name",), _nested(5000)), (("settings", "launch_min_gsb"), float("nan")), (("name",), "\ud800")]


@FUZZ
@given(path=st.sampled_from(BUNDLE_PATHS), value=ODD)
@example(*KNOWN[0])
@example(*KNOWN[1])
@example(*KNOWN[2])
def test_bundles_import_or_are_refused_with_nothing_written(db, path, value):
    with transaction.atomic():
        try:
            campaign_import(bundle=parse_bundle(_changed(path, value), "fuzz.json"))
        except InputError as error:
            assert str(error).startswith("fuzz.json: ")
            assert not Campaign.objects.exists()
        transaction.set_rollback(True)


@FUZZ
@given(path=st.sampled_from(BUNDLE_PATHS), value=ODD)
@example(*KNOWN[0])
@example(*KNOWN[1])
@example(*KNOWN[2])
def test_the_bundle_endpoint_answers_4xx_not_500(manager, path, value):
    with transaction.atomic():
        response = manager.generic(
            "POST", "/api/campaigns/", _body(_changed(path, value)), content_type="application/json"
        )
        assert response.status_code in (201, 400), response.content[:300]
        assert (response.status_code == 201) == Campaign.objects.exists()
        transaction.set_rollback(True)


@FUZZ
@given(
    key=st.sampled_from(["overlap", "launch_min_gsb", "primary_measure", "cutoffs", "min_queries"]), value=ODD
)
def test_the_settings_patch_answers_4xx_and_stores_nothing_it_refuses(manager, campaign, key, value):
    before = Campaign.objects.values().get(pk=campaign.pk)
    with transaction.atomic():
        body = _body({"settings": {key: value}, "description": value if isinstance(value, str) else "d"})
        response = manager.generic(
            "PATCH", f"/api/campaigns/{campaign.pk}/", body, content_type="application/json"
        )
        assert response.status_code in (200, 400), response.content[:300]
        if response.status_code == 400:
            assert Campaign.objects.values().get(pk=campaign.pk) == before
        transaction.set_rollback(True)


LABEL_FIELDS = ["grade", "verdict", "strength", "comment", "seconds_spent", "version", "side"]


@FUZZ
@given(body=st.dictionaries(st.sampled_from(LABEL_FIELDS), ODD, max_size=4) | ODD)
def test_label_bodies_answer_4xx_and_store_nothing_they_refuse(annotator, campaign, body):
    task = annotator.post(f"/api/campaigns/{campaign.pk}/next-task/").json()
    with transaction.atomic():
        response = annotator.generic(
            "POST", f"/api/tasks/{task['id']}/judgment/", _body(body), content_type="application/json"
        )
        assert response.status_code in (200, 201, 400, 409), response.content[:300]
        if response.status_code >= 400:
            assert not Judgment.objects.exists() and not Preference.objects.exists()
        transaction.set_rollback(True)


@FUZZ
@given(body=st.dictionaries(st.sampled_from(["grade", "verdict", "reason"]), ODD, max_size=3) | ODD)
def test_adjudication_bodies_answer_4xx(reviewer, campaign, body):
    task = campaign.relevance_tasks.first()
    with transaction.atomic():
        response = reviewer.generic(
            "POST",
            f"/api/review/relevance/{task.pk}/adjudication/",
            _body(body),
            content_type="application/json",
        )
        assert response.status_code in (200, 201, 400), response.content[:300]
        if response.status_code == 400:
            assert not Adjudication.objects.exists()
        transaction.set_rollback(True)


JUDGMENT_LINE = {"annotator": "ann", "query": "q1", "document": "d1", "grade": 1, "seconds_spent": 3}
PREFERENCE_LINE = {"annotator": "ann", "query": "q1", "model": "exp", "verdict": "good", "strength": 1}


@FUZZ
@given(
    line=st.sampled_from([JUDGMENT_LINE, PREFERENCE_LINE]),
    key=st.sampled_from(
        ["annotator", "query", "document", "model", "grade", "verdict", "strength", "seconds_spent"]
    ),
    value=ODD,
)
def test_judgment_lines_parse_or_name_their_line(line, key, value):
    text = _body({**line, key: value}).decode("utf-8", "surrogatepass")
    try:
        parse_judgment_lines(["", text], "labels.jsonl", scale_values={0, 1, 2, 3})
    except InputError as error:
        assert str(error).startswith("labels.jsonl:2: ")


@FUZZ
@given(
    key=st.sampled_from(["annotator", "query", "document", "grade", "seconds_spent", "comment"]),
    value=ODD,
)
def test_the_judgment_import_command_prints_a_line_not_a_traceback(campaign, tmp_path_factory, key, value):
    path = tmp_path_factory.mktemp("labels") / "labels.jsonl"
    path.write_bytes(_body({**JUDGMENT_LINE, key: value}) + b"\n")
    with transaction.atomic():
        try:
            call_command("import_judgments", str(campaign.pk), str(path))
        except CommandError as error:
            assert "labels.jsonl" in str(error) and "\n" not in str(error)
            assert not Judgment.objects.exists()
        transaction.set_rollback(True)
