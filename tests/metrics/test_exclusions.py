"""Guardrails: flagged annotators on the quality page, their labels excluded, the decision with and without
them, and the exclusions in every report."""

import csv
import io
import json

import numpy as np
import pytest
from django.urls import reverse

from annotation.bundle import JudgmentRow, PreferenceRow
from annotation.models import Campaign
from annotation.selectors.campaigns import campaign_progress
from annotation.services.label_import import labels_import
from metrics.compute.annotators import AnnotatorQuality, FlagRule, SideBias, annotator_flags, side_bias
from metrics.reports import report_render
from metrics.selectors.launch import launch_report_build
from tests.factories import GRADES, worked_campaign


def quality(index, *, n=20, seconds=5.0, consensus=0.8, n_gold=0, gold=np.nan) -> AnnotatorQuality:
    return AnnotatorQuality(index, n, seconds, n, consensus, n_gold, gold, np.nan, ())


def bias(index, *, decisive=0, share=np.nan, p=np.nan) -> SideBias:
    return SideBias(index, decisive, decisive, share, p)


def test_each_flag_by_hand():
    rows = [
        quality(0),
        quality(1, seconds=0.4),
        quality(2, n_gold=8, gold=0.375),
        quality(3, consensus=0.3),
        quality(4, n=5, seconds=0.1, consensus=0.1),  # too few grades to judge
        quality(5, n_gold=3, gold=0.0),  # too few gold items
    ]
    sides = [bias(i) for i in range(6)]
    sides[0] = bias(0, decisive=40, share=0.9, p=0.001)  # 0.001 < 0.05 / 2
    sides[1] = bias(1, decisive=40, share=0.65, p=0.04)  # not below 0.05 / 2
    flags = annotator_flags(rows, sides, FlagRule(min_seconds=2, min_gold_accuracy=0.5))
    assert flags[0] == ["side bias: the left list favoured in 90% of 40 decisive verdicts (p = 0.001)"]
    assert flags[1] == ["median 0.4 s a grade (under 2 s)"]
    assert flags[2] == ["gold accuracy 0.38 on 8 items (under 0.5)"]
    assert flags[3] == ["agreement with consensus 0.30, the median annotator's 0.80"]
    assert flags[4] == [] and flags[5] == []


def test_side_bias_flags_at_most_alpha_of_unbiased_campaigns():
    """Simulation: 20 annotators blind to the side, 60 verdicts each, 400 campaigns. With Bonferroni the
    share of campaigns with any side-bias flag stays under alpha (0.05); per-annotator tests at 0.05 would
    flag most campaigns."""
    rng = np.random.default_rng(7)
    n_annotators, per_annotator, campaigns = 20, 60, 400
    annotator = np.repeat(np.arange(n_annotators), per_annotator)
    rows = [quality(i) for i in range(n_annotators)]
    flagged = unadjusted = 0
    for _ in range(campaigns):
        verdict = rng.choice([-1.0, 0.0, 1.0], size=annotator.size)
        on_left = rng.random(annotator.size) < 0.5
        sides = side_bias(annotator, verdict, on_left, n_annotators=n_annotators)
        flagged += any(annotator_flags(rows, sides))
        unadjusted += any(side.p_value < 0.05 for side in sides)
    assert flagged / campaigns <= 0.05
    assert unadjusted / campaigns > 0.3


@pytest.fixture
def speedy(db):
    """The worked example plus an annotator who grades everything 3 in 0.1 s and calls every list Good."""
    campaign = worked_campaign()
    documents = [("q1", doc) for doc in GRADES] + [
        (q, d) for q in ("q2", "q3", "q4") for d in ("x", "y", "z")
    ]
    judgments = [JudgmentRow(0, "speedy", query, doc, 3, "", 0.1) for query, doc in documents]
    preferences = [PreferenceRow(0, "speedy", query, "exp", "good") for query in ("q1", "q3", "q4")]
    labels_import(campaign=campaign, judgments=judgments, preferences=preferences, source="test")
    return campaign


@pytest.fixture
def manager(client, make_user):
    client.force_login(make_user("boss", "manager"))
    return client


