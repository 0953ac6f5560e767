"""The two kinds of task and the assignments (leases) that hand them to annotators."""

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _

from annotation.choices import SkipReason, Verdict, random_shuffle_key
from annotation.models.campaigns import Campaign, Document, Query, RankingModel


class HandedOutTask(models.Model):
    """What the assignment services keep on every kind of task to hand it out in one index lookup."""

    slots_spent = models.PositiveIntegerField(
        default=0,
        editable=False,
        help_text="Labels plus leases not yet given back, kept by the assignment services.",
    )
    shuffle_key = models.IntegerField(
        default=random_shuffle_key,
        editable=False,
        help_text="A random position; tasks are handed out from random points of this order.",
    )

    class Meta:
        abstract = True


class RelevanceTask(HandedOutTask):
    """A pooled (query, document) pair to grade; shared by every model that retrieved it."""

    # Four indexes: the key, (campaign, shuffle_key), the unique (document, query), which also finds a
    # document's tasks, and the campaign's gold tasks (few; a report reads them apart from the rest, which
    # spares it a column of every task, a quarter of that read). A query's tasks are found through its
    # campaign: an index of their own would cost every import's COPY as much again (docs/performance.md).
    # On PostgreSQL the keys are two composite ones, (campaign, query) and (campaign, document), not three
    # (migration 0027): a task's query and document are in its campaign. Triggers check them once a
    # statement, not once a row (migration 0028, plumbing/statement_keys.py): an import's COPY of its tasks
    # is one check, not two each.
    campaign = models.ForeignKey(
        Campaign,
        on_delete=models.CASCADE,
        related_name="relevance_tasks",
        db_index=False,
        db_constraint=False,
    )
    query = models.ForeignKey(
        Query, on_delete=models.CASCADE, related_name="relevance_tasks", db_index=False, db_constraint=False
    )
    document = models.ForeignKey(
        Document,
        on_delete=models.CASCADE,
        related_name="relevance_tasks",
        db_index=False,
        db_constraint=False,
    )
    gold_grade = models.SmallIntegerField(null=True, blank=True, help_text="A known grade, for gold checks.")

    class Meta:
        ordering = ["campaign", "query", "document"]
        constraints = [
            models.UniqueConstraint(fields=["document", "query"], name="relevance_task_pair_unique"),
        ]
        indexes = [
            models.Index(fields=["campaign", "shuffle_key"], name="relevance_task_shuffle"),
            models.Index(
                fields=["campaign"], condition=Q(gold_grade__isnull=False), name="relevance_task_gold"
            ),
        ]

    def __str__(self):
        return f"{self.query.external_id} / {self.document.external_id}"


class SideBySideTask(HandedOutTask):
    """The online model's list against one experimental model's list for a query."""

    # The indexes below start with campaign and with query: no index of their own.
    campaign = models.ForeignKey(
        Campaign, on_delete=models.CASCADE, related_name="side_by_side_tasks", db_index=False
    )
    query = models.ForeignKey(
        Query, on_delete=models.CASCADE, related_name="side_by_side_tasks", db_index=False
    )
    experimental_model = models.ForeignKey(RankingModel, on_delete=models.CASCADE, related_name="+")
    lists_identical = models.BooleanField(
        default=False, help_text="Both top-gsb_depth lists are the same documents in the same order."
    )
    gold_verdict = models.CharField(max_length=4, choices=Verdict, blank=True)
    # What annotators are shown (query, both top lists with every document's content), hashed: an earlier
    # campaign's task with the same hash showed exactly this, so its verdicts may be reused.
    lists_hash = models.CharField(max_length=64, blank=True, db_index=True)

    class Meta:
        ordering = ["campaign", "query", "experimental_model"]
        constraints = [
            models.UniqueConstraint(fields=["query", "experimental_model"], name="side_by_side_task_unique"),
        ]
        indexes = [models.Index(fields=["campaign", "shuffle_key"], name="side_by_side_task_shuffle")]

    def __str__(self):
        return f"{self.query.external_id} / {self.experimental_model.name}"


class Assignment(models.Model):
    """A task handed to an annotator: a lease until it is submitted, skipped or expires.

    A task's open slots are its overlap less its `slots_spent`: labels and leases not yet given back. A lease
    past `expires_at` holds its slot until the next hand-out marks it expired and gives the slot back.
    """

    class Status(models.TextChoices):
        LEASED = "leased", _("Leased")
        SUBMITTED = "submitted", _("Submitted")
        SKIPPED = "skipped", _("Skipped")
        EXPIRED = "expired", _("Expired")

    annotator = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="assignments"
    )
    # The task's campaign, kept here so that "this annotator's leases in this campaign" is one index lookup.
    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="assignments")
    relevance_task = models.ForeignKey(
        RelevanceTask, null=True, blank=True, on_delete=models.CASCADE, related_name="assignments"
    )
    side_by_side_task = models.ForeignKey(
        SideBySideTask, null=True, blank=True, on_delete=models.CASCADE, related_name="assignments"
    )
    status = models.CharField(max_length=16, choices=Status, default=Status.LEASED)
    skip_reason = models.CharField(max_length=32, choices=SkipReason, blank=True)
    leased_at = models.DateTimeField()
    expires_at = models.DateTimeField()
    finished_at = models.DateTimeField(null=True, blank=True)
    experimental_on_left = models.BooleanField(
        null=True, blank=True, help_text="Side-by-side only: the side the experimental list is shown on."
    )
    # A task the annotator labelled before, shown again (unmarked) to measure their consistency: it holds no
    # slot and its answer goes to a RepeatAnswer, never to the labels.
    repeat = models.BooleanField(default=False)

    class Meta:
        ordering = ["-leased_at"]
        constraints = [
            models.CheckConstraint(
                condition=Q(relevance_task__isnull=True) ^ Q(side_by_side_task__isnull=True),
                name="assignment_has_exactly_one_task",
            ),
            models.UniqueConstraint(
                fields=["annotator", "relevance_task", "repeat"],
                condition=Q(relevance_task__isnull=False),
                name="assignment_relevance_once_per_annotator",
            ),
            models.UniqueConstraint(
                fields=["annotator", "side_by_side_task", "repeat"],
                condition=Q(side_by_side_task__isnull=False),
                name="assignment_side_by_side_once_per_annotator",
            ),
            models.CheckConstraint(
                condition=~Q(status="skipped") | ~Q(skip_reason=""), name="assignment_skip_has_reason"
            ),
        ]
        indexes = [
            models.Index(fields=["relevance_task", "status"], name="assignment_rel_status"),
            models.Index(fields=["side_by_side_task", "status"], name="assignment_sbs_status"),
            models.Index(fields=["annotator", "campaign", "status"], name="assignment_annotator_status"),
            models.Index(
                fields=["expires_at"], condition=Q(status="leased"), name="assignment_leased_expiry"
            ),
        ]

    def __str__(self):
        return f"{self.annotator_id} → {self.relevance_task_id or self.side_by_side_task_id} ({self.status})"

    @property
    def task(self):
        return self.relevance_task or self.side_by_side_task
