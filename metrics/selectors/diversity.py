"""The launch report's diversity measures: the campaign's diversity data (`diversity_rows`) aggregated across
annotators, laid out in each model's rank order and handed to `metrics.compute.diversity`.

- An intent is served by a document when at least half of the annotators asked about it ticked it (asked:
  their judgment carries intents). α-nDCG@k, ERR-IA@k and StRecall@k are scored on the queries with intents
  where some document was asked about; elsewhere they are NaN, left out of means and comparisons.
- Two documents are near-duplicates when at least half of the annotators shown both in one side-by-side
  list marked one the same as the other; chains of such pairs are one group. ILS counts them as similarity
  1, and redundancy-aware nDCG gives a group's later documents no gain.
- ILS@k compares the documents' attributes (`intra_list_similarity`); novelty@k reads the documents'
  popularity from the bundle, or the share of the campaign's lists (every model's top k of each query) that
  show the document (`novelty_popularity`). A query with no popularity known in its top k is NaN.
"""

import math
from collections import defaultdict
from dataclasses import dataclass

import numpy as np

from annotation.models import Campaign, NoveltyPopularity
from annotation.setting_texts import DIVERSITY_METRIC, parse_guardrails
from metrics.compute.diversity import evaluate_intents, intra_list_similarity, novelty
from metrics.compute.guardrails import Bound, Guardrail
from metrics.compute.labels import sorted_find
from metrics.compute.layout import RankedLabels
from metrics.selectors.diversity_rows import DiversityRows
from metrics.selectors.evaluation_data import (
    CampaignEvaluationData,
    RelevanceLabels,
    campaign_evaluation_data,
)
from trec.measures import INTENT_FAMILIES, Measure, parse_measure

ILS, NOVELTY = "ILS", "Novelty"
# The values each can take, for the intervals of their means.
RANGES = {ILS: (0.0, 1.0), NOVELTY: (0.0, math.inf), **dict.fromkeys(INTENT_FAMILIES, (0.0, 1.0))}


def family_of(name: str) -> str:
    return name.partition("@")[0].partition("(")[0]


def is_diversity_measure(name: str) -> bool:
    return family_of(name) in RANGES


def lower_is_better(name: str) -> bool:
    """ILS: a list of more alike documents is the less diverse."""
    return family_of(name) == ILS


def measure_range(name: str) -> tuple[float, float]:
    return RANGES[family_of(name)]


def diversity_measures(campaign: Campaign, rows: DiversityRows) -> list[str]:
    """The diversity measures the campaign's data allows, at its deepest cut-off k: ILS@c at every cut-off
    c of at least 5 (k alone when there is none) where documents have attributes or near-duplicates were
    marked, α-nDCG@k, ERR-IA@k and StRecall@k where queries have intents, novelty@k where popularity is
    known (always, when it is counted from the rankings)."""
    k = max(campaign.cutoffs)
    names = []
    if rows.attributes or rows.marks:
        names += [f"{ILS}@{c}" for c in sorted(c for c in campaign.cutoffs if c >= 5) or [k]]
    if rows.query_intents:
        alpha = None if campaign.alpha == 0.5 else campaign.alpha
        names += [str(Measure("alpha_nDCG", k, alpha)), f"ERR_IA@{k}", f"StRecall@{k}"]
    if rows.popularity or campaign.novelty_popularity == NoveltyPopularity.RANKINGS:
        names.append(f"{NOVELTY}@{k}")
    return names


def diversity_guardrails(campaign: Campaign) -> list[Guardrail]:
    """The campaign's guardrails that name a diversity measure (`ILS@10 <= 0.05`): checked against the
    report's paired differences. Those on online metrics are read with the interaction logs."""
    return [
        Guardrail(metric, Bound.LOWER if op == ">=" else Bound.UPPER, threshold)
        for metric, op, threshold in parse_guardrails(campaign.guardrails)
        if DIVERSITY_METRIC.fullmatch(metric)
    ]


