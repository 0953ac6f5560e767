"""Creating and changing campaigns: the bundle import, run uploads, settings, and the pooling of tasks."""

import itertools

import numpy as np
from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.text import format_lazy
from django.utils.translation import gettext_lazy as _

from annotation.bundle import CampaignBundle
from annotation.bundle.reading import with_id
from annotation.campaign_settings import CAMPAIGN_SETTINGS, SCALE_LOCK, Lock
from annotation.errors import InputError
from annotation.errors import InputErrorCode as Code
from annotation.models import (
    DOCUMENT_PK_DTYPE,
    SHUFFLE_KEYS,
    Assignment,
    Campaign,
    Document,
    Query,
    Ranking,
    RankingModel,
    RelevanceTask,
    SideBySideTask,
    random_shuffle_key,
)
from annotation.selectors.campaigns import campaign_graded, campaign_query_pks, campaign_side_by_side_seen
from annotation.selectors.rankings import RankedEntries, ranked_entries
from annotation.services.label_pool import (
    labels_reuse,
    reused_labels_refresh,
    side_by_side_hashes_set,
    standard_for,
)
from annotation.services.leases import leases_end
from annotation.services.locks import campaign_lock
from annotation.services.read_only import campaign_writable_check, campaign_writable_lock
from plumbing.bulk import Progress, columns_insert, columns_insert_pks, rows_insert, rows_insert_pks
from trec.files import RankedRun


def campaign_import_check(*, bundle: CampaignBundle) -> None:
    """What `campaign_import` refuses in a bundle read whole (`campaign_files_read`), before it writes: the
    checks that need the database. The browser's preview runs them too, so it never says Ready for files
    that Create then refuses."""
    if Campaign.objects.filter(name=bundle.name).exists():
        raise _name_taken(bundle)


def _name_taken(bundle: CampaignBundle) -> InputError:
    message = format_lazy(_("a campaign named {name} already exists"), name=repr(bundle.name))
    return InputError(Code.ALREADY_EXISTS, message, source=bundle.source, field="name")


@transaction.atomic
def campaign_import(
    *,
    bundle: CampaignBundle,
    runs: dict[str, RankedRun] | None = None,
    progress: Progress | None = None,
) -> Campaign:
    """Create a campaign with its models, queries, documents and rankings, then pool its tasks.

    `runs` maps a model name to rankings read from a TREC run and checked against the bundle
    (`campaign_files_read`); they replace that model's rankings in the bundle. Run documents missing from
    the bundle are created bare (id only), since a run may retrieve far more than is ever shown to
    annotators. `progress` is called with ranking rows written.
    """
    campaign_import_check(bundle=bundle)
    rankings = {name: RankedRun.from_lists(lists) for name, lists in bundle.rankings.items()}
    rankings.update(runs or {})

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
        raise _name_taken(bundle) from None
    models = RankingModel.objects.bulk_create(
        RankingModel(campaign=campaign, name=model.name, role=model.role) for model in bundle.models
    )
    model_pk = {model.name: model.pk for model in models}
    query_fields = ["external_id", "text", "description", "segment", "weight", "intents"]
    rows_insert(
        Query,
        ["campaign_id", *query_fields],
        ((campaign.pk, *(getattr(query, name) for name in query_fields)) for query in bundle.queries),
    )
    document_fields = ["external_id", "title", "url", "body", "attributes", "popularity"]
    listed = [document.external_id for document in bundle.documents]
    bare = sorted(set().union(*(run.documents for run in rankings.values())) - set(listed))
    pks = rows_insert_pks(
        Document,
        ["campaign_id", *document_fields],
        ((campaign.pk, *(getattr(doc, name) for name in document_fields)) for doc in bundle.documents),
        count=len(listed),
    )
    pks += bare_documents_insert(campaign_pk=campaign.pk, external_ids=bare)
    # Keyed by the runs' own strings: no second copy of a run's ids.
    document_pk = dict(zip(itertools.chain(listed, bare), pks, strict=True))
    query_pk = campaign_query_pks(campaign=campaign)
    for name, run in rankings.items():
        _rankings_insert(model_pk[name], run, query_pk, document_pk, progress)
    del document_pk, pks, listed, bare  # pooling reads the lists back: its peak need not hold these
    campaign_pool_tasks(campaign=campaign)
    _gold_set(campaign, bundle)
    labels_reuse(campaign=campaign)
    return campaign


