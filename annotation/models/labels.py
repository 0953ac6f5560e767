"""Labels: annotators' judgments and preferences, repeat answers, reviewers' adjudications, the label history,
exclusions."""

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _

from annotation.choices import Verdict
from annotation.models.campaigns import Campaign
from annotation.models.tasks import Assignment, RelevanceTask, SideBySideTask


class CampaignLabel(models.Model):
    """What every kind of annotator's label keeps besides its task and answer."""

    # The task's campaign, kept on the label: a campaign's labels are one index range whatever its tasks'
    # ids, so reads of them never walk the tasks. On PostgreSQL (campaign, task) must name a task of that
    # campaign (migration 0034, checked once a statement: plumbing/statement_keys.py); SQLite keeps the
    # task's key only.
    campaign = models.ForeignKey(
        Campaign, on_delete=models.CASCADE, related_name="+", db_index=False, db_constraint=False
    )

    class Meta:
        abstract = True


class Judgment(CampaignLabel):
    """One annotator's grade of a relevance task."""

    task = models.ForeignKey(RelevanceTask, on_delete=models.CASCADE, related_name="judgments")
    annotator = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="judgments"
    )
    grade = models.SmallIntegerField()
    intents = models.JSONField(
        null=True,
        blank=True,
        help_text="The ids of the query's intents the document serves, as ticked; null: not asked.",
    )
    comment = models.TextField(blank=True)
    seconds_spent = models.FloatField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    # A copy of an earlier campaign's label under the same judging standard (the original, never a copy).
    reused_from = models.ForeignKey(
        "self", on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )

    class Meta:
        ordering = ["task", "annotator"]
        constraints = [
            models.UniqueConstraint(fields=["task", "annotator"], name="judgment_one_per_annotator"),
            models.CheckConstraint(
                condition=Q(seconds_spent__isnull=True) | Q(seconds_spent__gte=0),
                name="judgment_seconds_positive",
            ),
        ]
        indexes = [
            models.Index(fields=["campaign", "annotator"], name="judgment_campaign_annotator"),
            # The report reads the judgments whose intents were asked (`diversity_rows.py`): these only.
            models.Index(
                fields=["campaign"], condition=Q(intents__isnull=False), name="judgment_intents_asked"
            ),
        ]

    def __str__(self):
        return f"{self.annotator}: {self.task} = {self.grade}"


class Preference(CampaignLabel):
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
    # As shown: the side (left, right) and two positions in its list, the later first: "#3 same as #2" is
    # ["left", 3, 2]. `experimental_on_left` says which model's list a side was.
    duplicates = models.JSONField(
        default=list,
        db_default=[],
        blank=True,
        help_text="Near-duplicates marked: [side, position, same as position], the later position first.",
    )
    comment = models.TextField(blank=True)
    seconds_spent = models.FloatField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    reused_from = models.ForeignKey(
        "self", on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )

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
        indexes = [
            models.Index(fields=["campaign", "annotator"], name="preference_campaign_annotator"),
            # The report reads the verdicts with near-duplicates marked (`diversity_rows.py`): these only.
            models.Index(
                fields=["campaign"], condition=~Q(duplicates=[]), name="preference_duplicates_marked"
            ),
        ]

    def __str__(self):
        return f"{self.annotator}: {self.task} = {self.verdict}"


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


class ReviewLease(models.Model):
    """A reviewer's short hold on a task of the review queue (REVIEW_LEASE_MINUTES), taken when they open it:
    the queue hands other reviewers other tasks meanwhile. It reserves nothing: a final label is taken from
    anyone, against the version the reviewer saw."""

    relevance_task = models.OneToOneField(
        RelevanceTask, null=True, blank=True, on_delete=models.CASCADE, related_name="review_lease"
    )
    side_by_side_task = models.OneToOneField(
        SideBySideTask, null=True, blank=True, on_delete=models.CASCADE, related_name="review_lease"
    )
    reviewer = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    expires_at = models.DateTimeField()

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=Q(relevance_task__isnull=False) ^ Q(side_by_side_task__isnull=False),
                name="review_lease_one_task",
            ),
        ]

    def __str__(self):
        return f"held by {self.reviewer_id} until {self.expires_at:%H:%M}"


class LabelRevision(models.Model):
    """The history of a label: who changed what, when, from which value to which."""

    class Kind(models.TextChoices):
        JUDGMENT = "judgment", _("Relevance grade")
        PREFERENCE = "preference", _("Side-by-side verdict")
        ADJUDICATION = "adjudication", _("Adjudication")

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


class AnnotatorExclusion(models.Model):
    """A manager's decision to leave an annotator's labels out of a campaign's aggregation, decision and
    reports (the labels stay). Reinstating keeps the row: who excluded and reinstated, when and why."""

    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="exclusions")
    annotator = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    reason = models.TextField()
    excluded_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    # Until confirmed, the overview shows the decision with and without the excluded labels.
    confirmed_at = models.DateTimeField(null=True, blank=True)
    reinstated_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    reinstated_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["created_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["campaign", "annotator"],
                condition=Q(reinstated_at__isnull=True),
                name="annotator_exclusion_one_in_force",
            ),
        ]

    def __str__(self):
        return f"{self.annotator} excluded from {self.campaign}"


class RepeatAnswer(models.Model):
    """The answer to a repeat: a task the annotator labelled before, shown again later without saying so
    (side-by-side lists with their sides swapped). It measures their consistency and is never aggregated:
    their first label counts."""

    assignment = models.OneToOneField(Assignment, on_delete=models.CASCADE, related_name="repeat_answer")
    grade = models.SmallIntegerField(null=True, blank=True)
    verdict = models.CharField(max_length=4, choices=Verdict, blank=True)
    strength = models.PositiveSmallIntegerField(null=True, blank=True)
    seconds_spent = models.FloatField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["created_at"]
        constraints = [
            models.CheckConstraint(
                condition=Q(grade__isnull=True) ^ Q(verdict=""), name="repeat_answer_grade_or_verdict"
            ),
        ]

    def __str__(self):
        return f"repeat of {self.assignment}"
