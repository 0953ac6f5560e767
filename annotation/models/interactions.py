"""What users did with the models' lists: interaction logs and their impressions (docs/interactions.md)."""

from django.conf import settings
from django.db import models
from django.db.models import Q

from annotation.models.campaigns import Campaign, Document, Query, RankingModel


class InteractionLog(models.Model):
    """One imported log file of a campaign; its impressions are written with it, in one transaction."""

    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="interaction_logs")
    source = models.CharField(max_length=255, help_text="The imported file's name.")
    impressions = models.PositiveBigIntegerField(default=0)
    requests = models.PositiveBigIntegerField(default=0, help_text="Result lists shown.")
    clicks = models.PositiveBigIntegerField(default=0)
    sessions = models.BooleanField(default=False, help_text="Whether its impressions name their sessions.")
    documents_added = models.PositiveIntegerField(
        default=0, help_text="Documents the log showed that the campaign did not have yet."
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["campaign", "created_at"]

    def __str__(self):
        return f"{self.source}: {self.impressions} impressions"


class Impression(models.Model):
    """A document shown at a position of one result list (a request), and what the user did with it.

    `request` numbers the log's lists 0, 1, ... in file order; `session` is a 64-bit hash of the log's session
    id (null without one).

    Only the (campaign, log) index: every read takes a campaign's impressions whole, and each further index
    would slow a ten-million-row COPY. No foreign-key constraint in the database either: PostgreSQL checks
    each one for each row at COMMIT, and five of them made a COPY of 300,000 impressions ten times slower
    (12.3 s against 1.2 s). `services/interactions.py` is the only writer and takes every key from the
    campaign's own rows, in the transaction that adds the documents; deletes cascade through the ORM."""

    id = models.BigAutoField(primary_key=True)
    campaign = models.ForeignKey(
        Campaign, on_delete=models.CASCADE, related_name="+", db_index=False, db_constraint=False
    )
    log = models.ForeignKey(
        InteractionLog, on_delete=models.CASCADE, related_name="+", db_index=False, db_constraint=False
    )
    query = models.ForeignKey(
        Query, on_delete=models.CASCADE, related_name="+", db_index=False, db_constraint=False
    )
    model = models.ForeignKey(
        RankingModel, on_delete=models.CASCADE, related_name="+", db_index=False, db_constraint=False
    )
    document = models.ForeignKey(
        Document, on_delete=models.CASCADE, related_name="+", db_index=False, db_constraint=False
    )
    request = models.BigIntegerField()
    session = models.BigIntegerField(null=True, blank=True)
    position = models.IntegerField()
    clicked = models.BooleanField()
    dwell = models.FloatField(null=True, blank=True, help_text="Seconds on the document after the click.")
    cart = models.BooleanField(default=False)
    purchase = models.BooleanField(default=False)
    rating = models.FloatField(null=True, blank=True, help_text="The user's rating after a purchase.")

    class Meta:
        indexes = [models.Index(fields=["campaign", "log"], name="impression_campaign_log")]
        constraints = [
            models.CheckConstraint(condition=Q(position__gte=1), name="impression_position_positive"),
            models.CheckConstraint(condition=Q(request__gte=0), name="impression_request_not_negative"),
            models.CheckConstraint(
                condition=Q(dwell__isnull=True) | Q(dwell__gte=0), name="impression_dwell_not_negative"
            ),
        ]

    def __str__(self):
        return f"request {self.request}, position {self.position}: document {self.document_id}"
