"""The API against its own OpenAPI schema: Schemathesis sends generated requests (a bounded number per
operation) as a superuser, with real ids in the paths; no 500, and every response matches the schema."""

import pytest
import schemathesis
from django.core.signals import request_finished, request_started
from django.db import close_old_connections
from hypothesis import HealthCheck, settings
from rest_framework.authtoken.models import Token
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

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
def api_world(_keep_connection, campaign, django_user_model):
    root = django_user_model.objects.create_superuser("root", password="pw-not-used-1")
    assignment = task_next(annotator=root, campaign=campaign)
    ids = {
        "campaign_id": campaign.pk,
        "relevance": assignment.relevance_task_id,
        "side-by-side": campaign.side_by_side_tasks.first().pk,
        "assignment": assignment.pk,
    }
    return {"Authorization": f"Token {Token.objects.create(user=root).key}"}, ids


def test_the_schema_is_served_and_valid(client):
    response = client.get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json")
    assert response.status_code == 200 and response.json()["openapi"].startswith("3.")


@schema.parametrize()
@settings(max_examples=25, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
def test_the_api_honours_its_schema(case, api_world):
    headers, ids = api_world
    params = case.path_parameters or {}
    if "campaign_id" in params:
        params["campaign_id"] = ids["campaign_id"]
    if "task_id" in params:
        params["task_id"] = ids.get(params.get("kind", "assignment"), ids["relevance"])
    case.call_and_validate(headers=headers, checks=CHECKS)
