"""Diversity in the launch report: ILS, α-nDCG, ERR-IA, subtopic recall and novelty per model and as paired
differences, from the intents and near-duplicates annotators gave; redundancy-aware nDCG and position
weights. The seed's five-editions case: NDCG@5 = 1.0 for five editions of one book, yet ILS@5 is high."""

import math
from dataclasses import replace

import numpy as np
import pytest
from django.core.management import call_command
from django.urls import reverse

from annotation.services.campaigns import campaign_change
from metrics.compute.diversity import evaluate_intents
from metrics.selectors.diversity import answered_tasks
from metrics.selectors.diversity_rows import campaign_diversity_rows
from metrics.selectors.drilldown import query_drilldown
from metrics.selectors.evaluation_data import campaign_evaluation_data
from metrics.selectors.launch import launch_report_build
from metrics.selectors.quality import campaign_quality
from tests.factories import FIVE_EDITIONS_INTENTS, five_editions_campaign, five_editions_label

FORMATS = ("html", "json", "csv", "md")
DISCOUNT = [1 / math.log2(rank + 1) for rank in range(1, 6)]


@pytest.fixture
def ann(make_user):
    return make_user("ann", "annotator")


def report_of(campaign, **options):
    return launch_report_build(
        campaign=campaign, n_resamples=200, n_bootstrap=200, agreement=False, **options
    )


def means(report, model):
    return next(scores for scores in report.models if scores.name == model).means


def test_five_editions_are_perfect_by_ndcg_and_alike_by_ils(db, ann):
    report = report_of(five_editions_campaign(ann, marks=False))
    assert report.measures[-5:] == ["ILS@5", "alpha_nDCG@5", "ERR_IA@5", "StRecall@5", "Novelty@5"]
    online, exp = means(report, "online"), means(report, "exp")
    assert online["nDCG@5"] == pytest.approx(1.0)
    # Editions share work and author, not format: 2/3 for every pair.
    assert online["ILS@5"] == pytest.approx(2 / 3)
    # e1–m1 and e1–c1 share the author (1/3), m1–c1 author and format (2/3); the game has no author.
    assert exp["ILS@5"] == pytest.approx((1 / 3 + 1 / 3 + 2 / 3) / 10)
    assert (online["StRecall@5"], exp["StRecall@5"]) == (pytest.approx(1 / 3), pytest.approx(1.0))
    # α = 0.5: the editions gain 1, 1/2, 1/4...; the greedy ideal takes the novel, film, a sequel, then
    # the second sequel and a second edition (1/2 each).
    online_dcg = sum(0.5**i * DISCOUNT[i] for i in range(5))
    exp_dcg = DISCOUNT[0] + DISCOUNT[1] + DISCOUNT[2] + 0.5 * DISCOUNT[3]
    ideal = DISCOUNT[0] + DISCOUNT[1] + DISCOUNT[2] + 0.5 * DISCOUNT[3] + 0.5 * DISCOUNT[4]
    assert online["alpha_nDCG@5"] == pytest.approx(online_dcg / ideal)
    assert exp["alpha_nDCG@5"] == pytest.approx(exp_dcg / ideal)
    # −log2 of the popularity: editions 2 bits, film 3, sequels 4; the game's is unknown.
    assert online["Novelty@5"] == pytest.approx(2.0)
    assert exp["Novelty@5"] == pytest.approx((2 + 3 + 4 + 4) / 4)
    delta = report.comparison.deltas["ILS@5"]
    assert delta.mean_delta == pytest.approx(exp["ILS@5"] - online["ILS@5"]) and delta.n == 1


