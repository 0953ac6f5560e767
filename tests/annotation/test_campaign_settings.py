"""The settings page, archiving and exclusions, as a manager uses them in the browser's forms."""

import pytest
from django.contrib.auth import get_user_model
from django.urls import reverse
from rest_framework.test import APIClient

from annotation.bundle import JudgmentRow, PreferenceRow
from annotation.campaign_settings import CAMPAIGN_SETTINGS, SETTING_NAMES, Kind, Lock, Setting
from annotation.errors import InputError, TaskError, TaskErrorCode
from annotation.models import AnnotatorExclusion, Judgment, RelevanceTask
from annotation.services.assignment import task_next
from annotation.services.campaigns import campaign_change
from annotation.services.label_import import labels_import


@pytest.fixture
def manager(client, make_user):
    client.force_login(make_user("boss", "manager"))
    return client


FLAGS = ("auto_same_identical", "reuse_labels", "redundancy_aware")


def scale_rows(scale: list[dict]) -> dict:
    """A scale as the settings page posts it: a row of fields per grade."""
    return {
        f"scale-{index}-{part}": grade.get(part, "")
        for index, grade in enumerate(scale)
        for part in ("value", "label", "description")
    }


def settings_post(campaign, scale=None, **changes) -> dict:
    data = {
        "description": campaign.description,
        "guidelines": campaign.guidelines,
        **scale_rows(campaign.scale if scale is None else scale),
        "cutoffs": ", ".join(map(str, campaign.cutoffs)),
        "position_weights": ", ".join(map(str, campaign.position_weights or [])),
        **{
            key: getattr(campaign, key)
            for key in SETTING_NAMES
            if key
            not in ("cutoffs", "position_weights", "auto_same_identical", "reuse_labels", "redundancy_aware")
        },
    }
    for flag in FLAGS:
        if getattr(campaign, flag):
            data[flag] = "on"
    data.update(changes)
    return data


def test_settings_are_saved_and_checked_as_by_the_api(manager, campaign):
    url = reverse("annotation:campaign_settings", args=[campaign.pk])
    assert manager.get(url).status_code == 200
    page = manager.post(url, settings_post(campaign, guidelines="Read twice.", overlap=4, cutoffs="5, 1"))
    assert page.status_code == 302
    campaign.refresh_from_db()
    assert (campaign.guidelines, campaign.overlap, campaign.cutoffs) == ("Read twice.", 4, [1, 5])
    refused = manager.post(url, settings_post(campaign, launch_min_gsb="-5"))
    assert refused.status_code == 200
    assert list(refused.context["form"].errors) == ["launch_min_gsb"]
    assert refused.content.decode().count("must be between 0 and 1") == 2  # at the top, and beside the field
    assert manager.post(url, settings_post(campaign, cutoffs="one")).status_code == 200
    assert manager.post(url, settings_post(campaign, primary_measure="nDCG@x")).status_code == 200
    campaign.refresh_from_db()
    assert campaign.launch_min_gsb == 0.05 and campaign.cutoffs == [1, 5]


def test_settings_errors_are_listed_at_the_top_once_each_and_beside_their_fields(manager, campaign):
    url = reverse("annotation:campaign_settings", args=[campaign.pk])
    page = manager.post(url, settings_post(campaign, overlap=0)).content.decode()
    top = page[page.index('id="form-errors"') : page.index("</div>", page.index('id="form-errors"'))]
    assert "Not saved: one problem to fix." in top and 'href="#id_overlap"' in top
    assert "settings: settings.overlap" not in page and page.count("must be between 1 and 1000") == 2
    page = manager.post(url, settings_post(campaign, cutoffs="1, three, 10")).content.decode()
    assert page.index('id="form-errors"') < page.index('id="id_description"')  # above every field
    assert 'href="#id_cutoffs"' in page
    scale = [{"value": 0, "label": "No"}, {"value": "", "label": "Yes"}, {"value": 0, "label": "Twice"}]
    response = manager.post(url, settings_post(campaign, scale=scale))
    assert response.context["form"].errors == {"scale-1-value": ["Give this grade a value (a whole number)."]}
    scale[1]["value"] = 2
    response = manager.post(url, settings_post(campaign, scale=scale))
    (error,) = response.context["form"].errors.values()
    assert "Scale" in response.content.decode() and error


