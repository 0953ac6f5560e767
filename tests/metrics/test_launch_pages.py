"""The launch pages: who may see them, what they show, the report downloads, and flat query counts."""

import json
import re

import pytest
from django.contrib.auth.models import User
from django.core.cache import cache
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from annotation.bundle import JudgmentRow, PreferenceRow, parse_bundle
from annotation.models import Query, SideBySideTask
from annotation.selectors.campaigns import campaign_progress
from annotation.services.assignment import task_next, task_skip
from annotation.services.campaigns import campaign_import
from annotation.services.label_import import labels_import
from metrics.selectors.drilldown import VerdictCounts
from metrics.selectors.launch import launch_report_build
from metrics.selectors.overview import campaign_overview
from tests.factories import SMALL_BUNDLE, launch_page_urls, worked_campaign


@pytest.fixture
def worked(db):
    return worked_campaign()


def test_anonymous_visitors_are_sent_to_log_in(client, worked):
    for url in launch_page_urls(worked):
        response = client.get(url)
        assert response.status_code == 302, url
        assert response.url.startswith(reverse("login")), url


def test_annotators_are_refused(client, worked, make_user):
    client.force_login(make_user("ann2", "annotator"))
    for url in launch_page_urls(worked):
        assert client.get(url).status_code == 403, url


@pytest.mark.parametrize("role", ["reviewer", "manager"])
def test_reviewers_and_managers_see_every_page(client, worked, make_user, role):
    client.force_login(make_user("pat", role))
    for url in launch_page_urls(worked):
        assert client.get(url).status_code == 200, url


def test_overview_shows_progress_agreement_and_the_decision(client, worked, make_user):
    client.force_login(make_user("rev", "reviewer"))
    page = client.get(reverse("metrics:campaign_overview", args=[worked.pk])).content.decode()
    assert "decision-no_launch" in page and "Do not launch" in page
    assert "Per annotator" in page and "ann" in page
    assert 'id="per-day"' in page
    assert "Krippendorff" in page
    assert reverse("metrics:comparison", args=[worked.pk, "exp"]) in page


@pytest.mark.django_db(transaction=True)
def test_the_overview_reads_its_progress_beside_the_report_with_the_same_result():
    # Outside a transaction on PostgreSQL the page's progress is read on a second connection.
    worked = worked_campaign()
    overview = campaign_overview(campaign=worked)
    assert overview.progress == campaign_progress(campaign=worked, median_seconds=False)
    assert overview.progress.annotators and overview.per_day
    assert sum(day.judgments + day.verdicts for day in overview.per_day) == sum(
        row.done for row in overview.progress.annotators
    )
    assert overview.report.decision is not None


def test_overview_download_buttons_give_the_cli_files(client, worked, make_user):
    client.force_login(make_user("rev", "reviewer"))
    page = client.get(reverse("metrics:campaign_overview", args=[worked.pk])).content.decode()
    downloads = page[page.index('id="downloads"') :]
    links = re.findall(r'href="([^"]+)" download', downloads)
    assert len(links) == 8  # labels, qrels exact and for trec_eval, the report in five formats
    names = set()
    for link in links:
        response = client.get(link)
        assert response.status_code == 200, link
        assert "attachment" in response["Content-Disposition"], link
        names.add(response["Content-Disposition"])
    assert len(names) == len(links)  # each button saves a file of its own name
    labels = b"".join(client.get(links[0]).streaming_content).decode().splitlines()
    assert labels and all(json.loads(line)["annotator"] for line in labels)


def test_comparison_links_losing_queries_to_their_drilldown(client, make_user, db):
    campaign = worked_campaign(verdicts={"q1": "bad"}, swap_q1=True)
    client.force_login(make_user("rev", "reviewer"))
    response = client.get(reverse("metrics:comparison", args=[campaign.pk, "exp"]))
    page = response.content.decode()
    charts = response.context["charts"]
    assert charts["measures"] == ["nDCG@3", "nDCG@6", "nDCG"]
    assert charts["gsb"]["bad"] == 1
    assert 'id="chart-means"' in page and "judgeboard/vendor/plotly.min.js" in page and "charts.js" in page
    for format in ("json", "html", "csv", "md"):
        assert reverse("metrics:launch_report", args=[campaign.pk, "exp", format]) in page
    (losing,) = response.context["report"].comparison.losing_queries
    assert losing.external_id == "q1" and losing.delta == pytest.approx(0.9608 - 1, abs=1e-4)
    assert reverse("metrics:query_drilldown", args=[campaign.pk, losing.pk]) in page


def test_unknown_models_queries_and_formats_are_404(client, worked, make_user, campaign):
    client.force_login(make_user("rev", "reviewer"))
    other_query = Query.objects.get(campaign=campaign, external_id="q1")
    assert client.get(reverse("metrics:comparison", args=[worked.pk, "online"])).status_code == 404
    assert client.get(reverse("metrics:launch_report", args=[worked.pk, "exp", "xml"])).status_code == 404
    assert client.get(reverse("metrics:query_drilldown", args=[worked.pk, other_query.pk])).status_code == 404


