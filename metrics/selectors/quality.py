"""Reads for label quality: agreement and annotator figures.

Each read runs a fixed number of queries whatever the campaign's size; the figures come from
`metrics.compute`.
"""

import math
from concurrent.futures import Future
from dataclasses import dataclass, replace

import numpy as np
from django.contrib.auth import get_user_model

from annotation.models import (
    Campaign,
)
from metrics.compute.aggregation import verdict_counts
from metrics.compute.agreement import (
    Agreement,
    MeasurementLevel,
    fleiss_kappa,
    krippendorff_alpha,
    krippendorff_alphas,
    pairwise_weighted_kappa,
)
from metrics.compute.annotators import (
    FlagRule,
    SelfAgreement,
    annotator_flags,
    annotator_quality,
    self_agreement,
    side_bias,
)
from metrics.compute.labels import VERDICT_SCALE
from metrics.compute.wording import Phrase, phrase
from metrics.selectors.aggregation import AggregationFit, aggregated_grades
from metrics.selectors.diversity_agreement import diversity_agreement, marked_lists
from metrics.selectors.diversity_rows import campaign_diversity_rows
from metrics.selectors.evaluation_data import (
    NO_ONE,
    PreferenceRows,
    RelevanceLabels,
    RepeatPairs,
    campaign_preferences,
    campaign_queries,
    campaign_relevance_labels_later,
    campaign_repeat_pairs,
    excluded_annotators,
)
from metrics.selectors.kept import kept_or_computed, kept_slot
from plumbing.digests import inputs_digest
from plumbing.threads import started

GRADE_LEVELS = (MeasurementLevel.ORDINAL, MeasurementLevel.INTERVAL)
# A figure's name is a Phrase: the same key in every report, said in the reader's language on pages.
LEVEL_NAMES = {
    MeasurementLevel.ORDINAL: phrase("ordinal"),
    MeasurementLevel.INTERVAL: phrase("interval"),
    MeasurementLevel.NOMINAL: phrase("nominal"),
}


def _number(value: float) -> float | None:
    """NaN (a figure without data) as None, which templates show as a dash."""
    return None if math.isnan(value) else value


