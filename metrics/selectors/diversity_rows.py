"""A campaign's diversity data, fetched in five queries for the launch report (`selectors/diversity.py`
computes from it): the queries' intents, the intents annotators ticked, the documents' attributes and
popularity, and the near-duplicates annotators marked. Only rows that carry something are read: a campaign
without diversity data costs five empty reads."""

from dataclasses import dataclass

import numpy as np

from annotation.models import Campaign, Document, Judgment, Preference, Query


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
    `documents`, only the labels (the quality page's agreement): two queries, three with intents ticked."""
    left_out = excluded.tolist()
    answers = [
        (task, list(intents), document)
        for task, intents, document in Judgment.objects.filter(task__campaign=campaign, intents__isnull=False)
        .exclude(annotator_id__in=left_out)
        .order_by()
        .values_list("task_id", "intents", "task__document__external_id")
        if intents is not None
    ]
    query_intents = (
        {
            pk: [intent["id"] for intent in intents]
            for pk, intents in Query.objects.filter(campaign=campaign)
            .exclude(intents=[])
            .order_by()
            .values_list("pk", "intents")
        }
        if documents or answers
        else {}
    )
    attributes: dict[int, dict] = {}
    popularity: dict[int, float] = {}
    if documents:
        listed = Document.objects.filter(campaign=campaign).order_by()
        attributes = dict(listed.exclude(attributes={}).values_list("pk", "attributes"))
        popularity = {
            pk: value
            for pk, value in listed.filter(popularity__isnull=False).values_list("pk", "popularity")
            if value is not None
        }
    marks = list(
        Preference.objects.filter(task__campaign=campaign)
        .exclude(duplicates=[])
        .exclude(annotator_id__in=left_out)
        .order_by()
        .values_list("task_id", "annotator_id", "experimental_on_left", "duplicates")
    )
    return DiversityRows(query_intents, answers, attributes, popularity, marks)