def _another_value(setting: Setting, current):
    """A valid value of the setting other than `current`."""
    if setting.choices is not None:
        candidates = setting.choices.values
    elif setting.kind is Kind.BOOLEAN:
        candidates = [not current]
    elif setting.kind is Kind.CUTOFFS:
        candidates = [[2, 4], [3]]
    elif setting.kind is Kind.MEASURE:
        candidates = ["AP", "RR"]
    elif setting.kind is Kind.WEIGHTS:
        candidates = [[1.0, 0.8] + [1.0 / rank for rank in range(3, 13)], [1.0] * 12]
    elif setting.kind is Kind.GUARDRAILS:
        candidates = ["CTR@5 >= -0.02; Abandonment <= 0.01", ""]
    elif setting.kind is Kind.ACTION_GRADES:
        candidates = [
            "no_click=0, click=1, cart=3, purchase_good=4, purchase_unrated=3, purchase_poor=1, "
            "good_rating=4, min_dwell=10"
        ]
    elif setting.kind is Kind.INTEGER:
        candidates = [setting.low + 1, setting.low + 2]
    else:
        candidates = [(setting.low + setting.high) / 2, (setting.low + setting.high) / 4]
    return next(value for value in candidates if value != current)


def test_every_setting_of_the_table_is_changed_on_the_page(manager, campaign):
    wanted = {
        setting.name: _another_value(setting, getattr(campaign, setting.name))
        for setting in CAMPAIGN_SETTINGS
    }
    data = settings_post(campaign)
    for name, value in wanted.items():
        if isinstance(value, bool):
            data.pop(name, None)
            data.update({name: "on"} if value else {})
        else:
            data[name] = ", ".join(map(str, value)) if isinstance(value, list) else str(value)
    url = reverse("annotation:campaign_settings", args=[campaign.pk])
    assert manager.post(url, data).status_code == 302
    campaign.refresh_from_db()
    assert {name: getattr(campaign, name) for name in wanted} == wanted


def test_the_settings_the_table_locks_are_fixed_once_a_side_by_side_task_was_handed_out(campaign, make_user):
    campaign = campaign_change(campaign=campaign, changes={"task_order": "side_by_side_first"})
    assert task_next(annotator=make_user("ann", "annotator"), campaign=campaign).side_by_side_task_id
    for setting in CAMPAIGN_SETTINGS:
        change = {setting.name: _another_value(setting, getattr(campaign, setting.name))}
        if setting.locks is Lock.SIDE_BY_SIDE:
            with pytest.raises(InputError) as refused:
                campaign_change(campaign=campaign, changes=change)
            assert (refused.value.field, refused.value.code) == (f"settings.{setting.name}", "invalid_value")
        else:
            campaign = campaign_change(campaign=campaign, changes=change)
            assert getattr(campaign, setting.name) == change[setting.name]
    assert [s.name for s in CAMPAIGN_SETTINGS if s.locks is Lock.SIDE_BY_SIDE] == ["gsb_depth", "gsb_scale"]


def test_the_scale_changes_until_something_is_graded(manager, campaign, make_user):
    url = reverse("annotation:campaign_settings", args=[campaign.pk])
    scale = [{"value": 0, "label": "No"}, {"value": 1, "label": "Yes"}, {}, {}, {}]  # three rows left empty
    assert manager.post(url, settings_post(campaign, scale=scale)).status_code == 302
    campaign.refresh_from_db()
    assert campaign.grade_values == [0, 1]
    labels_import(
        campaign=campaign, judgments=[JudgmentRow(1, "ann", "q1", "d1", 1)], preferences=[], source="t"
    )
    page = manager.get(url).content.decode()
    assert (
        'name="scale-0-label"' in page and "disabled" in page.split('name="scale-0-label"')[1].split(">")[0]
    )
    # A disabled field keeps the stored scale whatever is posted; the service refuses a change anyway.
    manager.post(url, settings_post(campaign, scale=[{"value": 0, "label": "a"}, {"value": 5, "label": "b"}]))
    campaign.refresh_from_db()
    assert campaign.grade_values == [0, 1]