def test_the_intent_measures_equal_the_pure_ones_on_the_same_judgments(db, ann):
    report = report_of(five_editions_campaign(ann, marks=False))
    # Documents by id: c1, e1..e5, f1, g1, m1; intents novel, film, sequel.
    served = {"c1": 2, "f1": 1, "g1": None, "m1": 2, **{f"e{i}": 0 for i in range(1, 6)}}
    judged = np.zeros((1, 9, 3), dtype=bool)
    for place, document in enumerate(sorted(served)):
        if served[document] is not None:
            judged[0, place, served[document]] = True
    for model, documents in (
        ("online", ["e1", "e2", "e3", "e4", "e5"]),
        ("exp", ["e1", "f1", "m1", "c1", "g1"]),
    ):
        relevance = np.zeros((1, 5, 3), dtype=bool)
        for rank, document in enumerate(documents):
            if served[document] is not None:
                relevance[0, rank, served[document]] = True
        expected = evaluate_intents(relevance, judged, ["alpha_nDCG@5", "ERR_IA@5", "StRecall@5"])
        for name, values in expected.items():
            assert means(report, model)[name] == pytest.approx(values[0])


def test_marked_near_duplicates_are_alike_and_gain_once_when_redundancy_aware(db, ann):
    campaign = five_editions_campaign(ann)
    report = report_of(campaign)
    assert means(report, "online")["ILS@5"] == pytest.approx(1.0)  # marked: similarity 1
    assert means(report, "online")["nDCG@5"] == pytest.approx(1.0)  # redundancy-aware is off
    campaign = campaign_change(campaign=campaign, changes={"redundancy_aware": True})
    online = means(report_of(campaign), "online")
    # One edition gains 7; the ideal keeps one edition, the film and two sequels (7 each), then the game (1).
    ideal = 7 * sum(DISCOUNT[:4]) + DISCOUNT[4]
    assert online["nDCG@5"] == pytest.approx(7 / ideal)


def test_alpha_and_position_weights_follow_the_settings(db, ann):
    campaign = five_editions_campaign(ann, marks=False)
    campaign = campaign_change(
        campaign=campaign,
        changes={"alpha": 0.0, "position_weights": [1, 0.8, 0, 0, 0], "primary_measure": "nDCG@5"},
    )
    report = report_of(campaign)
    assert "alpha_nDCG(alpha=0.0)@5" in report.measures
    exp = means(report, "exp")
    # α = 0: no redundancy discount; each document gains the intents it serves.
    assert exp["alpha_nDCG(alpha=0.0)@5"] < 1
    # Weights 1, 0.8 and nothing below: exp's top two (7 and 7) are the ideal's.
    assert exp["nDCG@5"] == pytest.approx(1.0)


def test_popularity_counted_from_the_rankings(db, ann):
    campaign = five_editions_campaign(ann, marks=False, novelty_popularity="rankings")
    report = report_of(campaign)
    # Two lists: e1 is in both (share 1, 0 bits), every other document in one (1 bit).
    assert means(report, "online")["Novelty@5"] == pytest.approx(4 / 5)
    assert means(report, "exp")["Novelty@5"] == pytest.approx(4 / 5)


def test_a_campaign_without_diversity_data_has_no_diversity_measures(campaign):
    report = report_of(campaign)
    assert not [name for name in report.measures if name.startswith(("ILS", "alpha", "ERR", "StRec", "Nov"))]


def test_every_page_format_and_the_api_show_the_diversity_measures(db, ann, client, make_user):
    campaign = five_editions_campaign(ann)
    client.force_login(make_user("boss", "manager"))
    pages = [
        reverse("metrics:campaign_overview", args=[campaign.pk]),
        reverse("metrics:comparison", args=[campaign.pk, "exp"]),
        reverse("metrics:query_explorer", args=[campaign.pk]) + "?measure=ILS@5&sort=delta",
        *(reverse("metrics:launch_report", args=[campaign.pk, "exp", form]) for form in FORMATS),
        f"/api/campaigns/{campaign.pk}/report/",
    ]
    for url in pages:
        response = client.get(url)
        assert response.status_code == 200, url
        text = b"".join(response.streaming_content) if response.streaming else response.content
        for name in ("ILS@5", "alpha_nDCG@5", "ERR_IA@5", "StRecall@5", "Novelty@5"):
            assert name.encode() in text, (url, name)
    report = client.get(f"/api/campaigns/{campaign.pk}/report/").json()
    ils = report["comparisons"]["exp"]["deltas"]["ILS@5"]
    assert ils["lower_is_better"] and ils["mean"] == pytest.approx((4 / 3) / 10 - 1.0)
    comparison = client.get(pages[1]).content.decode()
    assert 'title="lower is better"' in comparison
    explorer = client.get(pages[2]).content.decode()
    assert "<option selected>ILS@5</option>" in explorer


