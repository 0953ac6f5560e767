"""Results kept in the shared cache (the launch report, the quality page): a second request with the same
inputs computes nothing and renders byte for byte what a computed result renders; each kind of write they
read is computed afresh; with Redis as with the database's cache table."""

import dataclasses
import re
from datetime import UTC, datetime

import pytest
from django.contrib.auth import get_user_model
from django.core.cache import cache
from django.urls import reverse
from django.utils import translation

from annotation.bundle import JudgmentRow, PreferenceRow, parse_bundle
from annotation.models import (
    AnnotatorExclusion,
    Document,
    InteractionLog,
    Judgment,
    Preference,
    Query,
    Ranking,
    RelevanceTask,
    SideBySideTask,
    document_pks_pack,
)
from annotation.services.adjudication import adjudication_set
from annotation.services.campaigns import campaign_change, campaign_import
from annotation.services.exclusions import annotator_exclude, annotator_reinstate
from annotation.services.interactions import interaction_log_delete
from annotation.services.label_import import labels_import
from metrics.reports import REPORT_FORMATS, report_render
from metrics.selectors import explorer, kept, launch, quality
from metrics.selectors.launch import launch_report_build, launch_report_later
from metrics.selectors.overview import campaign_overview
from tests.factories import (
    FIVE_EDITIONS,
    GRADES,
    VERDICTS,
    WORKED,
    five_editions_campaign,
    five_editions_label,
    simulated_log_import,
)

OPTIONS = {"n_resamples": 200, "n_bootstrap": 200}
MADE = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)


@pytest.fixture(params=["database", "redis"])
def shared_cache(request, db):
    """The report cache in the database's table, then in Redis, empty at the start."""
    if request.param == "redis":
        request.getfixturevalue("redis_cache")
    cache.clear()


@pytest.fixture
def worked(shared_cache):
    """The worked example with a second experimental model (the online lists) and an interaction log."""
    bundle = {
        **WORKED,
        "models": [*WORKED["models"], {"name": "exp2", "role": "experimental"}],
        "rankings": [
            *WORKED["rankings"],
            *({**row, "model": "exp2"} for row in WORKED["rankings"] if row["model"] == "online"),
        ],
    }
    campaign = campaign_import(bundle=parse_bundle(bundle, "worked.json"))
    judgments = [JudgmentRow(0, "ann", "q1", doc, grade) for doc, grade in GRADES.items()]
    judgments += [JudgmentRow(0, "ann", q, doc, 1) for q in ("q2", "q3", "q4") for doc in ("x", "y", "z")]
    preferences = [PreferenceRow(0, "ann", query, "exp", verdict) for query, verdict in VERDICTS.items()]
    labels_import(campaign=campaign, judgments=judgments, preferences=preferences, source="test")
    simulated_log_import(campaign, lists=300)
    return campaign


def rendered(report) -> dict[str, str]:
    """Every format of `report`, made at one fixed time."""
    report = dataclasses.replace(report, generated_at=MADE)
    return {format: report_render(report, format) for format in REPORT_FORMATS}


def computed(campaign, **options) -> dict[str, str]:
    """The report as computed with an empty cache."""
    cache.clear()
    later = launch_report_later(campaign=campaign, **OPTIONS, **options)
    assert not later.cached
    return rendered(later.result())


def served(campaign, **options) -> tuple[bool, dict[str, str]]:
    """Whether the report came from the cache, and what it renders."""
    later = launch_report_later(campaign=campaign, **OPTIONS, **options)
    return later.cached, rendered(later.result())


def test_a_kept_report_renders_byte_for_byte_what_a_computed_one_does(worked, monkeypatch):
    first = computed(worked)
    monkeypatch.setattr(launch, "_launch_report", None)  # a hit computes nothing
    assert served(worked) == (True, first)
    assert "exp" in first["json"] and first["html"] == served(worked)[1]["html"]


def test_each_model_and_option_is_served_as_computed(worked):
    for options in ({"model": "exp2"}, {"with_excluded": True}, {"agreement": False}, {"model": "exp"}):
        expected = computed(worked, **options)
        assert served(worked, **options) == (True, expected)
    launch_report_build(campaign=worked, **OPTIONS)  # the default model's report, kept
    cached, exp2 = served(worked, model="exp2")
    assert cached and exp2 == computed(worked, model="exp2")
    assert launch_report_build(campaign=worked, model="exp2", **OPTIONS).model == "exp2"


def test_a_kept_report_reads_in_another_language_as_a_computed_one(worked):
    english = computed(worked)
    with translation.override("zh-hans"):
        cached, chinese = served(worked)
        assert cached and chinese == computed(worked)
    assert chinese["html"] != english["html"]


