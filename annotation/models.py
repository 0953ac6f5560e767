"""The domain of a relevance campaign: what is judged, by whom, and how the labels are kept.

Invariants the database can keep are constraints here; everything that changes state goes through
`annotation.services`, never through `save()` overrides or signals.
"""

import random

from django.conf import settings
from django.db import models
from django.db.models import Q

from annotation.choices import Aggregation, Gain, GSBScale, SkipReason, TaskOrder, Verdict

SHUFFLE_KEYS = 2**31


def random_shuffle_key() -> int:
    return random.randrange(SHUFFLE_KEYS)


def default_scale() -> list[dict]:
    return [
        {"value": 0, "label": "Irrelevant", "description": "Has nothing to do with what the query asks for."},
        {"value": 1, "label": "Somewhat relevant", "description": "On the topic, but answers little of it."},
        {"value": 2, "label": "Relevant", "description": "Answers the query well, with something missing."},
        {"value": 3, "label": "Perfect", "description": "Exactly what the query asks for."},
    ]


def default_cutoffs() -> list[int]:
    return [1, 3, 5, 10]


class Campaign(models.Model):
    name = models.CharField(max_length=200, unique=True)
    description = models.TextField(blank=True)
    guidelines = models.TextField(
        blank=True, help_text="Plain text shown to annotators; line breaks are kept."
    )
    scale = models.JSONField(default=default_scale, help_text="Ordered grades: value, label, description.")
    overlap = models.PositiveSmallIntegerField(default=3, help_text="Annotators per relevance task.")
    gsb_overlap = models.PositiveSmallIntegerField(default=3, help_text="Annotators per side-by-side task.")
    pool_depth = models.PositiveSmallIntegerField(
        default=10, help_text="Top-k of every model pooled for grading."
    )
    gsb_depth = models.PositiveSmallIntegerField(
        default=5, help_text="Results of each model shown side by side."
    )
    gsb_scale = models.PositiveSmallIntegerField(choices=GSBScale, default=GSBScale.THREE_POINT)
    auto_same_identical = models.BooleanField(
        default=True,
        help_text="Record a side-by-side task as Same without asking when both lists are identical.",
    )
    cutoffs = models.JSONField(default=default_cutoffs, help_text="The k of every reported nDCG@k.")
    gain = models.CharField(max_length=16, choices=Gain, default=Gain.EXPONENTIAL)
    aggregation = models.CharField(max_length=16, choices=Aggregation, default=Aggregation.MEAN)
    # The launch rule's thresholds (see metrics.compute.decision).
    launch_min_gsb = models.FloatField(default=0.05, help_text="Smallest GSB that may launch.")
    launch_alpha = models.FloatField(default=0.05, help_text="Significance level of the guarded measures.")
    primary_measure = models.CharField(
        max_length=32, default="nDCG@10", help_text="Decides when there are no side-by-side judgments."
    )
    # No decision is shown before the data is sufficient (see metrics.compute.decision).
    min_queries = models.PositiveIntegerField(
        default=30, help_text="Queries with complete side-by-side judgments needed before a decision."
    )
    min_coverage = models.FloatField(
        default=0.9,
        help_text="Share of side-by-side and of relevance tasks complete at their overlap before a decision.",
    )
    task_order = models.CharField(max_length=20, choices=TaskOrder, default=TaskOrder.INTERLEAVED)
    # Who may annotate: every annotator when open, else its members only (reviewers and managers see all).
    open_to_all = models.BooleanField(
        default=True, help_text="Every annotator may work on it; otherwise only its members."
    )
    members = models.ManyToManyField(settings.AUTH_USER_MODEL, blank=True, related_name="member_campaigns")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.CheckConstraint(condition=Q(overlap__gte=1), name="campaign_overlap_positive"),
            models.CheckConstraint(condition=Q(gsb_overlap__gte=1), name="campaign_gsb_overlap_positive"),
            models.CheckConstraint(condition=Q(pool_depth__gte=1), name="campaign_pool_depth_positive"),
            models.CheckConstraint(condition=Q(gsb_depth__gte=1), name="campaign_gsb_depth_positive"),
            models.CheckConstraint(
                condition=Q(launch_alpha__gt=0) & Q(launch_alpha__lt=1), name="campaign_launch_alpha_in_0_1"
            ),
            models.CheckConstraint(condition=Q(min_queries__gte=1), name="campaign_min_queries_positive"),
            models.CheckConstraint(
                condition=Q(min_coverage__gte=0) & Q(min_coverage__lte=1), name="campaign_min_coverage_in_0_1"
            ),
        ]

    def __str__(self):
        return self.name

    @property
    def grade_values(self) -> list[int]:
        return [grade["value"] for grade in self.scale]