def test_downloads_in_every_format(client, worked, make_user):
    client.force_login(make_user("rev", "reviewer"))
    types = {
        "json": "application/json",
        "html": "text/html",
        "csv": "text/csv",
        "summary.csv": "text/csv",
        "md": "text/markdown",
    }
    for format, content_type in types.items():
        response = client.get(reverse("metrics:launch_report", args=[worked.pk, "exp", format]))
        assert response["Content-Type"].startswith(content_type)
        assert response["Content-Disposition"] == (
            f'attachment; filename="launch-report-campaign-{worked.pk}-exp.{format}"'
        )
    data = json.loads(client.get(reverse("metrics:launch_report", args=[worked.pk, "exp", "json"])).content)
    assert data["decision"] == "no_launch"


def test_drilldown_shows_both_rankings_with_aggregated_labels(client, worked, make_user):
    client.force_login(make_user("rev", "reviewer"))
    q1 = Query.objects.get(campaign=worked, external_id="q1")
    response = client.get(reverse("metrics:query_drilldown", args=[worked.pk, q1.pk]))
    drilldown = response.context["drilldown"]
    online, exp = drilldown.models
    assert [d.external_id for d in online.documents] == ["a", "b", "c", "d", "e", "f"]
    assert [d.label for d in online.documents] == [3, 2, 3, 0, 1, 2]
    assert [d.external_id for d in exp.documents] == ["a", "c", "b", "f", "e", "d"]
    assert exp.documents[1].online_rank == 3
    assert online.scores["nDCG"] == pytest.approx(0.9608, abs=1e-4)
    assert exp.verdicts == VerdictCounts(good=1, same=0, bad=0)
    page = response.content.decode()
    assert "grade-high" in page and "online #3" in page
    # What changed against the online list: c up one, b down one, f up two, d down two; none entered or left.
    assert [(d.move.change, d.move.by) for d in exp.documents] == [
        ("same", 0), ("up", 1), ("down", 1), ("up", 2), ("same", 0), ("down", 2)
    ]  # fmt: skip
    assert all(d.move is None for d in online.documents) and exp.dropped == []
    assert 'class="list-change up"' in page and 'class="list-change down"' in page


def test_the_side_by_side_review_marks_what_changed_and_the_workbench_never_does(client, make_user, db):
    data = json.loads(json.dumps(SMALL_BUNDLE))
    data["rankings"] = [
        {"model": "online", "query": "q1", "documents": ["d1", "d2", "d3"]},
        {"model": "exp", "query": "q1", "documents": ["d3", "d1", "d5"]},
    ]
    data["settings"]["gsb_depth"] = 3
    campaign = campaign_import(bundle=parse_bundle(data, "changes.json"))
    task = SideBySideTask.objects.get(campaign=campaign, query__external_id="q1")
    client.force_login(make_user("rev", "reviewer"))
    review = client.get(reverse("annotation:review_side_by_side", args=[task.pk]))
    (_, _, online), (_, _, exp) = review.context["review"].lists
    assert [(doc.external_id, move.change) for doc, move in exp] == [
        ("d3", "up"),
        ("d1", "down"),
        ("d5", "new"),
    ]
    assert [(doc.external_id, move.change) for doc, move in online] == [
        ("d1", "down"),
        ("d2", "left"),
        ("d3", "up"),
    ]
    page = review.content.decode()
    assert page.count('class="list-change') == 6 and "dropped" in page  # every document moved
    client.force_login(make_user("ann", "annotator"))
    while (lease := task_next(annotator=User.objects.get(username="ann"), campaign=campaign)) is not None:
        work = client.get(reverse("annotation:task", args=[campaign.pk, lease.pk])).content.decode()
        assert "list-change" not in work and "dropped" not in work  # annotators judge the lists blind
        task_skip(annotator=lease.annotator, assignment=lease, reason="cant_load")


def sized_campaign(n_queries: int):
    """n queries, two models, four pooled documents each, two annotators, a verdict per changed query."""
    docs = [f"d{i}" for i in range(4)]
    bundle = {
        "name": f"Sized {n_queries}",
        "settings": {"overlap": 2, "gsb_overlap": 1, "pool_depth": 4, "gsb_depth": 2},
        "models": [{"name": "online", "role": "online"}, {"name": "exp", "role": "experimental"}],
        "queries": [{"id": f"q{q}", "text": f"query {q}", "segment": "ab"[q % 2]} for q in range(n_queries)],
        "documents": [{"id": doc, "title": doc} for doc in docs],
        "rankings": [
            {
                "model": model,
                "query": f"q{q}",
                "documents": docs if model == "online" or q % 3 else docs[::-1],
            }
            for q in range(n_queries)
            for model in ("online", "exp")
        ],
    }
    campaign = campaign_import(bundle=parse_bundle(bundle, "sized.json"))
    labels_import(
        campaign=campaign,
        judgments=[
            JudgmentRow(0, name, f"q{q}", doc, (q + i + offset) % 4)
            for q in range(n_queries)
            for i, doc in enumerate(docs)
            for offset, name in enumerate(("ann", "bob"))
        ],
        preferences=[PreferenceRow(0, "ann", f"q{q}", "exp", "good") for q in range(0, n_queries, 3)],
        source="test",
    )
    return campaign


