"""The launch report: hand-checked numbers on a tiny campaign, the JSON shape, each format by command."""

import csv
import io
import json
import math

import pytest
from django.core.management import CommandError, call_command
from django.db import transaction

from annotation.bundle import JudgmentRow, PreferenceRow, parse_bundle
from annotation.campaign_settings import CAMPAIGN_SETTINGS, SETTINGS_BY_NAME
from annotation.errors import InputError
from annotation.models import Adjudication, Campaign, RelevanceTask, SideBySideTask
from annotation.services.adjudication import adjudication_set
from annotation.services.campaigns import campaign_import
from annotation.services.demo import DEMO_NAME
from annotation.services.label_import import labels_import
from metrics.compute.gsb import gsb_summary
from metrics.reports import report_render
from metrics.reports.text import CSV_SETTINGS
from metrics.selectors.evaluation_data import campaign_evaluation_data
from metrics.selectors.launch import SEED, launch_report_build, verdicts_of_model
from metrics.selectors.quality import campaign_quality
from tests.factories import GRADES, WORKED, worked_campaign


@pytest.fixture
def worked(db):
    return worked_campaign()


def test_worked_example_numbers(worked):
    report = launch_report_build(campaign=worked)
    online, exp = report.models
    assert report.query_ids.tolist() == ["q1", "q2", "q3", "q4"]
    assert online.per_query["nDCG"][0] == pytest.approx(0.9608, abs=1e-4)
    assert online.per_query["nDCG@6"][0] == pytest.approx(0.9608, abs=1e-4)
    assert exp.per_query["nDCG"][0] == pytest.approx(1.0)
    assert report.measures == ["nDCG@3", "nDCG@6", "nDCG", "AP", "RR", "P@6", "Judged@6"]
    comparison = report.comparisons["exp"]
    gsb = comparison.gsb
    assert (gsb.good, gsb.same, gsb.bad) == (1, 1, 2)
    assert gsb.score == pytest.approx(-0.25)
    assert gsb.identical_queries == 1
    assert gsb.changed_queries == 3
    assert gsb.changed_score == pytest.approx(-1 / 3)
    assert report.decision.outcome == "no_launch"
    assert set(comparison.gsb_segments) == {"head", "tail"}
    assert comparison.gsb_segments["tail"].score == pytest.approx(-1.0)
    # Only q1's measures differ (q3 and q4 swap two equally graded documents).
    assert comparison.deltas["nDCG"].mean_delta == pytest.approx((1 - 0.96081) / 4, abs=1e-5)
    assert comparison.deltas["nDCG"].wins == 1


def test_json_has_the_agreed_shape(worked):
    data = json.loads(report_render(launch_report_build(campaign=worked), "json"))
    assert set(data) == {
        *("campaign", "decision", "reasons", "models", "comparisons", "agreement", "settings"),
        *(
            "headline",
            "generated_at",
            "fingerprint",
            "coverage",
            "aggregation",
            "exclusions",
            "reuse",
            "reviews",
            "behaviour",  # null without interaction logs
        ),
    }
    assert data["behaviour"] is None
    assert data["decision"] == "no_launch"
    assert data["reasons"] and all(isinstance(reason, str) for reason in data["reasons"])
    assert data["models"]["online"]["role"] == "online"
    ndcg = data["models"]["online"]["metrics"]["nDCG"]
    assert ndcg["per_query"]["q1"] == pytest.approx(0.9608, abs=1e-4)
    assert ndcg["mean"] == pytest.approx(sum(ndcg["per_query"].values()) / 4)
    delta = data["comparisons"]["exp"]["deltas"]["nDCG@6"]
    assert {"mean", "ci95", "p_value"} <= set(delta) and len(delta["ci95"]) == 2
    gsb = data["comparisons"]["exp"]["gsb"]
    assert (gsb["good"], gsb["same"], gsb["bad"], gsb["score"]) == (1, 1, 2, -0.25)
    assert {"ci95", "p_value", "changed_queries"} <= set(gsb)
    assert data["comparisons"]["exp"]["decision"] == "no_launch"
    assert data["settings"]["aggregation"] == "mean" and data["settings"]["gain"] == "linear"
    assert data["settings"]["cutoffs"] == [3, 6]
    assert set(data["agreement"]) == {"relevance", "side_by_side"}


