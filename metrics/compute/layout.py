"""A campaign's labels laid out for scoring: per model, the aggregated label of each ranked document, in rank
order, one row per evaluated query (a query with at least one aggregated label), ready for `evaluate_ranked`.

Pure NumPy over the columns the launch report's selector fetches; documents without a label are NaN.
"""

from dataclasses import dataclass

import numpy as np

from metrics.compute.evaluation import RowLayout
from metrics.compute.labels import sorted_find


@dataclass(frozen=True)
class RankedLabels:
    evaluated: np.ndarray  # indices of the evaluated queries
    judged: np.ndarray  # [evaluated × any] every aggregated label of the query, NaN padding
    ranked: list[np.ndarray]  # per model, [evaluated × depth] labels in rank order
    # The documents at those places (as `task_document` and `ranking_document` give them), -1 padding.
    judged_documents: np.ndarray
    ranked_documents: list[np.ndarray]


def pair_keys(query: np.ndarray, document: np.ndarray) -> np.ndarray:
    """One int64 per (query, document) index pair, ordered as the pairs are."""
    return (query.astype(np.int64) << 32) | document.astype(np.int64)


def ranked_labels(
    *,
    n_queries: int,
    n_models: int,
    task_query: np.ndarray,
    task_document: np.ndarray,
    grades: np.ndarray,
    ranking_model: np.ndarray,
    ranking_query: np.ndarray,
    ranking_document: np.ndarray,
    ranking_rank: np.ndarray,
) -> RankedLabels:
    """`task_*` and `grades`: one entry per relevance task (its query and document index, its aggregated
    grade or NaN); `ranking_*`: one entry per ranked document (model, query and document index, 1-based rank).
    """
    labelled = ~np.isnan(grades)
    has_label = np.zeros(n_queries, dtype=bool)
    has_label[task_query[labelled]] = True
    evaluated = np.flatnonzero(has_label)
    row_of_query = np.full(n_queries, -1)
    row_of_query[evaluated] = np.arange(evaluated.size)

    label_row = row_of_query[task_query[labelled]]
    rows = RowLayout.of(label_row, evaluated.size)
    judged = np.full((evaluated.size, rows.width), np.nan)
    judged[label_row, rows.positions] = grades[labelled]
    judged_documents = np.full(judged.shape, -1, dtype=np.int64)
    judged_documents[label_row, rows.positions] = task_document[labelled]

    task_keys = pair_keys(task_query, task_document)
    order = np.argsort(task_keys)
    sorted_keys = task_keys[order]
    found, hit = sorted_find(sorted_keys, pair_keys(ranking_query, ranking_document))
    ranked_label = np.where(hit, grades[order[found]] if sorted_keys.size else np.nan, np.nan)
    ranked_row = row_of_query[ranking_query]
    depth = int(ranking_rank.max(initial=0))
    ranked, ranked_documents = [], []
    for model in range(n_models):
        of_model = (ranking_model == model) & (ranked_row >= 0)
        place = ranked_row[of_model], ranking_rank[of_model] - 1
        matrix = np.full((evaluated.size, depth), np.nan)
        matrix[place] = ranked_label[of_model]
        ranked.append(matrix)
        documents = np.full((evaluated.size, depth), -1, dtype=np.int64)
        documents[place] = ranking_document[of_model]
        ranked_documents.append(documents)
    return RankedLabels(evaluated, judged, ranked, judged_documents, ranked_documents)
