"""The fixed vocabularies of campaigns and labels (gains, aggregations, the GSB scale, verdicts, task order,
skip reasons) and the fields' default values. `annotation.models` uses them in its fields; the rest of the
code reads them from there."""

import random

from django.db import models
from django.utils.translation import gettext_lazy as _

SHUFFLE_KEYS = 2**31


def random_shuffle_key() -> int:
    return random.randrange(SHUFFLE_KEYS)


def default_scale() -> list[dict]:
    return [
        {"value": 0, "label": "Irrelevant", "description": "Has nothing to do with what the query asks for."},
        {"value": 1, "label": "Somewhat relevant", "description": "On the topic, but answers little of it."},
        {"value": 2, "label": "Relevant", "description": "Answers the query well, with something missing."},
        {"value": 3, "label": "Perfect", "description": "Exactly what the query asks for."},
    ]


def default_cutoffs() -> list[int]:
    return [1, 3, 5, 10]


class Gain(models.TextChoices):
    EXPONENTIAL = "exponential", _("Exponential (2^rel − 1)")
    LINEAR = "linear", _("Linear (rel)")


class Aggregation(models.TextChoices):
    MEAN = "mean", _("Mean")
    MEDIAN = "median", _("Median")
    MAJORITY = "majority", _("Majority (ties to the lower grade)")
    WEIGHTED = "weighted", _("Reliability-weighted mean")
    DAWID_SKENE = "dawid_skene", _("Dawid–Skene")


class NoveltyPopularity(models.TextChoices):
    """Where novelty reads a document's popularity from."""

    BUNDLE = "bundle", _("The documents' popularity in the bundle")
    RANKINGS = "rankings", _("The share of the campaign's lists that show the document")


class GSBScale(models.IntegerChoices):
    THREE_POINT = 3, _("3-point (better / same / worse)")
    FIVE_POINT = 5, _("5-point (much / slightly better, same, slightly / much worse)")


class Verdict(models.TextChoices):
    """A side-by-side verdict, always relative to the experimental model."""

    GOOD = "good", _("Good")
    SAME = "same", _("Same")
    BAD = "bad", _("Bad")


class TaskOrder(models.TextChoices):
    """Which kind of task an annotator is handed first."""

    INTERLEAVED = "interleaved", _("Interleaved (side-by-side tasks from the start)")
    RELEVANCE_FIRST = "relevance_first", _("Relevance first")
    SIDE_BY_SIDE_FIRST = "side_by_side_first", _("Side by side first")


class SkipReason(models.TextChoices):
    CANT_LOAD = "cant_load", _("Can't load")
    FOREIGN_LANGUAGE = "foreign_language", _("Foreign language")
    DONT_UNDERSTAND = "dont_understand", _("Don't understand")
