"""`fetch_columns`: the same columns from PostgreSQL's aggregated rows as from plain rows (SQLite), a last
column of bytes included (`fetch_columns_and_bytes`, the ranked lists); reads on a second connection; a
campaign's judgments by the campaign they keep, and its tasks in id order."""

import math
import threading

import numpy as np
import pytest
from django.db import connection, transaction
from django.db.models import F
from django.test.utils import CaptureQueriesContext

from annotation.bundle import parse_bundle
from annotation.models import Judgment, Query, Ranking, RankingModel, RelevanceTask, document_pks_unpack
from annotation.selectors.rankings import ranked_entries
from annotation.services.campaigns import campaign_import
from metrics.selectors import evaluation_data as selectors
from metrics.selectors.evaluation_data import by_first_column, campaign_queries, campaign_relevance_labels
from plumbing.columns import fetch_columns, fetch_columns_and_bytes, read_beside


@pytest.fixture
def judged(campaign, make_user):
    tasks = list(RelevanceTask.objects.filter(campaign=campaign).order_by("pk")[:3])
    alice, bob = make_user("alice"), make_user("bob")
    Judgment.objects.create(
        campaign_id=tasks[0].campaign_id, task=tasks[0], annotator=alice, grade=3, seconds_spent=12.5
    )
    Judgment.objects.create(campaign_id=tasks[0].campaign_id, task=tasks[0], annotator=bob, grade=0)
    Judgment.objects.create(
        campaign_id=tasks[2].campaign_id, task=tasks[2], annotator=alice, grade=2, seconds_spent=0.0
    )
    return tasks, alice, bob


def test_integer_and_float_columns_in_row_order(judged):
    tasks, alice, bob = judged
    queryset = Judgment.objects.order_by("task_id", "annotator__username").values_list(
        "task_id", "annotator_id", "grade", "seconds_spent"
    )
    task, annotator, grade, seconds = fetch_columns(queryset, "iiif")
    assert task.dtype == annotator.dtype == grade.dtype == np.int64
    assert seconds.dtype == np.float64
    rows = sorted(zip(task.tolist(), annotator.tolist(), grade.tolist(), seconds.tolist(), strict=True))
    assert rows[:2] == [(tasks[0].pk, alice.pk, 3, 12.5), (tasks[0].pk, bob.pk, 0, rows[1][3])]
    assert math.isnan(rows[1][3])  # NULL seconds
    assert rows[2] == (tasks[2].pk, alice.pk, 2, 0.0)


@pytest.mark.skipif(connection.vendor != "postgresql", reason="SQLite reads rows as they are")
def test_null_in_an_integer_column_is_an_error_not_a_lost_row(judged):
    # seconds_spent of bob's judgment is NULL: as an "i" column its record would vanish from the aggregate.
    with pytest.raises(ValueError, match="NULL in an integer column"):
        fetch_columns(Judgment.objects.values_list("task_id", "seconds_spent"), "ii")


def test_no_rows_give_empty_columns(campaign):
    columns = fetch_columns(Query.objects.filter(pk=-1).values_list("pk", "weight"), "if")
    assert [column.size for column in columns] == [0, 0]
    assert [column.dtype for column in columns] == [np.int64, np.float64]


def test_filters_and_parameters_are_kept(campaign):
    pks = list(Query.objects.filter(campaign=campaign).order_by("pk").values_list("pk", flat=True))
    (selected,) = fetch_columns(Query.objects.filter(pk__in=pks[1:], external_id="q2").values_list("pk"), "i")
    assert selected.tolist() == pks[1:2]


def test_reads_the_backend_it_runs_on(campaign):
    # The suite runs on SQLite and, with DATABASE_URL, on PostgreSQL: both paths are exercised.
    (weights,) = fetch_columns(Query.objects.filter(campaign=campaign).values_list("weight"), "f")
    assert weights.tolist() == [1.0, 1.0], connection.vendor


def test_a_bytes_column_comes_back_end_to_end_with_each_rows_length(campaign):
    rankings = Ranking.objects.filter(model__campaign=campaign).order_by("model_id", "query_id")
    # An empty list among them: its row has no bytes but still its place and its length.
    empty = rankings.first()
    Ranking.objects.filter(pk=empty.pk).update(documents=b"")
    rows = [(m, q, bytes(d)) for m, q, d in rankings.values_list("model_id", "query_id", "documents")]
    (model, query, size), packed = fetch_columns_and_bytes(
        rankings.values_list("model_id", "query_id", "documents"), "ii"
    )
    assert [model.dtype, query.dtype, size.dtype] == [np.int64] * 3
    assert list(zip(model.tolist(), query.tolist(), strict=True)) == [row[:2] for row in rows]
    assert size.tolist() == [len(row[2]) for row in rows]
    assert 0 in size.tolist()
    assert packed == b"".join(row[2] for row in rows)
    (none, size), packed = fetch_columns_and_bytes(rankings.filter(pk=-1).values_list("pk", "documents"), "i")
    assert (none.size, size.size, packed) == (0, 0, b"")


