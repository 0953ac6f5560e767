import pytest
from django.contrib.auth import authenticate
from django.core.management import CommandError, call_command
from django.test import Client
from django.urls import reverse

from annotation.models import (
    Campaign,
    InteractionLog,
    Judgment,
    Preference,
    Profile,
    RelevanceTask,
    SideBySideTask,
)
from annotation.selectors.labels import campaign_reuse_summary
from annotation.services.demo import DEMO_NAME, DEMO_ZH_NAME, WEEK_2
from metrics.selectors.launch import launch_report_build


@pytest.fixture
def demo(db, settings):
    settings.DEBUG = True
    call_command("load_demo")
    return Campaign.objects.get(name=DEMO_NAME)


def test_demo_has_logins_and_a_realistic_campaign(demo):
    for username in ["manager", "reviewer", "annotator1", "annotator2", "annotator3"]:
        assert authenticate(username=username, password="demo") is not None
    assert demo.queries.count() == 41
    sbs = SideBySideTask.objects.filter(campaign=demo)
    assert sbs.filter(lists_identical=True).exists() and sbs.filter(lists_identical=False).exists()
    assert RelevanceTask.objects.filter(campaign=demo, gold_grade__isnull=False).count() == 12


def test_demo_is_partly_judged_leaving_work_for_annotators(demo):
    tasks = RelevanceTask.objects.filter(campaign=demo).count()
    judged = Judgment.objects.filter(task__campaign=demo).values("task").distinct().count()
    assert 0 < judged < tasks
    assert Preference.objects.filter(task__campaign=demo).exists()
    assert not Judgment.objects.filter(annotator__username__startswith="annotator").exists()


def test_the_second_week_starts_with_the_first_weeks_labels(demo):
    week_2 = Campaign.objects.get(name=WEEK_2[0])
    assert week_2.standard == demo.standard and str(demo.standard) == "web-search-relevance v1"
    reuse = campaign_reuse_summary(campaign=week_2)
    assert reuse.judgments > 100 and reuse.relevance_tasks > 50
    assert (
        reuse.preferences > 0
        and 0 < reuse.side_by_side_tasks < SideBySideTask.objects.filter(campaign=week_2).count()
    )
    # Only the copies: nobody labelled week 2 itself yet.
    assert not Judgment.objects.filter(task__campaign=week_2, reused_from__isnull=True).exists()


def test_demo_is_idempotent(demo):
    counts = (Judgment.objects.count(), Preference.objects.count(), RelevanceTask.objects.count())
    call_command("load_demo")
    assert Campaign.objects.count() == 3
    assert (Judgment.objects.count(), Preference.objects.count(), RelevanceTask.objects.count()) == counts


def test_demo_refuses_without_debug(db, settings):
    settings.DEBUG = False
    with pytest.raises(CommandError, match="only with DEBUG on"):
        call_command("load_demo")
    assert not Campaign.objects.exists()


def test_the_demo_shows_five_editions_perfect_by_ndcg_and_alike_by_ils(demo):
    report = launch_report_build(campaign=demo, n_resamples=200, n_bootstrap=200, agreement=False)
    for name in ("ILS@5", "ILS@10", "alpha_nDCG@10", "ERR_IA@10", "StRecall@10", "Novelty@10"):
        assert name in report.measures
    dune = list(report.query_ids).index("q41")
    online = next(scores for scores in report.models if scores.is_online).per_query
    experimental = next(scores for scores in report.models if not scores.is_online).per_query
    # Graded Perfect by the raters' truth (their slips keep it just under 1), above the diverse list.
    assert online["nDCG@5"][dune] > 0.95 and online["nDCG@5"][dune] > experimental["nDCG@5"][dune]
    # The five editions share site, work and author and were marked near-duplicates: alike as can be.
    assert online["ILS@5"][dune] >= 0.9 and experimental["ILS@5"][dune] == pytest.approx(3.25 / 10)
    assert online["alpha_nDCG@10"][dune] < experimental["alpha_nDCG@10"][dune]
    marked = Preference.objects.filter(task__campaign=demo, task__query__external_id="q41").exclude(
        duplicates=[]
    )
    assert marked.exists()
    asked = Judgment.objects.filter(
        task__campaign=demo, task__query__external_id="q04", intents__isnull=False
    )
    assert asked.exists()


def test_the_demo_has_a_simulated_interaction_log_for_the_behaviour_page(demo):
    log = InteractionLog.objects.get(campaign=demo)
    assert (log.requests, log.impressions, log.sessions) == (4000, 40000, True)
    behaviour = launch_report_build(campaign=demo, agreement=False, n_resamples=200).behaviour
    assert behaviour.propensity_method == "intervention harvesting"
    comparison = next(iter(behaviour.comparisons.values()))
    assert comparison.points and comparison.guardrails and behaviour.agreement is not None


def test_a_chinese_campaign_stands_beside_the_english_one_and_its_team_reads_chinese(demo):
    chinese = Campaign.objects.get(name=DEMO_ZH_NAME)
    texts = list(chinese.queries.values_list("text", flat=True))
    assert (
        "北京旅游攻略" in texts
        and "机器学习教程" in texts
        and all(any("\u4e00" <= c <= "\u9fff" for c in t) for t in texts)
    )
    assert [grade["label"] for grade in chinese.scale] == ["不相关", "部分相关", "相关", "高度相关"]
    assert "高度相关" in chinese.guidelines
    assert (
        Judgment.objects.filter(task__campaign=chinese).exists()
        and Preference.objects.filter(task__campaign=chinese).exists()
    )
    team = {"reviewer_zh", "annotator_zh1", "annotator_zh2"}
    assert set(chinese.members.values_list("username", flat=True)) == team
    assert set(Profile.objects.filter(language="zh-hans").values_list("user__username", flat=True)) == team
    client = Client(headers={"accept-language": "en"})
    assert client.post(reverse("login"), {"username": "annotator_zh1", "password": "demo"}).status_code == 302
    page = client.get(reverse("annotation:work", args=[chinese.pk]), follow=True).content.decode()
    assert '<html lang="zh-hans">' in page and "标注规范" in page and "不相关" in page
