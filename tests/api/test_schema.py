"""The API against its own OpenAPI schema: Schemathesis sends generated requests (a bounded number per
operation) as a superuser, with real ids in the paths; no 500, and every response matches the schema."""

import pytest
import schemathesis
from django.core.signals import request_finished, request_started
from django.db import close_old_connections
from hypothesis import HealthCheck, settings
from openapi_spec_validator import validate
from rest_framework.authtoken.models import Token
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from annotation.campaign_settings import CAMPAIGN_SETTINGS, SETTING_NAMES, Lock
from annotation.models import CampaignImport
from annotation.services.assignment import task_next
from config.wsgi import application

schema = schemathesis.openapi.from_wsgi("/api/schema/", application)
CHECKS = [not_a_server_error, status_code_conformance, content_type_conformance, response_schema_conformance]


@pytest.fixture
def _keep_connection():
    """As Django's test client does: the test's transaction must outlive each request."""
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    yield
    request_started.connect(close_old_connections)
    request_finished.connect(close_old_connections)


@pytest.fixture
def api_world(_keep_connection, campaign, django_user_model, make_user, settings, tmp_path):
    settings.IMPORTS_DIR = tmp_path
    root = django_user_model.objects.create_superuser("root", password="pw-not-used-1")
    assignment = task_next(annotator=root, campaign=campaign)
    ids = {
        "campaign_id": campaign.pk,
        "relevance": assignment.relevance_task_id,
        "side-by-side": campaign.side_by_side_tasks.first().pk,
        "assignment": assignment.pk,
        "user_id": make_user("someone", "annotator").pk,
        "import_id": CampaignImport.objects.create(created_by=root, folder="-", bundle_file="b.json").pk,
    }
    return {"Authorization": f"Token {Token.objects.create(user=root).key}"}, ids


def test_the_schema_is_served_and_valid(client):
    response = client.get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json")
    assert response.status_code == 200 and response.json()["openapi"].startswith("3.")
    validate(response.json())  # raises, naming every problem


def test_no_parameter_has_a_default_its_own_schema_refuses(client):
    document = client.get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json").json()
    for path, operations in document["paths"].items():
        for operation in operations.values():
            for parameter in operation.get("parameters", []):
                schema = parameter.get("schema", {})
                if "default" in schema:
                    assert len(str(schema["default"])) >= schema.get("minLength", 0), (path, parameter)
                    assert schema["default"] in schema.get("enum", [schema["default"]]), (path, parameter)


def test_numbers_are_sent_as_json_and_files_as_binary(client):
    document = client.get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json").json()
    bodies = {
        (method, path): set(operation["requestBody"]["content"])
        for path, operations in document["paths"].items()
        for method, operation in operations.items()
        if "requestBody" in operation
    }
    uploads = {
        ("post", "/api/campaigns/{campaign_id}/runs/"): {"multipart/form-data"},
        ("post", "/api/imports/"): {"multipart/form-data"},
        ("post", "/api/campaigns/{campaign_id}/judgments/"): {"application/octet-stream"},
        ("post", "/api/campaigns/{campaign_id}/interactions/"): {"multipart/form-data"},
    }
    for operation, types in bodies.items():
        assert types == uploads.get(operation, {"application/json"}), operation
    components = document["components"]["schemas"]
    for component, field in (("RunUploadRequest", "file"), ("ImportUploadRequest", "bundle")):
        schema = components[component]["properties"][field]
        assert (schema["type"], schema["format"]) == ("string", "binary")


JSON_TYPES = {
    "list of integers": "array",
    "list of numbers": "array",
    "measure name": "string",
    "guardrails": "string",
    "action grades": "string",
}  # the table's other names are JSON's


def _component(document: dict, schema: dict) -> dict:
    """A schema with its `$ref` (or a one-item `allOf` of one) followed into the components."""
    ref = schema.get("$ref") or (schema.get("allOf") or [{}])[0].get("$ref")
    return document["components"]["schemas"][ref.rpartition("/")[2]] if ref else schema


def test_the_schema_types_every_setting_as_the_table_says(client):
    document = client.get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json").json()
    components = document["components"]["schemas"]
    change = components["PatchedCampaignChangeRequest"]["properties"]["settings"]
    review, request = components["CampaignReview"], _component(document, change)
    assert set(SETTING_NAMES) <= set(review["required"]) and "required" not in request  # a change names any
    for body in (review, request):
        for setting in CAMPAIGN_SETTINGS:
            field = body["properties"][setting.name]
            assert field["description"].startswith(str(setting.help))
            assert (setting.locks.value in field["description"]) == (setting.locks is not Lock.NEVER)
            typed = _component(document, field)
            assert typed["type"] == JSON_TYPES.get(setting.type_name, setting.type_name)
            if setting.choices is not None:
                assert typed["enum"] == setting.choices.values
            if setting.low is not None:
                assert (typed["minimum"], typed["maximum"]) == (setting.low, setting.high)
                assert (
                    typed.get("exclusiveMinimum", False)
                    == typed.get("exclusiveMaximum", False)
                    == setting.open
                )


@schema.parametrize()
@settings(max_examples=25, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
def test_the_api_honours_its_schema(case, api_world):
    headers, ids = api_world
    params = case.path_parameters or {}
    if "campaign_id" in params:
        params["campaign_id"] = ids["campaign_id"]
    for name in ("user_id", "import_id"):
        if name in params:
            params[name] = ids[name]
    if "task_id" in params:
        params["task_id"] = ids.get(params.get("kind", "assignment"), ids["relevance"])
    case.call_and_validate(headers=headers, checks=CHECKS)