@pytest.mark.parametrize("depth", [None, 1, 3])
def test_ranked_entries_are_every_list_in_rank_order_cut_to_its_depth(campaign, depth):
    models = list(RankingModel.objects.filter(campaign=campaign).order_by("pk").values_list("pk", flat=True))
    expected = [
        (model, query, document, rank)
        for model, query, documents in Ranking.objects.filter(model_id__in=models)
        .order_by("model_id", "query_id")
        .values_list("model_id", "query_id", "documents")
        for rank, document in enumerate(document_pks_unpack(bytes(documents)).tolist()[:depth], start=1)
    ]
    entries = ranked_entries(model_pks=models, depth=depth)
    assert entries.document.dtype == np.int64 and entries.rank.dtype == np.int32
    columns = (entries.model, entries.query, entries.document, entries.rank)
    assert list(zip(*(column.tolist() for column in columns), strict=True)) == expected
    assert len({rank for *_, rank in expected}) == (depth or max(rank for *_, rank in expected))


@pytest.fixture
def judgments_sql(monkeypatch):
    """The SQL of the judgments read by `campaign_relevance_labels`."""
    sql = []

    def recording(queryset, kinds):
        if queryset.model is Judgment:
            sql.append(str(queryset.query))
        return fetch_columns(queryset, kinds)

    monkeypatch.setattr(selectors, "fetch_columns", recording)
    return sql


def judged_tasks(campaign) -> list[int]:
    relevance = campaign_relevance_labels(campaign=campaign, queries=campaign_queries(campaign=campaign))
    return sorted(relevance.task_pk[relevance.judgment_task].tolist())


def test_judgments_of_scattered_task_ids_are_read_without_joining_the_tasks(
    campaign, bundle_data, make_user, judgments_sql
):
    other = campaign_import(bundle=parse_bundle({**bundle_data, "name": "Other"}, "other.json"))
    # A task pooled after another campaign's: the campaign's ids are no longer one range.
    late = RelevanceTask.objects.create(
        campaign=campaign,
        query=campaign.queries.get(external_id="q2"),
        document=campaign.documents.get(external_id="d2"),
    )
    alice = make_user("alice")
    for task in RelevanceTask.objects.filter(campaign__in=[campaign, other]):
        Judgment.objects.create(campaign_id=task.campaign_id, task=task, annotator=alice, grade=1)
    judged = judged_tasks(campaign)
    assert "JOIN" not in judgments_sql[0]
    assert late.pk in judged
    assert judged == sorted(RelevanceTask.objects.filter(campaign=campaign).values_list("pk", flat=True))


@pytest.mark.django_db(transaction=True)
def test_reads_beside_on_a_second_connection_only_outside_a_transaction(campaign):
    main = threading.get_ident()
    on_postgresql = connection.vendor == "postgresql"
    assert (read_beside(threading.get_ident).result() != main) == on_postgresql
    with transaction.atomic():
        # Inside a transaction another connection would not see its writes: read here.
        assert read_beside(threading.get_ident).result() == main
    # The second connection sees the committed campaign.
    pks_of_campaign = Query.objects.filter(campaign=campaign).values_list("pk")
    (pks,) = read_beside(fetch_columns, pks_of_campaign, "i").result()
    assert len(pks) == 2


def test_query_counts_see_the_columnar_read(campaign):
    with CaptureQueriesContext(connection) as captured:
        (pks,) = fetch_columns(Query.objects.filter(campaign=campaign).values_list("pk"), "i")
    assert len(pks) == 2
    assert len(captured) == 1
    assert ("string_agg" in captured[0]["sql"]) == (connection.vendor == "postgresql")


def test_the_report_reads_the_tasks_in_the_tables_order_and_sorts_them_by_id(campaign, make_user):
    tasks = list(RelevanceTask.objects.filter(campaign=campaign).order_by("pk"))
    # A row whose indexed column changes moves within the table (PostgreSQL writes its new version after the
    # others): read in the table's order, the tasks would no longer be in id order.
    RelevanceTask.objects.filter(pk=tasks[0].pk).update(gold_grade=2, shuffle_key=F("shuffle_key") + 1)
    RelevanceTask.objects.filter(pk=tasks[-1].pk).update(gold_grade=0)
    alice = make_user("alice")
    Judgment.objects.create(campaign_id=campaign.pk, task=tasks[1], annotator=alice, grade=3)
    relevance = campaign_relevance_labels(campaign=campaign, queries=campaign_queries(campaign=campaign))
    assert relevance.task_pk.tolist() == [task.pk for task in tasks]
    assert relevance.task_document.tolist() == [task.document_id for task in tasks]
    assert relevance.gold.task.tolist() == [0, len(tasks) - 1]  # the gold tasks, read apart, matched by id
    assert relevance.gold.label.tolist() == [2.0, 0.0]
    assert relevance.task_pk[relevance.judgment_task].tolist() == [tasks[1].pk]


def test_columns_are_sorted_by_the_first_only_when_they_are_not():
    ids, values = np.array([3, 1, 2, 2]), np.array([30.0, 10.0, 20.0, 21.0])
    assert [column.tolist() for column in by_first_column([ids, values])] == [[1, 2, 2, 3], [10, 20, 21, 30]]
    ordered = [np.array([1, 2]), np.array([5, 6])]
    assert all(a is b for a, b in zip(by_first_column(ordered), ordered, strict=True))
