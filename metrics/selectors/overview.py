"""The campaign's overview page: its progress, labels per day and the launch report, the page's own reads
beside the report's."""

from dataclasses import dataclass
from datetime import date

from django.db.models import Count
from django.db.models.functions import TruncDate

from annotation.models import Campaign, Judgment, Preference
from annotation.selectors.campaigns import CampaignProgress, campaign_progress, models_without_rankings
from annotation.selectors.labels import campaign_label_stamp
from metrics.selectors.launch import LaunchReport, launch_report_build, launch_report_later
from plumbing.columns import read_beside


@dataclass(frozen=True)
class DayCount:
    day: date
    judgments: int
    verdicts: int


@dataclass(frozen=True)
class CampaignOverview:
    campaign: Campaign
    progress: CampaignProgress
    per_day: list[DayCount]
    report: LaunchReport
    models_without_rankings: list[str]
    label_stamp: str  # read before the labels: a page refreshes when it changes (annotation.selectors.labels)
    # While exclusions are not confirmed: the same report with every label, to show both decisions.
    report_with_excluded: LaunchReport | None = None

    @property
    def collecting(self) -> bool:
        """Labels are still expected: no decision yet, or the decision waits for data."""
        decision = self.report.decision
        return decision is None or decision.outcome == "collecting"


def _labels_per_day(campaign: Campaign) -> list[DayCount]:
    counts: dict[date, list[int]] = {}
    label_models: tuple[type[Judgment] | type[Preference], ...] = (Judgment, Preference)
    for column, label_model in enumerate(label_models):
        rows = (
            label_model.objects.filter(campaign=campaign)
            .annotate(day=TruncDate("created_at"))
            .order_by()
            .values_list("day")
            .annotate(n=Count("pk"))
        )
        for day, n in rows:
            counts.setdefault(day, [0, 0])[column] = n
    return [DayCount(day, *counts[day]) for day in sorted(counts)]


def _overview_reads(campaign: Campaign) -> tuple[CampaignProgress, list[DayCount], list[str]]:
    progress = campaign_progress(campaign=campaign, median_seconds=False)  # the page shows none
    return progress, _labels_per_day(campaign), models_without_rankings(campaign=campaign)


def campaign_overview(*, campaign: Campaign) -> CampaignOverview:
    """Progress (per annotator, per day), agreement and the launch decision, in a fixed number of queries;
    while an exclusion waits for confirmation, the decision with every label too."""
    stamp = campaign_label_stamp(campaign=campaign)
    # The page's own reads run on a second connection beside the report's.
    page_reads = read_beside(_overview_reads, campaign)
    later = launch_report_later(campaign=campaign)
    progress, per_day, without_rankings = page_reads.result()
    report = later.result()
    unconfirmed = any(row.in_force and not row.confirmed for row in report.exclusions)
    with_excluded = launch_report_build(campaign=campaign, with_excluded=True) if unconfirmed else None
    return CampaignOverview(
        campaign=campaign,
        progress=progress,
        per_day=per_day,
        report=report,
        models_without_rankings=without_rankings,
        label_stamp=stamp,
        report_with_excluded=with_excluded,
    )
