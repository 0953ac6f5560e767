"""Reads for label quality: agreement, annotator figures, and the reviewers' queue of doubtful tasks.

Each read runs a fixed number of queries whatever the campaign's size; the figures come from
`metrics.compute`.
"""

import math
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

import numpy as np
from django.contrib.auth import get_user_model
from django.db.models import Count, F, Max, Min, Q

from annotation.models import (
    Adjudication,
    Campaign,
    Judgment,
    LabelRevision,
    Preference,
    Ranking,
    RankingModel,
    RelevanceTask,
    SideBySideTask,
    Verdict,
)
from metrics.compute.aggregation import verdict_counts
from metrics.compute.agreement import (
    Agreement,
    MeasurementLevel,
    fleiss_kappa,
    krippendorff_alpha,
    pairwise_weighted_kappa,
)
from metrics.compute.annotators import annotator_quality, side_bias
from metrics.compute.labels import VERDICT_SCALE
from metrics.selectors import (
    PreferenceRows,
    RelevanceLabels,
    campaign_preferences,
    campaign_queries,
    campaign_relevance_labels,
)
from metrics.threads import started

RELEVANCE = "relevance"
SIDE_BY_SIDE = "side_by_side"


def _number(value: float) -> float | None:
    """NaN (a figure without data) as None, which templates show as a dash."""
    return None if math.isnan(value) else value


@dataclass(frozen=True)
class AgreementFigure:
    name: str
    value: float | None
    ci_low: float | None
    ci_high: float | None
    n_tasks: int

    @classmethod
    def of(cls, name: str, agreement: Agreement) -> "AgreementFigure":
        return cls(
            name,
            _number(agreement.value),
            _number(agreement.ci_low),
            _number(agreement.ci_high),
            agreement.n_tasks,
        )


@dataclass(frozen=True)
class PairFigure:
    annotator_a: str
    annotator_b: str
    kappa: AgreementFigure


@dataclass(frozen=True)
class AnnotatorFigures:
    username: str
    n_judgments: int
    median_seconds: float | None
    consensus_agreement: float | None
    n_gold: int
    gold_accuracy: float | None
    gold_within_one: float | None
    grade_shares: tuple[float | None, ...]
    n_verdicts: int
    left_better_share: float | None
    side_p_value: float | None


@dataclass(frozen=True)
class CampaignQuality:
    campaign: Campaign
    grades: list[tuple[int, str]]  # (value, label) in scale order
    grade_agreement: list[AgreementFigure]  # Krippendorff ordinal and interval
    verdict_agreement: list[AgreementFigure]  # Fleiss kappa and nominal alpha
    pairs: list[PairFigure]
    annotators: list[AnnotatorFigures]

    @property
    def grade_distribution(self) -> dict:
        """The share of each grade per annotator, for the chart (JSON-ready; missing shares are 0)."""
        return {
            "grades": [label for _, label in self.grades],
            "annotators": [row.username for row in self.annotators if row.n_judgments],
            "shares": [
                [share or 0.0 for share in row.grade_shares] for row in self.annotators if row.n_judgments
            ],
        }


def campaign_quality(*, campaign: Campaign, n_resamples: int = 1000) -> CampaignQuality:
    """Agreement with 95% bootstrap intervals and every annotator's figures, in six queries."""
    relevance = campaign_relevance_labels(campaign=campaign, queries=campaign_queries(campaign=campaign))
    preferences = campaign_preferences(campaign=campaign)
    later = campaign_quality_later(
        campaign=campaign, relevance=relevance, preferences=preferences, n_resamples=n_resamples
    )
    return later()


def campaign_quality_later(
    *,
    campaign: Campaign,
    relevance: RelevanceLabels,
    preferences: PreferenceRows,
    n_resamples: int = 1000,
) -> Callable[[], CampaignQuality]:
    """`campaign_quality` of the campaign's already fetched labels, computed on a second thread while the
    caller goes on (the launch report: its measures); call the result to wait for it. One query, here."""
    annotator_pk = np.union1d(relevance.annotator_pk, preferences.annotator_pk)
    usernames = dict(
        get_user_model().objects.filter(pk__in=annotator_pk.tolist()).values_list("pk", "username")
    )
    return started(_quality, campaign, relevance, preferences, annotator_pk, usernames, n_resamples)