@pytest.mark.parametrize(
    ("guardrails", "outcome", "reason"),
    [
        # ILS@5 falls by 0.8667 on the one query: its interval's upper end is that.
        (
            "ILS@5 <= 0.05",
            "held",
            "Guardrail on ILS@5 held: the upper end of the interval of Δ ILS@5, −0.867",
        ),
        ("ILS@5 <= -0.9", "failed", "Guardrail on ILS@5 failed: the upper end of the interval of Δ ILS@5"),
        ("StRecall@5 >= 0.5", "held", "Guardrail on StRecall@5 held: the lower end"),
        ("ILS@20 <= 0", "not_evaluable", "Guardrail on ILS@20 could not be checked"),
    ],
)
def test_diversity_guardrails_are_stated_in_the_decision(
    db, ann, client, make_user, guardrails, outcome, reason
):
    campaign = five_editions_campaign(ann, min_queries=1, min_coverage=0, guardrails=guardrails)
    decision = report_of(campaign).decision
    assert any(reason in line for line in decision.reasons), decision.reasons
    if outcome == "failed":
        assert decision.outcome != "launch" and decision.reasons[0].startswith("Guardrail on ILS@5 failed")
    client.force_login(make_user("boss", "manager"))
    page = client.get(reverse("metrics:comparison", args=[campaign.pk, "exp"])).content.decode()
    assert f"Guardrail on {guardrails.split()[0]}" in page


def test_the_online_guardrail_of_the_default_is_left_to_the_logs(db, ann):
    report = report_of(five_editions_campaign(ann, min_queries=1, min_coverage=0))
    assert not [line for line in report.decision.reasons if "Guardrail" in line]


def test_the_quality_page_shows_agreement_on_intents_and_near_duplicates(db, ann, client, make_user):
    campaign = five_editions_campaign(ann, overlap=2, gsb_overlap=2)
    # Bob hears no film in the film, and marks the same near-duplicates.
    five_editions_label(campaign, make_user("bob", "annotator"), intents={**FIVE_EDITIONS_INTENTS, "f1": []})
    quality = campaign_quality(campaign=campaign, n_resamples=100)
    figures = {figure.name: figure for figure in quality.diversity_agreement}
    intents = figures["Intents served: Krippendorff α (nominal)"]
    duplicates = figures["Near-duplicates: Krippendorff α (nominal)"]
    assert intents.n_tasks == 9 * 3 and intents.value < 1
    assert duplicates.n_tasks == 2 * 10 and duplicates.value == pytest.approx(1.0)
    client.force_login(make_user("boss", "manager"))
    page = client.get(reverse("metrics:campaign_quality", args=[campaign.pk])).content.decode()
    assert "Diversity labels" in page and "Near-duplicates: Krippendorff α (nominal)" in page


def test_no_diversity_agreement_without_diversity_labels(campaign):
    assert campaign_quality(campaign=campaign, n_resamples=100).diversity_agreement == []


def test_the_query_drilldown_shows_the_reports_values(db, ann, client, make_user):
    campaign = five_editions_campaign(ann, redundancy_aware=True)
    report = report_of(campaign)
    drilldown = query_drilldown(campaign=campaign, query_pk=campaign.queries.get().pk)
    assert drilldown.measures == report.measures
    for model in drilldown.models:
        for name, value in model.scores.items():
            assert value == pytest.approx(means(report, model.name)[name]), (model.name, name)
    client.force_login(make_user("boss", "manager"))
    url = reverse("metrics:query_drilldown", args=[campaign.pk, campaign.queries.get().pk])
    assert "ILS@5" in client.get(url).content.decode()


