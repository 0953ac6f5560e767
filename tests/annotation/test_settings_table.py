"""The table of campaign settings against the `Campaign` model and the README, and the bundle parser read
from it."""

import dataclasses
import enum
import io
from pathlib import Path

import pytest
from django.core.management import call_command

from annotation.bundle.campaign import parse_settings
from annotation.bundle.reading import Reader
from annotation.campaign_settings import (
    CAMPAIGN_SETTINGS,
    SETTINGS_BY_NAME,
    Kind,
    Setting,
    settings_table_markdown,
)
from annotation.errors import InputError
from annotation.models import Campaign

# Campaign fields that are not settings: what it is, its texts and scale, its standard, membership, lifetime.
NOT_SETTINGS = {
    "id",
    "name",
    "description",
    "guidelines",
    "scale",
    "standard",
    "members",
    "open_to_all",
    "created_at",
    "archived_at",
}


def _plain(value):
    """A choice (`GSBScale.THREE_POINT`) as its value (3)."""
    return value.value if isinstance(value, enum.Enum) else value


def model_mismatches(settings: list[Setting]) -> list[str]:
    """Where the table and the model's fields disagree: a field or setting only one side has, a default
    (type and value), the choices, a length, a help text the model gives."""
    fields = {field.name: field for field in [*Campaign._meta.concrete_fields, *Campaign._meta.many_to_many]}
    names = [setting.name for setting in settings]
    problems = [
        f"{name}: a Campaign field the table lacks" for name in fields if name not in {*names, *NOT_SETTINGS}
    ]
    for setting in settings:
        field = fields.get(setting.name)
        if field is None:
            problems.append(f"{setting.name}: not a Campaign field")
            continue
        model, table = _plain(field.get_default()), setting.default_value
        if (type(model), model) != (type(table), table):
            problems.append(f"{setting.name}: the default is {model!r} in the model, {table!r} in the table")
        if list(field.choices or []) != (setting.choices.choices if setting.choices else []):
            problems.append(f"{setting.name}: other choices in the model")
        if setting.max_length is not None and setting.max_length != field.max_length:
            problems.append(f"{setting.name}: another length in the model")
        if field.help_text and field.help_text != setting.help:
            problems.append(f"{setting.name}: another help text in the model")
    return problems


def test_the_table_and_the_model_agree():
    assert model_mismatches(list(CAMPAIGN_SETTINGS)) == []


def _changed(setting: str, **changes) -> list[Setting]:
    return [dataclasses.replace(s, **changes) if s.name == setting else s for s in CAMPAIGN_SETTINGS]


def test_the_check_sees_a_default_a_field_or_a_help_text_that_differs():
    assert model_mismatches(_changed("overlap", default=4)) == [
        "overlap: the default is 3 in the model, 4 in the table"
    ]
    assert model_mismatches(_changed("flag_min_seconds", default=2)) == [
        "flag_min_seconds: the default is 2.0 in the model, 2 in the table"
    ]
    assert model_mismatches(_changed("cutoffs", default=lambda: [1, 5])) == [
        "cutoffs: the default is [1, 3, 5, 10] in the model, [1, 5] in the table"
    ]
    assert model_mismatches(_changed("pool_depth", help="Top-k.")) == [
        "pool_depth: another help text in the model"
    ]
    assert model_mismatches(_changed("gain", name="gains")) == [
        "gain: a Campaign field the table lacks",
        "gains: not a Campaign field",
    ]


def test_a_choice_setting_has_choices_and_only_it():
    assert all(
        (setting.kind is Kind.CHOICE) == (setting.choices is not None) for setting in CAMPAIGN_SETTINGS
    )


def test_a_bundle_without_settings_gets_the_table_defaults():
    assert parse_settings({}, Reader("b.json")) == {s.name: s.default_value for s in CAMPAIGN_SETTINGS}


def _refusal(settings: dict) -> str:
    with pytest.raises(InputError) as refused:
        parse_settings(settings, Reader("b.json"))
    return str(refused.value)


@pytest.mark.parametrize(
    "setting", [s for s in CAMPAIGN_SETTINGS if s.low is not None], ids=lambda setting: setting.name
)
def test_a_range_keeps_its_ends_as_the_table_says(setting):
    inside = (setting.high - setting.low) / 1000 if setting.open else 0
    for value in (setting.low + inside, setting.high - inside):
        assert parse_settings({setting.name: value}, Reader("b.json"))[setting.name] == value
    below = setting.low if setting.open else setting.low - 1
    message = f"b.json: settings.{setting.name}: must be between {setting.range_text}"
    assert _refusal({setting.name: below}) == message


def test_range_errors_say_what_an_end_means():
    assert _refusal({"reuse_max_age_days": -1}).endswith("must be between 0 (any age) and 36500")
    # Below 0 the decision rule cannot be built: the reports of such a campaign failed.
    for gsb in (1.5, -0.25):
        refused = _refusal({"launch_min_gsb": gsb})
        assert refused.endswith("must be between 0 and 1 (a launch needs GSB above 0)")
    assert _refusal({"launch_alpha": 1}).endswith("settings.launch_alpha: must be between 0 and 1")
    assert _refusal({"repeat_rate": 0.6}).endswith("must be between 0 and 0.5")


def test_choices_measures_and_cutoffs_are_read_by_their_kind():
    assert _refusal({"gsb_scale": 4}) == "b.json: settings.gsb_scale: must be one of 3, 5"
    assert _refusal({"gain": "cubic"}) == "b.json: settings.gain: must be one of exponential, linear"
    read = parse_settings({"gsb_scale": 5.0, "primary_measure": " map", "cutoffs": [10, 1, 10]}, Reader("b"))
    assert (type(read["gsb_scale"]), read["gsb_scale"]) == (int, 5)  # stored and shown as the choice
    assert (read["primary_measure"], read["cutoffs"]) == ("AP", [1, 10])
    assert parse_settings({"cutoffs": None}, Reader("b"))["cutoffs"] == [1, 3, 5, 10]
    too_long = "nDCG@" + "9" * 30  # a valid measure whose name the model's column cannot hold
    longest = SETTINGS_BY_NAME["primary_measure"].max_length
    assert _refusal({"primary_measure": too_long}).endswith(f"is longer than {longest} characters")


README = Path(__file__).resolve().parents[2] / "README.md"
TABLE_START, TABLE_END = (
    "<!-- settings table: python manage.py settings_table -->\n",
    "<!-- end of settings table -->",
)


def test_the_readme_table_is_the_settings_table():
    readme = README.read_text(encoding="utf-8")
    assert readme.count(TABLE_START) == readme.count(TABLE_END) == 1
    block = readme.split(TABLE_START)[1].split(TABLE_END)[0]
    assert block == settings_table_markdown(), "update the README with `python manage.py settings_table`"
    rows = [row.split(" | ")[0].strip("|` ") for row in block.splitlines()[2:]]
    assert rows == [setting.name for setting in CAMPAIGN_SETTINGS]


def test_the_command_prints_the_readme_table():
    out = io.StringIO()
    call_command("settings_table", stdout=out)
    assert out.getvalue() == settings_table_markdown()
