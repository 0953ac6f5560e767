"""How well annotators agree on the diversity labels, for the quality page: Krippendorff's α (nominal) of
the intents a document serves and of near-duplicates, each over items that at least two annotators
answered (a bootstrap over items gives the interval).

- Intents: an item is a (relevance task, intent of its query); each annotator asked about the task answers
  it ticked (1) or not (0).
- Near-duplicates: an item is a (side-by-side task, list, pair of positions in it); each annotator who
  judged the task answers 1 when their marks put the two results in one group (chains join: #3 same as #2
  and #2 same as #1 make #3 and #1 alike), else 0. Lists are the models' (the sides as shown are mapped
  back), so annotators shown the lists on swapped sides answer the same items.
"""

from collections import defaultdict
from dataclasses import dataclass

import numpy as np

from annotation.models import Campaign, SideBySideTask
from annotation.selectors.rankings import ranked_entries
from metrics.compute.agreement import Agreement, MeasurementLevel, krippendorff_alpha
from metrics.selectors.diversity import answered_tasks, group_join, group_root
from metrics.selectors.diversity_rows import DiversityRows
from metrics.selectors.evaluation_data import PreferenceRows, RelevanceLabels

BINARY = (0, 1)


@dataclass(frozen=True)
class MarkedLists:
    """What near-duplicate marks are counted against: each side-by-side task's (query pk, experimental
    model pk), the online model's pk, and each (model pk, query pk) list's length as shown."""

    tasks: dict[int, tuple[int, int]]
    online: int
    length: dict[tuple[int, int], int]


def marked_lists(*, campaign: Campaign, rows: DiversityRows) -> MarkedLists | None:
    """The lists of the campaign's side-by-side tasks, when any near-duplicates were marked (three
    queries), else None."""
    if not rows.marks:
        return None
    tasks = {
        pk: (query, model)
        for pk, query, model in SideBySideTask.objects.filter(campaign=campaign)
        .order_by()
        .values_list("pk", "query_id", "experimental_model_id")
    }
    online = campaign.models.get(role="online").pk
    entries = ranked_entries(
        model_pks=[online, *{model for _, model in tasks.values()}], depth=campaign.gsb_depth
    )
    length: dict[tuple[int, int], int] = defaultdict(int)
    for model, query in zip(entries.model.tolist(), entries.query.tolist(), strict=True):
        length[model, query] += 1
    return MarkedLists(tasks, online, dict(length))


def diversity_agreement(
    *,
    rows: DiversityRows,
    lists: MarkedLists | None,
    relevance: RelevanceLabels,
    task_query_pk: np.ndarray,
    preferences: PreferenceRows,
    n_resamples: int,
) -> list[tuple[str, Agreement]]:
    """(what, agreement) for intents when any were asked, and for near-duplicates when any were marked
    (`lists`: `marked_lists`). `task_query_pk`: each relevance task's query pk. No query."""
    figures = []
    if rows.intent_answers:
        item, value = _intent_ratings(rows, relevance, task_query_pk)
        figures.append(("Intents served", _alpha(item, value, n_resamples)))
    if rows.marks and lists is not None:
        item, value = _duplicate_ratings(lists, rows, preferences)
        figures.append(("Near-duplicates", _alpha(item, value, n_resamples)))
    return figures


def _alpha(item: list[int], value: list[int], n_resamples: int) -> Agreement:
    return krippendorff_alpha(
        np.array(item, dtype=np.int64),
        np.array(value, dtype=float),
        n_tasks=max(item, default=-1) + 1,
        scale=BINARY,
        level=MeasurementLevel.NOMINAL,
        n_resamples=n_resamples,
    )


def _intent_ratings(
    rows: DiversityRows, relevance: RelevanceLabels, task_query_pk: np.ndarray
) -> tuple[list[int], list[int]]:
    items: dict[tuple[int, str], int] = {}
    item, value = [], []
    for task, ticked, _ in answered_tasks(relevance, rows):
        query = int(task_query_pk[task])
        for intent in rows.query_intents.get(query, []):
            item.append(items.setdefault((task, intent), len(items)))
            value.append(int(intent in ticked))
    return item, value


def _duplicate_ratings(
    lists: MarkedLists, rows: DiversityRows, preferences: PreferenceRows
) -> tuple[list[int], list[int]]:
    tasks, online, length = lists.tasks, lists.online, lists.length
    marks = {(task, annotator): (on_left, shown) for task, annotator, on_left, shown in rows.marks}
    items: dict[tuple, int] = {}
    item, value = [], []
    for task, annotator in zip(preferences.task_pk.tolist(), preferences.annotator_pk.tolist(), strict=True):
        query, model = tasks[task]
        on_left, shown = marks.get((task, annotator), (True, []))
        for role, list_model in (("experimental", model), ("online", online)):
            side = "left" if (role == "experimental") == on_left else "right"
            group = _groups(
                [(position, same_as) for mark_side, position, same_as in shown if mark_side == side]
            )
            n = length.get((list_model, query), 0)
            for first in range(1, n + 1):
                for second in range(first + 1, n + 1):
                    item.append(items.setdefault((task, role, first, second), len(items)))
                    alike = first in group and group.get(first) == group.get(second)
                    value.append(int(alike))
    return item, value


def _groups(pairs: list[tuple[int, int]]) -> dict[int, int]:
    """Position → the smallest position of its chain of marks, for the positions marked or marked to."""
    parents: dict[int, int] = {}
    for position, same_as in pairs:
        group_join(parents, position, same_as)
    return {position: group_root(parents, position) for position in parents}
