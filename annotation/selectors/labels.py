"""Raw label exports (every label of a campaign as the JSONL objects `import_judgments` reads), what the
label pool gave a campaign, and the stamp that tells results pages their labels changed."""

import itertools
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import cache

from django.db import connections, router
from django.db.models import Count, F, Q

from annotation.models import (
    Adjudication,
    AnnotatorExclusion,
    Assignment,
    Campaign,
    Judgment,
    Preference,
    RelevanceTask,
    SideBySideTask,
)
from annotation.task_kinds import RELEVANCE, SIDE_BY_SIDE, TASK_KINDS, TaskKind


@dataclass(frozen=True)
class ReuseSummary:
    standard: str  # "name vN", "" without one
    judgments: int  # grades copied from earlier campaigns of the standard
    preferences: int  # verdicts copied
    relevance_tasks: int  # relevance tasks the copies complete (nobody is asked)
    side_by_side_tasks: int

    @property
    def labels(self) -> int:
        return self.judgments + self.preferences

    def as_dict(self) -> dict:
        return {
            "standard": self.standard,
            "labels": self.labels,
            "judgments": self.judgments,
            "preferences": self.preferences,
            "relevance_tasks": self.relevance_tasks,
            "side_by_side_tasks": self.side_by_side_tasks,
        }


def campaign_reuse_summary(*, campaign: Campaign) -> ReuseSummary:
    """How many labels the campaign took from its standard's pool, and how many tasks they complete: one
    statement, none for a campaign without a standard (nothing can have been reused)."""
    if campaign.standard_id is None:
        return ReuseSummary("", 0, 0, 0, 0)
    connection = connections[router.db_for_read(Judgment)]
    parameters = [value for kind in TASK_KINDS for value in (kind.overlap(campaign), campaign.pk)]
    with connection.cursor() as cursor:
        cursor.execute(_reuse_statement(), parameters)
        # PostgreSQL sums counts as numeric
        sums = [int(value) for value in cursor.fetchone()]
        counts = dict(zip(TASK_KINDS, itertools.batched(sums, 2), strict=True))
    return ReuseSummary(
        standard=str(campaign.standard),
        judgments=counts[RELEVANCE][0],
        preferences=counts[SIDE_BY_SIDE][0],
        relevance_tasks=counts[RELEVANCE][1],
        side_by_side_tasks=counts[SIDE_BY_SIDE][1],
    )


@cache
def _reuse_statement() -> str:
    """Per kind, the labels copied from the pool and the tasks with at least the overlap of them."""

    def copies(kind: TaskKind) -> str:
        per_task = (
            f"SELECT COUNT(*) AS n FROM {kind.label_model._meta.db_table} "
            "WHERE campaign_id = %s AND reused_from_id IS NOT NULL GROUP BY task_id"
        )
        return (
            "SELECT COALESCE(SUM(n), 0) AS labels, COALESCE(SUM(CASE WHEN n >= %s THEN 1 ELSE 0 END), 0) "
            f"AS complete FROM ({per_task}) c"
        )

    derived = " CROSS JOIN ".join(f"({copies(kind)}) k{i}" for i, kind in enumerate(TASK_KINDS))
    columns = ", ".join(f"k{i}.labels, k{i}.complete" for i in range(len(TASK_KINDS)))
    return f"SELECT {columns} FROM {derived}"


def campaign_label_stamp(*, campaign: Campaign) -> str:
    """A short text that changes whenever a label, final label or exclusion of the campaign does (counts
    and latest change times), for pages that refresh when new labels arrive. One statement: open results
    pages poll it while labels are collected."""
    connection = connections[router.db_for_read(Judgment)]
    with connection.cursor() as cursor:
        cursor.execute(_stamp_statement(), [campaign.pk] * 5)
        judgments, judged, preferences, preferred, finals, finalised, exclusions, reinstated, confirmed = (
            cursor.fetchone()
        )
    parts = (
        (judgments, judged),
        (preferences, preferred),
        (finals, finalised),
        (exclusions, reinstated, confirmed),
    )
    return "/".join(":".join([str(count), *map(_moment, times)]) for count, *times in parts)


def _moment(value: datetime | str | None) -> str:
    """A latest change as the stamp writes it (SQLite gives a plain statement's times as UTC text)."""
    if value is None:
        return "0"
    if isinstance(value, str):
        value = datetime.fromisoformat(value).replace(tzinfo=UTC)
    return f"{value.timestamp():.6f}"