class RankingModel(models.Model):
    class Role(models.TextChoices):
        ONLINE = "online", "Online (production)"
        EXPERIMENTAL = "experimental", "Experimental"

    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="models")
    name = models.CharField(max_length=100)
    role = models.CharField(max_length=16, choices=Role)

    class Meta:
        ordering = ["campaign", "role", "name"]
        constraints = [
            models.UniqueConstraint(fields=["campaign", "name"], name="ranking_model_name_unique"),
            models.UniqueConstraint(
                fields=["campaign"], condition=Q(role="online"), name="campaign_has_one_online_model"
            ),
        ]

    def __str__(self):
        return f"{self.name} ({self.role})"


class Query(models.Model):
    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="queries")
    external_id = models.CharField(max_length=100)
    text = models.TextField()
    description = models.TextField(blank=True, help_text="The intent behind the query, shown to annotators.")
    segment = models.CharField(max_length=100, blank=True, help_text="e.g. a locale, or head / tail.")
    weight = models.FloatField(default=1.0)

    class Meta:
        ordering = ["campaign", "external_id"]
        verbose_name_plural = "queries"
        constraints = [
            models.UniqueConstraint(fields=["campaign", "external_id"], name="query_external_id_unique"),
            models.CheckConstraint(condition=Q(weight__gt=0), name="query_weight_positive"),
        ]

    def __str__(self):
        return f"{self.external_id}: {self.text}"


class Document(models.Model):
    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="documents")
    external_id = models.CharField(max_length=200)
    title = models.TextField(blank=True)
    url = models.TextField(blank=True)
    body = models.TextField(blank=True, help_text="The body or a snippet of it.")

    class Meta:
        ordering = ["campaign", "external_id"]
        constraints = [
            models.UniqueConstraint(fields=["campaign", "external_id"], name="document_external_id_unique"),
        ]

    def __str__(self):
        return self.title or self.external_id


class Ranking(models.Model):
    """One row of a model's result list for a query: the document at `rank` (1-based)."""

    model = models.ForeignKey(RankingModel, on_delete=models.CASCADE, related_name="rankings")
    query = models.ForeignKey(Query, on_delete=models.CASCADE, related_name="rankings")
    document = models.ForeignKey(Document, on_delete=models.CASCADE, related_name="rankings")
    rank = models.PositiveIntegerField()
    score = models.FloatField(null=True, blank=True)

    class Meta:
        ordering = ["model", "query", "rank"]
        constraints = [
            models.UniqueConstraint(fields=["model", "query", "rank"], name="ranking_rank_unique"),
            models.UniqueConstraint(fields=["model", "query", "document"], name="ranking_document_unique"),
            models.CheckConstraint(condition=Q(rank__gte=1), name="ranking_rank_positive"),
        ]

    def __str__(self):
        return f"{self.model_id}/{self.query_id} #{self.rank}: {self.document_id}"


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

    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="relevance_tasks")
    query = models.ForeignKey(Query, on_delete=models.CASCADE, related_name="relevance_tasks")
    document = models.ForeignKey(Document, on_delete=models.CASCADE, related_name="relevance_tasks")
    gold_grade = models.SmallIntegerField(null=True, blank=True, help_text="A known grade, for gold checks.")

    class Meta:
        ordering = ["campaign", "query", "document"]
        constraints = [
            models.UniqueConstraint(fields=["query", "document"], name="relevance_task_pair_unique"),
        ]
        indexes = [models.Index(fields=["campaign", "shuffle_key"], name="relevance_task_shuffle")]

    def __str__(self):
        return f"{self.query.external_id} / {self.document.external_id}"


