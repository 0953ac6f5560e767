"""Campaign reads: one campaign, the API's lists, its settings page, and a campaign's progress per annotator
and task kind."""

import statistics
from dataclasses import dataclass
from datetime import datetime

from django.contrib.auth import get_user_model
from django.db import connections, router
from django.db.models import (
    Count,
    Exists,
    Max,
    OuterRef,
    Q,
    QuerySet,
)
from django.utils import timezone
from django.utils.translation import gettext as _

from annotation.errors import InputError
from annotation.errors import InputErrorCode as Code
from annotation.models import (
    Adjudication,
    AnnotatorExclusion,
    Assignment,
    Campaign,
    Document,
    Judgment,
    Preference,
    Query,
    Ranking,
    RankingModel,
    RelevanceTask,
)
from annotation.roles import can_review
from annotation.selectors.exclusions import ExclusionView, campaign_exclusions
from annotation.selectors.review import open_disputes_by_campaign
from annotation.selectors.workbench import campaigns_open
from annotation.task_kinds import TASK_KINDS
from plumbing import rows


def campaign_get(*, identifier: str | int) -> Campaign:
    """A campaign by its id or its exact name."""
    text = str(identifier)
    campaign = Campaign.objects.filter(pk=int(text)).first() if text.isdigit() else None
    campaign = campaign or Campaign.objects.filter(name=text).first()
    if campaign is None:
        raise InputError(
            Code.UNKNOWN_CAMPAIGN,
            _("no campaign with id or name %(text)s") % {"text": repr(text)},
            field="campaign",
        )
    return campaign


def campaign_list(*, viewer, name: str = "", archived: bool = False) -> QuerySet[Campaign]:
    """The campaigns `viewer` may see: every one for reviewers and managers, else those open to them (with
    `archived`, archived ones too: `campaigns_open`)."""
    campaigns = (
        Campaign.objects.all() if can_review(viewer) else campaigns_open(annotator=viewer, archived=archived)
    )
    campaigns = campaigns.order_by("-created_at", "-pk")
    return campaigns.filter(name__icontains=name) if name else campaigns


def campaign_graded(*, campaign: Campaign) -> bool:
    """Whether any grade of the campaign exists (a judgment, a gold grade or a final grade): its scale is
    fixed from then on."""
    tasks = RelevanceTask.objects.filter(campaign=campaign)
    return (
        Judgment.objects.filter(campaign=campaign).exists()
        or tasks.filter(Q(gold_grade__isnull=False) | Q(adjudication__isnull=False)).exists()
    )


def campaign_side_by_side_seen(*, campaign: Campaign) -> bool:
    """Whether a side-by-side task was handed out or judged: its depth and scale are fixed from then on."""
    return (
        Assignment.objects.filter(campaign=campaign, side_by_side_task__isnull=False).exists()
        or Preference.objects.filter(campaign=campaign).exists()
    )


@dataclass(frozen=True)
class CampaignSettingsView:
    scale_locked: bool
    side_by_side_locked: bool  # gsb_depth and gsb_scale: tasks were handed out or judged
    model_names: list[str]
    annotators: list[str]  # everyone with a label in the campaign
    exclusions: list[ExclusionView]


def campaign_settings_view(*, campaign: Campaign) -> CampaignSettingsView:
    graders = Judgment.objects.filter(campaign=campaign).values("annotator")
    judges = Preference.objects.filter(campaign=campaign).values("annotator")
    annotators = get_user_model().objects.filter(Q(pk__in=graders) | Q(pk__in=judges)).order_by("username")
    return CampaignSettingsView(
        scale_locked=campaign_graded(campaign=campaign),
        side_by_side_locked=campaign_side_by_side_seen(campaign=campaign),
        model_names=list(RankingModel.objects.filter(campaign=campaign).values_list("name", flat=True)),
        annotators=list(annotators.values_list("username", flat=True)),
        exclusions=campaign_exclusions(campaign=campaign),
    )


