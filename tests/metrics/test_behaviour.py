"""What users did in the launch report, the Behaviour page, the API and every report format."""

import json

import numpy as np
import pytest
from django.core.cache import caches
from django.core.management import call_command
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from annotation.bundle import JudgmentRow
from annotation.models import Campaign
from annotation.selectors.interactions import interaction_log_ids
from annotation.services.interactions import interaction_log_import
from annotation.services.label_import import labels_import
from metrics.compute.interactions.online import query_metrics
from metrics.reports import report_render
from metrics.selectors import log_estimates
from metrics.selectors.behaviour import users_per_query
from metrics.selectors.evaluation_data import campaign_evaluation_data, campaign_models, campaign_queries
from metrics.selectors.impressions import behaviour_qrels_rows, campaign_impressions
from metrics.selectors.launch import launch_report_build
from tests.factories import rotated_campaign, simulated_log_import, worked_campaign

pytestmark = pytest.mark.django_db


@pytest.fixture
def worked():
    return worked_campaign()


@pytest.fixture
def logged():
    campaign = rotated_campaign()
    simulated_log_import(campaign, lists=3000)
    return campaign


def test_without_swaps_to_the_first_position_there_is_no_ips_and_its_guardrail_is_not_checked(worked):
    """The worked example's lists swap positions 2 and 3, and 4 and 6: nothing connects 4..6 to the first."""
    simulated_log_import(worked, lists=2000)
    report = launch_report_build(campaign=worked, agreement=False, n_resamples=200)
    behaviour = report.behaviour
    assert behaviour.propensity_method == ""
    assert np.isnan(behaviour.harvesting.propensity[3:]).all()
    comparison = behaviour.comparisons["exp"]
    assert comparison.online_metric == "CTR@10" and "IPS-CTR@10" not in comparison.differences
    (outcome,) = comparison.guardrails
    assert outcome.status == "not_evaluable" and outcome.reason in report.decision.reasons


def test_without_logs_nothing_changes(worked, client, make_user):
    report = launch_report_build(campaign=worked, agreement=False, n_resamples=200)
    assert report.behaviour is None
    assert not any("Guardrail" in reason for reason in report.decision.reasons)
    assert json.loads(report_render(report, "json"))["behaviour"] is None
    assert "What users did" not in report_render(report, "md")
    client.force_login(make_user("rev", "reviewer"))
    page = client.get(reverse("metrics:campaign_behaviour", args=[worked.pk])).content.decode()
    assert 'id="no-logs"' in page


def test_the_report_reads_the_logs_and_the_decision_states_its_guardrail(logged):
    report = launch_report_build(campaign=logged, agreement=False, n_resamples=200)
    behaviour = report.behaviour
    assert behaviour.n_lists == 3000 and behaviour.cluster_by == "session"
    assert [model.name for model in behaviour.models] == ["online", "exp"]
    assert behaviour.propensity_method == "intervention harvesting"
    assert behaviour.harvesting.propensity[0] == 1 and np.isfinite(behaviour.harvesting.propensity).all()
    comparison = behaviour.comparisons["exp"]
    assert comparison.online_metric == "IPS-CTR@10" and comparison.offline_measure == "nDCG@10"
    assert [outcome.guardrail.metric for outcome in comparison.guardrails] == ["IPS-CTR@10"]
    assert comparison.guardrails[0].reason in report.decision.reasons
    assert len(comparison.points) == 6  # every query has both deltas
    assert set(behaviour.measures.behaviour) == {"online", "exp"}


def test_a_failed_guardrail_vetoes_the_launch(logged):
    Campaign.objects.filter(pk=logged.pk).update(guardrails="CTR@10 >= 0.5; Abandonment <= 1")
    logged.refresh_from_db()
    report = launch_report_build(campaign=logged, agreement=False, n_resamples=200)
    statuses = [outcome.status for outcome in report.behaviour.comparisons["exp"].guardrails]
    assert statuses == ["failed", "held"]
    assert report.decision.outcome == "no_launch"
    assert any(reason.startswith("Guardrail on CTR@10 failed") for reason in report.decision.reasons)


def test_every_format_and_the_api_carry_it(logged, client, make_user):
    report = launch_report_build(campaign=logged, agreement=False, n_resamples=200)
    data = json.loads(report_render(report, "json"))["behaviour"]
    assert data["comparisons"]["exp"]["guardrails"][0]["status"] in ("held", "failed")
    assert data["propensity"]["used"] == "intervention harvesting"
    markdown = report_render(report, "md")
    assert "## What users did" in markdown and "| IPS-CTR@10 |" in markdown
    assert "Judges and users, per query (Δ nDCG@10 against Δ IPS-CTR@10)" in markdown
    html = report_render(report, "html")
    assert 'id="propensity"' in html and "Per query: Δ nDCG@10 against Δ IPS-CTR@10" in html
    summary = report_render(report, "summary.csv")
    assert "behaviour.comparisons.exp.guardrails.0.status," in summary
    client.force_login(make_user("rev", "reviewer"))
    answer = client.get(f"/api/campaigns/{logged.pk}/behaviour/").json()["behaviour"]
    assert answer["lists"] == 3000 and set(answer["models"]) == {"online", "exp"}
    page = client.get(reverse("metrics:campaign_behaviour", args=[logged.pk])).content.decode()
    for part in (
        'id="online-metrics"',
        'class="online-differences"',
        'id="propensity"',
        'id="behaviour-measures"',
    ):
        assert part in page