@dataclass(frozen=True)
class DiversityInputs:
    """The aggregated diversity labels of a campaign, by query index and document pk."""

    query_intents: dict[int, list[str]]  # query index → intent ids
    served: dict[tuple[int, int], set[str]]  # (query index, document pk) asked about → intents served
    document_ids: dict[int, str]  # document pk → id, of the documents asked about
    groups: dict[int, dict[int, int]]  # query index → document pk → its near-duplicate group (smallest pk)
    attribute_documents: np.ndarray  # sorted document pks with attributes
    attribute_codes: np.ndarray  # [documents × fields] integer codes, -1 for no value
    popularity: dict[int, float]  # document pk → popularity (bundle's)


def diversity_inputs(*, data: CampaignEvaluationData, rows: DiversityRows) -> DiversityInputs:
    queries = data.queries
    query_index = dict(zip(queries.pk.tolist(), range(len(queries)), strict=True))
    documents, codes = _attribute_codes(rows.attributes)
    answers = answered_tasks(data.relevance, rows)
    return DiversityInputs(
        query_intents={query_index[pk]: intents for pk, intents in rows.query_intents.items()},
        served=_served(data, answers),
        document_ids={int(data.relevance.task_document[task]): document for task, _, document in answers},
        groups=_duplicate_groups(data, rows),
        attribute_documents=documents,
        attribute_codes=codes,
        popularity=rows.popularity,
    )


def answered_tasks(relevance: RelevanceLabels, rows: DiversityRows) -> list[tuple[int, list[str], str]]:
    """The intent answers with their task's index in `relevance`'s tasks; an answer whose task was not read
    (pooled since) is left out, as its judgment is (`campaign_relevance_labels_later`). Looked up by a
    search of the sorted task ids: the answers are few, the tasks may be 100,000."""
    task_pks = np.array([task for task, _, _ in rows.intent_answers], dtype=np.int64)
    task, known = sorted_find(relevance.task_pk, task_pks)
    return [
        (index, intents, document)
        for index, is_known, (_, intents, document) in zip(
            task.tolist(), known.tolist(), rows.intent_answers, strict=True
        )
        if is_known
    ]