def ranking_model_list(*, campaign: Campaign, role: str = "", name: str = "") -> QuerySet[RankingModel]:
    models = RankingModel.objects.filter(campaign=campaign).order_by("role", "name")
    if role:
        models = models.filter(role=role)
    return models.filter(name__icontains=name) if name else models


def models_without_rankings(*, campaign: Campaign) -> list[str]:
    """Names of the campaign's models with no ranking at all (an incomplete import): nothing to compare."""
    ranked = Ranking.objects.filter(model=OuterRef("pk"))
    return list(
        RankingModel.objects.filter(campaign=campaign).filter(~Exists(ranked)).values_list("name", flat=True)
    )


def ranking_model_get(*, campaign: Campaign, name: str) -> RankingModel | None:
    return RankingModel.objects.filter(campaign=campaign, name=name).first()


def campaign_query_pks(*, campaign: Campaign) -> dict[str, int]:
    """Each query's id → its pk. Read unordered: the default order joins the campaign only to sort."""
    return dict(Query.objects.filter(campaign=campaign).order_by().values_list("external_id", "pk"))


def campaign_document_pks(*, campaign: Campaign) -> dict[str, int]:
    """Each document's id → its pk, read unordered as the queries' are."""
    return dict(Document.objects.filter(campaign=campaign).order_by().values_list("external_id", "pk"))


def query_list(*, campaign: Campaign, segment: str = "", text: str = "") -> QuerySet[Query]:
    queries = Query.objects.filter(campaign=campaign).order_by("external_id")
    if segment:
        queries = queries.filter(segment=segment)
    return queries.filter(text__icontains=text) if text else queries


@dataclass(frozen=True)
class AnnotatorProgress:
    username: str
    judgments: int
    preferences: int
    done: int  # judgments and preferences
    in_progress: int  # leases live
    skipped: int
    median_seconds: float | None  # per label (None when not read: `campaign_progress`)
    last_active: datetime | None  # their last label
    excluded: bool = False  # a manager left their labels out: they count in no task's progress


@dataclass(frozen=True)
class KindProgress:
    name: str
    overlap: int  # labels asked per task
    automatic_same: int  # side-by-side tasks with identical lists, answered Same without asking
    tasks: int  # every task of the kind, as the launch report counts them
    complete: int  # of `tasks`, those with `overlap` labels (excluded annotators' aside) or settled
    labels_left: int


@dataclass(frozen=True)
class CampaignProgress:
    annotators: list[AnnotatorProgress]  # by username
    kinds: list[KindProgress]


def campaign_progress(*, campaign: Campaign, median_seconds: bool = True) -> CampaignProgress:
    """Per annotator: labels done, leases live, skips, median seconds per label (unless not
    `median_seconds`: they read every label's), last label, whether excluded; and per kind: tasks complete
    and labels still needed, as the launch report counts them (an excluded annotator's labels count for
    nothing; an adjudicated task, or identical lists answered Same, is settled)."""
    now = timezone.now()
    left_out = _left_out(campaigns=[campaign])
    excluded = left_out.get(campaign.pk, set())
    rows: dict[int, dict] = {}

    def row(pk: int) -> dict:
        empty = {"judgments": 0, "preferences": 0, "in_progress": 0, "skipped": 0, "last_active": None}
        return rows.setdefault(pk, empty)

    seconds: dict[int, list[float]] = {}
    for label_model, key in ((Judgment, "judgments"), (Preference, "preferences")):
        counts = (
            label_model.objects.filter(campaign=campaign)
            .order_by()
            .values("annotator")
            .annotate(n=Count("pk"), last=Max("updated_at"))
        )
        for item in counts:
            entry = row(item["annotator"])
            entry[key] = item["n"]
            entry["last_active"] = max(filter(None, (entry["last_active"], item["last"])))
        if not median_seconds:
            continue
        # Unordered: a median needs no order, and the labels' default one joins and sorts every label.
        spent = label_model.objects.filter(campaign=campaign, seconds_spent__isnull=False).order_by()
        for annotator, value in spent.values_list("annotator", "seconds_spent").iterator(chunk_size=10_000):
            if value is not None:  # filtered out above; the type cannot tell
                seconds.setdefault(annotator, []).append(value)
    for pk, values in seconds.items():
        row(pk)["median_seconds"] = statistics.median(values)
    assignments = (
        Assignment.objects.filter(campaign=campaign)
        .order_by()
        .values("annotator")
        .annotate(
            skipped=Count("pk", filter=Q(status=Assignment.Status.SKIPPED)),
            live=Count("pk", filter=Q(status=Assignment.Status.LEASED, expires_at__gt=now)),
        )
    )
    for leases in assignments:
        row(leases["annotator"]).update(in_progress=leases["live"], skipped=leases["skipped"])
    names = dict(get_user_model().objects.filter(pk__in=rows).values_list("pk", "username"))
    annotators = sorted(
        (
            AnnotatorProgress(
                username=names[pk],
                median_seconds=counts.pop("median_seconds", None),
                done=counts["judgments"] + counts["preferences"],
                excluded=pk in excluded,
                **counts,
            )
            for pk, counts in rows.items()
        ),
        key=lambda item: item.username,
    )
    return CampaignProgress(annotators=annotators, kinds=kinds_progress(campaign=campaign))


