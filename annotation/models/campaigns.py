"""Campaigns and what they judge: judging standards, models (rankers), queries, documents, rankings,
imports."""

import numpy as np
from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _

from annotation.choices import (
    Aggregation,
    Gain,
    GSBScale,
    NoveltyPopularity,
    TaskOrder,
    default_cutoffs,
    default_scale,
)


class JudgingStandard(models.Model):
    """A scale and guidelines under a name: labels made under one version serve every campaign of that
    version (the label pool). Changed guidelines or scale make a new version, so labels never mix."""

    name = models.CharField(max_length=100)
    version = models.PositiveIntegerField()
    scale = models.JSONField()
    guidelines = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name", "-version"]
        constraints = [
            models.UniqueConstraint(fields=["name", "version"], name="judging_standard_unique_version"),
        ]

    def __str__(self):
        return f"{self.name} v{self.version}"


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
    # Diversity and custom discounts (see metrics.compute.ranking and metrics.compute.diversity).
    position_weights = models.JSONField(
        null=True,
        blank=True,
        default=None,
        help_text=(
            "One weight per rank, rank 1 first, in place of DCG's 1 / log2(rank + 1) discount "
            "(a promoted slot weighted 0.8 instead of 1); at least as many as the deepest cut-off; "
            "null: the log2 discount."
        ),
    )
    redundancy_aware = models.BooleanField(
        default=False,
        help_text=(
            "In nDCG and DCG, a result annotators marked a near-duplicate of a higher one gains nothing."
        ),
    )
    alpha = models.FloatField(
        default=0.5,
        help_text=(
            "How much a second document serving an intent is worth less in α-nDCG: 0 not at all, 1 nothing "
            "(ndeval's default 0.5)."
        ),
    )
    novelty_popularity = models.CharField(
        max_length=16, choices=NoveltyPopularity, default=NoveltyPopularity.BUNDLE
    )
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
    # The quality page's guardrails: annotators below these are flagged (see metrics.compute.annotators).
    flag_min_seconds = models.FloatField(
        default=2.0, help_text="Flag a median below this many seconds a label."
    )
    flag_min_gold_accuracy = models.FloatField(default=0.5, help_text="Flag exact gold accuracy below this.")
    # Labels from the pool of the campaign's standard: used at all, and how old they may be (0: any age).
    standard = models.ForeignKey(
        JudgingStandard, on_delete=models.PROTECT, null=True, blank=True, related_name="campaigns"
    )
    reuse_labels = models.BooleanField(
        default=True, help_text="Count earlier campaigns' labels of its standard."
    )
    repeat_rate = models.FloatField(
        default=0.05,
        help_text="Share of an annotator's tasks shown to them again later, to measure consistency.",
    )
    reuse_max_age_days = models.PositiveIntegerField(
        default=0, help_text="Oldest reused label, in days; 0: any."
    )
    # What users did (docs/interactions.md): the grades of actions, and the online guardrails of the decision.
    behaviour_grades = models.CharField(
        max_length=300,
        default="no_click=0, click=1, cart=2, purchase_good=3, purchase_unrated=2, purchase_poor=1, "
        "good_rating=4, min_dwell=0",
        help_text="The grade an impression's furthest action earns in the behaviour qrels: no click, "
        "click (dwell at least min_dwell seconds), cart, purchase rated at least good_rating, unrated, or "
        "rated below.",
    )
    guardrails = models.CharField(
        max_length=500,
        blank=True,
        default="IPS-CTR@10 >= -0.01",
        help_text="Online metrics (read only when the campaign has interaction logs) and diversity measures "
        "the experiment must not degrade: `M >= t` needs the lower end of the interval of Δ M (experimental "
        "− online) at least t, `M <= t` its upper end at most t (`ILS@10 <= 0.05`: ILS@10 may not rise by "
        "more than 0.05). A failed one vetoes the launch.",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    archived_at = models.DateTimeField(
        null=True, blank=True, help_text="Read-only and hidden from annotators."
    )

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
            models.CheckConstraint(condition=Q(alpha__gte=0) & Q(alpha__lte=1), name="campaign_alpha_in_0_1"),
            models.CheckConstraint(
                condition=Q(min_coverage__gte=0) & Q(min_coverage__lte=1), name="campaign_min_coverage_in_0_1"
            ),
            models.CheckConstraint(
                condition=Q(repeat_rate__gte=0) & Q(repeat_rate__lte=0.5),
                name="campaign_repeat_rate_in_0_half",
            ),
            models.CheckConstraint(
                condition=Q(flag_min_gold_accuracy__gte=0) & Q(flag_min_gold_accuracy__lte=1),
                name="campaign_flag_min_gold_accuracy_in_0_1",
            ),
        ]

    def __str__(self):
        return self.name

    @property
    def grade_values(self) -> list[int]:
        return [grade["value"] for grade in self.scale]