def _quality(campaign, relevance, preferences, annotator_pk, usernames, n_resamples) -> CampaignQuality:
    """`campaign_quality`'s figures of fetched labels: no query, as it runs on another thread."""
    scale = sorted(campaign.grade_values)
    preference_annotator_pk, verdict = preferences.annotator_pk, preferences.verdict
    _, preference_task = np.unique(preferences.task_pk, return_inverse=True)
    n_verdict_tasks = int(preference_task.max()) + 1 if preference_task.size else 0
    relevance_annotator = np.searchsorted(annotator_pk, relevance.annotator_pk)[relevance.judgment_annotator]
    preference_annotator = np.searchsorted(annotator_pk, preference_annotator_pk)

    grades = (relevance.judgment_task, relevance.judgment_grade)
    resampling = {"n_resamples": n_resamples}
    grade_agreement = [
        AgreementFigure.of(
            f"Krippendorff α ({level})",
            krippendorff_alpha(*grades, n_tasks=relevance.n_tasks, scale=scale, level=level, **resampling),
        )
        for level in (MeasurementLevel.ORDINAL, MeasurementLevel.INTERVAL)
    ]
    verdict_agreement = [
        AgreementFigure.of(
            "Fleiss κ",
            fleiss_kappa(verdict_counts(preference_task, verdict, n_tasks=n_verdict_tasks), **resampling),
        ),
        AgreementFigure.of(
            "Krippendorff α (nominal)",
            krippendorff_alpha(
                preference_task,
                verdict,
                n_tasks=n_verdict_tasks,
                scale=VERDICT_SCALE,
                level=MeasurementLevel.NOMINAL,
                **resampling,
            ),
        ),
    ]
    pairs = [
        PairFigure(
            usernames[int(annotator_pk[pair.annotator_a])],
            usernames[int(annotator_pk[pair.annotator_b])],
            AgreementFigure.of("Weighted κ", pair.kappa),
        )
        for pair in pairwise_weighted_kappa(
            relevance.judgment_task,
            relevance_annotator,
            relevance.judgment_grade,
            n_tasks=relevance.n_tasks,
            scale=scale,
            **resampling,
        )
    ]
    quality = annotator_quality(
        relevance.judgment_task,
        relevance_annotator,
        relevance.judgment_grade,
        n_tasks=relevance.n_tasks,
        n_annotators=annotator_pk.size,
        scale=scale,
        seconds=relevance.judgment_seconds,
        gold=relevance.gold,
    )
    bias = side_bias(preference_annotator, verdict, preferences.on_left, n_annotators=annotator_pk.size)
    annotators = [
        AnnotatorFigures(
            username=usernames[int(pk)],
            n_judgments=grade_figures.n_judgments,
            median_seconds=_number(grade_figures.median_seconds),
            consensus_agreement=_number(grade_figures.consensus_agreement),
            n_gold=grade_figures.n_gold,
            gold_accuracy=_number(grade_figures.gold_accuracy),
            gold_within_one=_number(grade_figures.gold_within_one),
            grade_shares=tuple(_number(share) for share in grade_figures.grade_shares),
            n_verdicts=side.n_verdicts,
            left_better_share=_number(side.left_better_share),
            side_p_value=_number(side.p_value),
        )
        for pk, grade_figures, side in zip(annotator_pk, quality, bias, strict=True)
    ]
    labels = {grade["value"]: grade["label"] for grade in campaign.scale}
    return CampaignQuality(
        campaign=campaign,
        grades=[(value, labels[value]) for value in scale],
        grade_agreement=grade_agreement,
        verdict_agreement=verdict_agreement,
        pairs=pairs,
        annotators=sorted(annotators, key=lambda row: row.username),
    )


@dataclass(frozen=True)
class QueueItem:
    """A task worth a reviewer's look. `disagreement` is the labels' spread over the scale's range, 0 to 1."""

    kind: str
    task_pk: int
    query: str
    subject: str  # the document, or the experimental model
    labels: list[str]
    disagreement: float
    failed_gold: bool
    adjudicated: str | None


@dataclass(frozen=True)
class ReviewQueue:
    campaign: Campaign
    items: list[QueueItem]
    n_open: int


