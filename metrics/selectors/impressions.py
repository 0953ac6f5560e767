"""A campaign's impressions as NumPy columns (one statement), the behaviour qrels by external ids, and the
simulated logs of `simulate_interactions`."""

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
from django.db.models import IntegerField, Value
from django.db.models.functions import Cast, Coalesce

from annotation.models import Campaign, Document, Impression
from annotation.selectors.rankings import ranked_entries
from annotation.setting_texts import parse_action_grades
from metrics.compute.interactions.behaviour import ActionGrades, behaviour_qrels
from metrics.compute.interactions.impressions import Impressions, compact
from metrics.compute.interactions.simulation import default_click_model, simulate_log
from metrics.selectors.aggregation import campaign_aggregated_labels
from metrics.selectors.evaluation_data import (
    CampaignModel,
    CampaignQueries,
    campaign_models,
    campaign_queries,
)
from plumbing.columns import fetch_columns

NO_SESSION = np.iinfo(np.int64).min  # a null session, as read; no session key is this value in practice


@dataclass(frozen=True)
class ImpressionData:
    """A campaign's impressions (`impressions`: queries and models indexed as in `CampaignEvaluationData`,
    documents 0.. indexing `document_pk`), from `n_logs` logs."""

    impressions: Impressions
    document_pk: np.ndarray
    n_logs: int


def campaign_impressions(
    *, campaign: Campaign, queries: CampaignQueries, models: list[CampaignModel]
) -> ImpressionData | None:
    """Every impression of the campaign's logs, or None when it has none: one statement."""
    flag = {name: Cast(name, IntegerField()) for name in ("clicked", "cart", "purchase")}
    rows = (
        Impression.objects.filter(campaign=campaign)
        .annotate(
            clicked_flag=flag["clicked"],
            cart_flag=flag["cart"],
            purchase_flag=flag["purchase"],
            session_key=Coalesce("session", Value(int(NO_SESSION))),
        )
        .values_list(
            "log_id",
            "request",
            "query_id",
            "model_id",
            "document_id",
            "session_key",
            "position",
            "clicked_flag",
            "cart_flag",
            "purchase_flag",
            "dwell",
            "rating",
        )
    )
    (
        log,
        request,
        query_pk,
        model_pk,
        document_pk,
        session,
        position,
        clicked,
        cart,
        purchase,
        dwell,
        rating,
    ) = fetch_columns(rows, "iiiiiiiiiiff")
    if log.size == 0:
        return None
    # Requests are numbered per log: a (log, request) pair is one list.
    lists, _ = compact(log * (int(request.max()) + 1) + request)
    model_order = np.array([model.pk for model in models], dtype=np.int64)
    sorter = np.argsort(model_order)
    documents, document = np.unique(document_pk, return_inverse=True)
    impressions = Impressions.of(
        query=queries.index_of(query_pk),
        model=sorter[np.searchsorted(model_order, model_pk, sorter=sorter)],
        request=lists,
        position=position,
        document=document.ravel(),
        clicked=clicked.astype(bool),
        dwell=dwell,
        cart=cart.astype(bool),
        purchase=purchase.astype(bool),
        rating=rating,
        session=None if (session == NO_SESSION).any() else compact(session)[0],
        n_queries=len(queries),
        n_models=len(models),
    )
    return ImpressionData(impressions, documents, int(np.unique(log).size))


def behaviour_qrels_rows(*, campaign: Campaign) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The campaign's behaviour qrels by external ids (query ids, document ids, grades; what a TREC qrels
    file holds), by query then document id; empty without logs."""
    queries = campaign_queries(campaign=campaign)
    impressions = campaign_impressions(
        campaign=campaign, queries=queries, models=campaign_models(campaign=campaign)
    )
    if impressions is None:
        return np.zeros(0, dtype=object), np.zeros(0, dtype=object), np.zeros(0)
    mapping = ActionGrades(**parse_action_grades(campaign.behaviour_grades))
    qrels = behaviour_qrels(impressions.impressions, mapping=mapping)
    pks = impressions.document_pk[qrels.document]
    names = _document_names(campaign)
    query_ids = queries.external_id[qrels.query]
    document_ids = np.array([names[pk] for pk in pks.tolist()], dtype=object)
    order = np.lexsort((document_ids, query_ids))
    return query_ids[order], document_ids[order], qrels.grade[order]


SIMULATED_DEPTH = 10


def simulated_interactions(*, campaign: Campaign, n_lists: int, seed: int = 0) -> Iterator[dict]:
    """A log of `n_lists` result lists as users under the position-based model would have made it
    (`compute.interactions.simulation`, θ_k = 1/k^0.8), one impression a dict in the log format
    (docs/interactions.md): each model's top 10 of each query as its runs rank them, shown to sessions of
    about three lists, each session one model; a document's relevance is its aggregated human grade, taken
    to four levels (unlabelled: the lowest). For the demo and for trying the pages, never for decisions."""
    queries = campaign_queries(campaign=campaign)
    models = campaign_models(campaign=campaign)
    entries = ranked_entries(model_pks=[model.pk for model in models], depth=SIMULATED_DEPTH)
    labels = campaign_aggregated_labels(campaign=campaign)
    scale = sorted(campaign.grade_values)
    level = {
        (str(q), str(d)): round(3 * (np.searchsorted(scale, grade) / max(len(scale) - 1, 1)))
        for q, d, grade in zip(labels.query_ids, labels.document_ids, labels.grades, strict=True)
    }
    names = _document_names(campaign)
    model_index = {model.pk: i for i, model in enumerate(models)}
    rankings = np.full((len(models), len(queries), SIMULATED_DEPTH), -1, dtype=np.int64)
    grade = np.full(rankings.shape, -1, dtype=np.int64)
    query = queries.index_of(entries.query)
    rankings[[model_index[m] for m in entries.model.tolist()], query, entries.rank - 1] = entries.document
    documents = np.unique(entries.document)
    document_index = np.searchsorted(documents, rankings.clip(min=documents[0] if documents.size else 0))
    listed = rankings >= 0
    for m, q, r in zip(*np.nonzero(listed), strict=True):
        key = (str(queries.external_id[q]), names[int(rankings[m, q, r])])
        grade[m, q, r] = level.get(key, 0)
    log = simulate_log(
        rankings=np.where(listed, document_index, -1),
        ranked_grade=grade,
        click_model=default_click_model(SIMULATED_DEPTH, eagerness=0.3),
        n_lists=n_lists,
        seed=seed,
    ).impressions
    for i in range(log.query.size):
        row = {
            "query": str(queries.external_id[log.query[i]]),
            "model": models[log.model[i]].name,
            "request": f"r{log.request[i]}",
            "session": f"s{log.session[i]}" if log.session is not None else None,
            "position": int(log.position[i]),
            "document": names[int(documents[log.document[i]])],
            "clicked": bool(log.clicked[i]),
        }
        if log.clicked[i]:
            row["dwell"] = round(float(log.dwell[i]), 1)
        if log.cart[i]:
            row["cart"] = True
        if log.purchase[i]:
            row["purchase"] = True
            if not np.isnan(log.rating[i]):
                row["rating"] = int(log.rating[i])
        yield row


def _document_names(campaign: Campaign) -> dict[int, str]:
    """Document pk → its id; read unordered (the default order joins the campaign only to sort)."""
    return dict(Document.objects.filter(campaign=campaign).order_by().values_list("pk", "external_id"))
