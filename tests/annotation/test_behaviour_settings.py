"""The settings of what users did: action grades and guardrails, as text in one spelling."""

import dataclasses

import pytest

from annotation.bundle import parse_bundle
from annotation.campaign_settings import SETTINGS_BY_NAME
from annotation.errors import InputError
from annotation.setting_texts import (
    ACTION_GRADE_DEFAULTS,
    ONLINE_METRIC,
    parse_action_grades,
    parse_guardrails,
)
from metrics.compute.interactions.behaviour import ActionGrades
from metrics.compute.interactions.online import metric_names


def test_every_online_metric_may_be_guarded_and_no_other():
    for k in (1, 5, 10, 100):
        assert all(ONLINE_METRIC.fullmatch(name) for name in metric_names(k, ips=True))
    assert not any(ONLINE_METRIC.fullmatch(name) for name in ("nDCG@10", "CTR@0", "CTR", "ips-ctr@10"))


def test_action_grades_are_the_computations_fields_with_its_defaults():
    fields = {field.name: field.default for field in dataclasses.fields(ActionGrades)}
    assert fields == ACTION_GRADE_DEFAULTS


@pytest.mark.parametrize(
    ("text", "rules"),
    [
        ("", []),
        ("IPS-CTR@10 >= -0.01", [("IPS-CTR@10", ">=", -0.01)]),
        (
            "IPS-CTR@10 ≥ −0.01; Abandonment<=0.02;",
            [("IPS-CTR@10", ">=", -0.01), ("Abandonment", "<=", 0.02)],
        ),
        ("ILS@10 <= 0.05; alpha_nDCG@20 >= -0.02", [("ILS@10", "<=", 0.05), ("alpha_nDCG@20", ">=", -0.02)]),
    ],
)
def test_guardrails_are_read(text, rules):
    assert parse_guardrails(text) == rules


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("IPS-CTR@10 > 0", "write each as METRIC >= NUMBER"),
        ("nDCG@10 >= 0", "'nDCG@10' is not an online metric"),
        ("ILS >= 0", "'ILS' is not an online metric .* nor a diversity measure"),
        ("CTR@10 >= low", "'low' is not a number"),
        ("CTR@10 >= inf", "not a finite number"),
    ],
)
def test_bad_guardrails_say_what_is_wrong(text, message):
    with pytest.raises(ValueError, match=message):
        parse_guardrails(text)


def test_action_grades_keep_the_defaults_of_actions_not_named():
    assert parse_action_grades("cart=5, min_dwell=10") == ACTION_GRADE_DEFAULTS | {"cart": 5, "min_dwell": 10}
    for bad, message in (
        ("buy=3", "ACTION one of"),
        ("cart=two", "not a number"),
        ("min_dwell=-1", "0 or more"),
    ):
        with pytest.raises(ValueError, match=message):
            parse_action_grades(bad)


def test_a_bundle_gives_them_as_text_and_gets_them_back_in_one_spelling(bundle_data):
    bundle_data["settings"] |= {"guardrails": "CTR@5>=-0.02", "behaviour_grades": "cart=3"}
    settings = parse_bundle(bundle_data, "b.json").settings
    assert settings["guardrails"] == "CTR@5 >= -0.02"
    assert settings["behaviour_grades"].startswith("no_click=0, click=1, cart=3, purchase_good=3")
    bundle_data["settings"]["guardrails"] = "nDCG@10 >= 0"
    with pytest.raises(InputError) as raised:
        parse_bundle(bundle_data, "b.json")
    assert raised.value.field == "settings.guardrails"
    assert SETTINGS_BY_NAME["guardrails"].default_value == "IPS-CTR@10 >= -0.01"