def test_a_speeding_annotator_is_flagged_excluded_and_the_decision_recomputed(manager, speedy):
    before = launch_report_build(campaign=speedy, n_resamples=200, n_bootstrap=200)
    page = manager.get(reverse("metrics:campaign_quality", args=[speedy.pk])).content.decode()
    assert 'id="flagged"' in page and "median 0.1 s a grade (under 2 s)" in page
    manager.post(
        reverse("annotation:campaign_exclusions", args=[speedy.pk]),
        {"action": "exclude", "annotator": "speedy", "reason": "0.1 s a grade"},
    )
    after = launch_report_build(campaign=speedy, n_resamples=200, n_bootstrap=200)
    assert after.excluded == ["speedy"]
    assert after.coverage.verdicts == before.coverage.verdicts - 3
    assert after.coverage.judgments == before.coverage.judgments - 15
    gsb = after.comparisons["exp"].gsb
    assert (gsb.good, gsb.same, gsb.bad) == (1, 1, 2) and after.decision.outcome == "no_launch"

    overview = manager.get(reverse("metrics:campaign_overview", args=[speedy.pk])).content.decode()
    assert 'id="decision"' in overview and 'id="decision-with-excluded"' in overview
    assert "Leaves out the labels of speedy" in overview
    manager.post(reverse("annotation:campaign_exclusions", args=[speedy.pk]), {"action": "confirm"})
    overview = manager.get(reverse("metrics:campaign_overview", args=[speedy.pk])).content.decode()
    assert 'id="decision-with-excluded"' not in overview and "Leaves out the labels of speedy" in overview
    quality_page = manager.get(reverse("metrics:campaign_quality", args=[speedy.pk])).content.decode()
    assert "speedy" in quality_page and 'class="badge">excluded' in quality_page


def test_every_report_lists_the_exclusions(manager, speedy):
    manager.post(
        reverse("annotation:campaign_exclusions", args=[speedy.pk]),
        {"action": "exclude", "annotator": "speedy", "reason": "0.1 s a grade"},
    )
    report = launch_report_build(campaign=speedy, n_resamples=200, n_bootstrap=200)
    data = json.loads(report_render(report, "json"))
    assert data["exclusions"]["left_out"] == ["speedy"]
    (record,) = data["exclusions"]["record"]
    assert (record["annotator"], record["reason"], record["excluded_by"]) == (
        "speedy",
        "0.1 s a grade",
        "boss",
    )
    metadata = dict(list(csv.reader(io.StringIO(report_render(report, "summary.csv"))))[1:])
    assert metadata["exclusions.left_out"] == "speedy"
    assert "- Excluded annotators: speedy (left out: 0.1 s a grade; by boss)" in report_render(report, "md")
    assert "speedy (left out: 0.1 s a grade; by boss)" in report_render(report, "html")


def test_during_an_exclusion_the_overview_counts_progress_as_its_decision_does(manager, speedy):
    Campaign.objects.filter(pk=speedy.pk).update(overlap=2, gsb_overlap=2)  # speedy's labels complete tasks
    complete_with_speedy = [kind.complete for kind in campaign_progress(campaign=speedy).kinds]
    manager.post(
        reverse("annotation:campaign_exclusions", args=[speedy.pk]),
        {"action": "exclude", "annotator": "speedy", "reason": "0.1 s a grade"},
    )
    response = manager.get(reverse("metrics:campaign_overview", args=[speedy.pk]))
    overview = response.context["overview"]
    work = overview.report.coverage.work
    relevance, side_by_side = overview.progress.kinds
    assert (relevance.complete, relevance.tasks) == (work.relevance_complete, work.relevance_tasks)
    assert (side_by_side.complete, side_by_side.tasks) == (
        work.side_by_side_complete,
        work.side_by_side_tasks,
    )
    assert relevance.labels_left + side_by_side.labels_left == work.labels_outstanding > 0
    assert [relevance.complete, side_by_side.complete] != complete_with_speedy
    rows = {row.username: row for row in overview.progress.annotators}
    assert rows["speedy"].excluded and not any(row.excluded for name, row in rows.items() if name != "speedy")
    page = response.content.decode()
    assert page.count('class="excluded"') == 1 and "speedy <span" in page
