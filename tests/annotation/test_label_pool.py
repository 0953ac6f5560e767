"""The label pool: a second campaign of the same judging standard reuses the first one's labels, only where
the query, the document (or both lists) and the guidelines are the same; the preview, the overview and the
reports say how much it reused."""

import copy
import json
from datetime import timedelta

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.urls import reverse
from django.utils import timezone

from annotation.bundle import JudgmentRow, PreferenceRow, parse_bundle
from annotation.models import Campaign, CampaignImport, JudgingStandard, Judgment, Preference, RelevanceTask
from annotation.selectors.labels import campaign_reuse_summary
from annotation.services.assignment import task_next
from annotation.services.campaigns import campaign_change, campaign_import
from annotation.services.exclusions import annotator_exclude
from annotation.services.label_import import labels_import
from metrics.reports import report_render
from metrics.selectors.launch import launch_report_build
from tests.factories import SMALL_BUNDLE

ANNOTATORS = ("ann1", "ann2")  # overlap 2 in the small bundle


def bundle(name: str, **changes) -> dict:
    data = copy.deepcopy(SMALL_BUNDLE)
    data.update(name=name, standard="web-relevance", **changes)
    return data


def first_week(db_ready=None):
    """Week 1: both annotators grade q1/d1 and q1/d2, one of them q1/d3; both judge q1's lists."""
    campaign = campaign_import(bundle=parse_bundle(bundle("Week 1"), "w1.json"))
    judgments = [JudgmentRow(0, who, "q1", doc, 2) for who in ANNOTATORS for doc in ("d1", "d2")]
    judgments.append(JudgmentRow(0, "ann1", "q1", "d3", 1))
    preferences = [
        PreferenceRow(0, who, "q1", "exp", "good", experimental_on_left=True) for who in ANNOTATORS
    ]
    labels_import(campaign=campaign, judgments=judgments, preferences=preferences, source="week 1")
    return campaign


def task(campaign, query: str, document: str) -> RelevanceTask:
    return RelevanceTask.objects.get(
        campaign=campaign, query__external_id=query, document__external_id=document
    )


def test_a_second_campaign_counts_the_pools_labels_toward_its_overlap(db, django_assert_num_queries):
    week1 = first_week()
    week2 = campaign_import(bundle=parse_bundle(bundle("Week 2"), "w2.json"))
    assert week2.standard == week1.standard and str(week2.standard) == "web-relevance v1"
    d1, d3 = task(week2, "q1", "d1"), task(week2, "q1", "d3")
    assert d1.judgments.count() == 2 and d1.slots_spent == 2  # wholly satisfied: nobody is asked
    assert d3.judgments.count() == 1 and d3.slots_spent == 1  # partly: one more grade is asked
    copy_of = d3.judgments.get()
    assert copy_of.reused_from.task.campaign == week1 and copy_of.annotator.username == "ann1"
    verdicts = Preference.objects.filter(task__campaign=week2)
    assert sorted(verdicts.values_list("verdict", "experimental_on_left")) == [("good", True), ("good", True)]
    fresh = Campaign.objects.get(pk=week2.pk)
    with django_assert_num_queries(2):  # the counts, and the standard's name
        summary = campaign_reuse_summary(campaign=fresh)
    assert (summary.judgments, summary.preferences, summary.relevance_tasks, summary.side_by_side_tasks) == (
        5,
        2,
        2,
        1,
    )
    # ann1 already graded d3 (a copy): they are not handed it again; a newcomer is.
    handed = []
    for _ in range(10):
        assignment = task_next(annotator=copy_of.annotator, campaign=week2)
        if assignment is None:
            break
        handed.append(assignment.relevance_task_id or assignment.side_by_side_task_id)
        assignment.status = "skipped"
        assignment.skip_reason = "dont_understand"
        assignment.save()
    assert d1.pk not in handed and d3.pk not in handed


def test_a_changed_document_or_list_is_not_reused(db):
    first_week()
    changed = bundle("Week 2")
    changed["documents"][0]["body"] = "Body 1, rewritten"  # d1
    week2 = campaign_import(bundle=parse_bundle(changed, "w2.json"))
    assert not task(week2, "q1", "d1").judgments.exists()
    assert task(week2, "q1", "d2").judgments.count() == 2
    # d1 is in both top lists of q1: the lists changed, so q1's verdicts are not reused either.
    assert not Preference.objects.filter(task__campaign=week2).exists()