def review_queue(
    *, campaign: Campaign, limit: int = 50, exclude: tuple[str, int] | None = None
) -> ReviewQueue:
    """Disputed tasks, most disputed first, then failed gold; adjudicated ones last. At most six queries.

    A task is disputed when its labels differ, or fails gold when a label differs from its gold label.
    """
    scale = campaign.grade_values
    grade_range = (max(scale) - min(scale)) or 1
    relevance_rows = (
        RelevanceTask.objects.filter(campaign=campaign)
        .annotate(
            low=Min("judgments__grade"),
            high=Max("judgments__grade"),
            n_off_gold=Count(
                "judgments", filter=Q(gold_grade__isnull=False) & ~Q(judgments__grade=F("gold_grade"))
            ),
        )
        .filter(low__isnull=False)
        .order_by()
        .values_list("pk", "low", "high", "n_off_gold", "adjudication__grade")
    )
    candidates = [
        (adjudicated is not None, RELEVANCE, pk, (high - low) / grade_range, n_off_gold > 0, adjudicated)
        for pk, low, high, n_off_gold, adjudicated in relevance_rows
        if high > low or n_off_gold or adjudicated is not None
    ]
    verdict_rows = (
        SideBySideTask.objects.filter(campaign=campaign)
        .annotate(
            n_good=Count("preferences", filter=Q(preferences__verdict=Verdict.GOOD)),
            n_same=Count("preferences", filter=Q(preferences__verdict=Verdict.SAME)),
            n_bad=Count("preferences", filter=Q(preferences__verdict=Verdict.BAD)),
            n_off_gold=Count(
                "preferences", filter=~Q(gold_verdict="") & ~Q(preferences__verdict=F("gold_verdict"))
            ),
        )
        .order_by()
        .values_list("pk", "n_good", "n_same", "n_bad", "n_off_gold", "adjudication__verdict")
    )
    for pk, n_good, n_same, n_bad, n_off_gold, adjudicated in verdict_rows:
        used = [value for value, n in ((1, n_good), (0, n_same), (-1, n_bad)) if n]
        spread = (max(used) - min(used)) / 2 if used else 0.0
        if spread or n_off_gold or adjudicated:
            candidates.append(
                (bool(adjudicated), SIDE_BY_SIDE, pk, spread, n_off_gold > 0, adjudicated or None)
            )
    candidates = [row for row in candidates if (row[1], row[2]) != exclude]
    candidates.sort(key=lambda row: (row[0], -row[3], not row[4], row[1], row[2]))
    n_open = sum(not row[0] for row in candidates)
    chosen = candidates[:limit]

    relevance_pks = [row[2] for row in chosen if row[1] == RELEVANCE]
    verdict_pks = [row[2] for row in chosen if row[1] == SIDE_BY_SIDE]
    subjects = {
        (RELEVANCE, pk): (query, title or document_id)
        for pk, query, title, document_id in RelevanceTask.objects.filter(pk__in=relevance_pks).values_list(
            "pk", "query__text", "document__title", "document__external_id"
        )
    }
    subjects.update(
        ((SIDE_BY_SIDE, pk), (query, model))
        for pk, query, model in SideBySideTask.objects.filter(pk__in=verdict_pks).values_list(
            "pk", "query__text", "experimental_model__name"
        )
    )
    labels: dict[tuple[str, int], list[str]] = {}
    for task_pk, grade in (
        Judgment.objects.filter(task_id__in=relevance_pks).order_by("grade").values_list("task_id", "grade")
    ):
        labels.setdefault((RELEVANCE, task_pk), []).append(str(grade))
    for task_pk, verdict in (
        Preference.objects.filter(task_id__in=verdict_pks)
        .order_by("verdict")
        .values_list("task_id", "verdict")
    ):
        labels.setdefault((SIDE_BY_SIDE, task_pk), []).append(verdict)
    items = [
        QueueItem(
            kind=kind,
            task_pk=pk,
            query=subjects[kind, pk][0],
            subject=subjects[kind, pk][1],
            labels=labels.get((kind, pk), []),
            disagreement=spread,
            failed_gold=failed_gold,
            adjudicated=None if adjudicated is None else str(adjudicated),
        )
        for _, kind, pk, spread, failed_gold, adjudicated in chosen
    ]
    return ReviewQueue(campaign=campaign, items=items, n_open=n_open)


@dataclass(frozen=True)
class DocumentView:
    external_id: str
    title: str
    url: str
    body: str

    @property
    def link(self) -> str:
        """The URL if it is http(s), so that a stored `javascript:` URL never becomes a link."""
        return self.url if self.url.lower().startswith(("http://", "https://")) else ""


@dataclass(frozen=True)
class LabelView:
    username: str
    value: str
    comment: str
    seconds: float | None
    created_at: datetime
    shown_left: str = ""  # side-by-side: the model whose list was on the left


@dataclass(frozen=True)
class AdjudicationView:
    reviewer: str
    value: str
    reason: str
    updated_at: datetime


@dataclass(frozen=True)
class RevisionView:
    changed_by: str
    created_at: datetime
    kind: str
    old_value: str
    new_value: str
    note: str