def test_the_overview_and_the_decision_badge_share_the_kept_report(worked, client, make_user):
    client.force_login(make_user("boss", "manager"))
    overview = campaign_overview(campaign=worked)
    assert launch_report_later(campaign=worked).cached  # the badge's report is the overview's
    assert client.get(f"/metrics/campaigns/{worked.pk}/decision/").status_code == 200
    assert (
        overview.report.decision.outcome
        in client.get(f"/metrics/campaigns/{worked.pk}/decision/").content.decode()
    )


def grade_added(campaign):
    labels_import(
        campaign=campaign, judgments=[JudgmentRow(0, "ann2", "q1", "a", 0)], preferences=[], source="t"
    )


def grade_updated(campaign):
    """A write that no `updated_at` or count shows."""
    Judgment.objects.filter(task__campaign=campaign, task__document__external_id="a").update(grade=0)


def grade_deleted(campaign):
    Judgment.objects.filter(task__campaign=campaign, task__document__external_id="b").delete()


def verdict_updated(campaign):
    Preference.objects.filter(task__campaign=campaign, task__query__external_id="q3").update(verdict="good")


def verdict_deleted(campaign):
    Preference.objects.filter(task__campaign=campaign, task__query__external_id="q1").delete()


def grade_adjudicated(campaign, reviewer):
    task = RelevanceTask.objects.get(campaign=campaign, query__external_id="q1", document__external_id="a")
    adjudication_set(reviewer=reviewer, task=task, grade=0, reason="wrong")


def verdict_adjudicated(campaign, reviewer):
    task = SideBySideTask.objects.get(
        campaign=campaign, query__external_id="q1", experimental_model__name="exp"
    )
    adjudication_set(reviewer=reviewer, task=task, verdict="bad", reason="wrong")


def annotator_excluded(campaign, reviewer):
    annotator_exclude(campaign=campaign, username="ann", by=reviewer, reason="fast")


def setting_changed(campaign):
    campaign_change(campaign=campaign, changes={"gain": "exponential"})


def ranking_changed(campaign):
    ranking = Ranking.objects.get(model__campaign=campaign, model__name="exp", query__external_id="q1")
    online = Ranking.objects.get(model__campaign=campaign, model__name="online", query__external_id="q1")
    Ranking.objects.filter(pk=ranking.pk).update(documents=online.documents)


def query_reweighted(campaign):
    Query.objects.filter(campaign=campaign, external_id="q1").update(weight=5.0, segment="tail")


def gold_set(campaign):
    RelevanceTask.objects.filter(campaign=campaign, document__external_id="x").update(gold_grade=3)


def log_added(campaign):
    simulated_log_import(campaign, lists=200, seed=1)


def log_deleted(campaign):
    interaction_log_delete(campaign=campaign, log_id=InteractionLog.objects.get(campaign=campaign).pk)


WRITES = [
    grade_added,
    grade_updated,
    grade_deleted,
    verdict_updated,
    verdict_deleted,
    grade_adjudicated,
    verdict_adjudicated,
    annotator_excluded,
    setting_changed,
    ranking_changed,
    query_reweighted,
    gold_set,
    log_added,
    log_deleted,
]


@pytest.mark.parametrize("write", WRITES, ids=[write.__name__ for write in WRITES])
def test_each_kind_of_write_is_computed_afresh(worked, write, make_user):
    before = launch_report_build(campaign=worked, **OPTIONS)
    assert launch_report_later(campaign=worked, **OPTIONS).cached
    arguments = {"reviewer": make_user("rev", "reviewer")} if "reviewer" in write.__code__.co_varnames else {}
    write(worked, **arguments)
    worked.refresh_from_db()
    cached, after = served(worked)
    assert not cached
    assert after == computed(worked)
    if write is not gold_set:  # gold grades weigh only in Dawid–Skene's aggregation, not the worked example's
        assert after["json"] != rendered(before)["json"]


def test_the_diversity_inputs_are_computed_afresh(shared_cache, make_user):
    """Intents ticked, near-duplicates marked, a document's attributes and popularity, a query's intents."""
    bundle_settings = {"redundancy_aware": True}
    campaign = five_editions_campaign(make_user("ann", "annotator"), **bundle_settings)
    document = Document.objects.filter(campaign=campaign, external_id="f1")
    query = Query.objects.filter(campaign=campaign)
    writes = [
        lambda: Judgment.objects.filter(task__campaign=campaign, task__document__external_id="f1").update(
            intents=["novel"]
        ),
        lambda: Preference.objects.filter(task__campaign=campaign).update(duplicates=[]),
        lambda: document.update(attributes={"work": "dune", "author": "herbert", "format": "film"}),
        lambda: document.update(popularity=0.25),
        lambda: query.update(intents=FIVE_EDITIONS["queries"][0]["intents"][:2]),
    ]
    for write in writes:
        before = launch_report_build(campaign=campaign, **OPTIONS)
        write()
        cached, after = served(campaign)
        assert not cached
        assert after == computed(campaign)
        assert after["json"] != rendered(before)["json"]