def test_behaviour_qrels_are_the_mapping_by_hand(worked, client, make_user, tmp_path):
    """A worked log: q1's a bought and rated 5 (3), b carted (2), c clicked (1), d seen only (0); q2's x
    bought unrated (2) in one list and merely clicked in another (the maximum: 2); with cart=5 set, b is 5."""
    rows = [
        {
            "query": "q1",
            "model": "online",
            "request": "r1",
            "position": 1,
            "document": "a",
            "clicked": True,
            "purchase": True,
            "rating": 5,
        },
        {
            "query": "q1",
            "model": "online",
            "request": "r1",
            "position": 2,
            "document": "b",
            "clicked": True,
            "cart": True,
        },
        {"query": "q1", "model": "online", "request": "r1", "position": 3, "document": "c", "clicked": True},
        {"query": "q1", "model": "online", "request": "r1", "position": 4, "document": "d", "clicked": False},
        {
            "query": "q2",
            "model": "exp",
            "request": "r2",
            "position": 1,
            "document": "x",
            "clicked": True,
            "cart": True,
            "purchase": True,
        },
        {"query": "q2", "model": "online", "request": "r3", "position": 1, "document": "x", "clicked": True},
    ]
    lines = enumerate((json.dumps(row) for row in rows), start=1)
    interaction_log_import(campaign=worked, lines=lines, source="hand.jsonl")
    query_ids, document_ids, grades = behaviour_qrels_rows(campaign=worked)
    assert list(zip(query_ids, document_ids, grades.tolist(), strict=True)) == [
        ("q1", "a", 3.0),
        ("q1", "b", 2.0),
        ("q1", "c", 1.0),
        ("q1", "d", 0.0),
        ("q2", "x", 2.0),
    ]
    Campaign.objects.filter(pk=worked.pk).update(behaviour_grades="cart=5")
    client.force_login(make_user("rev", "reviewer"))
    qrels = client.get(f"/api/campaigns/{worked.pk}/export/behaviour-qrels/").content.decode()
    assert qrels.splitlines() == ["q1 0 a 3", "q1 0 b 5", "q1 0 c 1", "q1 0 d 0", "q2 0 x 2"]
    out = tmp_path / "behaviour.qrels"
    call_command("export_judgments", str(worked.pk), "--format", "behaviour-qrels", "-o", str(out))
    assert out.read_text().splitlines() == qrels.splitlines()


def test_the_impressions_are_one_statement(logged, django_assert_max_num_queries):
    queries, models = campaign_queries(campaign=logged), campaign_models(campaign=logged)
    with django_assert_max_num_queries(1):
        data = campaign_impressions(campaign=logged, queries=queries, models=models)
    assert data.impressions.list_query.size == 3000 and data.n_logs == 1


def test_simulate_interactions_writes_a_log_the_import_takes(worked, tmp_path):
    path = tmp_path / "log.jsonl.gz"
    call_command("simulate_interactions", str(worked.pk), "--lists", "50", "-o", str(path))
    call_command("import_interactions", str(worked.pk), str(path))
    assert (
        campaign_impressions(
            campaign=worked,
            queries=campaign_queries(campaign=worked),
            models=campaign_models(campaign=worked),
        ).impressions.list_query.size
        == 50
    )


def test_the_explorer_lists_the_queries_where_judges_and_users_disagree(logged, client, make_user):
    from metrics.selectors.explorer import ExplorerFilter, query_explorer

    report = launch_report_build(campaign=logged, agreement=False, n_resamples=200)
    comparison = report.behaviour.comparisons["exp"]
    view = query_explorer(campaign=logged)
    assert view.users_metric == "IPS-CTR@10"
    by_query = {row.external_id: row for row in view.rows}
    for point in comparison.points:  # the same per-query deltas as the report's chart
        assert by_query[point.external_id].users == pytest.approx(point.online_delta)
    users_only = query_explorer(campaign=logged, filters=ExplorerFilter(alone="users")).rows
    assert [row.external_id for row in users_only] == sorted(
        point.external_id for point in comparison.users_only
    )
    assert not query_explorer(campaign=logged, filters=ExplorerFilter(alone="judges")).rows
    client.force_login(make_user("rev", "reviewer"))
    page = client.get(
        reverse("metrics:query_explorer", args=[logged.pk]), {"alone": "users"}
    ).content.decode()
    assert "Users: Δ IPS-CTR@10" in page and page.count("users only") == len(users_only)