def kinds_progress(*, campaign: Campaign) -> list[KindProgress]:
    """Per kind: tasks complete and labels still needed, as the launch report counts them (the labels of the
    annotators a manager left out count for nothing). One query per kind."""
    return kinds_progress_by_campaign(campaigns=[campaign])[campaign.pk]


# A kind's tasks in each campaign: how many, how many complete (labels up to the kind's overlap, or settled:
# adjudicated, or identical lists answered Same), the labels still needed by the rest, and how many were
# answered Same automatically. The labels of an annotator left out of the campaign count for nothing.
# Counted as every task needing its overlap (`every`), less what the tasks with a label or an adjudication
# already have (`touched`, grouped from those rows alone): no task is joined to its labels' count, which
# PostgreSQL, with a new campaign's statistics not yet gathered, nests into a loop over both. A subquery per
# task took 3.6 s for a campaign of 100,000 tasks (docs/benchmarks.md).
_KIND_PROGRESS = """SELECT c.id, every.tasks, every.automatic + COALESCE(touched.complete, 0),
    c.{overlap} * every.open - COALESCE(touched.covered, 0), every.automatic
FROM (
    SELECT t.campaign_id, COUNT(*) AS tasks, SUM({automatic}) AS automatic, SUM(1 - {automatic}) AS open
    FROM {tasks} t WHERE t.campaign_id IN ({ids}) GROUP BY t.campaign_id
) AS every
JOIN {campaigns} c ON c.id = every.campaign_id
LEFT JOIN (
    SELECT task.campaign_id,
        COUNT(*) FILTER (WHERE task.settled = 1 OR task.n >= tc.{overlap}) AS complete,
        SUM(CASE WHEN task.settled = 1 OR task.n >= tc.{overlap} THEN tc.{overlap} ELSE task.n END) AS covered
    FROM (
        SELECT campaign_id, task_id, SUM(label) AS n, MAX(settled) AS settled
        FROM (
            SELECT l.campaign_id, l.task_id, 1 AS label, 0 AS settled
            FROM {labels} l {labels_tasks}
            WHERE l.campaign_id IN ({ids}) AND {automatic} = 0 AND NOT EXISTS (
                SELECT 1 FROM {exclusions} e WHERE e.campaign_id = l.campaign_id
                  AND e.annotator_id = l.annotator_id AND e.reinstated_at IS NULL)
            UNION ALL
            SELECT t.campaign_id, t.id, 0, 1 FROM {adjudications} a JOIN {tasks} t ON t.id = a.{adjudicated}
            WHERE t.campaign_id IN ({ids}) AND {automatic} = 0
        ) AS stream
        GROUP BY campaign_id, task_id
    ) AS task JOIN {campaigns} tc ON tc.id = task.campaign_id
    GROUP BY task.campaign_id
) AS touched ON touched.campaign_id = every.campaign_id"""