def test_the_agreement_is_the_quality_pages(worked):
    agreement = launch_report_build(campaign=worked).agreement
    quality = campaign_quality(campaign=worked)
    assert agreement.grade_agreement == quality.grade_agreement
    assert agreement.verdict_agreement == quality.verdict_agreement


def test_identical_lists_count_as_same_only_when_the_campaign_says_so(worked):
    worked.auto_same_identical = False
    worked.save()
    gsb = launch_report_build(campaign=worked, agreement=False).comparisons["exp"].gsb
    assert (gsb.good, gsb.same, gsb.bad) == (1, 0, 2)
    assert gsb.identical_queries == 0


def test_an_adjudicated_verdict_replaces_the_raw_ones(worked, make_user):
    task = SideBySideTask.objects.get(campaign=worked, query__external_id="q3")
    Adjudication.objects.create(side_by_side_task=task, reviewer=make_user("rev"), verdict="good", reason="x")
    gsb = launch_report_build(campaign=worked, agreement=False).comparisons["exp"].gsb
    assert (gsb.good, gsb.same, gsb.bad) == (2, 1, 1)


def test_several_experimental_models_each_get_a_decision(db):
    bundle = json.loads(json.dumps(WORKED))
    bundle["models"].append({"name": "exp2", "role": "experimental"})
    bundle["settings"] |= {"min_coverage": 0.0, "min_queries": 1}  # only q1 is labelled here
    bundle["rankings"] += [
        {**ranking, "model": "exp2"} for ranking in WORKED["rankings"] if ranking["model"] == "online"
    ]
    campaign = campaign_import(bundle=parse_bundle(bundle, "two.json"))
    labels_import(
        campaign=campaign,
        judgments=[JudgmentRow(0, "ann", "q1", doc, grade) for doc, grade in GRADES.items()],
        preferences=[PreferenceRow(0, "ann", "q1", "exp", "good")],
        source="test",
    )
    report = launch_report_build(campaign=campaign, model="exp2", agreement=False)
    assert report.model == "exp2"
    data = json.loads(report_render(report, "json"))
    assert set(data["comparisons"]) == {"exp", "exp2"}
    assert all("decision" in comparison for comparison in data["comparisons"].values())
    assert data["decision"] == data["comparisons"]["exp2"]["decision"]
    # exp2 ranks as online does: every list identical, GSB 0, no launch.
    assert data["comparisons"]["exp2"]["gsb"]["score"] == 0
    assert data["comparisons"]["exp2"]["decision"] == "no_launch"
    with pytest.raises(InputError, match="online"):
        launch_report_build(campaign=campaign, model="online", agreement=False)


def test_a_campaign_without_labels_reports_without_failing(campaign):
    report = launch_report_build(campaign=campaign)
    assert report.coverage.evaluated_queries == 0
    for format in ("json", "html", "csv", "md"):
        assert report_render(report, format)
    data = json.loads(report_render(report, "json"))
    assert (
        math.isnan(report.models[0].means["nDCG"])
        and data["models"]["online"]["metrics"]["nDCG"]["mean"] is None
    )


def _without_time(report_json: str) -> dict:
    data = json.loads(report_json)
    del data["generated_at"]
    return data


def command(*args) -> str:
    out = io.StringIO()
    call_command("launch_report", *args, stdout=out, stderr=io.StringIO())
    return out.getvalue()


@pytest.mark.django_db(transaction=True)
def test_the_same_report_when_it_reads_on_a_second_connection(worked):
    # Outside a transaction the judgments are read on a second connection (PostgreSQL) and the agreement
    # computed on a second thread; inside one, everything is read on the caller's connection.
    beside = report_render(launch_report_build(campaign=worked), "json")
    with transaction.atomic():
        alone = report_render(launch_report_build(campaign=worked), "json")
    assert _without_time(beside) == _without_time(alone)
    assert json.loads(beside)["agreement"]["side_by_side"]