def test_a_logs_propensities_are_estimated_once_and_a_changed_log_afresh(logged, monkeypatch):
    """The curves come from the shared cache while the clicks are the same: a second report fits no EM, and
    shows what a fit gives; a second log is estimated anew."""
    fits = []
    fit = log_estimates.position_based_em
    monkeypatch.setattr(log_estimates, "position_based_em", lambda *a, **kw: fits.append(1) or fit(*a, **kw))
    first = launch_report_build(campaign=logged, agreement=False, n_resamples=200).behaviour
    again = launch_report_build(campaign=logged, agreement=False, n_resamples=200).behaviour
    assert len(fits) == 1
    log = campaign_impressions(
        campaign=logged, queries=campaign_queries(campaign=logged), models=campaign_models(campaign=logged)
    ).impressions
    harvesting, em, method, _ = log_estimates.fitted_propensities(log, 10, 1000, 100)
    for curve, fitted in ((again.em, em), (again.harvesting, harvesting)):
        for field in ("propensity", "ci_low", "ci_high", "n_resamples", "evidence"):
            np.testing.assert_array_equal(getattr(curve, field), getattr(fitted, field))
    assert again.propensity_method == first.propensity_method == method

    simulated_log_import(logged, lists=500, seed=1)
    more = launch_report_build(campaign=logged, agreement=False, n_resamples=200).behaviour
    assert len(fits) == 3  # the new log's, and the one the test fitted itself
    assert more.n_lists == 3500
    assert not np.array_equal(more.em.ci_high, first.em.ci_high, equal_nan=True)


def test_the_explorer_takes_the_reports_estimates_and_reads_no_impression_once_they_are_kept(logged):
    data = campaign_evaluation_data(campaign=logged)
    log_ids = interaction_log_ids(campaign=logged)
    report = launch_report_build(campaign=logged, agreement=False, n_resamples=200)
    with CaptureQueriesContext(connection) as read:
        users = users_per_query(data=data, model=1, log_ids=log_ids)
    assert not [query for query in read.captured_queries if "annotation_impression" in query["sql"]]
    # What the log itself says, with the report's propensities: experimental − online per query.
    log = campaign_impressions(campaign=logged, queries=data.queries, models=data.models).impressions
    assert report.behaviour.propensity_method == report.behaviour.harvesting.method
    theta = report.behaviour.harvesting.propensity
    values = [query_metrics(log, model=model, k=10, propensity=theta)["IPS-CTR@10"] for model in (0, 1)]
    assert users.metric == report.behaviour.comparisons["exp"].online_metric == "IPS-CTR@10"
    np.testing.assert_array_equal(users.delta, values[1] - values[0])
    assert np.isfinite(users.delta).all()  # every query served by both: no NaN compared with NaN


def test_the_online_figures_come_from_the_cache_until_the_guardrails_name_another_cut_off(logged):
    first = launch_report_build(campaign=logged, agreement=False, n_resamples=200).behaviour
    assert "CTR@5" not in first.comparisons["exp"].differences
    logged.guardrails = "CTR@5 >= -0.5"
    logged.save(update_fields=["guardrails"])
    again = launch_report_build(campaign=logged, agreement=False, n_resamples=200).behaviour
    assert "CTR@5" in again.comparisons["exp"].differences
    (outcome,) = again.comparisons["exp"].guardrails
    assert outcome.guardrail.metric == "CTR@5"


def _report_json(campaign) -> dict:
    report = json.loads(report_render(launch_report_build(campaign=campaign, n_resamples=200), "json"))
    report.pop("generated_at")
    return report


def test_a_new_label_recomputes_the_report_without_reading_an_impression(logged):
    """What the logs alone say is kept under their ids: a label changes the report, and the report computed
    from the kept estimates is the one computed from the impressions."""
    before = _report_json(logged)
    judgments = [JudgmentRow(0, "second", "q0", f"q0-d{j}", j % 4) for j in range(10)]
    labels_import(campaign=logged, judgments=judgments, preferences=[], source="test")
    with CaptureQueriesContext(connection) as read:
        after = _report_json(logged)
    assert not [query for query in read.captured_queries if "annotation_impression" in query["sql"]]
    assert after["behaviour"]["labels"] != before["behaviour"]["labels"]
    caches["default"].clear()
    with CaptureQueriesContext(connection) as read:
        assert _report_json(logged) == after
    assert [query for query in read.captured_queries if "annotation_impression" in query["sql"]]


def test_the_behaviour_grades_setting_grades_the_kept_log_anew(logged):
    first = launch_report_build(campaign=logged, agreement=False, n_resamples=200).behaviour
    assert not (first.qrels.grade == 5).any()
    logged.behaviour_grades = "click=5"
    logged.save(update_fields=["behaviour_grades"])
    again = launch_report_build(campaign=logged, agreement=False, n_resamples=200).behaviour
    assert (again.qrels.grade == 5).any()
    assert again.n_lists == first.n_lists == 3000