@dataclass(frozen=True)
class ReviewTask:
    """Everything a reviewer sees of one task; `choices` are (value, label) of the final label."""

    kind: str
    task_pk: int
    campaign: Campaign
    query: str
    query_description: str
    choices: list[tuple[str, str]]
    gold: str
    labels: list[LabelView]
    adjudication: AdjudicationView | None
    history: list[RevisionView]
    next_item: QueueItem | None
    document: DocumentView | None = None
    online_model: str = ""
    experimental_model: str = ""
    online_list: list[DocumentView] | None = None
    experimental_list: list[DocumentView] | None = None

    @property
    def lists(self) -> list[tuple[str, str, list[DocumentView]]]:
        """Side by side: (model name, role, top documents) of the online, then the experimental model."""
        return [
            (self.online_model, "online", self.online_list or []),
            (self.experimental_model, "experimental", self.experimental_list or []),
        ]


def _ranked_documents(model_pk: int, query_pk: int, depth: int) -> list[DocumentView]:
    rows = (
        Ranking.objects.filter(model_id=model_pk, query_id=query_pk, rank__lte=depth)
        .order_by("rank")
        .values_list("document__external_id", "document__title", "document__url", "document__body")
    )
    return [DocumentView(*row) for row in rows]


def review_task(*, task: RelevanceTask | SideBySideTask) -> ReviewTask:
    """Query, document or both lists (with model names), every label, the adjudication, the history."""
    campaign = task.campaign
    is_relevance = isinstance(task, RelevanceTask)
    kind = RELEVANCE if is_relevance else SIDE_BY_SIDE
    task_filter = {"relevance_task": task} if is_relevance else {"side_by_side_task": task}
    adjudication = (
        Adjudication.objects.filter(**task_filter)
        .values_list("reviewer__username", "grade", "verdict", "reason", "updated_at")
        .first()
    )
    history = [
        RevisionView(who, when, LabelRevision.Kind(kind_value).label, old, new, note)
        for who, when, kind_value, old, new, note in LabelRevision.objects.filter(**task_filter)
        .order_by("-created_at", "-pk")
        .values_list("changed_by__username", "created_at", "kind", "old_value", "new_value", "note")
    ]
    next_item = next(iter(review_queue(campaign=campaign, limit=1, exclude=(kind, task.pk)).items), None)
    if next_item is not None and next_item.adjudicated is not None:
        next_item = None
    common = {
        "kind": kind,
        "task_pk": task.pk,
        "campaign": campaign,
        "query": task.query.text,
        "query_description": task.query.description,
        "history": history,
        "next_item": next_item,
    }
    if is_relevance:
        labels = [
            LabelView(username, str(grade), comment, seconds, created_at)
            for username, grade, comment, seconds, created_at in task.judgments.order_by(
                "annotator__username"
            ).values_list("annotator__username", "grade", "comment", "seconds_spent", "created_at")
        ]
        document = task.document
        return ReviewTask(
            **common,
            choices=[(str(grade["value"]), grade["label"]) for grade in campaign.scale],
            gold="" if task.gold_grade is None else str(task.gold_grade),
            labels=labels,
            adjudication=adjudication
            and AdjudicationView(adjudication[0], str(adjudication[1]), adjudication[3], adjudication[4]),
            document=DocumentView(document.external_id, document.title, document.url, document.body),
        )
    online = RankingModel.objects.filter(campaign=campaign, role=RankingModel.Role.ONLINE).first()
    experimental = task.experimental_model
    labels = [
        LabelView(username, verdict, comment, seconds, created_at, experimental.name if left else online.name)
        for username, verdict, comment, seconds, created_at, left in task.preferences.order_by(
            "annotator__username"
        ).values_list(
            "annotator__username", "verdict", "comment", "seconds_spent", "created_at", "experimental_on_left"
        )
    ]
    return ReviewTask(
        **common,
        choices=[
            (Verdict.GOOD.value, f"{experimental.name} better"),
            (Verdict.SAME.value, "About the same"),
            (Verdict.BAD.value, f"{online.name} better"),
        ],
        gold=task.gold_verdict,
        labels=labels,
        adjudication=adjudication
        and AdjudicationView(adjudication[0], adjudication[2], adjudication[3], adjudication[4]),
        online_model=online.name,
        experimental_model=experimental.name,
        online_list=_ranked_documents(online.pk, task.query_id, campaign.gsb_depth),
        experimental_list=_ranked_documents(experimental.pk, task.query_id, campaign.gsb_depth),
    )