def _served(
    data: CampaignEvaluationData, answers: list[tuple[int, list[str], str]]
) -> dict[tuple[int, int], set[str]]:
    relevance = data.relevance
    asked: dict[tuple[int, int], int] = defaultdict(int)
    ticks: dict[tuple[int, int], dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for task, intents, _ in answers:
        key = int(relevance.task_query[task]), int(relevance.task_document[task])
        asked[key] += 1
        for intent in intents:
            ticks[key][intent] += 1
    return {
        key: {intent for intent, count in ticks[key].items() if 2 * count >= n} for key, n in asked.items()
    }


def _shown_lists(data: CampaignEvaluationData) -> dict[tuple[int, int], list[int]]:
    """(model index, query index) → the document pks of its side-by-side list, in rank order."""
    rankings, depth = data.rankings, data.campaign.gsb_depth
    shown = np.flatnonzero(rankings.rank <= depth)
    shown = shown[np.lexsort((rankings.rank[shown], rankings.query[shown], rankings.model[shown]))]
    lists: dict[tuple[int, int], list[int]] = defaultdict(list)
    for model, query, document in zip(
        rankings.model[shown].tolist(),
        rankings.query[shown].tolist(),
        rankings.document[shown].tolist(),
        strict=True,
    ):
        lists[model, query].append(document)
    return lists


def _duplicate_groups(data: CampaignEvaluationData, rows: DiversityRows) -> dict[int, dict[int, int]]:
    """Pairs marked by at least half of the annotators shown both in one list, joined into groups."""
    if not rows.marks:
        return {}
    sbs, preferences = data.side_by_side, data.preferences
    online = next(index for index, model in enumerate(data.models) if model.is_online)
    lists = _shown_lists(data)
    task_of = dict(zip(preferences.task_pk.tolist(), sbs.preference_task.tolist(), strict=True))
    annotators_of: dict[int, set[int]] = defaultdict(set)
    for task, annotator in zip(sbs.preference_task.tolist(), preferences.annotator_pk.tolist(), strict=True):
        annotators_of[task].add(annotator)
    tasks_of_query: dict[int, list[int]] = defaultdict(list)
    for task, query in enumerate(sbs.task_query.tolist()):
        tasks_of_query[query].append(task)

    def task_lists(task: int) -> tuple[list[int], list[int]]:
        query = int(sbs.task_query[task])
        return lists.get((int(sbs.task_model[task]), query), []), lists.get((online, query), [])

    marked: dict[tuple[int, int, int], set[int]] = defaultdict(set)
    for task_pk, annotator, on_left, marks in rows.marks:
        task = task_of.get(task_pk)
        if task is None:  # a mark of an annotator left out
            continue
        experimental, online_list = task_lists(task)
        for side, position, same_as in marks:
            shown = experimental if (side == "left") == on_left else online_list
            if position <= len(shown):
                pair = sorted((shown[position - 1], shown[same_as - 1]))
                marked[int(sbs.task_query[task]), *pair].add(annotator)
    groups: dict[int, dict[int, int]] = defaultdict(dict)
    for (query, first, second), who in marked.items():
        seen = set().union(
            *(
                annotators_of[task]
                for task in tasks_of_query[query]
                if any(first in shown and second in shown for shown in task_lists(task))
            )
        )
        if 2 * len(who & seen) >= len(seen):
            group_join(groups[query], first, second)
    return {query: {doc: group_root(members, doc) for doc in members} for query, members in groups.items()}


def group_root(parents: dict[int, int], document: int) -> int:
    while parents[document] != document:
        document = parents[document]
    return document


def group_join(parents: dict[int, int], first: int, second: int) -> None:
    """Union of two members' groups (documents, positions); a group is known by its smallest member."""
    for document in (first, second):
        parents.setdefault(document, document)
    low, high = sorted((group_root(parents, first), group_root(parents, second)))
    parents[high] = low


def _attribute_codes(attributes: dict[int, dict]) -> tuple[np.ndarray, np.ndarray]:
    """Each attribute's values as integer codes (equal values, equal codes), one column per field."""
    fields = sorted({name for values in attributes.values() for name in values})
    column = {name: index for index, name in enumerate(fields)}
    documents = np.array(sorted(attributes), dtype=np.int64)
    codes = np.full((documents.size, len(fields)), -1, dtype=np.int64)
    value_codes: dict[tuple[str, object], int] = {}
    for row, document in enumerate(documents.tolist()):
        for name, value in attributes[document].items():
            # JSON's true and 1 are different categories; Python's hash would make them one.
            key = (name, (type(value).__name__, value))
            codes[row, column[name]] = value_codes.setdefault(key, len(value_codes))
    return documents, codes


def group_matrix(inputs: DiversityInputs, layout: RankedLabels, documents: np.ndarray) -> np.ndarray:
    """The near-duplicate group of each document of `documents` ([evaluated × any] pks), -1 for none."""
    out = np.full(documents.shape, -1, dtype=np.int64)
    for row, query in enumerate(layout.evaluated.tolist()):
        for document, group in inputs.groups.get(query, {}).items():
            out[row][documents[row] == document] = group
    return out


def diversity_per_query(
    *,
    campaign: Campaign,
    data: CampaignEvaluationData,
    inputs: DiversityInputs,
    layout: RankedLabels,
    model: int,
    measures: list[str],
) -> dict[str, np.ndarray]:
    """Each diversity measure of `measures` for one model (its index), per evaluated query."""
    documents = layout.ranked_documents[model]
    out: dict[str, np.ndarray] = {}
    intent_names = [name for name in measures if family_of(name) in INTENT_FAMILIES]
    if intent_names:
        out.update(_intent_scores(campaign, inputs, layout, documents, intent_names))
    for name in measures:
        family, k = family_of(name), int(name.rpartition("@")[2])
        top = documents[:, :k]
        if family == ILS:
            groups = group_matrix(inputs, layout, top)
            found, hit = sorted_find(inputs.attribute_documents, top)
            codes = np.full((*top.shape, inputs.attribute_codes.shape[1]), -1, dtype=np.int64)
            codes[hit] = inputs.attribute_codes[found[hit]]
            near = (groups[:, :, None] == groups[:, None, :]) & (groups[:, :, None] >= 0)
            out[name] = intra_list_similarity(codes, k, lengths=(top >= 0).sum(axis=1), near_duplicates=near)
        elif family == NOVELTY:
            out[name] = novelty(_popularity(campaign, data, inputs, top, k), k)
    return out


def _popularity(
    campaign: Campaign, data: CampaignEvaluationData, inputs: DiversityInputs, top: np.ndarray, k: int
) -> np.ndarray:
    if campaign.novelty_popularity == NoveltyPopularity.RANKINGS:
        rankings = data.rankings
        shown = rankings.rank <= k
        lists = np.unique(rankings.model[shown] * len(data.queries) + rankings.query[shown]).size
        known, counts = np.unique(rankings.document[shown], return_counts=True)
        share = counts / max(lists, 1)
    else:
        known = np.array(sorted(inputs.popularity), dtype=np.int64)
        share = np.array([inputs.popularity[pk] for pk in known.tolist()], dtype=float)
    found, hit = sorted_find(known, top)
    popularity = np.full(top.shape, np.nan)
    popularity[hit] = share[found[hit]]
    return popularity


def _intent_scores(
    campaign: Campaign, inputs: DiversityInputs, layout: RankedLabels, documents: np.ndarray, names: list[str]
) -> dict[str, np.ndarray]:
    """α-nDCG, ERR-IA and StRecall over the evaluated queries with intents some document was asked about;
    NaN for the others."""
    rows = [
        (row, query)
        for row, query in enumerate(layout.evaluated.tolist())
        if query in inputs.query_intents
        and any((query, int(doc)) in inputs.served for doc in layout.judged_documents[row] if doc >= 0)
    ]
    out = {name: np.full(layout.evaluated.size, np.nan) for name in names}
    if not rows:
        return out
    width = max(len(inputs.query_intents[query]) for _, query in rows)
    depth = max(int(name.rpartition("@")[2]) for name in names)
    judged_width = layout.judged_documents.shape[1]
    relevance = np.zeros((len(rows), depth, width), dtype=bool)
    judged = np.zeros((len(rows), judged_width, width), dtype=bool)
    for at, (row, query) in enumerate(rows):
        intents = inputs.query_intents[query]

        def served(document: int, query: int = query, intents: list[str] = intents) -> list[bool]:
            intents_served = inputs.served.get((query, document), set())
            return [intent in intents_served for intent in intents]

        for rank, document in enumerate(documents[row, :depth].tolist()):
            if document >= 0:
                relevance[at, rank, : len(intents)] = served(document)
        # Sorted by document id (the bundle's, as in the qrels): ndeval's ties in the ideal ranking. Only the
        # documents asked about can serve an intent; the others' place does not matter.
        judged_here = [d for d in layout.judged_documents[row].tolist() if d >= 0]
        by_id = sorted(judged_here, key=lambda d: inputs.document_ids.get(d, ""))
        for place, document in enumerate(by_id):
            judged[at, place, : len(intents)] = served(document)
    scores = evaluate_intents(
        relevance, judged, [parse_measure(name, intents=True) for name in names], alpha=campaign.alpha
    )
    picked = np.array([row for row, _ in rows])
    for name in names:
        out[name][picked] = scores[name]
    return out


def intent_qrels_rows(*, campaign: Campaign) -> list[tuple[str, str, str, int]]:
    """The campaign's aggregated intent judgments as ndeval's qrels rows, (query id, intent id, document id,
    1 served or 0), for every (query, document) of a query with intents some annotator was asked about;
    sorted. `evaluate --intents` on them and the models' runs gives the report's α-nDCG, ERR-IA and
    StRecall."""
    data = campaign_evaluation_data(campaign=campaign)
    inputs = diversity_inputs(data=data, rows=data.diversity)
    asked = [key for key in inputs.served if key[0] in inputs.query_intents]
    return sorted(
        (str(data.queries.external_id[query]), intent, inputs.document_ids[document], int(intent in served))
        for (query, document), served in ((key, inputs.served[key]) for key in asked)
        for intent in inputs.query_intents[query]
    )
