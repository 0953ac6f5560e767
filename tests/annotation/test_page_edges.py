"""The pages' forms at their edges: input no database stores or no parser survives is a message, never a
500, and nothing is written (the new campaign and settings pages)."""

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from annotation.models import Campaign, CampaignImport
from tests.factories import SMALL_BUNDLE, form_data


@pytest.fixture
def manager(client, make_user, settings, tmp_path):
    settings.IMPORTS_DIR = tmp_path / "imports"
    client.force_login(make_user("boss", "manager"))
    return client


def _upload(manager, **runs):
    body = {"bundle": SimpleUploadedFile("b.json", json.dumps(SMALL_BUNDLE).encode()), **runs}
    return manager.post(reverse("annotation:campaign_new"), body)


@pytest.mark.parametrize(
    ("runs", "message"),
    [
        (
            {"run_model_0": "ex\x00p", "run_file_0": SimpleUploadedFile("exp.run", b"q1 Q0 d1 1 2 x\n")},
            "run 1: the model&#x27;s name must start with a letter or digit",
        ),
        (
            {"run_model_²": "exp", "run_file_²": SimpleUploadedFile("exp.run", b"q1 Q0 d1 1 2 x\n")},
            "&#x27;run_model_²&#x27; is not a run&#x27;s field",
        ),
    ],
)
def test_the_new_campaign_page_refuses_what_no_database_stores(manager, tmp_path, runs, message):
    response = _upload(manager, **runs)
    assert response.status_code == 200
    assert message in response.content.decode()
    assert not CampaignImport.objects.exists()
    assert not (tmp_path / "imports").exists() or not any((tmp_path / "imports").iterdir())


@pytest.mark.parametrize(
    ("rows", "message"),
    [
        ({"scale-0-label": "x" * 201}, "at most 200 characters"),
        ({"scale-0-value": "one"}, "Enter a whole number"),
        ({"scale-0-value": "100000"}, "-100"),  # out of a grade's range, as the parser says
        ({"scale-1-value": "0"}, "scale"),  # two grades of one value
    ],
)
def test_the_settings_page_refuses_a_scale_no_parser_or_database_takes(manager, campaign, rows, message):
    url = reverse("annotation:campaign_settings", args=[campaign.pk])
    before = Campaign.objects.values().get(pk=campaign.pk)
    data = {**form_data(manager.get(url).content.decode(), "settings-form"), **rows}
    response = manager.post(url, data)
    assert response.status_code == 200
    assert message in response.content.decode()
    assert Campaign.objects.values().get(pk=campaign.pk) == before


@pytest.mark.parametrize(
    "back", ["x", "annotation:x", '[{"value": 0', "https://evil.example/", "//evil.example/"]
)
def test_the_exclusions_form_goes_back_only_to_a_path_of_this_site(manager, campaign, back):
    url = reverse("annotation:campaign_exclusions", args=[campaign.pk])
    response = manager.post(url, {"action": "confirm", "next": back})
    assert response.status_code == 302
    assert response["Location"] == reverse("annotation:campaign_settings", args=[campaign.pk])
    here = reverse("annotation:progress", args=[campaign.pk])
    assert manager.post(url, {"action": "confirm", "next": here})["Location"] == here
