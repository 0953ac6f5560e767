"""Repeat items: a share of an annotator's tasks comes back later, unmarked (side-by-side lists with their
sides swapped); the answer is kept apart and the first one counts; the quality page shows self-agreement."""

import random

import numpy as np
import pytest
from django.urls import reverse
from rest_framework.test import APIClient

from annotation.bundle import parse_bundle
from annotation.models import Assignment, Judgment, Preference, RelevanceTask, RepeatAnswer, SideBySideTask
from annotation.services.assignment import REPEAT_GAP, task_next
from annotation.services.campaigns import campaign_import
from annotation.services.labels import judgment_submit, preference_submit
from metrics.compute.annotators import (
    AnnotatorQuality,
    FlagRule,
    SideBias,
    annotator_flags,
    self_agreement,
    wilson_interval,
)
from tests.factories import SMALL_BUNDLE


def big_bundle(repeat_rate: float) -> dict:
    """30 queries, each ranked d1 d2 d3 by the online model and d1 d3 d2 by the experimental one."""
    data = {**SMALL_BUNDLE, "name": "Repeats"}
    data["settings"] = {
        **SMALL_BUNDLE["settings"],
        "repeat_rate": repeat_rate,
        "overlap": 1,
        "gsb_overlap": 1,
    }
    data["settings"]["task_order"] = "interleaved"
    data["queries"] = [{"id": f"q{i}", "text": f"query {i}"} for i in range(30)]
    data["rankings"] = [
        {"model": model, "query": f"q{i}", "documents": docs}
        for i in range(30)
        for model, docs in (("online", ["d1", "d2", "d3"]), ("exp", ["d1", "d3", "d2"]))
    ]
    return data


def work_through(campaign, annotator, rng: random.Random) -> list[Assignment]:
    """Answer every task handed out until none is left; returns the assignments in hand-out order."""
    handed = []
    for _ in range(500):
        assignment = task_next(annotator=annotator, campaign=campaign)
        if assignment is None:
            return handed
        handed.append(assignment)
        if assignment.relevance_task_id:
            judgment_submit(
                annotator=annotator, task=assignment.relevance_task, grade=rng.choice([0, 1, 2, 3])
            )
        else:
            preference_submit(
                annotator=annotator, task=assignment.side_by_side_task, side=rng.choice(["left", "right"])
            )
    raise AssertionError("the annotator never ran out of tasks")


def test_repeats_come_at_the_rate_never_back_to_back_and_hold_no_slot(db, make_user):
    random.seed(11)
    campaign = campaign_import(bundle=parse_bundle(big_bundle(0.2), "big.json"))
    annotator = make_user("ann", "annotator")
    handed = work_through(campaign, annotator, random.Random(5))
    repeats = [a for a in handed if a.repeat]
    firsts = [a for a in handed if not a.repeat]
    tasks = (
        RelevanceTask.objects.filter(campaign=campaign).count()
        + SideBySideTask.objects.filter(campaign=campaign).count()
    )
    assert len(firsts) == tasks
    # About a fifth of hand-outs (binomial, n ≈ 130: 0.2 ± 0.1 is over three standard errors).
    assert 0.1 < len(repeats) / len(handed) < 0.3

    def key(assignment):
        return type(assignment.task), assignment.task.pk

    for repeat in repeats:
        earlier = [key(a) for a in handed[: handed.index(repeat)] if not a.repeat]
        assert key(repeat) in earlier and key(repeat) not in earlier[-REPEAT_GAP:]
        first = next(a for a in firsts if key(a) == key(repeat))
        if repeat.side_by_side_task_id:
            assert repeat.experimental_on_left is (not first.experimental_on_left)
    assert len({key(a) for a in repeats}) == len(repeats)  # each task at most once
    # The answers went to RepeatAnswer; every task holds exactly its one label and its slot count.
    assert RepeatAnswer.objects.count() == len(repeats)
    assert Judgment.objects.count() == RelevanceTask.objects.count()
    assert Preference.objects.count() == SideBySideTask.objects.filter(lists_identical=False).count()
    assert set(RelevanceTask.objects.values_list("slots_spent", flat=True)) == {1}


def test_the_first_answer_counts_and_the_api_does_not_tell(db, make_user):
    random.seed(3)
    campaign = campaign_import(bundle=parse_bundle(big_bundle(0.5), "big.json"))
    annotator = make_user("ann", "annotator")
    api = APIClient()
    api.force_authenticate(annotator)
    seen = {}
    for _ in range(60):
        task = api.post(f"/api/campaigns/{campaign.pk}/next-task/").json()
        assert "repeat" not in task
        if task["kind"] != "relevance":
            api.post(f"/api/tasks/{task['id']}/skip/", {"reason": "dont_understand"}, format="json")
            continue
        key = task["document"]["title"], task["query"]["text"]
        answer = api.post(
            f"/api/tasks/{task['id']}/judgment/", {"grade": 0 if key in seen else 3}, format="json"
        )
        assert answer.status_code == 201 and answer.json()["grade"] == (0 if key in seen else 3)
        seen[key] = True
    repeats = RepeatAnswer.objects.all()
    assert repeats.exists() and set(repeats.values_list("grade", flat=True)) == {0}
    assert set(Judgment.objects.values_list("grade", flat=True)) == {3}  # the first answers stand