def test_query_counts_do_not_grow_with_the_data(client, make_user, django_assert_max_num_queries):
    client.force_login(make_user("rev", "reviewer"))
    small, large = sized_campaign(3), sized_campaign(30)

    def pages(campaign):
        q0 = Query.objects.get(campaign=campaign, external_id="q0")
        return [
            reverse("metrics:campaign_overview", args=[campaign.pk]),
            reverse("metrics:comparison", args=[campaign.pk, "exp"]),
            reverse("metrics:launch_report", args=[campaign.pk, "exp", "html"]),
            reverse("metrics:query_drilldown", args=[campaign.pk, q0.pk]),
        ]

    for small_url, large_url in zip(pages(small), pages(large), strict=True):
        client.get(small_url)  # warm the session and role caches
        for kept in (False, True):  # the report computed, then read from the cache
            if not kept:
                cache.clear()
            with CaptureQueriesContext(connection) as counted:
                assert client.get(small_url).status_code == 200
            if not kept:
                cache.clear()
            with django_assert_max_num_queries(len(counted.captured_queries)):
                assert client.get(large_url).status_code == 200


def test_results_pages_refresh_while_collecting_and_the_stamp_follows_the_labels(client, campaign, make_user):
    client.force_login(make_user("rev", "reviewer"))
    stamp_url = reverse("annotation:label_stamp", args=[campaign.pk])
    before = client.get(stamp_url).json()["stamp"]
    overview = client.get(reverse("metrics:campaign_overview", args=[campaign.pk])).content.decode()
    assert f'data-label-stamp="{before}"' in overview and "auto_refresh.js" in overview
    comparison = client.get(reverse("metrics:comparison", args=[campaign.pk, "exp"])).content.decode()
    assert f'data-label-stamp="{before}"' in comparison
    labels_import(
        campaign=campaign, judgments=[JudgmentRow(1, "a", "q1", "d1", 2)], preferences=[], source="t"
    )
    after = client.get(stamp_url).json()["stamp"]
    assert after != before
    assert client.get(stamp_url).json()["stamp"] == after


def test_a_decided_campaign_does_not_poll(client, worked, make_user):
    client.force_login(make_user("rev", "reviewer"))
    overview = client.get(reverse("metrics:campaign_overview", args=[worked.pk])).content.decode()
    assert "auto_refresh.js" not in overview and "data-label-stamp" not in overview


def test_a_managers_home_shows_each_campaigns_progress_disputes_last_label_and_decision(
    client, worked, make_user, django_assert_max_num_queries
):
    # A second grade for one task, apart from the first: a dispute waiting for a reviewer.
    labels_import(
        campaign=worked, judgments=[JudgmentRow(0, "other", "q1", "d", 3)], preferences=[], source="test"
    )
    client.force_login(make_user("boss", "manager"))
    with django_assert_max_num_queries(25):
        response = client.get(reverse("annotation:home"))
    ((row, summary),) = response.context["campaigns"]
    assert (row.done, row.remaining) == (0, 0)  # the manager's own labels: none
    relevance, side_by_side = summary.kinds
    assert (summary.complete, summary.tasks) == (relevance.complete + side_by_side.complete, 15 + 4)
    assert summary.disputes_waiting == 1 and summary.last_label is not None
    page = response.content.decode()
    assert f"{summary.complete} of 19 tasks" in page and "ago" in page
    assert reverse("annotation:review_queue", args=[worked.pk]) in page
    badge_url = reverse("metrics:decision_badge", args=[worked.pk])
    assert f'data-decision-url="{badge_url}"' in page and "judgeboard/home.js" in page
    badge = client.get(badge_url).content.decode()
    report = launch_report_build(campaign=worked)
    assert f"decision-{report.decision.outcome.value}" in badge and "Do not launch" in badge


def test_an_annotators_home_shows_their_own_work_and_no_decision(client, worked, make_user):
    client.force_login(make_user("ann2", "annotator"))
    page = client.get(reverse("annotation:home")).content.decode()
    assert "Remaining" in page and "data-decision-url" not in page and "Disputes waiting" not in page
    assert client.get(reverse("metrics:decision_badge", args=[worked.pk])).status_code == 403


def test_every_campaign_page_has_the_same_navigation(client, worked, make_user):
    client.force_login(make_user("boss", "manager"))
    names = [
        "annotation:progress",
        "metrics:campaign_overview",
        "metrics:query_explorer",
        "metrics:campaign_quality",
    ]
    names += ["annotation:review_queue", "annotation:campaign_settings", "annotation:campaign_members"]
    navs = {}
    for name in names:
        page = client.get(reverse(name, args=[worked.pk])).content.decode()
        nav = page[page.index('<nav class="topnav">') : page.index("</nav>")]
        navs[name] = re.findall(r'href="([^"]+)"', nav)
        assert nav.count('aria-current="page"') == 1, name  # the page it is on
    assert len({tuple(links) for links in navs.values()}) == 1 and len(navs[names[0]]) >= 9
