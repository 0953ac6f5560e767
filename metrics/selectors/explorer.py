"""The query explorer's read: every query of a campaign with its measure per model, the experimental model's
delta and side-by-side verdicts, how disputed its labels are and whether a reviewer settled them, and, with
interaction logs, the users' delta and whether judges and users disagree on it."""

from dataclasses import dataclass
from enum import StrEnum

import numpy as np

from annotation.models import Campaign
from annotation.selectors.interactions import interaction_log_ids
from metrics.compute.labels import disputed_tasks
from metrics.selectors.behaviour import disagreement_side, users_per_query
from metrics.selectors.evaluation_data import CampaignEvaluationData, campaign_evaluation_data
from metrics.selectors.kept import kept_or_computed, kept_slot
from metrics.selectors.launch import verdicts_of_model
from metrics.selectors.scores import campaign_measures, scores_of_models
from plumbing.digests import inputs_digest

WON_LOST = 5


class Lists(StrEnum):
    CHANGED = "changed"
    IDENTICAL = "identical"


@dataclass(frozen=True)
class ExplorerRow:
    pk: int
    external_id: str
    text: str
    segment: str
    online: float | None  # the measure; None when the query has no label yet
    experimental: float | None
    delta: float | None
    good: int
    same: int
    bad: int
    identical: bool  # both top lists are the same
    disagreement: float  # share of the query's labelled tasks whose labels differ
    open_disputes: int  # disputed tasks no reviewer settled
    settled: int  # tasks with a reviewer's final label
    users: float | None = None  # the users' Δ (the explorer's `users_metric`); None without logs of both
    alone: str = ""  # "judges" or "users": that side alone prefers the experiment (`disagreement_side`)

    @property
    def verdict(self) -> str:
        """The most common verdict ("" without any; ties read as Same)."""
        counts = {"good": self.good, "same": self.same, "bad": self.bad}
        top = max(counts.values())
        if not top:
            return ""
        winners = [name for name, n in counts.items() if n == top]
        return winners[0] if len(winners) == 1 else "same"


@dataclass(frozen=True)
class QueryExplorer:
    campaign: Campaign
    model: str | None  # the experimental model compared
    models: list[str]  # every experimental model
    measure: str
    measures: list[str]
    segments: list[str]
    rows: list[ExplorerRow]  # the queries the filter keeps, in its order
    total: int  # queries in the campaign
    won: list[ExplorerRow]  # largest positive deltas
    lost: list[ExplorerRow]  # largest negative deltas
    users_metric: str | None = None  # the online metric of the users' Δ; None without interaction logs


def _number(value: float) -> float | None:
    return None if np.isnan(value) else float(value)


SORT_KEYS = (
    "query",
    "segment",
    "online",
    "experimental",
    "delta",
    "good",
    "same",
    "bad",
    "disagreement",
    "open_disputes",
    "users",
)


@dataclass(frozen=True)
class ExplorerFilter:
    search: str = ""  # part of the query's text or id
    segment: str = ""
    verdict: str = ""  # the most common verdict: good, same, bad, or "none" for no verdict yet
    lists: Lists | None = None
    disputed: bool | None = None  # some of its labels differ
    alone: str = ""  # "judges", "users", or "either": only queries where judges and users disagree so
    sort: str = "query"
    descending: bool = False

    def keeps(self, row: ExplorerRow) -> bool:
        search = self.search.casefold()
        return (
            (not search or search in row.text.casefold() or search in row.external_id.casefold())
            and (not self.segment or row.segment == self.segment)
            and (not self.verdict or row.verdict == ("" if self.verdict == "none" else self.verdict))
            and (self.lists is None or row.identical == (self.lists == Lists.IDENTICAL))
            and (self.disputed is None or (row.disagreement > 0) == self.disputed)
            and (not self.alone or (row.alone != "" and self.alone in ("either", row.alone)))
        )

    def order(self, rows: list[ExplorerRow]) -> list[ExplorerRow]:
        """Sorted by `sort`, queries without a value last either way."""
        attribute = "external_id" if self.sort == "query" else self.sort
        present = [row for row in rows if getattr(row, attribute) is not None]
        missing = [row for row in rows if getattr(row, attribute) is None]
        present.sort(key=lambda row: getattr(row, attribute), reverse=self.descending)
        return present + missing


NO_FILTER = ExplorerFilter()


