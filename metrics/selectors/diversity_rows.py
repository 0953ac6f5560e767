"""A campaign's diversity data, fetched in four queries for the launch report (`selectors/diversity.py`
computes from it): the queries' intents, the intents annotators ticked, the documents' attributes and
popularity, and the near-duplicates annotators marked. Only rows that carry something are read: a campaign
without diversity data costs four empty reads."""

import json
from dataclasses import dataclass
from functools import cache

import numpy as np
from django.db import connections, router

from annotation.models import Campaign, Document, Judgment, Preference, Query, RelevanceTask


@dataclass(frozen=True)
class DiversityRows:
    query_intents: dict[int, list[str]]  # query pk → its intents' ids, for queries with intents
    # (relevance task pk, intents ticked, the task's document id) of each judgment asked
    intent_answers: list[tuple[int, list[str], str]]
    attributes: dict[int, dict]  # document pk → attributes, for documents with any
    popularity: dict[int, float]  # document pk → popularity, for documents with one
    # (side-by-side task pk, annotator pk, experimental list on the left, marks as shown)
    marks: list[tuple[int, int, bool, list[list]]]

    @property
    def empty(self) -> bool:
        return not (self.query_intents or self.attributes or self.popularity or self.marks)


def campaign_diversity_rows(
    *, campaign: Campaign, excluded: np.ndarray, documents: bool = True
) -> DiversityRows:
    """The campaign's diversity data; the labels of `excluded` annotators (ids) left out. Without
    `documents`, only the labels (the quality page's agreement): two queries, three with intents ticked.

    Plain statements built once per process: a report reads them on every request, and the ORM spent more
    CPU building them and converting their JSON than the database spent answering (docs/performance.md).
    JSON comes back as text on both databases; what is empty is left out by the database."""
    left_out = set(excluded.tolist())
    statements = _statements()
    connection = connections[router.db_for_read(Judgment)]
    with connection.cursor() as cursor:
        cursor.execute(statements.answers, [campaign.pk])
        answers = [
            (task, intents, document)
            for task, annotator, text, document in cursor.fetchall()
            if annotator not in left_out and (intents := json.loads(text)) is not None
        ]
        query_intents: dict[int, list[str]] = {}
        if documents or answers:
            cursor.execute(statements.query_intents, [campaign.pk])
            query_intents = {
                pk: [intent["id"] for intent in json.loads(text)] for pk, text in cursor.fetchall()
            }
        attributes: dict[int, dict] = {}
        popularity: dict[int, float] = {}
        if documents:
            cursor.execute(statements.documents, [campaign.pk])
            for pk, text, value in cursor.fetchall():
                if text != "{}":
                    attributes[pk] = json.loads(text)
                if value is not None:
                    popularity[pk] = value
        cursor.execute(statements.marks, [campaign.pk])
        marks = [
            (task, annotator, bool(on_left), json.loads(text))
            for task, annotator, on_left, text in cursor.fetchall()
            if annotator not in left_out
        ]
    return DiversityRows(query_intents, answers, attributes, popularity, marks)


@dataclass(frozen=True)
class _Statements:
    answers: str  # (task, annotator, intents, document id) of each judgment with intents asked
    query_intents: str  # (query, intents) of the queries with intents
    documents: str  # (document, attributes, popularity) of the documents with either
    marks: str  # (task, annotator, experimental on the left, duplicates) of each verdict with marks


@cache
def _statements() -> _Statements:
    judgment, relevance_task, document, preference, query = (
        model._meta.db_table for model in (Judgment, RelevanceTask, Document, Preference, Query)
    )
    return _Statements(
        answers=(
            f"SELECT l.task_id, l.annotator_id, l.intents, d.external_id FROM {judgment} l "
            f"JOIN {relevance_task} t ON t.id = l.task_id JOIN {document} d ON d.id = t.document_id "
            "WHERE l.campaign_id = %s AND l.intents IS NOT NULL"
        ),
        query_intents=f"SELECT id, intents FROM {query} WHERE campaign_id = %s AND intents <> '[]'",
        documents=(
            f"SELECT id, attributes, popularity FROM {document} "
            "WHERE campaign_id = %s AND (attributes <> '{}' OR popularity IS NOT NULL)"
        ),
        marks=(
            f"SELECT task_id, annotator_id, experimental_on_left, duplicates FROM {preference} "
            "WHERE campaign_id = %s AND duplicates <> '[]'"
        ),
    )