def test_an_archived_campaign_is_read_only_and_hidden_from_annotators(manager, campaign, make_user):
    annotator = make_user("ann", "annotator")
    api = APIClient()
    api.force_authenticate(annotator)
    held = api.post(f"/api/campaigns/{campaign.pk}/next-task/").json()
    manager.post(reverse("annotation:campaign_archive", args=[campaign.pk]), {"archived": "1"})
    campaign.refresh_from_db()
    assert campaign.archived_at is not None
    assert api.get("/api/campaigns/").json()["count"] == 0
    asked = api.post(f"/api/campaigns/{campaign.pk}/next-task/")
    assert asked.status_code == 409 and asked.json()["code"] == "archived"
    answer = api.post(f"/api/tasks/{held['id']}/judgment/", {"grade": 1}, format="json")
    assert answer.status_code == 409 and answer.json()["code"] == "archived"
    assert not Judgment.objects.exists()
    page = manager.post(
        reverse("annotation:campaign_settings", args=[campaign.pk]), settings_post(campaign, overlap=5)
    )
    assert "archived: nothing in it changes until a manager restores it" in page.content.decode()
    assert manager.get(reverse("metrics:campaign_overview", args=[campaign.pk])).status_code == 200
    manager.post(reverse("annotation:campaign_archive", args=[campaign.pk]), {"archived": "0"})
    assert api.post(f"/api/campaigns/{campaign.pk}/next-task/").status_code == 200


def test_excluding_an_annotator_frees_their_slots_and_reinstating_takes_them_back(
    manager, campaign, make_user
):
    labels_import(
        campaign=campaign,
        judgments=[JudgmentRow(1, "speedy", "q1", doc, 0) for doc in ("d1", "d2", "d3")],
        preferences=[PreferenceRow(2, "speedy", "q1", "exp", "bad")],
        source="t",
    )

    def slots():
        return sorted(RelevanceTask.objects.filter(campaign=campaign).values_list("slots_spent", flat=True))

    before = slots()
    url = reverse("annotation:campaign_exclusions", args=[campaign.pk])
    manager.post(url, {"action": "exclude", "annotator": "speedy", "reason": "0.1 s a label"})
    exclusion = AnnotatorExclusion.objects.get()
    assert (exclusion.annotator.username, exclusion.excluded_by.username, exclusion.reason) == (
        "speedy",
        "boss",
        "0.1 s a label",
    )
    assert sum(slots()) == sum(before) - 3
    refused = manager.post(url, {"action": "exclude", "annotator": "speedy", "reason": "again"}, follow=True)
    assert "already left out" in refused.content.decode()
    with pytest.raises(TaskError) as refused_work:
        task_next(annotator=get_user_model().objects.get(username="speedy"), campaign=campaign)
    assert refused_work.value.code == TaskErrorCode.EXCLUDED
    manager.post(url, {"action": "reinstate", "annotator": "speedy"})
    exclusion.refresh_from_db()
    assert exclusion.reinstated_by.username == "boss" and exclusion.reinstated_at is not None
    assert slots() == before


@pytest.mark.parametrize(
    ("post", "message"),
    [
        ({"action": "exclude", "annotator": "nobody", "reason": "r"}, "no person named 'nobody'"),
        ({"action": "exclude", "annotator": "ann", "reason": " "}, "say why these labels are left out"),
        ({"action": "reinstate", "annotator": "ann"}, "labels are not left out"),
        ({"action": "explode"}, "Select a valid choice"),
    ],
)
def test_bad_exclusion_posts_are_messages(manager, campaign, make_user, post, message):
    make_user("ann", "annotator")
    page = manager.post(reverse("annotation:campaign_exclusions", args=[campaign.pk]), post, follow=True)
    assert page.status_code == 200 and message in page.content.decode().replace("&#x27;", "'")
    assert not AnnotatorExclusion.objects.exists()
