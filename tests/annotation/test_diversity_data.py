"""A bundle's diversity data: documents' attributes and popularity, queries' intents; parsed with file and
field in every error, stored, shown by the new-campaign preview."""

import copy
import json

import pytest
from django.core.management import call_command
from django.urls import reverse

from annotation.bundle import parse_bundle
from annotation.errors import InputError, InputErrorCode
from annotation.models import CampaignImport, Document, Query
from annotation.previews import import_preview
from annotation.services.campaigns import campaign_import, model_rankings_replace
from tests.factories import SMALL_BUNDLE, work_off_the_queue
from trec.files import RankedRun

INTENTS = [{"id": "1", "text": "flights"}, {"id": "hotels", "text": "hotels in Lisbon"}]


def diverse_bundle() -> dict:
    data = copy.deepcopy(SMALL_BUNDLE)
    data["queries"][0]["intents"] = copy.deepcopy(INTENTS)
    data["documents"][0]["attributes"] = {"category": "travel", "brand": "tap", "stars": 4, "sale": True}
    data["documents"][1]["attributes"] = {"category": "travel", "brand": None}
    data["documents"][0]["popularity"] = 0.25
    data["documents"][2]["popularity"] = 1
    return data


def test_attributes_intents_and_popularity_are_stored(db):
    campaign = campaign_import(bundle=parse_bundle(diverse_bundle(), "b.json"))
    assert Query.objects.get(campaign=campaign, external_id="q1").intents == INTENTS
    assert Query.objects.get(campaign=campaign, external_id="q2").intents == []
    documents = {doc.external_id: doc for doc in Document.objects.filter(campaign=campaign)}
    assert documents["d1"].attributes == {"category": "travel", "brand": "tap", "stars": 4, "sale": True}
    assert documents["d2"].attributes == {"category": "travel"}  # a null is no value
    assert documents["d3"].attributes == {}
    assert (documents["d1"].popularity, documents["d2"].popularity, documents["d3"].popularity) == (
        0.25,
        None,
        1.0,
    )


def test_documents_a_run_adds_have_no_attributes(db):
    campaign = campaign_import(bundle=parse_bundle(diverse_bundle(), "b.json"))
    model = campaign.models.get(name="exp")
    model_rankings_replace(model=model, run=RankedRun.from_lists({"q1": ["d1", "new"]}))
    new = Document.objects.get(campaign=campaign, external_id="new")
    assert (new.attributes, new.popularity) == ({}, None)


@pytest.mark.parametrize(
    ("mutate", "code", "field", "message"),
    [
        (
            lambda b: b["documents"][0].update(attributes=["travel"]),
            InputErrorCode.WRONG_TYPE,
            "documents[0].attributes",
            "must be an object, not list",
        ),
        (
            lambda b: b["documents"][1].update(attributes={"tags": ["a", "b"]}),
            InputErrorCode.WRONG_TYPE,
            "documents[1].attributes.tags",
            "must be a category (a string, an integer or a boolean), not list",
        ),
        (
            lambda b: b["documents"][1].update(attributes={"price": 9.5}),
            InputErrorCode.WRONG_TYPE,
            "documents[1].attributes.price",
            "not float",
        ),
        (
            lambda b: b["documents"][0].update(attributes={"brand": "x" * 201}),
            InputErrorCode.INVALID_VALUE,
            "documents[0].attributes.brand",
            "is longer than 200 characters",
        ),
        (
            lambda b: b["documents"][0].update(attributes={" ": "x"}),
            InputErrorCode.INVALID_VALUE,
            "documents[0].attributes",
            "a field name must be 1 to 100 characters",
        ),
        (
            lambda b: b["documents"][0].update(attributes={f"f{i}": i for i in range(51)}),
            InputErrorCode.INVALID_VALUE,
            "documents[0].attributes",
            "has more than 50 fields",
        ),
        (
            lambda b: b["documents"][2].update(popularity=0),
            InputErrorCode.INVALID_VALUE,
            "documents[2].popularity",
            "must be a probability above 0, at most 1",
        ),
        (
            lambda b: b["documents"][2].update(popularity=1.5),
            InputErrorCode.INVALID_VALUE,
            "documents[2].popularity",
            "must be a probability",
        ),
        (
            lambda b: b["documents"][2].update(popularity="0.5"),
            InputErrorCode.WRONG_TYPE,
            "documents[2].popularity",
            "must be an integer or a number",
        ),
        (
            lambda b: b["queries"][1].update(intents={"id": "1"}),
            InputErrorCode.WRONG_TYPE,
            "queries[1].intents",
            "must be a list",
        ),
        (
            lambda b: b["queries"][0]["intents"].append({"id": "1", "text": "again"}),
            InputErrorCode.DUPLICATE_ID,
            "queries[0].intents[2].id",
            "duplicate intent id '1'",
        ),
        (
            lambda b: b["queries"][0]["intents"].append({"text": "no id"}),
            InputErrorCode.MISSING_FIELD,
            "queries[0].intents[2].id",
            "is required",
        ),
        (
            lambda b: b["queries"][0]["intents"].append({"id": 3, "text": "a number"}),
            InputErrorCode.WRONG_TYPE,
            "queries[0].intents[2].id",
            "must be a string",
        ),
        (
            lambda b: b["queries"][0]["intents"].append({"id": "3", "text": " "}),
            InputErrorCode.INVALID_VALUE,
            "queries[0].intents[2].text",
            "must not be empty",
        ),
        (
            lambda b: b["queries"][0]["intents"].append({"id": "3", "text": "t", "weight": 2}),
            InputErrorCode.INVALID_VALUE,
            "queries[0].intents[2].weight",
            "is not a field of an intent",
        ),
        (
            lambda b: b["queries"][1].update(intents=[{"id": str(i), "text": "t"} for i in range(51)]),
            InputErrorCode.INVALID_VALUE,
            "queries[1].intents",
            "lists more than 50 intents",
        ),
    ],
)
def test_bad_diversity_data_is_refused_with_file_and_field(mutate, code, field, message):
    data = diverse_bundle()
    mutate(data)
    with pytest.raises(InputError) as caught:
        parse_bundle(data, "bad.json")
    assert (caught.value.code, caught.value.field) == (code, field)
    assert str(caught.value).startswith(f"bad.json: {field}: ")
    assert message in str(caught.value)


