"""Reads of a campaign's interaction logs."""

from django.db.models import QuerySet

from annotation.models import Campaign, InteractionLog


def interaction_logs(*, campaign: Campaign) -> QuerySet[InteractionLog]:
    """The campaign's logs, oldest first, with who added them."""
    return (
        InteractionLog.objects.filter(campaign=campaign)
        .select_related("created_by")
        .order_by("created_at", "pk")
    )