def test_what_no_figure_reads_is_read_afresh_on_a_hit(worked, make_user):
    """An exclusion of someone without labels changes no figure: the report is the kept one, its record of
    exclusions the current one."""
    boss = make_user("boss", "manager")
    make_user("idle", "annotator")
    launch_report_build(campaign=worked, **OPTIONS)
    annotator_exclude(campaign=worked, username="idle", by=boss, reason="never came")
    later = launch_report_later(campaign=worked, **OPTIONS)
    assert later.cached and later.result().excluded == ["idle"]
    annotator_reinstate(campaign=worked, username="idle", by=boss)
    assert launch_report_build(campaign=worked, **OPTIONS).excluded == []
    assert AnnotatorExclusion.objects.filter(campaign=worked).count() == 1


def test_another_deployments_reports_are_not_read(worked, monkeypatch):
    launch_report_build(campaign=worked, **OPTIONS)
    monkeypatch.setattr(kept, "_CODE", "another")
    assert not launch_report_later(campaign=worked, **OPTIONS).cached


def quality_page(client, campaign) -> str:
    """The page without its CSRF token, which each answer masks anew."""
    page = client.get(reverse("metrics:campaign_quality", args=[campaign.pk])).content.decode()
    return re.sub(r'name="csrfmiddlewaretoken" value="[^"]*"', "", page)


def test_the_quality_page_is_kept_and_computed_afresh_after_each_kind_of_write(
    shared_cache, client, make_user, monkeypatch
):
    """On the five-editions campaign (intents and near-duplicates marked), a second annotator's labels."""
    client.force_login(make_user("boss", "manager"))
    annotator = make_user("ann", "annotator")
    campaign = five_editions_campaign(annotator, overlap=2, gsb_overlap=2)
    five_editions_label(
        campaign, make_user("ann2", "annotator"), marks=False, intents={"f1": ["film", "novel"]}
    )
    document = RelevanceTask.objects.filter(campaign=campaign, document__external_id="e2")
    exp = Ranking.objects.filter(model__campaign=campaign, model__name="exp")
    writes = [
        lambda: Judgment.objects.filter(task__in=document, annotator__username="ann2").update(grade=0),
        lambda: Preference.objects.filter(annotator__username="ann2").update(verdict="good"),
        lambda: document.update(gold_grade=0),
        lambda: Judgment.objects.filter(annotator__username="ann2", intents__isnull=False).update(intents=[]),
        lambda: Preference.objects.filter(annotator__username="ann").update(duplicates=[["left", 2, 1]]),
        lambda: exp.update(documents=document_pks_pack(exp.get().document_pks[:3])),
        lambda: get_user_model().objects.filter(username="ann2").update(username="ann-two"),
        lambda: annotator_exclude(campaign=campaign, username="ann", by=annotator, reason="test"),
    ]
    computations = []
    compute = quality._quality
    monkeypatch.setattr(quality, "_quality", lambda *a: computations.append(1) or compute(*a))
    for write in writes:
        before = quality_page(client, campaign)
        computations.clear()
        assert quality_page(client, campaign) == before and not computations  # kept
        write()
        after = quality_page(client, campaign)
        assert computations == [1]
        cache.clear()
        assert quality_page(client, campaign) == after != before


def explorer_page(client, campaign, **query) -> str:
    page = client.get(reverse("metrics:query_explorer", args=[campaign.pk]), query).content.decode()
    return re.sub(r'name="csrfmiddlewaretoken" value="[^"]*"', "", page)


def test_the_query_explorers_rows_are_kept_and_computed_afresh_after_a_write(
    worked, client, make_user, monkeypatch
):
    client.force_login(make_user("boss", "manager"))
    views = [{}, {"model": "exp2", "measure": "AP"}, {"sort": "delta", "descending": "1"}, {"verdict": "bad"}]
    computed_pages = []
    for query in views:
        cache.clear()
        computed_pages.append(explorer_page(client, worked, **query))
    computations = []
    compute = explorer._explorer_rows
    monkeypatch.setattr(explorer, "_explorer_rows", lambda *a: computations.append(1) or compute(*a))
    for query, page in zip(views, computed_pages, strict=True):
        assert explorer_page(client, worked, **query) == page
    assert len(computations) == 1  # exp2's AP rows; the last view kept the default model's and measure's
    grade_updated(worked)
    after = explorer_page(client, worked)
    assert after != computed_pages[0] and len(computations) == 2
    cache.clear()
    assert explorer_page(client, worked) == after
