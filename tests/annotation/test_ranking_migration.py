"""Migration 0014 turns ranking rows (one per ranked document) into one list per model and query."""

import numpy as np
import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

BEFORE = [("annotation", "0013_repeats")]
AFTER = [("annotation", "0014_ranking_lists")]


@pytest.mark.django_db(transaction=True)
def test_rows_become_lists_in_rank_order():
    executor = MigrationExecutor(connection)
    executor.migrate(BEFORE)
    apps = executor.loader.project_state(BEFORE).apps
    Campaign, Query, Document = (
        apps.get_model("annotation", name) for name in ("Campaign", "Query", "Document")
    )
    RankingModel, Ranking = (
        apps.get_model("annotation", "RankingModel"),
        apps.get_model("annotation", "Ranking"),
    )
    campaign = Campaign.objects.create(name="old", scale=[{"value": 0, "name": "bad"}])
    online = RankingModel.objects.create(campaign=campaign, name="online", role="online")
    exp = RankingModel.objects.create(campaign=campaign, name="exp", role="experimental")
    q1, q2 = (Query.objects.create(campaign=campaign, external_id=q, text=q) for q in ("q1", "q2"))
    d = [Document.objects.create(campaign=campaign, external_id=f"d{i}") for i in range(4)]
    # Written out of rank order, as nothing promised an order of rows.
    for model, query, ranked in [
        (online, q1, [d[2], d[0], d[3]]),
        (exp, q1, [d[1]]),
        (exp, q2, [d[3], d[2]]),
    ]:
        for rank, document in reversed(list(enumerate(ranked, start=1))):
            Ranking.objects.create(model=model, query=query, document=document, rank=rank)

    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(AFTER)
    Ranking = executor.loader.project_state(AFTER).apps.get_model("annotation", "Ranking")
    lists = {
        (ranking.model_id, ranking.query_id): np.frombuffer(ranking.documents, dtype="<i8").tolist()
        for ranking in Ranking.objects.all()
    }
    assert lists == {
        (online.pk, q1.pk): [d[2].pk, d[0].pk, d[3].pk],
        (exp.pk, q1.pk): [d[1].pk],
        (exp.pk, q2.pk): [d[3].pk, d[2].pk],
    }

    # And back: a row per ranked document again, then forward to the latest for the rest of the suite.
    executor = MigrationExecutor(connection)
    executor.migrate(BEFORE)
    Ranking = executor.loader.project_state(BEFORE).apps.get_model("annotation", "Ranking")
    rows = set(Ranking.objects.values_list("model_id", "query_id", "rank", "document_id"))
    assert rows == {
        (online.pk, q1.pk, 1, d[2].pk),
        (online.pk, q1.pk, 2, d[0].pk),
        (online.pk, q1.pk, 3, d[3].pk),
        (exp.pk, q1.pk, 1, d[1].pk),
        (exp.pk, q2.pk, 1, d[3].pk),
        (exp.pk, q2.pk, 2, d[2].pk),
    }
    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())  # every app's latest, not just 0014
