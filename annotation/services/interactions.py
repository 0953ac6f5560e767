"""Importing interaction logs into a campaign: streamed, checked line by line, all or nothing."""

from collections.abc import Iterable

from django.db import connection, transaction
from django.utils.translation import gettext_lazy as _

from annotation.bundle.interactions import ImpressionRow, InteractionLogReader
from annotation.errors import InputError
from annotation.errors import InputErrorCode as Code
from annotation.models import Campaign, Impression, InteractionLog, RankingModel
from annotation.selectors.campaigns import campaign_document_pks, campaign_query_pks
from annotation.services.campaigns import bare_documents_insert
from annotation.services.read_only import campaign_writable_lock
from plumbing.bulk import Progress, batched, rows_insert

# Rows checked and held before they are written: the memory an import needs, whatever the log's length.
CHUNK_ROWS = 50_000
IMPRESSION_FIELDS = [
    "campaign_id",
    "log_id",
    "query_id",
    "model_id",
    "document_id",
    "request",
    "session",
    "position",
    "clicked",
    "dwell",
    "cart",
    "purchase",
    "rating",
]
# Their PostgreSQL types: seven keys and numbers, then position, clicked, dwell, cart, purchase, rating.
COPY_TYPES = ["int8"] * 7 + ["int4", "bool", "float8", "bool", "bool", "float8"]


@transaction.atomic
def interaction_log_import(
    *,
    campaign: Campaign,
    lines: Iterable[tuple[int, str]],
    source: str,
    created_by=None,
    progress: Progress | None = None,
) -> InteractionLog:
    """Write a log's impressions (`lines`: (number, text), e.g. `bundle.reading.text_lines`) as one more log
    of the campaign. Queries and models must be the campaign's; a document it does not have yet is added (a
    live list shows documents no run listed). Any bad line fails the whole import with its file, line and
    field, and nothing is written. On PostgreSQL the rows go in by binary COPY, a chunk at a time."""
    campaign_writable_lock(campaign=campaign)
    reader = InteractionLogReader(
        source,
        queries=campaign_query_pks(campaign=campaign),
        models=dict(RankingModel.objects.filter(campaign=campaign).order_by().values_list("name", "pk")),
    )
    documents = campaign_document_pks(campaign=campaign)
    log = InteractionLog.objects.create(campaign=campaign, source=source[-255:], created_by=created_by)
    types = _copy_types()
    impressions = clicks = added = 0
    for chunk in batched(reader.rows(lines), CHUNK_ROWS):
        added += _documents_add(campaign, chunk, documents)
        rows_insert(Impression, IMPRESSION_FIELDS, _values(campaign.pk, log.pk, chunk, documents), types)
        impressions += len(chunk)
        clicks += sum(row.clicked for row in chunk)
        if progress:
            progress(len(chunk))
    if impressions == 0:
        raise InputError(Code.MISSING_FIELD, _("the log has no impressions"), source=source)
    log.impressions, log.requests, log.clicks = impressions, reader.requests, clicks
    log.sessions, log.documents_added = bool(reader.sessions), added
    log.save(update_fields=["impressions", "requests", "clicks", "sessions", "documents_added"])
    return log


@transaction.atomic
def interaction_log_delete(*, campaign: Campaign, log_id: int) -> InteractionLog:
    """Remove one of the campaign's logs and its impressions (a wrong upload); the documents it added stay,
    as a run's do. An unknown log is an InputError."""
    campaign_writable_lock(campaign=campaign)
    log = InteractionLog.objects.filter(campaign=campaign, pk=log_id).first()
    if log is None:
        raise InputError(Code.INVALID_VALUE, _("no such interaction log in this campaign"), field="log")
    # One DELETE by the (campaign, log) index: impressions have no dependents to collect.
    Impression.objects.filter(campaign=campaign, log=log).delete()
    log.delete()
    return log


def _documents_add(campaign: Campaign, chunk: list[ImpressionRow], documents: dict[str, int]) -> int:
    """Create the chunk's documents the campaign does not have (bare, as a run's), in the order they first
    appear; `documents` learns their keys."""
    new = list(dict.fromkeys(row.document for row in chunk if row.document not in documents))
    if new:
        pks = bare_documents_insert(campaign_pk=campaign.pk, external_ids=new)
        documents.update(zip(new, pks, strict=True))
    return len(new)


def _values(campaign: int, log: int, chunk: list[ImpressionRow], documents: dict[str, int]):
    for row in chunk:
        yield (
            campaign,
            log,
            row.query,
            row.model,
            documents[row.document],
            row.request,
            row.session,
            row.position,
            row.clicked,
            row.dwell,
            row.cart,
            row.purchase,
            row.rating,
        )


def _copy_types() -> list[str] | None:
    """The columns' PostgreSQL types, for a binary COPY (None elsewhere)."""
    return COPY_TYPES if connection.vendor == "postgresql" else None
