"""Creating and changing campaigns: the bundle import, run uploads, settings, and the pooling of tasks."""

from collections import defaultdict

import numpy as np
from django.db import IntegrityError, connection, transaction
from django.utils import timezone

from annotation.bundle import CampaignBundle
from annotation.errors import InputError
from annotation.errors import InputErrorCode as Code
from annotation.models import (
    SHUFFLE_KEYS,
    Campaign,
    Document,
    Query,
    Ranking,
    RankingModel,
    RelevanceTask,
    SideBySideTask,
)
from annotation.selectors.campaigns import campaign_graded, campaign_side_by_side_seen
from annotation.services.bulk import (
    BATCH_SIZE,
    Progress,
    bulk_create_batched,
    integer_rows_insert,
    rows_insert,
)
from annotation.services.label_pool import (
    labels_reuse,
    reused_labels_refresh,
    side_by_side_hashes_set,
    standard_for,
)
from trec.files import RankedRun


@transaction.atomic
def campaign_import(
    *,
    bundle: CampaignBundle,
    runs: dict[str, RankedRun] | None = None,
    progress: Progress | None = None,
) -> Campaign:
    """Create a campaign with its models, queries, documents and rankings, then pool its tasks.

    `runs` maps a model name to rankings read from a TREC run (`bundle.load_run`); they replace that model's
    rankings in the bundle. Run documents missing from the bundle are created bare (id only), since a run
    may retrieve far more than is ever shown to annotators. `progress` is called with ranking rows written.
    """
    if Campaign.objects.filter(name=bundle.name).exists():
        raise InputError(
            Code.ALREADY_EXISTS, f"a campaign named {bundle.name!r} already exists", field="name"
        )
    rankings = {name: RankedRun.from_lists(lists) for name, lists in bundle.rankings.items()}
    model_names = {model.name for model in bundle.models}
    query_ids = {query.external_id for query in bundle.queries}
    for name, run in (runs or {}).items():
        if name not in model_names:
            raise InputError(
                Code.UNKNOWN_MODEL,
                f"unknown model {name!r} (models: {', '.join(sorted(model_names))})",
                field="--run",
            )
        unknown = sorted(set(run.queries) - query_ids)
        if unknown:
            raise InputError(
                Code.UNKNOWN_QUERY, f"the run for {name!r} ranks unknown query {unknown[0]!r}", field="--run"
            )
        rankings[name] = run

    standard = (
        standard_for(name=bundle.standard, scale=bundle.scale, guidelines=bundle.guidelines)
        if bundle.standard
        else None
    )
    try:
        with transaction.atomic():  # a savepoint: another import of the same name may commit first
            campaign = Campaign.objects.create(
                name=bundle.name,
                description=bundle.description,
                guidelines=bundle.guidelines,
                scale=bundle.scale,
                standard=standard,
                **bundle.settings,
            )
    except IntegrityError:
        raise InputError(
            Code.ALREADY_EXISTS, f"a campaign named {bundle.name!r} already exists", field="name"
        ) from None
    models = RankingModel.objects.bulk_create(
        RankingModel(campaign=campaign, name=model.name, role=model.role) for model in bundle.models
    )
    model_pk = {model.name: model.pk for model in models}
    query_fields = ["external_id", "text", "description", "segment", "weight"]
    rows_insert(
        Query,
        ["campaign_id", *query_fields],
        ((campaign.pk, *(getattr(query, name) for name in query_fields)) for query in bundle.queries),
    )
    document_fields = ["external_id", "title", "url", "body"]
    rows_insert(
        Document,
        ["campaign_id", *document_fields],
        ((campaign.pk, *(getattr(doc, name) for name in document_fields)) for doc in bundle.documents),
    )
    listed = {document.external_id for document in bundle.documents}
    bare = set().union(*(run.documents for run in rankings.values())) - listed
    rows_insert(
        Document, ["campaign_id", *document_fields], ((campaign.pk, doc, "", "", "") for doc in sorted(bare))
    )
    query_pk = dict(Query.objects.filter(campaign=campaign).values_list("external_id", "pk"))
    document_pk = dict(Document.objects.filter(campaign=campaign).values_list("external_id", "pk"))
    for name, run in rankings.items():
        _rankings_insert(model_pk[name], run, query_pk, document_pk, progress)
    campaign_pool_tasks(campaign=campaign)
    _gold_set(campaign, bundle)
    labels_reuse(campaign=campaign)
    return campaign


