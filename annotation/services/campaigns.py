"""Creating and changing campaigns: the bundle import, run uploads, settings, and the pooling of tasks."""

from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator
from itertools import islice

from django.db import transaction

from annotation.bundle import CampaignBundle
from annotation.errors import InputError
from annotation.errors import InputErrorCode as Code
from annotation.models import (
    Assignment,
    Campaign,
    Document,
    Preference,
    Query,
    Ranking,
    RankingModel,
    RelevanceTask,
    SideBySideTask,
)

BATCH_SIZE = 5000
Progress = Callable[[int], None]


def batched(rows: Iterable, size: int = BATCH_SIZE) -> Iterator[list]:
    iterator = iter(rows)
    while batch := list(islice(iterator, size)):
        yield batch


def bulk_create_batched(model, rows: Iterable, progress: Progress | None = None) -> None:
    for batch in batched(rows):
        model.objects.bulk_create(batch, batch_size=BATCH_SIZE)
        if progress:
            progress(len(batch))


@transaction.atomic
def campaign_import(
    *,
    bundle: CampaignBundle,
    runs: dict[str, dict[str, list[str]]] | None = None,
    progress: Progress | None = None,
) -> Campaign:
    """Create a campaign with its models, queries, documents and rankings, then pool its tasks.

    `runs` maps a model name to rankings read from a TREC run (query id -> document ids in rank order); they
    replace that model's rankings in the bundle. Run documents missing from the bundle are created bare
    (id only), since a run may retrieve far more than is ever shown to annotators.
    """
    if Campaign.objects.filter(name=bundle.name).exists():
        raise InputError(
            Code.ALREADY_EXISTS, f"a campaign named {bundle.name!r} already exists", field="name"
        )
    rankings = dict(bundle.rankings)
    model_names = {model.name for model in bundle.models}
    query_ids = {query.external_id for query in bundle.queries}
    for name, run in (runs or {}).items():
        if name not in model_names:
            raise InputError(
                Code.UNKNOWN_MODEL,
                f"unknown model {name!r} (models: {', '.join(sorted(model_names))})",
                field="--run",
            )
        unknown = sorted(set(run) - query_ids)
        if unknown:
            raise InputError(
                Code.UNKNOWN_QUERY, f"the run for {name!r} ranks unknown query {unknown[0]!r}", field="--run"
            )
        rankings[name] = run

    campaign = Campaign.objects.create(
        name=bundle.name,
        description=bundle.description,
        guidelines=bundle.guidelines,
        scale=bundle.scale,
        **bundle.settings,
    )
    models = RankingModel.objects.bulk_create(
        RankingModel(campaign=campaign, name=model.name, role=model.role) for model in bundle.models
    )
    model_pk = {model.name: model.pk for model in models}
    Query.objects.bulk_create(
        (Query(campaign=campaign, **vars(query)) for query in bundle.queries), batch_size=BATCH_SIZE
    )
    listed = {document.external_id for document in bundle.documents}
    bare = {doc for run in rankings.values() for docs in run.values() for doc in docs} - listed
    bulk_create_batched(
        Document, (Document(campaign=campaign, **vars(document)) for document in bundle.documents)
    )
    bulk_create_batched(Document, (Document(campaign=campaign, external_id=doc) for doc in sorted(bare)))
    query_pk = dict(Query.objects.filter(campaign=campaign).values_list("external_id", "pk"))
    document_pk = dict(Document.objects.filter(campaign=campaign).values_list("external_id", "pk"))
    bulk_create_batched(
        Ranking,
        (
            Ranking(
                model_id=model_pk[name], query_id=query_pk[query], document_id=document_pk[doc], rank=rank
            )
            for name, run in rankings.items()
            for query, docs in run.items()
            for rank, doc in enumerate(docs, start=1)
        ),
        progress,
    )
    campaign_pool_tasks(campaign=campaign)
    _gold_set(campaign, bundle)
    return campaign


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
def model_rankings_replace(
    *, model: RankingModel, run: dict[str, list[str]], progress: Progress | None = None
) -> int:
    """Replace a model's rankings with a run's, creating bare documents it names, then pool again.

    Tasks pooled before stay, with their labels: a label is never thrown away. Returns the rows written.
    """
    campaign = model.campaign
    query_pk = dict(Query.objects.filter(campaign=campaign).values_list("external_id", "pk"))
    unknown = sorted(set(run) - set(query_pk))
    if unknown:
        raise InputError(Code.UNKNOWN_QUERY, f"the run ranks unknown query {unknown[0]!r}", field="run")
    document_pk = dict(Document.objects.filter(campaign=campaign).values_list("external_id", "pk"))
    new_documents = sorted({doc for docs in run.values() for doc in docs} - set(document_pk))
    bulk_create_batched(Document, (Document(campaign=campaign, external_id=doc) for doc in new_documents))
    if new_documents:
        document_pk = dict(Document.objects.filter(campaign=campaign).values_list("external_id", "pk"))
    Ranking.objects.filter(model=model).delete()
    rows = [
        Ranking(model=model, query_id=query_pk[query], document_id=document_pk[doc], rank=rank)
        for query, docs in run.items()
        for rank, doc in enumerate(docs, start=1)
    ]
    bulk_create_batched(Ranking, rows, progress)
    campaign_pool_tasks(campaign=campaign)
    return len(rows)


