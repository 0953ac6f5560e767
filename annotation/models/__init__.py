"""The domain of a relevance campaign: what is judged, by whom, and how the labels are kept.

Invariants the database can keep are constraints here; everything that changes state goes through
`annotation.services`, never through `save()` overrides or signals.
"""

from annotation.choices import (
    SHUFFLE_KEYS,
    Aggregation,
    Gain,
    GSBScale,
    NoveltyPopularity,
    SkipReason,
    TaskOrder,
    Verdict,
    default_cutoffs,
    default_scale,
    random_shuffle_key,
)
from annotation.models.campaigns import (
    DOCUMENT_PK_DTYPE,
    Campaign,
    CampaignImport,
    Document,
    JudgingStandard,
    Query,
    Ranking,
    RankingModel,
    document_pks_pack,
    document_pks_unpack,
)
from annotation.models.interactions import Impression, InteractionLog
from annotation.models.labels import (
    Adjudication,
    AnnotatorExclusion,
    Judgment,
    LabelRevision,
    Preference,
    RepeatAnswer,
    ReviewLease,
)
from annotation.models.people import PasswordLink, Profile
from annotation.models.tasks import Assignment, HandedOutTask, RelevanceTask, SideBySideTask

__all__ = [
    "DOCUMENT_PK_DTYPE",
    "SHUFFLE_KEYS",
    "Adjudication",
    "Aggregation",
    "AnnotatorExclusion",
    "Assignment",
    "Campaign",
    "CampaignImport",
    "Document",
    "GSBScale",
    "Gain",
    "HandedOutTask",
    "Impression",
    "InteractionLog",
    "JudgingStandard",
    "Judgment",
    "NoveltyPopularity",
    "LabelRevision",
    "PasswordLink",
    "Preference",
    "Profile",
    "Query",
    "Ranking",
    "RankingModel",
    "RelevanceTask",
    "RepeatAnswer",
    "ReviewLease",
    "SideBySideTask",
    "SkipReason",
    "TaskOrder",
    "Verdict",
    "default_cutoffs",
    "default_scale",
    "document_pks_pack",
    "document_pks_unpack",
    "random_shuffle_key",
]
