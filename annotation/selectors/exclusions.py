"""Which annotators' labels a campaign leaves out, and the record of who decided it and why."""

from dataclasses import dataclass
from datetime import datetime

from annotation.models import AnnotatorExclusion, Campaign


@dataclass(frozen=True)
class ExclusionView:
    annotator: str
    excluded_by: str
    reason: str
    excluded_at: datetime
    confirmed: bool
    reinstated_by: str | None
    reinstated_at: datetime | None

    @property
    def in_force(self) -> bool:
        return self.reinstated_at is None


def campaign_exclusions(*, campaign: Campaign) -> list[ExclusionView]:
    """Every exclusion of the campaign, in force or reinstated, oldest first (one query)."""
    rows = AnnotatorExclusion.objects.filter(campaign=campaign).values_list(
        "annotator__username",
        "excluded_by__username",
        "reason",
        "created_at",
        "confirmed_at",
        "reinstated_by__username",
        "reinstated_at",
    )
    return [
        ExclusionView(annotator, by or "", reason, at, confirmed is not None, reinstated_by, reinstated_at)
        for annotator, by, reason, at, confirmed, reinstated_by, reinstated_at in rows
    ]