@dataclass(frozen=True)
class AgreementFigure:
    """A coefficient for a page; `value` None comes with the `undefined` reason (e.g. one task only)."""

    name: str
    value: float | None
    ci_low: float | None
    ci_high: float | None
    n_tasks: int
    undefined: str | None = None

    @classmethod
    def of(cls, name: str, agreement: Agreement) -> "AgreementFigure":
        return cls(
            name,
            _number(agreement.value),
            _number(agreement.ci_low),
            _number(agreement.ci_high),
            agreement.n_tasks,
            agreement.undefined and agreement.undefined.reason,
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
    repeats: SelfAgreement  # their answers to repeats against their first answers
    flags: list[Phrase]  # why the annotator needs a look (metrics.compute.annotators.annotator_flags)
    excluded: bool  # a manager left their labels out of the decision


@dataclass(frozen=True)
class CampaignAgreement:
    """The agreement coefficients of a campaign's labels: what the launch report shows of their quality."""

    grade_agreement: list[AgreementFigure]  # Krippendorff ordinal and interval
    verdict_agreement: list[AgreementFigure]  # Fleiss kappa and nominal alpha


@dataclass(frozen=True)
class CampaignQuality:
    campaign: Campaign
    grades: list[tuple[int, str]]  # (value, label) in scale order
    grade_agreement: list[AgreementFigure]  # Krippendorff ordinal and interval
    verdict_agreement: list[AgreementFigure]  # Fleiss kappa and nominal alpha
    pairs: list[PairFigure]
    annotators: list[AnnotatorFigures]
    aggregation: AggregationFit
    diversity_agreement: list[AgreementFigure]  # intents served and near-duplicates, when given

    @property
    def with_repeats(self) -> list[AnnotatorFigures]:
        return [row for row in self.annotators if row.repeats.n_grades or row.repeats.n_verdicts]

    @property
    def flagged(self) -> list[AnnotatorFigures]:
        return [row for row in self.annotators if row.flags]

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
    """Agreement with 95% bootstrap intervals and every annotator's figures (excluded ones too, marked; their
    repeats), in ten queries (thirteen when near-duplicates were marked); the figures are kept in the shared
    cache under the digest of these reads (`metrics.selectors.kept`). When computed, the agreement is on a
    second thread beside the rest."""
    later = campaign_relevance_labels_later(campaign=campaign)
    queries = campaign_queries(campaign=campaign)  # while the labels are read
    relevance = later.result(queries)
    preferences = campaign_preferences(campaign=campaign)
    annotator_pk = np.union1d(relevance.annotator_pk, preferences.annotator_pk)
    usernames = dict(
        get_user_model().objects.filter(pk__in=annotator_pk.tolist()).values_list("pk", "username")
    )
    excluded = excluded_annotators(campaign=campaign)
    repeats = campaign_repeat_pairs(campaign=campaign)
    rows = campaign_diversity_rows(campaign=campaign, excluded=NO_ONE, documents=False)
    lists = marked_lists(campaign=campaign, rows=rows)
    slot = kept_slot("quality", campaign, n_resamples)
    inputs = inputs_digest(
        campaign, queries, relevance, preferences, usernames, excluded, repeats, rows, lists
    )

    def compute() -> CampaignQuality:
        agreement = campaign_agreement_later(
            campaign=campaign, relevance=relevance, preferences=preferences, n_resamples=n_resamples
        )
        diversity = [
            AgreementFigure.of(f"{what}: Krippendorff α (nominal)", figure)
            for what, figure in diversity_agreement(
                rows=rows,
                lists=lists,
                relevance=relevance,
                task_query_pk=queries.pk[relevance.task_query],
                preferences=preferences,
                n_resamples=n_resamples,
            )
        ]
        return _quality(
            campaign,
            relevance,
            preferences,
            annotator_pk,
            usernames,
            set(excluded.tolist()),
            repeats,
            agreement,
            n_resamples,
            diversity,
        )

    # A kept result holds the campaign it was computed with: the page shows this request's.
    return replace(kept_or_computed(slot, inputs, compute), campaign=campaign)


def campaign_agreement_later(
    *, campaign: Campaign, relevance: RelevanceLabels, preferences: PreferenceRows, n_resamples: int = 1000
) -> Future[CampaignAgreement]:
    """The agreement coefficients of the campaign's already fetched labels, computed on a second thread while
    the caller goes on (the launch report: its measures). No query."""
    return started(_agreement, sorted(campaign.grade_values), relevance, preferences, n_resamples)


def _agreement(
    scale: list[int], relevance: RelevanceLabels, preferences: PreferenceRows, n_resamples: int
) -> CampaignAgreement:
    _, preference_task = np.unique(preferences.task_pk, return_inverse=True)
    n_verdict_tasks = int(preference_task.max()) + 1 if preference_task.size else 0
    resampling = {"n_resamples": n_resamples}
    grade_agreement = [
        AgreementFigure.of(Phrase("Krippendorff α (%(level)s)", {"level": LEVEL_NAMES[level]}), agreement)
        for level, agreement in zip(
            GRADE_LEVELS,
            krippendorff_alphas(
                relevance.judgment_task,
                relevance.judgment_grade,
                n_tasks=relevance.n_tasks,
                scale=scale,
                levels=GRADE_LEVELS,
                **resampling,
            ),
            strict=True,
        )
    ]
    verdict_agreement = [
        AgreementFigure.of(
            "Fleiss κ",
            fleiss_kappa(
                verdict_counts(preference_task, preferences.verdict, n_tasks=n_verdict_tasks), **resampling
            ),
        ),
        AgreementFigure.of(
            Phrase("Krippendorff α (%(level)s)", {"level": LEVEL_NAMES[MeasurementLevel.NOMINAL]}),
            krippendorff_alpha(
                preference_task,
                preferences.verdict,
                n_tasks=n_verdict_tasks,
                scale=VERDICT_SCALE,
                level=MeasurementLevel.NOMINAL,
                **resampling,
            ),
        ),
    ]
    return CampaignAgreement(grade_agreement, verdict_agreement)


def _quality(
    campaign: Campaign,
    relevance: RelevanceLabels,
    preferences: PreferenceRows,
    annotator_pk: np.ndarray,
    usernames: dict[int, str],
    excluded: set[int],
    repeats: RepeatPairs,
    agreement: Future[CampaignAgreement],
    n_resamples: int,
    diversity: list[AgreementFigure],
) -> CampaignQuality:
    """`campaign_quality`'s figures of fetched labels, the agreement's waited for."""
    scale = sorted(campaign.grade_values)
    relevance_annotator = np.searchsorted(annotator_pk, relevance.annotator_pk)[relevance.judgment_annotator]
    preference_annotator = np.searchsorted(annotator_pk, preferences.annotator_pk)
    resampling = {"n_resamples": n_resamples}
    pairs = [
        PairFigure(
            usernames[int(annotator_pk[pair.annotator_a])],
            usernames[int(annotator_pk[pair.annotator_b])],
            AgreementFigure.of(phrase("Weighted κ"), pair.kappa),
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
    bias = side_bias(
        preference_annotator, preferences.verdict, preferences.on_left, n_annotators=annotator_pk.size
    )
    selves = self_agreement(
        np.searchsorted(annotator_pk, repeats.grade_annotator_pk),
        repeats.first_grade,
        repeats.second_grade,
        np.searchsorted(annotator_pk, repeats.verdict_annotator_pk),
        repeats.first_verdict,
        repeats.second_verdict,
        n_annotators=annotator_pk.size,
        scale=scale,
    )
    rule = FlagRule(min_seconds=campaign.flag_min_seconds, min_gold_accuracy=campaign.flag_min_gold_accuracy)
    flags = annotator_flags(quality, bias, rule, selves)
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
            repeats=own,
            flags=reasons,
            excluded=int(pk) in excluded,
        )
        for pk, grade_figures, side, own, reasons in zip(
            annotator_pk, quality, bias, selves, flags, strict=True
        )
    ]
    labels = {grade["value"]: grade["label"] for grade in campaign.scale}
    coefficients = agreement.result()
    return CampaignQuality(
        campaign=campaign,
        grades=[(value, labels[value]) for value in scale],
        grade_agreement=coefficients.grade_agreement,
        verdict_agreement=coefficients.verdict_agreement,
        pairs=pairs,
        annotators=sorted(annotators, key=lambda row: row.username),
        aggregation=aggregated_grades(campaign=campaign, relevance=relevance)[1],
        diversity_agreement=diversity,
    )