class SideBySideTask(HandedOutTask):
    """The online model's list against one experimental model's list for a query."""

    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="side_by_side_tasks")
    query = models.ForeignKey(Query, on_delete=models.CASCADE, related_name="side_by_side_tasks")
    experimental_model = models.ForeignKey(RankingModel, on_delete=models.CASCADE, related_name="+")
    lists_identical = models.BooleanField(
        default=False, help_text="Both top-gsb_depth lists are the same documents in the same order."
    )
    gold_verdict = models.CharField(max_length=4, choices=Verdict, blank=True)

    class Meta:
        ordering = ["campaign", "query", "experimental_model"]
        constraints = [
            models.UniqueConstraint(fields=["query", "experimental_model"], name="side_by_side_task_unique"),
        ]
        indexes = [models.Index(fields=["campaign", "shuffle_key"], name="side_by_side_task_shuffle")]

    def __str__(self):
        return f"{self.query.external_id} / {self.experimental_model.name}"


class Judgment(models.Model):
    """One annotator's grade of a relevance task."""

    task = models.ForeignKey(RelevanceTask, on_delete=models.CASCADE, related_name="judgments")
    annotator = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="judgments"
    )
    grade = models.SmallIntegerField()
    comment = models.TextField(blank=True)
    seconds_spent = models.FloatField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["task", "annotator"]
        constraints = [
            models.UniqueConstraint(fields=["task", "annotator"], name="judgment_one_per_annotator"),
            models.CheckConstraint(
                condition=Q(seconds_spent__isnull=True) | Q(seconds_spent__gte=0),
                name="judgment_seconds_positive",
            ),
        ]

    def __str__(self):
        return f"{self.annotator}: {self.task} = {self.grade}"


class Preference(models.Model):
    """One annotator's side-by-side verdict, stored relative to the experimental model."""

    task = models.ForeignKey(SideBySideTask, on_delete=models.CASCADE, related_name="preferences")
    annotator = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="preferences"
    )
    experimental_on_left = models.BooleanField(help_text="Which side the experimental list was shown on.")
    verdict = models.CharField(max_length=4, choices=Verdict)
    strength = models.PositiveSmallIntegerField(
        null=True, blank=True, help_text="On the 5-point scale: 1 slightly, 2 much better or worse."
    )
    comment = models.TextField(blank=True)
    seconds_spent = models.FloatField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["task", "annotator"]
        constraints = [
            models.UniqueConstraint(fields=["task", "annotator"], name="preference_one_per_annotator"),
            models.CheckConstraint(
                condition=Q(strength__isnull=True) | Q(strength__in=[1, 2]), name="preference_strength_1_or_2"
            ),
            models.CheckConstraint(
                condition=~Q(verdict="same") | Q(strength__isnull=True),
                name="preference_same_has_no_strength",
            ),
        ]

    def __str__(self):
        return f"{self.annotator}: {self.task} = {self.verdict}"