def test_every_format_via_the_command(worked, tmp_path):
    data = json.loads(command(str(worked.pk), "--format", "json"))
    assert data["decision"] == "no_launch"
    assert _without_time(command("Worked example", "--model", "exp", "--format", "json")) == _without_time(
        json.dumps(data)
    )

    table = command(worked.name, "--format", "csv")
    rows = list(csv.DictReader(io.StringIO(table)))
    assert len(rows) == 2 * 4
    assert {row["model"] for row in rows} == {"online", "exp"}
    q1 = next(row for row in rows if row["model"] == "online" and row["query"] == "q1")
    assert float(q1["nDCG"]) == pytest.approx(0.9608, abs=1e-4)
    assert set(rows[0]) == {
        "model",
        "role",
        "query",
        "nDCG@3",
        "nDCG@6",
        "nDCG",
        "AP",
        "RR",
        "P@6",
        "Judged@6",
    }

    markdown = command(str(worked.pk), "--format", "md")
    assert markdown.startswith("# Launch review: Worked example")
    assert "Do not launch" in markdown and "| nDCG@6 |" in markdown

    target = tmp_path / "report.html"
    command(str(worked.pk), "--format", "html", "-o", str(target))
    html = target.read_text(encoding="utf-8")
    assert html.startswith("<!doctype html>")
    assert "<svg" in html and "<style>" in html
    assert "<script" not in html and "<link" not in html and "src=" not in html  # nothing loaded from outside
    assert "Do not launch" in html and "GSB <strong>-0.250</strong>" in html


def test_the_command_names_what_is_wrong(worked):
    with pytest.raises(CommandError, match="no campaign"):
        command("no such campaign")
    with pytest.raises(CommandError, match="no experimental model 'nope'"):
        command(str(worked.pk), "--model", "nope")


def test_the_api_names_an_unknown_model(worked, client, make_user):
    client.force_login(make_user("rita", "reviewer"))
    response = client.get(f"/api/campaigns/{worked.pk}/report/?model=online")
    assert response.status_code == 400 and response.json() == {
        "code": "unknown_model",
        "detail": f"model: no experimental model 'online' in campaign '{worked.name}'",
        "field": "model",
    }


def test_the_demo_shows_a_decision_not_collecting(db, settings):
    # Simulated work covers 27 of 40 queries; its thresholds (20 queries, 50%) let a decision show.
    settings.DEBUG = True
    call_command("load_demo")
    report = launch_report_build(campaign=Campaign.objects.get(name=DEMO_NAME), agreement=False)
    assert report.coverage.work.complete_queries >= 20
    assert report.decision.outcome in ("launch", "no_launch", "inconclusive")


def test_a_campaign_without_labels_is_collecting(campaign):
    data = json.loads(report_render(launch_report_build(campaign=campaign, agreement=False), "json"))
    assert data["decision"] == "collecting"
    assert data["coverage"]["labels_outstanding"] > 0 and data["coverage"]["complete_queries"] < 30
    assert data["fingerprint"]["labels"] == 0 and len(data["fingerprint"]["sha256"]) == 64
    assert "provisional" not in data  # nobody has labelled: no numbers so far to peek at


def _refuse_nan(constant: str):
    raise AssertionError(f"the JSON holds {constant}")


@pytest.mark.parametrize(
    "judgments",
    [
        [],  # no labels
        [("a", "q1", "d1", 2), ("a", "q1", "d2", 0)],  # one annotator
        [("a", "q1", "d1", 2), ("b", "q1", "d1", 1)],  # two annotators sharing one task
    ],
)
def test_undefined_figures_are_null_in_json_and_a_dash_elsewhere(campaign, client, make_user, judgments):
    rows = [JudgmentRow(0, name, query, doc, grade) for name, query, doc, grade in judgments]
    labels_import(campaign=campaign, judgments=rows, preferences=[], source="test")
    report = launch_report_build(campaign=campaign, n_resamples=200, n_bootstrap=200)
    data = json.loads(report_render(report, "json"), parse_constant=_refuse_nan)
    json.dumps(data, allow_nan=False)
    client.force_login(make_user("rita", "reviewer"))
    api = client.get(f"/api/campaigns/{campaign.pk}/report/")
    assert json.loads(api.content, parse_constant=_refuse_nan)["agreement"] == data["agreement"]
    for figure in data["agreement"]["relevance"].values():
        assert figure["value"] is None and figure["ci95"] == [None, None] and figure["undefined"]
    markdown = report_render(report, "md")
    assert "nan" not in markdown.lower() and "n/a" not in markdown
    assert "nan" not in report_render(report, "csv").lower()
    reason = data["agreement"]["relevance"]["Krippendorff α (ordinal)"]["undefined"]
    assert f"Krippendorff α (ordinal) — ({reason})" in markdown
    html = report_render(report, "html")
    assert "nan" not in html.replace("nanum", "").lower().split("<body")[1]


