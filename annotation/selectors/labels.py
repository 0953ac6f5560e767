"""Raw label exports (every label of a campaign as the JSONL objects `import_judgments` reads), what the
label pool gave a campaign, and the stamp that tells results pages their labels changed."""

from collections.abc import Iterator
from dataclasses import dataclass

from django.db.models import Count, Max, Q

from annotation.models import (
    Adjudication,
    AnnotatorExclusion,
    Campaign,
    Judgment,
    Preference,
    RelevanceTask,
    SideBySideTask,
)


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
    """How many labels the campaign took from its standard's pool, and how many tasks they complete; no
    query for a campaign without a standard (nothing can have been reused)."""
    if campaign.standard_id is None:
        return ReuseSummary("", 0, 0, 0, 0)
    reused = {"judgments__reused_from__isnull": False}
    tasks = RelevanceTask.objects.filter(campaign=campaign)
    complete = tasks.annotate(n=Count("judgments", filter=Q(**reused))).filter(n__gte=campaign.overlap)
    verdicts = {"preferences__reused_from__isnull": False}
    sbs = SideBySideTask.objects.filter(campaign=campaign)
    sbs_complete = sbs.annotate(n=Count("preferences", filter=Q(**verdicts))).filter(
        n__gte=campaign.gsb_overlap
    )
    return ReuseSummary(
        standard=str(campaign.standard) if campaign.standard_id else "",
        judgments=Judgment.objects.filter(task__campaign=campaign, reused_from__isnull=False).count(),
        preferences=Preference.objects.filter(task__campaign=campaign, reused_from__isnull=False).count(),
        relevance_tasks=complete.count(),
        side_by_side_tasks=sbs_complete.count(),
    )


def campaign_label_stamp(*, campaign: Campaign) -> str:
    """A short text that changes whenever a label, final label or exclusion of the campaign does (counts
    and latest change times, in four aggregate queries), for pages that refresh when new labels arrive."""
    adjudications = Adjudication.objects.filter(
        Q(relevance_task__campaign=campaign) | Q(side_by_side_task__campaign=campaign)
    )
    sources = (
        (Judgment.objects.filter(task__campaign=campaign), ("updated_at",)),
        (Preference.objects.filter(task__campaign=campaign), ("updated_at",)),
        (adjudications, ("updated_at",)),
        (AnnotatorExclusion.objects.filter(campaign=campaign), ("reinstated_at", "confirmed_at")),
    )
    parts = []
    for rows, times in sources:
        stats = rows.aggregate(n=Count("pk"), **{name: Max(name) for name in times})
        parts.append(
            ":".join([str(stats.pop("n")), *(f"{t.timestamp():.6f}" if t else "0" for t in stats.values())])
        )
    return "/".join(parts)


def campaign_labels_export(*, campaign: Campaign) -> Iterator[dict]:
    """Every raw label of a campaign as the JSONL objects `import_judgments` reads (a lossless round trip)."""
    judgments = (
        Judgment.objects.filter(task__campaign=campaign)
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
        Preference.objects.filter(task__campaign=campaign)
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


def _with_optional(row: dict, comment: str, seconds: float | None) -> dict:
    if comment:
        row["comment"] = comment
    if seconds is not None:
        row["seconds_spent"] = seconds
    return row