class Assignment(models.Model):
    """A task handed to an annotator: a lease until it is submitted, skipped or expires.

    A task's open slots are its overlap less its `slots_spent`: labels and leases not yet given back. A lease
    past `expires_at` holds its slot until the next hand-out marks it expired and gives the slot back.
    """

    class Status(models.TextChoices):
        LEASED = "leased", "Leased"
        SUBMITTED = "submitted", "Submitted"
        SKIPPED = "skipped", "Skipped"
        EXPIRED = "expired", "Expired"

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

    class Meta:
        ordering = ["-leased_at"]
        constraints = [
            models.CheckConstraint(
                condition=Q(relevance_task__isnull=True) ^ Q(side_by_side_task__isnull=True),
                name="assignment_has_exactly_one_task",
            ),
            models.UniqueConstraint(
                fields=["annotator", "relevance_task"],
                condition=Q(relevance_task__isnull=False),
                name="assignment_relevance_once_per_annotator",
            ),
            models.UniqueConstraint(
                fields=["annotator", "side_by_side_task"],
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


class Adjudication(models.Model):
    """A reviewer's final label for a task; it replaces the aggregate, the raw labels stay."""

    relevance_task = models.OneToOneField(
        RelevanceTask, null=True, blank=True, on_delete=models.CASCADE, related_name="adjudication"
    )
    side_by_side_task = models.OneToOneField(
        SideBySideTask, null=True, blank=True, on_delete=models.CASCADE, related_name="adjudication"
    )
    reviewer = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="adjudications"
    )
    grade = models.SmallIntegerField(null=True, blank=True)
    verdict = models.CharField(max_length=4, choices=Verdict, blank=True)
    reason = models.TextField()
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-updated_at"]
        constraints = [
            models.CheckConstraint(
                condition=(
                    Q(relevance_task__isnull=False)
                    & Q(grade__isnull=False)
                    & Q(side_by_side_task__isnull=True)
                )
                | (Q(side_by_side_task__isnull=False) & ~Q(verdict="") & Q(relevance_task__isnull=True)),
                name="adjudication_label_matches_task",
            ),
        ]

    def __str__(self):
        return f"{self.grade if self.relevance_task_id else self.verdict} by {self.reviewer_id}"


class LabelRevision(models.Model):
    """The history of a label: who changed what, when, from which value to which."""

    class Kind(models.TextChoices):
        JUDGMENT = "judgment", "Relevance grade"
        PREFERENCE = "preference", "Side-by-side verdict"
        ADJUDICATION = "adjudication", "Adjudication"

    kind = models.CharField(max_length=16, choices=Kind)
    relevance_task = models.ForeignKey(
        RelevanceTask, null=True, blank=True, on_delete=models.CASCADE, related_name="revisions"
    )
    side_by_side_task = models.ForeignKey(
        SideBySideTask, null=True, blank=True, on_delete=models.CASCADE, related_name="revisions"
    )
    changed_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    old_value = models.CharField(max_length=32, blank=True, help_text="Empty when the label was created.")
    new_value = models.CharField(max_length=32)
    note = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.CheckConstraint(
                condition=Q(relevance_task__isnull=True) ^ Q(side_by_side_task__isnull=True),
                name="label_revision_has_exactly_one_task",
            ),
        ]

    def __str__(self):
        return f"{self.kind}: {self.old_value or '∅'} → {self.new_value}"


class CampaignImport(models.Model):
    """A campaign created in the browser: uploaded files, checked in the background into a preview, then,
    once a manager confirms, imported in the background in one transaction."""

    class Status(models.TextChoices):
        CHECKING = "checking", "Checking the files"
        READY = "ready", "Ready to confirm"
        INVALID = "invalid", "Refused: see the error"
        IMPORTING = "importing", "Importing"
        DONE = "done", "Imported"
        FAILED = "failed", "Failed: nothing was written"
        CANCELLED = "cancelled", "Cancelled: nothing was written"

    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    folder = models.CharField(max_length=100, help_text="The uploaded files' folder under IMPORTS_DIR.")
    bundle_file = models.CharField(max_length=255)
    runs = models.JSONField(default=list, help_text="[{model, file}] of the uploaded TREC runs.")
    status = models.CharField(max_length=16, choices=Status, default=Status.CHECKING)
    preview = models.JSONField(null=True, blank=True)
    error = models.TextField(blank=True)
    campaign = models.ForeignKey(Campaign, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self):
        return f"import {self.pk} of {self.bundle_file} ({self.status})"
