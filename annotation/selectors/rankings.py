"""Ranked lists read back from `Ranking` (one row per model and query): as NumPy columns, one entry per ranked
document, or as the documents of one list."""

import json
from dataclasses import dataclass

import numpy as np
from django.db import connection
from django.db.models import BinaryField
from django.db.models.functions import Substr

from annotation.models import (
    DOCUMENT_PK_DTYPE,
    Document,
    Ranking,
    SideBySideTask,
    document_pks_unpack,
)
from plumbing import rows
from plumbing.columns import fetch_columns_and_bytes


@dataclass(frozen=True)
class RankedEntries:
    """One entry per ranked document, lists in the order read, each in rank order: the model's, query's and
    document's primary keys and the rank (from 1)."""

    model: np.ndarray  # int64
    query: np.ndarray  # int64
    document: np.ndarray  # int64
    rank: np.ndarray  # int32

    @classmethod
    def from_lists(
        cls, model: np.ndarray, query: np.ndarray, size: np.ndarray, packed: bytes
    ) -> "RankedEntries":
        """Entries of lists given by their model and query pks, their sizes in bytes and their packed
        documents end to end."""
        lengths = size // DOCUMENT_PK_DTYPE.itemsize
        document = np.frombuffer(packed, dtype=DOCUMENT_PK_DTYPE).astype(np.int64)
        starts = np.cumsum(lengths) - lengths
        rank = (np.arange(document.size) - np.repeat(starts, lengths) + 1).astype(np.int32)
        return cls(np.repeat(model, lengths), np.repeat(query, lengths), document, rank)

    def lists(self) -> dict[tuple[int, int], list[int]]:
        """(model pk, query pk) → document pks in rank order."""
        starts = np.flatnonzero(self.rank == 1)
        if not starts.size:
            return {}
        lists = np.split(self.document, starts[1:])
        return {
            (model, query): documents.tolist()
            for model, query, documents in zip(
                self.model[starts].tolist(), self.query[starts].tolist(), lists, strict=True
            )
        }


def ranked_entries(
    *, model_pks: list[int], query_pk: int | None = None, depth: int | None = None
) -> RankedEntries:
    """The lists of these models (for one query, when given), each cut to its top `depth`: one query, whose
    rows come back as columns and their lists' bytes end to end (`fetch_columns_and_bytes`)."""
    rankings = Ranking.objects.filter(model_id__in=model_pks).order_by("model_id", "query_id")
    if query_pk is not None:
        rankings = rankings.filter(query_id=query_pk)
    column = "documents"
    if depth is not None:  # cut by the database: only the top of each list crosses the wire
        top = Substr("documents", 1, depth * DOCUMENT_PK_DTYPE.itemsize, output_field=BinaryField())
        rankings, column = rankings.annotate(top=top), "top"
    (model, query, size), packed = fetch_columns_and_bytes(
        rankings.values_list("model_id", "query_id", column), "ii"
    )
    return RankedEntries.from_lists(model, query, size, packed)


# A side-by-side task's experimental and online model's packed lists, as two columns of a statement over the
# task (aliased `t`): the workbench reads the lists with the task.
SIDE_BY_SIDE_LISTS = """(SELECT documents FROM annotation_ranking
        WHERE query_id = t.query_id AND model_id = t.experimental_model_id),
    (SELECT r.documents FROM annotation_ranking r JOIN annotation_rankingmodel m ON m.id = r.model_id
        WHERE r.query_id = t.query_id AND m.campaign_id = t.campaign_id AND m.role = 'online')"""


def side_by_side_lists(*, task: SideBySideTask, depth: int) -> tuple[list[Document], list[Document]]:
    """The experimental and the online model's top `depth` documents for a side-by-side task."""
    with connection.cursor() as cursor:
        sql = f"SELECT {SIDE_BY_SIDE_LISTS} FROM annotation_sidebysidetask t WHERE t.id = %s"
        cursor.execute(sql, [task.pk])
        experimental, online = cursor.fetchone()
    experimental_list, online_list = listed_documents(experimental, online, depth=depth)
    return experimental_list, online_list


# PostgreSQL: the documents of both lists' top `depth` (a named parameter) as one JSON array of [id, title,
# url, body], read in the statement that reads the lists (aliased `lists(experimental, online)`); a pk is 8
# little-endian bytes. Looked up by primary key: the ids are `bit_or`ed, as `sum` would make them numeric
# (and the read a scan of every document), and compared `= ANY(ARRAY(…))`, which PostgreSQL plans for a few
# ids, where `IN (…)` plans for `generate_series`'s thousand rows a hash of every document.
LISTED_DOCUMENTS = """(SELECT json_agg(json_build_array(d.id, d.title, d.url, d.body))
    FROM annotation_document d WHERE d.id = ANY(ARRAY(
        SELECT (SELECT bit_or(get_byte(l.packed, 8 * i + k)::bigint << (8 * k)) FROM generate_series(0, 7) k)
        FROM (VALUES (lists.experimental), (lists.online)) AS l(packed),
             generate_series(0, LEAST(length(l.packed) / 8, %(depth)s) - 1) AS i
        WHERE l.packed IS NOT NULL)))"""


_LISTED_FIELDS = ("id", "title", "url", "body")


def listed_documents_of(
    found: str | list | None, *packed: bytes | memoryview | None, depth: int
) -> tuple[list[Document], ...]:
    """`listed_documents` from the documents `LISTED_DOCUMENTS` read (title, url and body only, the rest
    deferred as a queryset's `only()` leaves them)."""
    width = DOCUMENT_PK_DTYPE.itemsize
    found = json.loads(found) if isinstance(found, str) else found or []
    by_pk = {entry[0]: rows.instance_of(Document, _LISTED_FIELDS, entry) for entry in found}
    lists = [document_pks_unpack(bytes(documents or b"")[: depth * width]).tolist() for documents in packed]
    return tuple([by_pk[pk] for pk in pks] for pks in lists)


def listed_documents(*packed: bytes | memoryview | None, depth: int) -> tuple[list[Document], ...]:
    """The top `depth` documents of each packed list (None for a missing list: no documents), in one
    statement."""
    width = DOCUMENT_PK_DTYPE.itemsize
    lists = [document_pks_unpack(bytes(documents or b"")[: depth * width]).tolist() for documents in packed]
    wanted = sorted({pk for pks in lists for pk in pks})
    if not wanted:
        return tuple([] for _ in lists)
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT {rows.select_list(Document, 'd')} FROM annotation_document d "
            f"WHERE d.id IN ({rows.placeholders(len(wanted))})",
            wanted,
        )
        found = (rows.instance_at(Document, row)[0] for row in cursor)
        documents = {document.pk: document for document in found}
    return tuple([documents[pk] for pk in pks] for pks in lists)