def bare_documents_insert(*, campaign_pk: int, external_ids: list[str]) -> list[int]:
    """Create documents known only by their ids (a run's, an interaction log's), in the given order; returns
    their keys. The rest of a document is left to the database's defaults (a JSON value wrapped, dumped and
    parsed per row was most of their COPY's time), and the rows are packed by NumPy, not one by one."""
    return columns_insert_pks(
        Document,
        {"campaign_id": np.full(len(external_ids), campaign_pk, dtype=np.int64), "external_id": external_ids},
    )


def _rankings_insert(
    model_pk: int, run: RankedRun, query_pk: dict[str, int], document_pk: dict[str, int], progress
) -> None:
    """Write a run's lists, one row per query: ids mapped to primary keys once per distinct id, then by array
    indexing. `progress` counts ranked documents, as the run's lines do."""
    queries = [query_pk[query] for query in run.queries]
    documents = np.array([document_pk[doc] for doc in run.documents], dtype=DOCUMENT_PK_DTYPE)[run.document]
    starts = np.flatnonzero(run.rank == 1)
    bounds = np.append(starts, run.rank.size).tolist()
    rows_insert(
        Ranking,
        ["model_id", "query_id", "documents"],
        (
            (model_pk, queries[run.query[start]], documents[start:end].tobytes())
            for start, end in itertools.pairwise(bounds)
        ),
        types=["int8", "int8", "bytea"],
    )
    if progress:
        progress(int(run.rank.size))


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
    campaign = campaign_writable_lock(campaign=model.campaign)
    query_pk = campaign_query_pks(campaign=campaign)
    unknown = sorted(set(run.queries) - set(query_pk))
    if unknown:
        message = with_id(_("the run ranks unknown query {id}"), unknown[0])
        raise InputError(Code.UNKNOWN_QUERY, message, field="run")
    known = set(Document.objects.filter(campaign=campaign).order_by().values_list("external_id", flat=True))
    new_documents = sorted(set(run.documents) - known)
    rows_insert(
        Document,
        ["campaign_id", "external_id", "title", "url", "body"],
        ((campaign.pk, doc, "", "", "") for doc in new_documents),
    )
    document_pk = dict(
        Document.objects.filter(campaign=campaign, external_id__in=run.documents)
        .order_by()
        .values_list("external_id", "pk")
    )
    Ranking.objects.filter(model=model).delete()
    _rankings_insert(model.pk, run, query_pk, document_pk, progress)
    campaign_pool_tasks(campaign=campaign)
    return int(run.rank.size)


# What each lock waits for, and why a change is refused after it.
LOCK_REFUSALS = {
    Lock.GRADED: (
        campaign_graded,
        _("cannot change once anything was graded: the grades would change meaning"),
    ),
    Lock.SIDE_BY_SIDE: (
        campaign_side_by_side_seen,
        _("cannot change once side-by-side tasks were handed out or judged: verdicts compare what was seen"),
    ),
}


@transaction.atomic
def campaign_change(*, campaign: Campaign, changes: dict) -> Campaign:
    """Apply checked changes (`bundle.parse_campaign_change`) to a campaign's texts and settings.

    A deeper pool adds tasks; a shallower one keeps the tasks and labels it has. The scale and the settings
    that lock (`CAMPAIGN_SETTINGS`) are fixed from then on: e.g. the side-by-side depth and scale once anyone
    was handed a side-by-side task, since verdicts compare the lists they saw.
    """
    campaign = campaign_writable_lock(campaign=campaign, exclusive=True)  # the slots may be recounted
    changed = {key for key, value in changes.items() if value != getattr(campaign, key)}
    # The scale and every setting: its name in `changes`, its field path in an error, when it locks.
    lockable = [
        ("scale", "scale", SCALE_LOCK),
        *((setting.name, f"settings.{setting.name}", setting.locks) for setting in CAMPAIGN_SETTINGS),
    ]
    for lock, (locked, refusal) in LOCK_REFUSALS.items():
        refused = [path for key, path, locks in lockable if locks is lock and key in changed]
        if refused and locked(campaign=campaign):
            raise InputError(Code.INVALID_VALUE, refusal, field=refused[0])
    # Nobody saw a side-by-side task yet (else refused above), and their shape changed: they are built again.
    reshaped = any(locks is Lock.SIDE_BY_SIDE and key in changed for key, _, locks in lockable)
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
        SideBySideTask.objects.filter(campaign=campaign).delete()
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
    """Archive a campaign (read-only, `services/read_only.py`: no task handed out, no label, final label,
    setting, member, exclusion or run taken; hidden from annotators; every report still reads) or bring it
    back. Archiving ends the leases in force, their slots given back, so nothing of the campaign moves while
    it is archived. Nothing is deleted."""
    campaign = campaign_lock(campaign=campaign, exclusive=True)  # work under way ends first, then is refused
    now = timezone.now()
    campaign.archived_at = now if archived else None
    campaign.save(update_fields=["archived_at"])
    if archived:
        leases_end(
            leases=Assignment.objects.filter(campaign=campaign, status=Assignment.Status.LEASED), now=now
        )
    return campaign


