"""The label stamp results pages poll: one statement, the same counts and times the ORM reads, and a new
stamp after every kind of change it stands for (and only those of its own campaign)."""

import time

from django.db.models import Count, Max, Q

from annotation.bundle import JudgmentRow, PreferenceRow, parse_bundle
from annotation.models import (
    Adjudication,
    AnnotatorExclusion,
    Judgment,
    Preference,
    RelevanceTask,
    SideBySideTask,
)
from annotation.selectors.labels import campaign_label_stamp
from annotation.services.adjudication import adjudication_set
from annotation.services.campaigns import campaign_import
from annotation.services.exclusions import annotator_exclude, annotator_reinstate, exclusions_confirm
from annotation.services.label_import import labels_import


def orm_stamp(campaign) -> str:
    """The stamp as the ORM reads it, an aggregate a source."""
    sources = (
        (Judgment.objects.filter(task__campaign=campaign), ("updated_at",)),
        (Preference.objects.filter(task__campaign=campaign), ("updated_at",)),
        (
            Adjudication.objects.filter(
                Q(relevance_task__campaign=campaign) | Q(side_by_side_task__campaign=campaign)
            ),
            ("updated_at",),
        ),
        (AnnotatorExclusion.objects.filter(campaign=campaign), ("reinstated_at", "confirmed_at")),
    )
    parts = []
    for rows, times in sources:
        stats = rows.aggregate(n=Count("pk"), **{name: Max(name) for name in times})
        moments = (f"{t.timestamp():.6f}" if t else "0" for t in (stats[name] for name in times))
        parts.append(":".join([str(stats["n"]), *moments]))
    return "/".join(parts)


def test_the_stamp_is_one_statement_and_reads_what_the_orm_reads(campaign, django_assert_num_queries):
    with django_assert_num_queries(1):
        empty = campaign_label_stamp(campaign=campaign)
    assert empty == orm_stamp(campaign) == "0:0/0:0/0:0/0:0:0"


def test_every_kind_of_change_makes_a_new_stamp(campaign, bundle_data, make_user):
    reviewer = make_user("rev", "reviewer")
    other = campaign_import(bundle=parse_bundle({**bundle_data, "name": "other"}, "other.json"))
    seen = [campaign_label_stamp(campaign=campaign)]

    def changed() -> None:
        stamp = campaign_label_stamp(campaign=campaign)
        assert stamp not in seen and stamp == orm_stamp(campaign)
        assert campaign_label_stamp(campaign=campaign) == stamp  # nothing changed since
        seen.append(stamp)

    labels_import(
        campaign=campaign, judgments=[JudgmentRow(1, "a", "q1", "d1", 2)], preferences=[], source="t"
    )
    changed()
    labels_import(
        campaign=campaign, judgments=[], preferences=[PreferenceRow(1, "a", "q1", "exp", "good")], source="t"
    )
    changed()
    relevance_task = RelevanceTask.objects.filter(campaign=campaign).first()
    adjudication_set(reviewer=reviewer, task=relevance_task, grade=3, reason="r")
    changed()
    side_by_side_task = SideBySideTask.objects.filter(campaign=campaign).first()
    adjudication_set(reviewer=reviewer, task=side_by_side_task, verdict="bad", reason="r")
    changed()
    adjudication_set(reviewer=reviewer, task=relevance_task, grade=0, reason="again")  # the same count
    changed()
    annotator_exclude(campaign=campaign, username="a", by=reviewer, reason="spam")
    changed()
    exclusions_confirm(campaign=campaign)
    changed()
    annotator_reinstate(campaign=campaign, username="a", by=reviewer)
    changed()

    before = seen[-1]
    labels_import(campaign=other, judgments=[JudgmentRow(1, "a", "q1", "d1", 1)], preferences=[], source="t")
    adjudication_set(
        reviewer=reviewer, task=RelevanceTask.objects.filter(campaign=other).first(), grade=1, reason="r"
    )
    assert campaign_label_stamp(campaign=campaign) == before
    assert campaign_label_stamp(campaign=other) == orm_stamp(other) != orm_stamp(campaign)


def test_the_stamps_times_do_not_depend_on_the_machines_time_zone(campaign, monkeypatch):
    labels_import(
        campaign=campaign, judgments=[JudgmentRow(1, "a", "q1", "d1", 2)], preferences=[], source="t"
    )
    utc = campaign_label_stamp(campaign=campaign)
    monkeypatch.setenv("TZ", "Asia/Shanghai")
    time.tzset()
    try:
        assert campaign_label_stamp(campaign=campaign) == utc == orm_stamp(campaign)
    finally:
        monkeypatch.undo()
        time.tzset()
