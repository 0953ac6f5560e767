"""The reviewer's and manager's home: each campaign's progress and disputes, read for all campaigns at once,
equal to what the progress page and the review queue count for each, in a fixed number of queries."""

import copy
import random

from annotation.bundle import parse_bundle
from annotation.models import Adjudication, AnnotatorExclusion
from annotation.selectors.campaigns import campaigns_summary
from annotation.selectors.review import review_queue
from annotation.services.adjudication import adjudication_set
from annotation.services.assignment import task_next
from annotation.services.campaigns import campaign_import
from annotation.services.exclusions import annotator_exclude
from annotation.services.labels import judgment_submit, preference_submit
from annotation.task_kinds import TASK_KINDS
from tests.factories import SMALL_BUNDLE


def label_everything(annotator, campaign, rng: random.Random, grades: tuple[int, ...]) -> None:
    while (assignment := task_next(annotator=annotator, campaign=campaign)) is not None:
        if assignment.relevance_task:
            judgment_submit(annotator=annotator, task=assignment.relevance_task, grade=rng.choice(grades))
        else:
            side = rng.choice(["left", "same", "right"])
            preference_submit(annotator=annotator, task=assignment.side_by_side_task, side=side)


def expected(campaign) -> tuple[list[tuple], int]:
    """Per kind (tasks, complete, labels left, answered Same automatically), counted task by task in Python,
    and the review queue's open tasks."""
    left_out = set(
        AnnotatorExclusion.objects.filter(campaign=campaign, reinstated_at__isnull=True).values_list(
            "annotator", flat=True
        )
    )
    kinds = []
    for kind in TASK_KINDS:
        overlap = kind.overlap(campaign)
        tasks, complete, labels_left, automatic = 0, 0, 0, 0
        for task in kind.model.objects.filter(campaign=campaign):
            n = kind.label_model.objects.filter(task=task).exclude(annotator__in=left_out).count()
            identical = kind.is_side_by_side and campaign.auto_same_identical and task.lists_identical
            settled = identical or Adjudication.objects.filter(**{kind.assignment_field: task}).exists()
            tasks += 1
            complete += n >= overlap or settled
            labels_left += 0 if settled else max(overlap - n, 0)
            automatic += identical
        kinds.append((tasks, complete, labels_left, automatic))
    return kinds, review_queue(campaign=campaign).n_open


def test_every_campaigns_summary_is_its_own_in_a_fixed_number_of_queries(
    make_user, django_assert_max_num_queries
):
    rng = random.Random(7)
    manager = make_user("boss", "manager")
    annotators = [make_user(f"a{i}", "annotator") for i in range(3)]
    campaigns = []
    for name, settings in (
        ("Two each", {}),
        ("Three each, no automatic Same", {"overlap": 3, "gsb_overlap": 3, "auto_same_identical": False}),
        ("One each", {"overlap": 1, "gsb_overlap": 1}),
    ):
        data = copy.deepcopy(SMALL_BUNDLE)
        data["name"] = name
        data["settings"].update(settings)
        campaigns.append(campaign_import(bundle=parse_bundle(data, f"{name}.json")))
    # The first two annotators' grades always differ: which task gets which random label follows the
    # hand-out's own draws, so random grades could agree everywhere and leave no dispute.
    grades = [(0,), (3,), (0, 3)]
    for campaign in campaigns[:2]:
        for annotator, own in zip(annotators[: campaign.overlap], grades, strict=False):
            label_everything(annotator, campaign, rng, own)
    # One campaign leaves an annotator out, and its reviewer settles a task of each kind.
    first = campaigns[0]
    annotator_exclude(campaign=first, username="a0", by=manager, reason="clicked through")
    adjudication_set(reviewer=manager, task=first.relevance_tasks.first(), grade=2, reason="read it")
    adjudication_set(
        reviewer=manager, task=first.side_by_side_tasks.first(), verdict="good", reason="read it"
    )
    for campaign in campaigns:
        campaign.refresh_from_db()

    with django_assert_max_num_queries(7):  # as many with one campaign or thirty
        summaries = campaigns_summary(campaigns=campaigns)
    assert set(summaries) == {campaign.pk for campaign in campaigns}
    for campaign in campaigns:
        summary = summaries[campaign.pk]
        kinds, n_open = expected(campaign)
        found = [(k.tasks, k.complete, k.labels_left, k.automatic_same) for k in summary.kinds]
        assert found == kinds, campaign.name
        assert all(type(value) is int for k in summary.kinds for value in (k.complete, k.labels_left))
        assert [k.overlap for k in summary.kinds] == [campaign.overlap, campaign.gsb_overlap]
        assert summary.disputes_waiting == n_open, campaign.name
    assert summaries[campaigns[2].pk].last_label is None
    assert summaries[first.pk].disputes_waiting > 0
    # The exclusion counts: the first campaign's relevance tasks lack a label each, bar the settled one.
    relevance = summaries[first.pk].kinds[0]
    assert relevance.complete == 1 and relevance.labels_left == relevance.tasks - 1


def test_no_campaigns_no_queries(db, django_assert_num_queries):
    with django_assert_num_queries(0):
        assert campaigns_summary(campaigns=[]) == {}