def test_a_refused_bundle_writes_nothing_from_the_command_line(db, tmp_path):
    data = diverse_bundle()
    data["documents"][5]["popularity"] = -1
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(data))
    with pytest.raises(Exception, match=r"bad.json: documents\[5\]\.popularity: must be a probability"):
        call_command("import_campaign", str(path))
    assert not Document.objects.exists()


def test_the_preview_counts_the_diversity_data():
    diversity = import_preview(parse_bundle(diverse_bundle(), "b.json"), {}).diversity
    assert (diversity.queries_with_intents, diversity.intents) == (1, 2)
    assert diversity.example_intents == ["q1: flights", "q1: hotels in Lisbon"]
    assert [(a.name, a.documents, a.values, a.examples) for a in diversity.attributes] == [
        ("brand", 1, 1, ["tap"]),
        ("category", 2, 1, ["travel"]),
        ("sale", 1, 1, ["true"]),
        ("stars", 1, 1, ["4"]),
    ]
    assert (diversity.documents_with_attributes, diversity.documents_with_popularity) == (2, 2)


def test_an_intent_naming_a_model_is_a_warning():
    data = diverse_bundle()
    data["queries"][0]["intents"].append({"id": "3", "text": "what Online shows"})
    warnings = import_preview(parse_bundle(data, "b.json"), {}).warnings
    assert "queries[q1].intents[3] names the model 'online', which annotators would see" in warnings


def test_the_new_campaign_page_shows_the_diversity_data(
    transactional_db, client, make_user, settings, tmp_path, django_capture_on_commit_callbacks
):
    settings.IMPORTS_DIR = tmp_path / "imports"
    client.force_login(make_user("boss", "manager"))
    from django.core.files.uploadedfile import SimpleUploadedFile

    upload = SimpleUploadedFile("b.json", json.dumps(diverse_bundle()).encode())
    with django_capture_on_commit_callbacks(execute=True):
        client.post(reverse("annotation:campaign_new"), {"bundle": upload})
    work_off_the_queue()
    staged = CampaignImport.objects.get()
    assert staged.status == CampaignImport.Status.READY
    page = client.get(reverse("annotation:campaign_import", args=[staged.pk])).content.decode()
    assert "Diversity data" in page
    assert "2 intents on 1 query" in page and "q1: flights; q1: hotels in Lisbon" in page
    assert '<td>category</td><td class="num">2</td><td class="num">1</td><td>travel</td>' in page
    assert "2 documents give their popularity" in page