def _rankings_insert(
    model_pk: int, run: RankedRun, query_pk: dict[str, int], document_pk: dict[str, int], progress
) -> None:
    """Write a run's rows, its ids mapped to primary keys once per distinct id, then by array indexing."""
    queries = np.array([query_pk[query] for query in run.queries], dtype=np.int64)
    documents = np.array([document_pk[doc] for doc in run.documents], dtype=np.int64)
    integer_rows_insert(
        Ranking,
        {
            "model_id": np.full(run.rank.size, model_pk, dtype=np.int64),
            "query_id": queries[run.query],
            "document_id": documents[run.document],
            "rank": run.rank,
        },
        progress,
    )


def _gold_set(campaign: Campaign, bundle: CampaignBundle) -> None:
    """Mark gold tasks; a gold pair no model pooled becomes a task of its own, served like any other."""
    for (query, document), grade in bundle.gold_grades.items():
        RelevanceTask.objects.update_or_create(
            campaign=campaign,
            query=campaign.queries.get(external_id=query),
            document=campaign.documents.get(external_id=document),
            defaults={"gold_grade": grade},
        )
    for (query, model), verdict in bundle.gold_verdicts.items():
        SideBySideTask.objects.filter(
            campaign=campaign, query__external_id=query, experimental_model__name=model
        ).update(gold_verdict=verdict)


@transaction.atomic
def model_rankings_replace(*, model: RankingModel, run: RankedRun, progress: Progress | None = None) -> int:
    """Replace a model's rankings with a run's, creating bare documents it names, then pool again.

    Tasks pooled before stay, with their labels: a label is never thrown away. Returns the rows written.
    """
    campaign = model.campaign
    query_pk = dict(Query.objects.filter(campaign=campaign).values_list("external_id", "pk"))
    unknown = sorted(set(run.queries) - set(query_pk))
    if unknown:
        raise InputError(Code.UNKNOWN_QUERY, f"the run ranks unknown query {unknown[0]!r}", field="run")
    known = set(Document.objects.filter(campaign=campaign).values_list("external_id", flat=True))
    new_documents = sorted(set(run.documents) - known)
    rows_insert(
        Document,
        ["campaign_id", "external_id", "title", "url", "body"],
        ((campaign.pk, doc, "", "", "") for doc in new_documents),
    )
    document_pk = dict(
        Document.objects.filter(campaign=campaign, external_id__in=run.documents).values_list(
            "external_id", "pk"
        )
    )
    Ranking.objects.filter(model=model).delete()
    _rankings_insert(model.pk, run, query_pk, document_pk, progress)
    campaign_pool_tasks(campaign=campaign)
    return int(run.rank.size)


SIDE_BY_SIDE_SHAPE = ("gsb_depth", "gsb_scale")


@transaction.atomic
def campaign_change(*, campaign: Campaign, changes: dict) -> Campaign:
    """Apply checked changes (`bundle.parse_campaign_change`) to a campaign's texts and settings.

    A deeper pool adds tasks; a shallower one keeps the tasks and labels it has. The side-by-side depth and
    scale are fixed once anyone was handed a side-by-side task: verdicts compare the lists they saw.
    """
    campaign = Campaign.objects.select_for_update().get(pk=campaign.pk)
    if campaign.archived_at is not None:
        raise InputError(Code.INVALID_VALUE, "the campaign is archived: restore it to change it")
    if "scale" in changes and changes["scale"] != campaign.scale and campaign_graded(campaign=campaign):
        raise InputError(
            Code.INVALID_VALUE,
            "cannot change once anything was graded: the grades would change meaning",
            field="scale",
        )
    reshaped = [
        key for key in SIDE_BY_SIDE_SHAPE if key in changes and changes[key] != getattr(campaign, key)
    ]
    if reshaped and campaign_side_by_side_seen(campaign=campaign):
        raise InputError(
            Code.INVALID_VALUE,
            "cannot change once side-by-side tasks were handed out or judged: verdicts compare what was seen",
            field=f"settings.{reshaped[0]}",
        )
    for key, value in changes.items():
        setattr(campaign, key, value)
    fields = list(changes)
    if campaign.standard is not None and {"scale", "guidelines"} & set(changes):
        # Other guidelines or another scale is another standard: a new version, a pool of its own.
        campaign.standard = standard_for(
            name=campaign.standard.name, scale=campaign.scale, guidelines=campaign.guidelines
        )
        fields.append("standard")
    campaign.save(update_fields=fields)
    if reshaped:
        SideBySideTask.objects.filter(campaign=campaign).delete()  # nobody saw them: built again below
    if reshaped or "pool_depth" in changes:
        campaign_pool_tasks(campaign=campaign)
    if (
        {"reuse_labels", "reuse_max_age_days", "standard"} & set(fields)
        or reshaped
        or "pool_depth" in changes
    ):
        reused_labels_refresh(campaign=campaign)
    return campaign