def test_the_report_says_whether_dawid_skene_converged(db):
    campaign = worked_campaign()
    Campaign.objects.filter(pk=campaign.pk).update(aggregation="dawid_skene")
    campaign.refresh_from_db()
    report = launch_report_build(campaign=campaign, agreement=False, n_resamples=200, n_bootstrap=200)
    # One annotator, every task graded once: nothing to learn, so the fit falls back to the labels.
    data = json.loads(report_render(report, "json"))
    assert data["aggregation"] == {"method": "dawid_skene", "converged": True, "fell_back": True}
    assert "Aggregation: Dawid–Skene (fit fell back to majority" in report_render(report, "md")
    assert 'id="aggregation-fit" class="warn">(fit fell back to majority' in report_render(report, "html")


def test_other_aggregations_have_no_fit_to_report(worked):
    report = launch_report_build(campaign=worked, agreement=False, n_resamples=200, n_bootstrap=200)
    data = json.loads(report_render(report, "json"))
    assert data["aggregation"] == {"method": "mean", "converged": None, "fell_back": None}
    assert "Aggregation: Mean;" in report_render(report, "md")
    assert 'id="aggregation-fit"' not in report_render(report, "html")


def test_the_csv_summary_says_what_the_json_says_of_the_report_and_the_csv_is_one_table(worked):
    report = launch_report_build(campaign=worked, n_resamples=200, n_bootstrap=200)
    data = json.loads(report_render(report, "json"))
    metadata, table = report_render(report, "summary.csv"), report_render(report, "csv")
    fields = list(csv.reader(io.StringIO(metadata)))
    assert fields[0] == ["field", "value"] and all(len(row) == 2 for row in fields)
    values = dict(fields[1:])
    assert values["generated_at"] == data["generated_at"]
    assert values["fingerprint.sha256"] == data["fingerprint"]["sha256"]
    assert values["fingerprint.labels"] == str(data["fingerprint"]["labels"])
    assert values["decision"] == data["decision"] == "no_launch"
    assert values["campaign.model"] == "exp"
    coverage = data["coverage"]
    assert values["coverage.side_by_side_complete"] == str(coverage["side_by_side_complete"])
    assert values["coverage.labels_outstanding"] == str(coverage["labels_outstanding"])
    assert values["coverage.relevance_share"] == repr(coverage["relevance_share"])
    assert (values["settings.launch_min_gsb"], values["settings.min_queries"]) == ("0.05", "4")
    assert (values["settings.launch_alpha"], values["settings.min_coverage"]) == ("0.05", "0.9")
    assert values["settings.aggregation"] == values["aggregation.method"] == "mean"
    assert values["aggregation.converged"] == ""  # no fit for the mean
    assert table.startswith("model,role,query,")
    rows = list(csv.reader(io.StringIO(table)))
    assert all(len(row) == len(rows[0]) for row in rows) and len(rows) == 1 + 2 * 4  # no second section


def test_the_report_shows_the_settings_the_table_marks_and_the_csv_repeats_some(worked):
    settings = launch_report_build(campaign=worked).settings
    shown = [setting for setting in CAMPAIGN_SETTINGS if setting.report]
    assert list(settings) == ["scale", *(setting.name for setting in shown), "n_resamples", "n_bootstrap"]
    assert all(settings[setting.name] == setting.normal(getattr(worked, setting.name)) for setting in shown)
    assert all(SETTINGS_BY_NAME[name].report for name in CSV_SETTINGS)