@cache
def _stamp_statement() -> str:
    """Built once per process, as the other plain reads are, from the models' tables."""
    labels = [
        f"SELECT COUNT(*) AS n, MAX(updated_at) AS changed FROM {label._meta.db_table} WHERE campaign_id = %s"
        for label in (Judgment, Preference)
    ]
    final = (
        f"SELECT COUNT(*) AS n, MAX(a.updated_at) AS changed FROM {Adjudication._meta.db_table} a "
        f"LEFT JOIN {RelevanceTask._meta.db_table} r ON r.id = a.relevance_task_id "
        f"LEFT JOIN {SideBySideTask._meta.db_table} s ON s.id = a.side_by_side_task_id "
        "WHERE r.campaign_id = %s OR s.campaign_id = %s"
    )
    exclusions = (
        "SELECT COUNT(*) AS n, MAX(reinstated_at) AS reinstated, MAX(confirmed_at) AS confirmed "
        f"FROM {AnnotatorExclusion._meta.db_table} WHERE campaign_id = %s"
    )
    return (
        "SELECT j.n, j.changed, p.n, p.changed, a.n, a.changed, e.n, e.reinstated, e.confirmed "
        f"FROM ({labels[0]}) j CROSS JOIN ({labels[1]}) p CROSS JOIN ({final}) a CROSS JOIN ({exclusions}) e"
    )


def campaign_labels_export(*, campaign: Campaign) -> Iterator[dict]:
    """Every raw label of a campaign as the JSONL objects `import_judgments` reads (a lossless round trip),
    then the reviewers' work: each final label (`"record": "final"`: the reviewer's grade or verdict, their
    reason, and how many raw labels it overrode) and each skip (`"record": "skip"`: who, which task, why),
    which `import_judgments` reads past."""
    judgments = (
        Judgment.objects.filter(campaign=campaign)
        .order_by("task__query__external_id", "task__document__external_id", "annotator__username")
        .values_list(
            "annotator__username",
            "task__query__external_id",
            "task__document__external_id",
            "grade",
            "comment",
            "seconds_spent",
        )
    )
    for annotator, query, document, grade, comment, seconds in judgments.iterator(chunk_size=5000):
        yield _with_optional(
            {"annotator": annotator, "query": query, "document": document, "grade": grade}, comment, seconds
        )
    preferences = (
        Preference.objects.filter(campaign=campaign)
        .order_by("task__query__external_id", "task__experimental_model__name", "annotator__username")
        .values_list(
            "annotator__username",
            "task__query__external_id",
            "task__experimental_model__name",
            "verdict",
            "strength",
            "experimental_on_left",
            "comment",
            "seconds_spent",
        )
    )
    for annotator, query, model, verdict, strength, on_left, comment, seconds in preferences.iterator(
        chunk_size=5000
    ):
        row: dict[str, str | int] = {
            "annotator": annotator,
            "query": query,
            "model": model,
            "verdict": verdict,
        }
        if strength is not None:
            row["strength"] = strength
        row["experimental_side"] = "left" if on_left else "right"
        yield _with_optional(row, comment, seconds)
    yield from _final_labels(campaign)
    yield from _skips(campaign)


def _final_labels(campaign: Campaign) -> Iterator[dict]:
    """Adjudications as records: the final label, the reviewer and reason, and `overrides`: the raw labels
    that say otherwise (a grade or verdict other than the final one)."""
    kinds = (
        (RELEVANCE, "grade", "judgments", "document", "document__external_id"),
        (SIDE_BY_SIDE, "verdict", "preferences", "model", "experimental_model__name"),
    )
    for kind, label, labels, key, subject in kinds:
        task = kind.assignment_field
        differing = ~Q(**{f"{task}__{labels}__{label}": F(label)})
        rows = (
            Adjudication.objects.filter(**{f"{task}__campaign": campaign})
            .annotate(overrides=Count(f"{task}__{labels}", filter=differing))
            .order_by(f"{task}__query__external_id", f"{task}__{subject}")
            .values_list(
                f"{task}__query__external_id",
                f"{task}__{subject}",
                label,
                "reviewer__username",
                "reason",
                "overrides",
            )
        )
        for query, about, value, reviewer, reason, overrides in rows.iterator(chunk_size=5000):
            yield {
                "record": "final",
                "query": query,
                key: about,
                label: value,
                "reviewer": reviewer,
                "reason": reason,
                "overrides": overrides,
            }


def _skips(campaign: Campaign) -> Iterator[dict]:
    rows = (
        Assignment.objects.filter(campaign=campaign, status=Assignment.Status.SKIPPED)
        .order_by("annotator__username", "finished_at", "pk")
        .values_list(
            "annotator__username",
            "relevance_task__query__external_id",
            "relevance_task__document__external_id",
            "side_by_side_task__query__external_id",
            "side_by_side_task__experimental_model__name",
            "skip_reason",
        )
    )
    for annotator, query, document, sbs_query, model, reason in rows.iterator(chunk_size=5000):
        task = (
            {"query": query, "document": document}
            if query is not None
            else {"query": sbs_query, "model": model}
        )
        yield {"record": "skip", "annotator": annotator, **task, "reason": reason}


def _with_optional(row: dict, comment: str, seconds: float | None) -> dict:
    if comment:
        row["comment"] = comment
    if seconds is not None:
        row["seconds_spent"] = seconds
    return row