class RankingModel(models.Model):
    class Role(models.TextChoices):
        ONLINE = "online", _("Online (production)")
        EXPERIMENTAL = "experimental", _("Experimental")

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
    # The (campaign, external_id) constraint's index serves lookups by campaign: no index of its own.
    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="queries", db_index=False)
    external_id = models.CharField(max_length=100)
    text = models.TextField()
    description = models.TextField(blank=True, help_text="The intent behind the query, shown to annotators.")
    segment = models.CharField(max_length=100, blank=True, help_text="e.g. a locale, or head / tail.")
    weight = models.FloatField(default=1.0)
    intents = models.JSONField(
        default=list,
        db_default=[],
        blank=True,
        help_text="The aspects the query may mean: [{id, text}], for diversity.",
    )

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
    # The (campaign, external_id) constraint's index serves lookups by campaign: no index of its own. On
    # PostgreSQL this key, and the keys of queries, lists and side-by-side tasks, are checked by triggers
    # once a statement, not once a row at COMMIT (migration 0029, plumbing/statement_keys.py).
    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="documents", db_index=False)
    external_id = models.CharField(max_length=200)
    # Database defaults too: COPY writes rows without them (documents a run names, bare).
    title = models.TextField(blank=True, default="", db_default="")
    url = models.TextField(blank=True, default="", db_default="")
    body = models.TextField(blank=True, default="", db_default="", help_text="The body or a snippet of it.")
    attributes = models.JSONField(
        default=dict,
        db_default={},
        blank=True,
        help_text="Categorical fields (category, brand...): {name: value}, for ILS.",
    )
    popularity = models.FloatField(
        null=True, blank=True, help_text="A probability in (0, 1], e.g. the share of users who chose it."
    )

    class Meta:
        ordering = ["campaign", "external_id"]
        constraints = [
            models.UniqueConstraint(fields=["campaign", "external_id"], name="document_external_id_unique"),
            models.CheckConstraint(
                condition=Q(popularity__isnull=True) | (Q(popularity__gt=0) & Q(popularity__lte=1)),
                name="document_popularity_in_0_1",
            ),
        ]
        # The report reads the documents that carry either (`diversity_rows.py`): these, not every one.
        indexes = [
            models.Index(
                fields=["campaign"],
                condition=~Q(attributes={}) | Q(popularity__isnull=False),
                name="document_with_diversity_data",
            )
        ]

    def __str__(self):
        return self.title or self.external_id


# A ranked list's documents: primary keys as little-endian int64, in rank order. Portable (SQLite and
# PostgreSQL), read straight into NumPy, and one row per list, so a million-line run is 10,000 rows.
DOCUMENT_PK_DTYPE = np.dtype("<i8")


def document_pks_pack(pks) -> bytes:
    return np.asarray(pks, dtype=DOCUMENT_PK_DTYPE).tobytes()


def document_pks_unpack(packed: bytes | memoryview) -> np.ndarray:
    return np.frombuffer(packed, dtype=DOCUMENT_PK_DTYPE)


class Ranking(models.Model):
    """A model's result list for a query: its documents' primary keys in rank order (rank 1 first), packed
    by `document_pks_pack`. Written once per import or run upload; the import creates every document it
    names in the same transaction, which stands in for a foreign key per entry."""

    # The (model, query) constraint's index serves lookups by model: no index of its own.
    model = models.ForeignKey(RankingModel, on_delete=models.CASCADE, related_name="rankings", db_index=False)
    query = models.ForeignKey(Query, on_delete=models.CASCADE, related_name="rankings")
    documents = models.BinaryField()

    class Meta:
        ordering = ["model", "query"]
        constraints = [
            models.UniqueConstraint(fields=["model", "query"], name="ranking_list_unique"),
        ]

    def __str__(self):
        return f"{self.model_id}/{self.query_id}: {self.document_pks.size} documents"

    @property
    def document_pks(self) -> np.ndarray:
        return document_pks_unpack(self.documents)


class CampaignImport(models.Model):
    """A campaign created in the browser: uploaded files, checked in the background into a preview, then,
    once a manager confirms, imported in the background in one transaction. Each time its check or its
    import is queued (a retry too) is an attempt: the worker that takes it beats a heartbeat file of that
    attempt beside the files, so a worker that died is told from one still working."""

    class Status(models.TextChoices):
        CHECKING = "checking", _("Checking the files")
        READY = "ready", _("Ready to confirm")
        INVALID = "invalid", _("Refused: see the error")
        IMPORTING = "importing", _("Importing")
        DONE = "done", _("Imported")
        FAILED = "failed", _("Failed: nothing was written")
        CANCELLED = "cancelled", _("Cancelled: nothing was written")

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
    attempt = models.PositiveIntegerField(
        default=1, help_text="How many times its check or import was queued; a worker takes only the last."
    )
    queued_at = models.DateTimeField(null=True, blank=True)
    task_id = models.CharField(
        max_length=64, blank=True, help_text="The Tasks framework's id of the attempt's queued task."
    )

    class Meta:
        ordering = ["-created_at"]

    def __str__(self):
        return f"import {self.pk} of {self.bundle_file} ({self.status})"
