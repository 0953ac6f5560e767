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


def interaction_log_ids(*, campaign: Campaign) -> list[int]:
    """The ids of the campaign's logs, in order. They tell its impressions apart without reading them: a
    log's impressions are written in the transaction that adds it, never changed, and deleted with it
    (`services/interactions.py` is their only writer), and no id is given twice."""
    return list(InteractionLog.objects.filter(campaign=campaign).order_by("pk").values_list("pk", flat=True))