def query_explorer(
    *,
    campaign: Campaign,
    model: str | None = None,
    measure: str | None = None,
    filters: ExplorerFilter = NO_FILTER,
) -> QueryExplorer:
    """Every query's row for `model` (default: the first experimental one) and `measure` (default: the
    primary), those `filters` keep in their order; the largest wins and losses of all queries. Unknown names
    fall back to the defaults. Labels of excluded annotators are left out, as in the launch report. The rows
    are kept in the shared cache under the digest of what they are computed from (`metrics.selectors.kept`;
    the logs by their ids, as the launch report's)."""
    data = campaign_evaluation_data(campaign=campaign)
    measures, primary = campaign_measures(campaign, data)
    measure = measure if measure in measures else primary
    experimental = [(i, m.name) for i, m in enumerate(data.models) if m.role != "online"]
    index, model = next(((i, name) for i, name in experimental if name == model), (None, None))
    if index is None and experimental:
        index, model = experimental[0]
    slot = kept_slot("explorer", campaign, model, measure)
    log_ids = interaction_log_ids(campaign=campaign)
    inputs = inputs_digest(data, log_ids)
    rows, users_metric = kept_or_computed(slot, inputs, lambda: _explorer_rows(data, measure, index, log_ids))
    deltas = [(row.delta, row) for row in rows if row.delta is not None]
    kept_rows = filters.order([row for row in rows if filters.keeps(row)])
    ranked = [(delta, row) for delta, row in sorted(deltas, key=lambda pair: pair[0])]
    return QueryExplorer(
        campaign=campaign,
        model=model,
        models=[name for _, name in experimental],
        measure=measure,
        measures=measures,
        segments=sorted({row.segment for row in rows if row.segment}),
        rows=kept_rows,
        total=len(rows),
        won=[row for delta, row in reversed(ranked) if delta > 0][:WON_LOST],
        lost=[row for delta, row in ranked if delta < 0][:WON_LOST],
        users_metric=users_metric,
    )


def _explorer_rows(
    data: CampaignEvaluationData, measure: str, index: int | None, log_ids: list[int]
) -> tuple[list[ExplorerRow], str | None]:
    """Every query's row by external id, against the experimental model `index`, and the users' metric."""
    scored = scores_of_models(campaign=data.campaign, data=data, measures=[measure])
    online = next((i for i, m in enumerate(data.models) if m.role == "online"), None)
    n_queries = len(data.queries)
    per_query = np.full((len(data.models), n_queries), np.nan)
    for position, scores in enumerate(scored.models):
        per_query[position, scored.layout.evaluated] = scores.per_query[measure]
    counts = np.zeros((3, n_queries), dtype=np.int64)
    identical = np.zeros(n_queries, dtype=bool)
    if index is not None:
        query, verdict, _, changed = verdicts_of_model(data=data, model=index)
        for row, value in enumerate((1, 0, -1)):
            counts[row] = np.bincount(query[verdict == value], minlength=n_queries)
        identical = ~changed

    relevance, sbs = data.relevance, data.side_by_side
    labelled, disputed = disputed_tasks(
        relevance.judgment_task, relevance.judgment_grade, n_tasks=relevance.n_tasks
    )
    sbs_labelled, sbs_disputed = disputed_tasks(
        sbs.preference_task, sbs.preference_verdict, n_tasks=sbs.task_query.size
    )
    settled = np.zeros(relevance.n_tasks, dtype=bool)
    settled[np.asarray(relevance.adjudication.task, dtype=np.int64)] = True
    sbs_settled = np.zeros(sbs.task_query.size, dtype=bool)
    sbs_settled[np.asarray(sbs.adjudication.task, dtype=np.int64)] = True

    def per(task_query, mask_a, mask_b):
        return np.bincount(task_query[mask_a], minlength=n_queries) + np.bincount(
            sbs.task_query[mask_b], minlength=n_queries
        )

    n_labelled = per(relevance.task_query, labelled, sbs_labelled)
    n_disputed = per(relevance.task_query, disputed, sbs_disputed)
    n_open = per(relevance.task_query, disputed & ~settled, sbs_disputed & ~sbs_settled)
    n_settled = per(relevance.task_query, settled, sbs_settled)
    disagreement = np.divide(n_disputed, n_labelled, out=np.zeros(n_queries), where=n_labelled > 0)

    users = None if index is None else users_per_query(data=data, model=index, log_ids=log_ids)
    users_delta = np.full(n_queries, np.nan) if users is None else users.delta
    rows = []
    for q in range(n_queries):
        base = per_query[online, q] if online is not None else np.nan
        other = per_query[index, q] if index is not None else np.nan
        rows.append(
            ExplorerRow(
                pk=int(data.queries.pk[q]),
                external_id=str(data.queries.external_id[q]),
                text=str(data.queries.text[q]),
                segment=str(data.queries.segment[q]),
                online=_number(base),
                experimental=_number(other),
                delta=_number(other - base),
                good=int(counts[0, q]),
                same=int(counts[1, q]),
                bad=int(counts[2, q]),
                identical=bool(identical[q]),
                disagreement=float(disagreement[q]),
                open_disputes=int(n_open[q]),
                settled=int(n_settled[q]),
                users=_number(users_delta[q]),
                alone=disagreement_side(other - base, users_delta[q]),
            )
        )
    rows.sort(key=lambda row: row.external_id)
    return rows, users.metric if users else None