@transaction.atomic
def campaign_pool_tasks(*, campaign: Campaign) -> tuple[int, int]:
    """Pool the top `pool_depth` of every model per query into relevance tasks (one per distinct pair), and
    make a side-by-side task per query and experimental model where both lists exist.

    Idempotent: existing tasks are kept. Returns how many relevance and side-by-side tasks were created.
    """
    campaign_writable_check(campaign=campaign)
    models = list(campaign.models.all())
    entries = ranked_entries(
        model_pks=[model.pk for model in models], depth=max(campaign.pool_depth, campaign.gsb_depth)
    )
    pooled = _relevance_tasks_pool(campaign, entries)
    top = entries.rank <= campaign.gsb_depth
    top_lists = RankedEntries(
        entries.model[top], entries.query[top], entries.document[top], entries.rank[top]
    ).lists()

    online = next(model for model in models if model.role == RankingModel.Role.ONLINE)
    existing = set(
        SideBySideTask.objects.filter(campaign=campaign)
        .order_by()
        .values_list("query_id", "experimental_model_id")
    )
    side_by_side = [
        (query_id, model.pk, top_lists[model.pk, query_id] == top_lists[online.pk, query_id])
        for model in models
        if model.role == RankingModel.Role.EXPERIMENTAL
        for (model_id, query_id) in sorted(top_lists)
        if model_id == online.pk
        and (query_id, model.pk) not in existing
        and (model.pk, query_id) in top_lists
    ]
    rows_insert(
        SideBySideTask,
        [
            "campaign_id",
            "query_id",
            "experimental_model_id",
            "lists_identical",
            "gold_verdict",
            "lists_hash",
            "slots_spent",
            "shuffle_key",
        ],
        (
            (campaign.pk, query_id, model_pk, identical, "", "", 0, random_shuffle_key())
            for query_id, model_pk, identical in side_by_side
        ),
        types=["int8", "int8", "int8", "bool", "text", "text", "int4", "int4"],
    )
    if campaign.standard_id is not None:
        side_by_side_hashes_set(campaign=campaign, top_lists=top_lists)
    return pooled, len(side_by_side)


def _relevance_tasks_pool(campaign: Campaign, entries: RankedEntries) -> int:
    """A task for every distinct (query, document) in some model's top `pool_depth` that has none yet, in
    (document, query) order, the unique index's: written in that order, its entries go in at its end, as
    the key's do; only the shuffle order's go in at random places. Returns how many were created."""
    top = entries.rank <= campaign.pool_depth
    query, document = entries.query[top], entries.document[top]
    order = np.lexsort((query, document))
    query, document = query[order], document[order]
    first = np.ones(query.size, dtype=bool)  # the first of each run of equal pairs
    first[1:] = (query[1:] != query[:-1]) | (document[1:] != document[:-1])
    pairs = np.stack([query[first], document[first]], axis=1)
    existing = set(
        RelevanceTask.objects.filter(campaign=campaign).order_by().values_list("query_id", "document_id")
    )
    if existing:
        pairs = pairs[np.array([pair not in existing for pair in map(tuple, pairs.tolist())], dtype=bool)]
    size = len(pairs)
    columns_insert(
        RelevanceTask,
        {
            "campaign_id": np.full(size, campaign.pk, dtype=np.int64),
            "query_id": pairs[:, 0],
            "document_id": pairs[:, 1],
            "slots_spent": np.zeros(size, dtype=np.int64),
            "shuffle_key": np.random.default_rng().integers(0, SHUFFLE_KEYS, size),
        },
    )
    return size