@transaction.atomic
def campaign_archive(*, campaign: Campaign, archived: bool) -> Campaign:
    """Archive a campaign (read-only: no task handed out, no label or final label taken; hidden from
    annotators; every report still reads) or bring it back. Nothing is deleted."""
    campaign.archived_at = timezone.now() if archived else None
    campaign.save(update_fields=["archived_at"])
    return campaign


@transaction.atomic
def campaign_pool_tasks(*, campaign: Campaign) -> tuple[int, int]:
    """Pool the top `pool_depth` of every model per query into relevance tasks (one per distinct pair), and
    make a side-by-side task per query and experimental model where both lists exist.

    Idempotent: existing tasks are kept. Returns how many relevance and side-by-side tasks were created.
    """
    pooled = _relevance_tasks_pool(campaign)
    rows = (
        Ranking.objects.filter(model__campaign=campaign, rank__lte=campaign.gsb_depth)
        .order_by("model_id", "query_id", "rank")
        .values_list("model_id", "query_id", "document_id")
    )
    top_lists: dict[tuple[int, int], list[int]] = defaultdict(list)
    for model_id, query_id, document_id in rows.iterator(chunk_size=BATCH_SIZE):
        top_lists[model_id, query_id].append(document_id)

    models = list(campaign.models.all())
    online = next(model for model in models if model.role == RankingModel.Role.ONLINE)
    existing = set(
        SideBySideTask.objects.filter(campaign=campaign).values_list("query_id", "experimental_model_id")
    )
    side_by_side = [
        SideBySideTask(
            campaign=campaign,
            query_id=query_id,
            experimental_model=model,
            lists_identical=top_lists[model.pk, query_id] == top_lists[online.pk, query_id],
        )
        for model in models
        if model.role == RankingModel.Role.EXPERIMENTAL
        for (model_id, query_id) in sorted(top_lists)
        if model_id == online.pk
        and (query_id, model.pk) not in existing
        and (model.pk, query_id) in top_lists
    ]
    bulk_create_batched(SideBySideTask, side_by_side)
    if campaign.standard_id is not None:
        side_by_side_hashes_set(campaign=campaign, top_lists=top_lists)
    return pooled, len(side_by_side)


def _relevance_tasks_pool(campaign: Campaign) -> int:
    """One statement: a task for every distinct (query, document) in some model's top `pool_depth` that has
    none yet, in (query, document) order; returns how many were created."""
    random_key = {
        "postgresql": f"floor(random() * {SHUFFLE_KEYS})::integer",
        "sqlite": f"abs(random() %% {SHUFFLE_KEYS})",  # %% : a literal % in a query with parameters
    }[connection.vendor]
    task, ranking, model = (m._meta.db_table for m in (RelevanceTask, Ranking, RankingModel))
    with connection.cursor() as cursor:
        cursor.execute(
            f"""
            INSERT INTO {task} (campaign_id, query_id, document_id, slots_spent, shuffle_key)
            SELECT %s, query_id, document_id, 0, {random_key}
            FROM (
                SELECT DISTINCT r.query_id, r.document_id FROM {ranking} r
                JOIN {model} m ON m.id = r.model_id
                WHERE m.campaign_id = %s AND r.rank <= %s
            ) AS top
            WHERE NOT EXISTS (
                SELECT 1 FROM {task} t WHERE t.query_id = top.query_id AND t.document_id = top.document_id
            )
            ORDER BY query_id, document_id
            """,
            [campaign.pk, campaign.pk, campaign.pool_depth],
        )
        return cursor.rowcount