def test_csv_text_cannot_become_a_spreadsheet_formula(worked):
    Campaign.objects.filter(pk=worked.pk).update(name='=HYPERLINK("http://evil","x")')
    worked.queries.filter(external_id="q1").update(external_id="=1+1")
    worked.queries.filter(external_id="q2").update(external_id="-2")
    worked.refresh_from_db()
    report = launch_report_build(campaign=worked, agreement=False, n_resamples=200, n_bootstrap=200)
    metadata, table = report_render(report, "summary.csv"), report_render(report, "csv")
    assert (
        dict(list(csv.reader(io.StringIO(metadata)))[1:])["campaign.name"]
        == '\'=HYPERLINK("http://evil","x")'
    )
    rows = list(csv.reader(io.StringIO(table)))[1:]
    assert {row[2] for row in rows} == {"'=1+1", "'-2", "q3", "q4"}
    assert all(not cell.startswith(("=", "+", "-", "@")) for row in rows for cell in row)


def test_the_report_says_how_many_labels_reviewers_overrode(worked, make_user):
    reviewer = make_user("rev", "reviewer")
    task = RelevanceTask.objects.get(campaign=worked, query__external_id="q1", document__external_id="d")
    adjudication_set(reviewer=reviewer, task=task, grade=2, reason="d answers it")  # ann said 0
    pair = SideBySideTask.objects.get(campaign=worked, query__external_id="q3")
    adjudication_set(reviewer=reviewer, task=pair, verdict=pair.preferences.get().verdict, reason="agreed")
    report = launch_report_build(campaign=worked, n_resamples=200, n_bootstrap=200)
    assert report.reviews.as_dict() == {
        "adjudicated_grades": 1,
        "adjudicated_verdicts": 1,
        "overridden_grades": 1,
        "overridden_verdicts": 0,  # the final verdict is the annotator's
        "overridden": 1,
    }
    assert json.loads(report_render(report, "json"))["reviews"]["overridden"] == 1
    assert "overriding 1 annotators' labels" in report_render(report, "md")
    assert 'id="reviews"' in report_render(report, "html")
    summary = dict(list(csv.reader(io.StringIO(report_render(report, "summary.csv"))))[1:])
    assert summary["reviews.overridden_grades"] == "1"


def test_no_provisional_decision_before_anyone_labels(campaign):
    # The small campaign has a query whose two lists are identical: an automatic Same, no person's label.
    assert campaign.side_by_side_tasks.filter(lists_identical=True).exists()
    report = launch_report_build(campaign=campaign, n_resamples=200, n_bootstrap=200)
    assert report.fingerprint.labels == 0 and report.comparisons["exp"].gsb.n_judgments > 0
    assert report.decision.outcome == "collecting" and report.decision.provisional is None
    labels_import(
        campaign=campaign, judgments=[JudgmentRow(1, "ann", "q1", "d1", 2)], preferences=[], source="t"
    )
    report = launch_report_build(campaign=campaign, n_resamples=200, n_bootstrap=200)
    assert report.decision.provisional is not None  # a person has labelled: the numbers so far are shown


def test_gsb_interval_takes_the_bootstrap_resamples_as_the_deltas_do(worked):
    # The flips decide (n_resamples); every interval, GSB's too, is shown only (n_bootstrap).
    report = launch_report_build(campaign=worked, agreement=False, n_resamples=300, n_bootstrap=150)
    data = campaign_evaluation_data(campaign=worked, with_excluded=False)
    experimental = next(index for index, model in enumerate(data.models) if not model.is_online)
    query, verdict, _, changed = verdicts_of_model(data=data, model=experimental)

    def interval(n_resamples):
        gsb = gsb_summary(
            query, verdict, n_queries=len(data.queries), changed=changed, n_resamples=n_resamples, seed=SEED
        )
        return gsb.ci_low, gsb.ci_high, gsb.std_error

    gsb = report.comparisons["exp"].gsb
    assert (gsb.ci_low, gsb.ci_high, gsb.std_error) == interval(150) != interval(300)
    assert "(150 resamples, seed 0)" in report_render(report, "html")
