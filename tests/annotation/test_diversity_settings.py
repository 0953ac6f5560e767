"""The diversity and discount settings: position weights (one per rank, at least as many as the deepest
cut-off), redundancy-aware nDCG, alpha and novelty's popularity; parsed, changed on the page and the API."""

import math

import pytest
from django.urls import reverse

from annotation.bundle import parse_bundle, parse_campaign_change
from annotation.campaign_settings import setting_values
from annotation.errors import InputError
from annotation.services.campaigns import campaign_change
from metrics.selectors.scores import ranking_settings, report_measures
from tests.factories import SMALL_BUNDLE, form_data

WEIGHTS = "settings.position_weights"


def bundle_with(**settings):
    return {**SMALL_BUNDLE, "settings": {**SMALL_BUNDLE["settings"], **settings}}


def test_defaults_keep_the_log2_discount_and_ndeval_alpha():
    settings = parse_bundle(bundle_with(), "b.json").settings
    assert (settings["position_weights"], settings["redundancy_aware"], settings["alpha"]) == (
        None,
        False,
        0.5,
    )
    assert settings["novelty_popularity"] == "bundle"


def test_weights_are_read_as_floats():
    weights = [1, 0.8, 0.63, 0.5, 0.43, 0.39, 0.36, 0.33, 0.32, 0.3]
    settings = parse_bundle(bundle_with(position_weights=weights), "b.json").settings
    assert settings["position_weights"] == [float(w) for w in weights]
    assert all(type(w) is float for w in settings["position_weights"])


@pytest.mark.parametrize(
    ("settings", "field", "message"),
    [
        (
            {"position_weights": []},
            WEIGHTS,
            "must be null or a non-empty list of numbers",
        ),
        ({"position_weights": "1,2"}, WEIGHTS, "must be null or a non-empty list"),
        (
            {"position_weights": [1] * 9 + ["x"]},
            WEIGHTS,
            "the weight of rank 10 must be a number",
        ),
        ({"position_weights": [1] * 9 + [True]}, WEIGHTS, "rank 10 must be a number"),
        (
            {"position_weights": [1] * 4 + [-0.1] * 6},
            WEIGHTS,
            "rank 5 must be finite and ≥ 0",
        ),
        ({"position_weights": [1] * 1001}, WEIGHTS, "holds more than 1000 weights"),
        (
            {"position_weights": [1, 0.8, 0.6]},
            WEIGHTS,
            "3 weights are fewer than the deepest cut-off, 10: give one per rank",
        ),
        (
            {"position_weights": [1] * 10, "primary_measure": "nDCG"},
            "settings.primary_measure",
            "nDCG needs a cut-off of at most 10 with position weights",
        ),
        (
            {"position_weights": [1] * 10, "primary_measure": "nDCG@20"},
            "settings.primary_measure",
            "nDCG@20 needs a cut-off of at most 10",
        ),
        ({"alpha": 1.5}, "settings.alpha", "must be between 0 and 1"),
        ({"alpha": "0.5"}, "settings.alpha", "must be an integer or a number"),
        ({"redundancy_aware": 1}, "settings.redundancy_aware", "must be a boolean"),
        ({"novelty_popularity": "clicks"}, "settings.novelty_popularity", "must be one of bundle, rankings"),
    ],
)
def test_bad_settings_name_the_field(settings, field, message):
    with pytest.raises(InputError) as caught:
        parse_bundle(bundle_with(**settings), "b.json")
    assert caught.value.field == field
    assert message in str(caught.value)


def test_a_nan_weight_is_refused():
    with pytest.raises(InputError, match="rank 2 must be finite"):
        parse_bundle(bundle_with(position_weights=[1, math.nan] + [1] * 8), "b.json")


def test_a_change_is_checked_against_the_other_settings(campaign):
    campaign = campaign_change(campaign=campaign, changes={"position_weights": [1] * 10})
    with pytest.raises(InputError, match="fewer than the deepest cut-off, 20"):
        parse_campaign_change({"settings": {"cutoffs": [5, 20]}}, setting_values(campaign), "change")
    assert parse_campaign_change({"settings": {"cutoffs": [5]}}, setting_values(campaign), "change") == {
        "cutoffs": [5]
    }
    assert parse_campaign_change({"settings": {"position_weights": None}}, setting_values(campaign), "c") == {
        "position_weights": None
    }


def test_the_report_uses_the_weights_and_leaves_out_uncut_ndcg(campaign):
    assert "nDCG" in report_measures(campaign)[0]
    assert ranking_settings(campaign).position_weights is None
    weights = [1, 0.8] + [0.5] * 8
    campaign = campaign_change(campaign=campaign, changes={"position_weights": weights})
    assert "nDCG" not in report_measures(campaign)[0]
    assert ranking_settings(campaign).position_weights == tuple(weights)


def test_the_settings_page_takes_weights_as_typed_and_empty_as_none(client, make_user, campaign):
    client.force_login(make_user("boss", "manager"))
    url = reverse("annotation:campaign_settings", args=[campaign.pk])
    page = client.get(url).content.decode()
    assert 'name="position_weights"' in page and 'name="alpha"' in page
    shown = form_data(page, "settings-form")
    refused = client.post(url, {**shown, "position_weights": "1, 0.8, 0.6"})
    assert refused.status_code == 200 and "fewer than the deepest cut-off" in refused.content.decode()
    campaign.refresh_from_db()
    assert campaign.position_weights is None
    typed = ", ".join(["1", "0.8"] + ["0.5"] * 8)
    assert client.post(url, {**shown, "position_weights": typed}).status_code == 302
    campaign.refresh_from_db()
    assert campaign.position_weights == [1.0, 0.8] + [0.5] * 8
    assert 'value="1.0, 0.8, 0.5' in client.get(url).content.decode()
    assert client.post(url, {**shown, "position_weights": ""}).status_code == 302
    campaign.refresh_from_db()
    assert campaign.position_weights is None


def test_the_api_reads_and_changes_the_weights(make_user, campaign):
    from rest_framework.test import APIClient

    api = APIClient()
    api.force_authenticate(make_user("boss", "manager"))
    url = f"/api/campaigns/{campaign.pk}/"
    answer = api.patch(url, {"settings": {"position_weights": [1] * 9}}, format="json")
    assert answer.status_code == 400 and "deepest cut-off" in answer.content.decode()
    answer = api.patch(url, {"settings": {"position_weights": [1] * 10, "alpha": 0.3}}, format="json")
    assert answer.status_code == 200, answer.content
    campaign.refresh_from_db()
    assert (campaign.position_weights, campaign.alpha) == ([1.0] * 10, 0.3)
    assert api.get(url).json()["position_weights"] == [1.0] * 10
