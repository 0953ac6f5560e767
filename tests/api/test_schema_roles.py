"""The API against its schema for each role a script signs in as: Schemathesis sends generated requests
(10 per operation, the same ones every run) to every operation as an annotator, a reviewer and a manager,
and runs all its checks on each answer: no 500, every status, content type, header and body as documented,
requests the schema refuses refused, and a 401 without the token. All but one: that a request the schema
allows is accepted, which a rule only the database knows may refuse (a taken username, a bundle naming an
unknown query, an import not ready to confirm): those are documented 400s.

The ids in the paths are real ones, unless the case is about a wrong path: that one is not sent, as its
ids would be replaced by right ones."""

import pytest
import schemathesis
from django.core.signals import request_finished, request_started
from django.db import close_old_connections
from hypothesis import HealthCheck, settings
from rest_framework.authtoken.models import Token
from schemathesis.core.parameters import ParameterLocation
from schemathesis.generation.modes import GenerationMode
from schemathesis.specs.openapi.checks import positive_data_acceptance

from annotation.models import CampaignImport
from annotation.services.assignment import task_next
from config.wsgi import application

schema = schemathesis.openapi.from_wsgi("/api/schema/", application)
ROLES = ("annotator", "reviewer", "manager")


@pytest.fixture
def role_world(campaign, make_user, settings, tmp_path):
    """A user per role (the annotator holding a task), a person to act on, an import; the tokens and the
    ids the paths take. The test's transaction outlives each request, as with Django's test client."""
    settings.IMPORTS_DIR = tmp_path
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    users = {role: make_user(f"st-{role}", role) for role in ROLES}
    assignment = task_next(annotator=users["annotator"], campaign=campaign)
    ids = {
        "campaign_id": campaign.pk,
        "relevance": assignment.relevance_task_id,
        "side-by-side": campaign.side_by_side_tasks.first().pk,
        "assignment": assignment.pk,
        "user_id": make_user("st-someone", "annotator").pk,
        "import_id": CampaignImport.objects.create(
            created_by=users["manager"], folder="-", bundle_file="b.json"
        ).pk,
    }
    tokens = {role: Token.objects.create(user=user).key for role, user in users.items()}
    yield tokens, ids
    request_started.connect(close_old_connections)
    request_finished.connect(close_old_connections)


@pytest.mark.parametrize("role", ROLES)
@schema.parametrize()
@settings(
    max_examples=10, deadline=None, derandomize=True, database=None, suppress_health_check=list(HealthCheck)
)
def test_each_role_gets_what_the_schema_says(case, role, role_world):
    tokens, ids = role_world
    path = case.meta.components.get(ParameterLocation.PATH) if case.meta else None
    if path is not None and path.mode == GenerationMode.NEGATIVE:
        return
    params = case.path_parameters or {}
    for name in ("campaign_id", "user_id", "import_id"):
        if name in params:
            params[name] = ids[name]
    if "task_id" in params:
        params["task_id"] = ids.get(params.get("kind", "assignment"), ids["relevance"])
    case.call_and_validate(
        headers={"Authorization": f"Token {tokens[role]}"}, excluded_checks=[positive_data_acceptance]
    )