def test_other_guidelines_make_a_new_version_with_its_own_pool(db):
    week1 = first_week()
    week2 = campaign_import(
        bundle=parse_bundle(bundle("Week 2", guidelines="Grade for freshness."), "w2.json")
    )
    assert (week2.standard.name, week2.standard.version) == ("web-relevance", 2)
    assert not Judgment.objects.filter(task__campaign=week2).exists()
    # Changing a campaign's guidelines moves it to the version that has them.
    campaign_change(campaign=week1, changes={"guidelines": "Grade for freshness."})
    week1.refresh_from_db()
    assert week1.standard == week2.standard
    assert JudgingStandard.objects.count() == 2


def test_reuse_can_be_turned_off_or_limited_by_age(db):
    week1 = first_week()
    Judgment.objects.filter(task__campaign=week1, task__document__external_id="d2").update(
        created_at=timezone.now() - timedelta(days=40)
    )
    off = bundle("Off")
    off["settings"]["reuse_labels"] = False
    assert not Judgment.objects.filter(
        task__campaign=campaign_import(bundle=parse_bundle(off, "o.json"))
    ).exists()
    recent = bundle("Recent")
    recent["settings"]["reuse_max_age_days"] = 30
    campaign = campaign_import(bundle=parse_bundle(recent, "r.json"))
    assert (
        task(campaign, "q1", "d1").judgments.count() == 2
        and not task(campaign, "q1", "d2").judgments.exists()
    )
    # Turning reuse off later drops the copies and gives their slots back; on again brings them back.
    campaign_change(campaign=campaign, changes={"reuse_labels": False})
    assert not Judgment.objects.filter(task__campaign=campaign).exists()
    assert task(campaign, "q1", "d1").slots_spent == 0
    campaign_change(campaign=campaign, changes={"reuse_labels": True, "reuse_max_age_days": 0})
    assert task(campaign, "q1", "d2").judgments.count() == 2


def test_an_excluded_annotators_labels_are_not_reused(db, make_user):
    week1 = first_week()
    annotator_exclude(campaign=week1, username="ann2", by=make_user("boss", "manager"), reason="speeding")
    week2 = campaign_import(bundle=parse_bundle(bundle("Week 2"), "w2.json"))
    assert set(
        Judgment.objects.filter(task__campaign=week2).values_list("annotator__username", flat=True)
    ) == {"ann1"}


def test_the_overview_and_reports_count_the_reused_labels(db, client, make_user):
    first_week()
    week2 = campaign_import(bundle=parse_bundle(bundle("Week 2"), "w2.json"))
    client.force_login(make_user("rev", "reviewer"))
    page = client.get(reverse("metrics:campaign_overview", args=[week2.pk])).content.decode()
    assert "7 labels came from earlier campaigns of web-relevance v1" in page
    report = launch_report_build(campaign=week2, n_resamples=100, n_bootstrap=100)
    assert json.loads(report_render(report, "json"))["reuse"] == {
        "standard": "web-relevance v1",
        "labels": 7,
        "judgments": 5,
        "preferences": 2,
        "relevance_tasks": 2,
        "side_by_side_tasks": 1,
    }
    assert "- Reused labels: 7 from earlier campaigns of web-relevance v1" in report_render(report, "md")
    assert client.get(f"/api/campaigns/{week2.pk}/").json()["standard"] == "web-relevance v1"
    client.force_login(make_user("boss", "manager"))
    settings_page = client.get(reverse("annotation:campaign_settings", args=[week2.pk])).content.decode()
    assert "Judging standard: <strong>web-relevance v1</strong>" in settings_page


@pytest.fixture
def manager(transactional_db, client, make_user, settings, tmp_path):
    settings.IMPORTS_DIR = tmp_path / "imports"
    client.force_login(make_user("boss", "manager"))
    return client


def test_the_preview_says_what_the_pool_will_give_and_writes_nothing(
    manager, django_capture_on_commit_callbacks
):
    first_week()
    body = {"bundle": SimpleUploadedFile("w2.json", json.dumps(bundle("Week 2")).encode())}
    with django_capture_on_commit_callbacks(execute=True):
        manager.post(reverse("annotation:campaign_new"), body)
    call_command("db_worker", batch=True, reload=False, startup_delay=False, verbosity=0)
    staged = CampaignImport.objects.get()
    assert staged.status == CampaignImport.Status.READY
    assert staged.preview["reuse"] == {
        "standard": "web-relevance v1",
        "labels": 7,
        "judgments": 5,
        "preferences": 2,
        "relevance_tasks": 2,
        "side_by_side_tasks": 1,
    }
    page = manager.get(reverse("annotation:campaign_import", args=[staged.pk])).content.decode()
    assert "7 labels from earlier campaigns" in page
    assert (
        Judgment.objects.count() == 5 and not RelevanceTask.objects.exclude(campaign__name="Week 1").exists()
    )
