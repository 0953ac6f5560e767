"""The replica router: report and export reads go to the `replica` alias (tests/settings.py mirrors it onto
the test database), writes and every other read to the primary."""

import pytest
from django.contrib.auth.models import Group
from django.db import connections
from django.test import override_settings
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from annotation.models import Campaign, Judgment
from plumbing.columns import read_beside
from plumbing.routers import replica_reads
from tests.factories import launch_page_urls

# Committed data: the replica is a connection of its own, which cannot see a test's open transaction.
pytestmark = pytest.mark.django_db(transaction=True, databases=["default", "replica"])


@pytest.fixture(autouse=True)
def role_groups():
    for role in ("annotator", "reviewer"):
        Group.objects.get_or_create(name=role)  # a flush by an earlier test drops them


@pytest.fixture
def routed():
    with override_settings(DATABASE_ROUTERS=["plumbing.routers.ReplicaRouter"]):
        yield


def captured(client, url):
    with (
        CaptureQueriesContext(connections["default"]) as primary,
        CaptureQueriesContext(connections["replica"]) as replica,
    ):
        response = client.get(url)
    assert response.status_code == 200, url
    return primary, replica


def report_urls(campaign):
    return [
        *launch_page_urls(campaign),
        reverse("metrics:campaign_quality", args=[campaign.pk]),
        reverse("metrics_api:report", args=[campaign.pk]),
        reverse("metrics_api:export_qrels", args=[campaign.pk]),
    ]


def test_report_and_export_reads_go_to_the_replica(routed, client, campaign, make_user):
    client.force_login(make_user("rev", "reviewer"))
    for url in report_urls(campaign):
        primary, replica = captured(client, url)
        campaign_reads = [q["sql"] for q in replica if "annotation_" in q["sql"]]
        assert campaign_reads, url
        # The primary answers only for the session and the user's roles.
        assert not [q["sql"] for q in primary if "annotation_" in q["sql"]], url


def test_a_streamed_export_reads_from_the_replica_while_it_streams(routed, client, campaign, make_user):
    client.force_login(make_user("rev", "reviewer"))
    with CaptureQueriesContext(connections["replica"]) as replica:
        response = client.get(reverse("metrics_api:export_judgments", args=[campaign.pk]))
        b"".join(response.streaming_content)
    assert any("annotation_judgment" in q["sql"] for q in replica)


def test_writes_and_annotator_reads_stay_on_the_primary(routed, client, campaign, make_user):
    client.force_login(make_user("ann", "annotator"))
    with CaptureQueriesContext(connections["replica"]) as replica:
        response = client.get(reverse("annotation:work", args=[campaign.pk]), follow=True)
    assert response.status_code == 200
    assert len(replica) == 0
    assert Campaign.objects.db == "default"


def test_without_the_router_everything_stays_on_the_primary(client, campaign, make_user):
    client.force_login(make_user("rev", "reviewer"))
    primary, replica = captured(client, reverse("metrics:campaign_quality", args=[campaign.pk]))
    assert len(replica) == 0 and primary


def test_a_read_beside_runs_in_a_transaction_on_the_replica_and_closes_it(routed, campaign):
    """Its transaction, its work_mem and its queries on the connection the reads go to, which its thread
    closes: none left open, idle, to the replica."""
    if connections["replica"].vendor != "postgresql":
        pytest.skip("a read beside runs on a second connection on PostgreSQL only")

    def read():
        replica = connections["replica"]
        with replica.cursor() as cursor:
            cursor.execute("SHOW work_mem")
            (work_mem,) = cursor.fetchone()
        return replica, replica.in_atomic_block, work_mem, Judgment.objects.db

    with replica_reads():
        replica, in_transaction, work_mem, db = read_beside(read).result()
    assert (in_transaction, work_mem, db) == (True, "64MB", "replica")
    assert replica.connection is None  # the thread's own connection, closed