def kinds_progress_by_campaign(*, campaigns: list[Campaign]) -> dict[int, list[KindProgress]]:
    """`kinds_progress` of each campaign by its id: one statement per kind, whatever the campaigns."""
    found: dict[int, list[KindProgress]] = {campaign.pk: [] for campaign in campaigns}
    if not campaigns:
        return found
    by_pk = {campaign.pk: campaign for campaign in campaigns}
    ids = list(by_pk)
    for kind in TASK_KINDS:
        # Identical lists answered Same: the campaign's setting, read per task (campaigns are few). Only
        # then are the labels joined to their tasks.
        automatic, labels_tasks = "0", ""
        if kind.is_side_by_side:
            labels_tasks = f"JOIN {kind.model._meta.db_table} t ON t.id = l.task_id"
            automatic = (
                f"CASE WHEN t.lists_identical AND (SELECT auto_same_identical FROM {Campaign._meta.db_table}"
                " WHERE id = t.campaign_id) THEN 1 ELSE 0 END"
            )
        sql = _KIND_PROGRESS.format(
            tasks=kind.model._meta.db_table,
            labels=kind.label_model._meta.db_table,
            campaigns=Campaign._meta.db_table,
            exclusions=AnnotatorExclusion._meta.db_table,
            adjudications=Adjudication._meta.db_table,
            adjudicated=f"{kind.assignment_field}_id",
            overlap=kind.overlap_field,
            automatic=automatic,
            labels_tasks=labels_tasks,
            ids=rows.placeholders(len(ids)),
        )
        with connections[router.db_for_read(kind.model)].cursor() as cursor:
            cursor.execute(sql, ids * 3)
            totals = {row[0]: row[1:] for row in cursor.fetchall()}
        for pk, kinds in found.items():
            tasks, complete, labels_left, automatic_same = totals.get(pk, (0, 0, 0, 0))
            kinds.append(
                KindProgress(
                    name=kind.name,
                    overlap=kind.overlap(by_pk[pk]),
                    automatic_same=automatic_same,
                    tasks=tasks,
                    complete=complete,
                    labels_left=int(labels_left or 0),  # a sum of bigints is numeric on PostgreSQL
                )
            )
    return found


def _left_out(*, campaigns: list[Campaign]) -> dict[int, set[int]]:
    """The annotators of the exclusions in force, by campaign id (only campaigns that have some)."""
    left_out: dict[int, set[int]] = {}
    exclusions = AnnotatorExclusion.objects.filter(campaign__in=campaigns, reinstated_at__isnull=True)
    for campaign_pk, annotator_pk in exclusions.values_list("campaign", "annotator"):
        left_out.setdefault(campaign_pk, set()).add(annotator_pk)
    return left_out


@dataclass(frozen=True)
class CampaignSummary:
    """What a reviewer's or manager's home shows of a campaign: progress, disputes waiting, last label."""

    kinds: list[KindProgress]
    disputes_waiting: int  # tasks in the review queue not yet adjudicated
    last_label: datetime | None

    @property
    def complete(self) -> int:
        return sum(kind.complete for kind in self.kinds)

    @property
    def tasks(self) -> int:
        return sum(kind.tasks for kind in self.kinds)

    @property
    def labels_left(self) -> int:
        return sum(kind.labels_left for kind in self.kinds)


def campaigns_summary(*, campaigns: list[Campaign]) -> dict[int, CampaignSummary]:
    """Each campaign's `CampaignSummary` by its id, in seven queries whatever the number of campaigns."""
    last: dict[int, datetime] = {}
    for label_model in (Judgment, Preference):
        rows = (
            label_model.objects.filter(campaign__in=campaigns)
            .order_by()
            .values_list("campaign")
            .annotate(last=Max("created_at"))
        )
        for campaign_pk, at in rows:
            last[campaign_pk] = max(at, last.get(campaign_pk, at))
    kinds = kinds_progress_by_campaign(campaigns=campaigns)
    disputes = open_disputes_by_campaign(campaigns=campaigns)
    return {
        campaign.pk: CampaignSummary(
            kinds=kinds[campaign.pk], disputes_waiting=disputes[campaign.pk], last_label=last.get(campaign.pk)
        )
        for campaign in campaigns
    }