SIDE_BY_SIDE_SHAPE = ("gsb_depth", "gsb_scale")  # what annotators' verdicts were given on


@transaction.atomic
def campaign_change(*, campaign: Campaign, changes: dict) -> Campaign:
    """Apply checked changes (`bundle.parse_campaign_change`) to a campaign's texts and settings.

    A deeper pool adds tasks; a shallower one keeps the tasks and labels it has. The side-by-side depth and
    scale are fixed once anyone was handed a side-by-side task: verdicts compare the lists they saw.
    """
    campaign = Campaign.objects.select_for_update().get(pk=campaign.pk)
    reshaped = [
        key for key in SIDE_BY_SIDE_SHAPE if key in changes and changes[key] != getattr(campaign, key)
    ]
    handed_out = Assignment.objects.filter(side_by_side_task__campaign=campaign).exists()
    if reshaped and (handed_out or Preference.objects.filter(task__campaign=campaign).exists()):
        raise InputError(
            Code.INVALID_VALUE,
            "cannot change once side-by-side tasks were handed out or judged: verdicts compare what was seen",
            field=f"settings.{reshaped[0]}",
        )
    for key, value in changes.items():
        setattr(campaign, key, value)
    campaign.save(update_fields=list(changes))
    if reshaped:
        SideBySideTask.objects.filter(campaign=campaign).delete()  # nobody saw them: built again below
    if reshaped or "pool_depth" in changes:
        campaign_pool_tasks(campaign=campaign)
    return campaign


@transaction.atomic
def campaign_pool_tasks(*, campaign: Campaign) -> tuple[int, int]:
    """Pool the top `pool_depth` of every model per query into relevance tasks (one per distinct pair), and
    make a side-by-side task per query and experimental model where both lists exist.

    Idempotent: existing tasks are kept. Returns how many relevance and side-by-side tasks were created.
    """
    depth = max(campaign.pool_depth, campaign.gsb_depth)
    rows = (
        Ranking.objects.filter(model__campaign=campaign, rank__lte=depth)
        .order_by("model_id", "query_id", "rank")
        .values_list("model_id", "query_id", "document_id", "rank")
    )
    pooled: set[tuple[int, int]] = set()
    top_lists: dict[tuple[int, int], list[int]] = defaultdict(list)
    for model_id, query_id, document_id, rank in rows.iterator(chunk_size=BATCH_SIZE):
        if rank <= campaign.pool_depth:
            pooled.add((query_id, document_id))
        if rank <= campaign.gsb_depth:
            top_lists[model_id, query_id].append(document_id)
    pooled -= set(RelevanceTask.objects.filter(campaign=campaign).values_list("query_id", "document_id"))
    bulk_create_batched(
        RelevanceTask,
        (RelevanceTask(campaign=campaign, query_id=q, document_id=d) for q, d in sorted(pooled)),
    )

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
    return len(pooled), len(side_by_side)