@pytest.mark.parametrize("alpha", [0.5, 0.3])
def test_the_exported_intent_qrels_give_the_reports_values_in_ndeval(
    db, ann, client, make_user, tmp_path, alpha
):
    """The campaign's intent judgments, exported as ndeval's qrels, and each model's list scored by pyndeval
    (through ir_measures) give the report's own α-nDCG, ERR-IA and StRecall."""
    import ir_measures

    campaign = five_editions_campaign(ann, marks=False, alpha=alpha)
    report = report_of(campaign)
    client.force_login(make_user("boss", "manager"))
    text = client.get(f"/api/campaigns/{campaign.pk}/export/intent-qrels/").content.decode()
    path = tmp_path / "intents.qrels"
    call_command("export_judgments", str(campaign.pk), "--format", "intent-qrels", "-o", str(path))
    assert path.read_text() == text
    assert len(text.splitlines()) == 9 * 3 and "dune film f1 1" in text and "dune novel g1 0" in text
    qrels = [ir_measures.Qrel(q, d, int(j), i) for q, i, d, j in (line.split() for line in text.splitlines())]
    alpha_name = "alpha_nDCG@5" if alpha == 0.5 else f"alpha_nDCG(alpha={alpha})@5"
    # ERR-IA takes the campaign's alpha too, as ndeval's -alpha does; ir_measures names no alpha for it.
    names = [alpha_name, "StRecall@5", *(["ERR_IA@5"] if alpha == 0.5 else [])]
    lists = {"online": ["e1", "e2", "e3", "e4", "e5"], "exp": ["e1", "f1", "m1", "c1", "g1"]}
    for model, documents in lists.items():
        run = [ir_measures.ScoredDoc("dune", doc, 10.0 - rank) for rank, doc in enumerate(documents)]
        for name in names:  # one at a time: ir_measures 0.4.3 drops the run after a first alpha
            (expected,) = ir_measures.iter_calc([ir_measures.parse_measure(name)], qrels, run)
            assert means(report, model)[name] == pytest.approx(expected.value, abs=1e-6), (model, name)


def test_the_diversity_rows_leave_out_excluded_annotators_and_read_in_four_statements(
    ann, make_user, django_assert_num_queries
):
    other = make_user("other", "annotator")
    campaign = five_editions_campaign(ann, overlap=2, gsb_overlap=2)
    five_editions_label(campaign, other, intents={"f1": ["film"]})
    with django_assert_num_queries(4):
        every = campaign_diversity_rows(campaign=campaign, excluded=np.zeros(0, dtype=np.int64))
    kept = campaign_diversity_rows(campaign=campaign, excluded=np.array([other.pk]))
    assert {annotator for _, annotator, _, _ in every.marks} == {ann.pk, other.pk}
    assert {annotator for _, annotator, _, _ in kept.marks} == {ann.pk}
    assert len(every.intent_answers) == 2 * len(kept.intent_answers) > 0
    answered = {(document, tuple(intents)) for _, intents, document in kept.intent_answers}
    assert answered == {
        (document, tuple(FIVE_EDITIONS_INTENTS.get(document, ["novel"]))) for document, _ in answered
    }
    assert kept.query_intents == every.query_intents and len(kept.query_intents) == 1
    assert kept.attributes == every.attributes and kept.popularity == every.popularity


def test_an_intent_answer_is_found_by_its_task_and_one_whose_task_was_not_read_is_left_out(db, ann):
    campaign = five_editions_campaign(ann, marks=False)
    data = campaign_evaluation_data(campaign=campaign)
    rows = campaign_diversity_rows(campaign=campaign, excluded=np.zeros(0, dtype=np.int64))
    # A task pooled after the report read the tasks: its answer has no task to be counted against.
    pooled = (int(data.relevance.task_pk.max()) + 1, ["novel"], "late")
    answers = answered_tasks(data.relevance, replace(rows, intent_answers=[pooled, *rows.intent_answers]))
    assert len(answers) == len(rows.intent_answers) > 0
    for (task, intents, document), (task_pk, *answer) in zip(answers, rows.intent_answers, strict=True):
        assert data.relevance.task_pk[task] == task_pk
        assert [intents, document] == answer
