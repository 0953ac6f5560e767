"""API clients per role, logged in with tokens as a script would be."""

import pytest
from django.core.cache import cache
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from annotation.models import CampaignImport, InteractionLog
from annotation.services.assignment import task_next


@pytest.fixture(autouse=True)
def _fresh_throttles(db):
    cache.clear()  # throttle and sign-in counts live in the cache (a table); each test starts from none
    yield
    cache.clear()


@pytest.fixture
def client_for(make_user):
    """`client_for("ann", "annotator")`: an APIClient holding that user's token."""

    def make(username: str, *roles: str) -> APIClient:
        user = make_user(username, *roles)
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")
        client.user = user
        return client

    return make


@pytest.fixture
def annotator(client_for):
    return client_for("ann", "annotator")


@pytest.fixture
def reviewer(client_for):
    return client_for("rev", "reviewer")


@pytest.fixture
def manager(client_for):
    return client_for("boss", "manager")


@pytest.fixture
def world(campaign, make_user):
    """A user per role, the annotator holding a task; the ids and task ids of the routes' URLs."""
    users = {role: make_user(role, role) for role in ("annotator", "reviewer", "manager")}
    assignment = task_next(annotator=users["annotator"], campaign=campaign)
    ids = {
        "campaign_id": campaign.pk,
        "assignment_id": assignment.pk,
        "kind": "relevance",
        "model": "exp",
        "format": "html",  # a format both report routes have
        "query_id": campaign.queries.first().pk,
        "user_id": users["annotator"].pk,
        "import_id": CampaignImport.objects.create(
            created_by=users["manager"], folder="-", bundle_file="b.json"
        ).pk,
        "log_id": InteractionLog.objects.create(campaign=campaign, source="log.jsonl").pk,
        "uidb64": "MQ",
        "token": "expired-token",
    }
    tasks = {
        "relevance": assignment.relevance_task.pk,
        "side-by-side": campaign.side_by_side_tasks.first().pk,
    }
    return users, ids, tasks