def test_self_agreement_by_hand():
    scale = [0, 1, 2, 3]
    figures = self_agreement(
        [0, 0, 0, 0, 1],
        [3, 2, 1, 0, 2],
        [3, 1, 3, 0, 2],
        [0, 0, 0, 1],
        [1, 1, -1, 0],
        [1, -1, -1, 1],
        n_annotators=2,
        scale=scale,
    )
    first, second = figures
    assert first.n_grades == 4 and first.exact[0] == 0.5 and first.within_one[0] == 0.75
    assert first.n_verdicts == 3 and first.consistent[0] == pytest.approx(2 / 3)
    assert first.n_decisive == 3 and first.same_side[0] == pytest.approx(1 / 3)  # good then bad: same side
    assert second.exact[0] == 1.0 and second.n_decisive == 0 and np.isnan(second.same_side[0])
    low, high = wilson_interval(8, 10)
    assert (float(low), float(high)) == pytest.approx((0.4902, 0.9433), abs=1e-4)


def test_low_self_agreement_is_flagged():
    quality = [AnnotatorQuality(0, 20, 5.0, 20, 0.8, 0, np.nan, np.nan, ())]
    bias = [SideBias(0, 0, 0, np.nan, np.nan)]
    sloppy = self_agreement(
        [0] * 12, [3] * 12, [0] * 6 + [3] * 2 + [1] * 4, [], [], [], n_annotators=1, scale=[0, 1, 2, 3]
    )
    steady = self_agreement(
        [0] * 12, [3] * 12, [3] * 10 + [2] * 2, [], [], [], n_annotators=1, scale=[0, 1, 2, 3]
    )
    assert annotator_flags(quality, bias, FlagRule(), sloppy) == [
        ["repeats: 17% of 12 grades the same as the first time"]
    ]
    assert annotator_flags(quality, bias, FlagRule(), steady) == [[]]


def test_the_quality_page_shows_each_annotators_repeats(db, client, make_user):
    random.seed(11)
    campaign = campaign_import(bundle=parse_bundle(big_bundle(0.2), "big.json"))
    work_through(campaign, make_user("ann", "annotator"), random.Random(5))
    client.force_login(make_user("rev", "reviewer"))
    page = client.get(reverse("metrics:campaign_quality", args=[campaign.pk])).content.decode()
    assert 'id="repeat-table"' in page
    n = RepeatAnswer.objects.filter(assignment__relevance_task__isnull=False).count()
    assert f'<td class="num">{n}</td>' in page


def test_an_annotator_agreeing_with_themselves_half_the_time_is_rarely_flagged():
    """Simulation: annotators whose repeats match their first answer with probability 0.5 (the threshold),
    5 to 40 repeats each, 4,000 of them: the Wilson interval's high end falls below 0.5 for at most 5%
    (it is a one-sided 2.5% test at large n; small n are conservative)."""
    rng = np.random.default_rng(17)
    n = rng.integers(5, 41, size=4000)
    k = rng.binomial(n, 0.5)
    _, high = wilson_interval(k, n)
    assert np.mean(high < 0.5) <= 0.05
    # And one who matches only a fifth of the time, with 20 repeats, is flagged most of the time.
    k = rng.binomial(20, 0.2, size=4000)
    _, high = wilson_interval(k, np.full(4000, 20))
    assert np.mean(high < 0.5) > 0.75


def test_a_repeat_that_runs_out_is_dropped_not_renewed(db, make_user):
    random.seed(11)
    campaign = campaign_import(bundle=parse_bundle(big_bundle(0.2), "big.json"))
    annotator = make_user("ann", "annotator")
    work_through(campaign, annotator, random.Random(5))
    # Hand out repeats only, then let one run out.
    Assignment.objects.filter(repeat=True).delete()
    RepeatAnswer.objects.all().delete()
    campaign.repeat_rate = 0.5
    campaign.save(update_fields=["repeat_rate"])
    slots = list(RelevanceTask.objects.order_by("pk").values_list("slots_spent", flat=True))
    repeat = None
    for _ in range(50):
        repeat = task_next(annotator=annotator, campaign=campaign)
        if repeat is not None:
            break
    assert repeat is not None and repeat.repeat
    Assignment.objects.filter(pk=repeat.pk).update(expires_at=repeat.leased_at)
    following = task_next(annotator=annotator, campaign=campaign)
    repeat.refresh_from_db()
    assert repeat.status == Assignment.Status.EXPIRED and (following is None or following.pk != repeat.pk)
    assert list(RelevanceTask.objects.order_by("pk").values_list("slots_spent", flat=True)) == slots
