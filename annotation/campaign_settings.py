"""Every campaign setting, declared once: its type, default, allowed values, label, meaning, when it locks and
whether the launch report shows it.

The bundle parser (`bundle/campaign.py`), the settings page's form, the API's serializers (and so the OpenAPI
schema), the launch report's settings, the locks `campaign_change` keeps and the README's table are read from
`CAMPAIGN_SETTINGS`; the `Campaign` model's fields are checked against it by
`tests/annotation/test_settings_table.py`. A new setting is an entry here, a field on `Campaign` (and its
migration), and the code that uses it.
"""

import enum
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.db.models import Choices
from django.utils.translation import gettext_lazy as _
from django_stubs_ext import StrOrPromise

from annotation.choices import Aggregation, Gain, GSBScale, NoveltyPopularity, TaskOrder, default_cutoffs
from annotation.setting_texts import (
    ACTION_GRADE_DEFAULTS,
    action_grades_text,
    guardrails_text,
    parse_action_grades,
    parse_guardrails,
)
from trec.measures import parse_measure


class Kind(enum.Enum):
    """What a setting's value is; the value is the README's name of the type."""

    INTEGER = "integer"
    NUMBER = "number"  # an integer or a float
    BOOLEAN = "boolean"
    CHOICE = "choice"  # one of `Setting.choices`' values
    CUTOFFS = "list of integers"  # non-empty, each at least 1; kept sorted, without repeats
    MEASURE = "measure name"  # read by `trec.measures.parse_measure`, kept in its canonical spelling
    WEIGHTS = "list of numbers"  # or null; each finite and at least 0
    GUARDRAILS = "guardrails"  # text: `METRIC >= NUMBER` or `METRIC <= NUMBER`, separated by `;`
    ACTION_GRADES = "action grades"  # text: `action=NUMBER`, separated by `,` (the others keep defaults)


class Lock(enum.Enum):
    """When a setting stops changing; the value says it in a sentence (the API schema's and the README's)."""

    NEVER = "Changes at any time."
    GRADED = "Fixed once anything is graded."
    SIDE_BY_SIDE = "Fixed once a side-by-side task was handed out or judged."


# The scale is not a setting (it is a campaign's own field), but it locks as one would.
SCALE_LOCK = Lock.GRADED


@dataclass(frozen=True)
class Setting:
    name: str
    kind: Kind
    default: Any  # a value, or (as Django's `default=`) a function returning a fresh one
    label: StrOrPromise  # the settings page's label
    help: StrOrPromise  # what it means: the API schema's and the README's description
    low: float | None = None  # the allowed range, both ends included unless `open`
    high: float | None = None
    open: bool = False
    low_meaning: StrOrPromise = ""  # what the low end means, said in the range's error: "0 (any age)"
    range_note: StrOrPromise = ""  # said after the range in its error: "(GSB's range)"
    choices: type[Choices] | None = None
    max_length: int | None = None
    locks: Lock = Lock.NEVER
    report: bool = False  # the launch report's settings show it

    @property
    def description(self) -> str:
        """What it means and, if it locks, when: the API schema's and the README's text."""
        return str(self.help) if self.locks is Lock.NEVER else f"{self.help} {self.locks.value}"

    @property
    def default_value(self) -> Any:
        return self.default() if callable(self.default) else self.default

    @property
    def type_name(self) -> str:
        """The JSON type a bundle gives it in: a choice is an integer or a string, as its values are."""
        if self.choices is not None:
            return "integer" if isinstance(self.choices.values[0], int) else "string"
        return self.kind.value

    @property
    def low_text(self) -> str:
        return f"{self.low} ({self.low_meaning})" if self.low_meaning else f"{self.low}"

    @property
    def range_text(self) -> str:
        """The range as its error says it: `1 and 1000`, `0 (any age) and 36500`,
        `0 and 1 (a launch needs GSB above 0)`."""
        return f"{self.low_text} and {self.high}" + (f" ({self.range_note})" if self.range_note else "")

    def in_range(self, value: float) -> bool:
        if self.low is None or self.high is None:
            return True
        return self.low < value < self.high if self.open else self.low <= value <= self.high

    def normal(self, value: Any) -> Any:
        """A valid value in the one spelling it is stored and reported in."""
        return _NORMAL.get(self.kind, _same)(value)


def _same(value: Any) -> Any:
    return value


_NORMAL: dict[Kind, Callable[[Any], Any]] = {
    Kind.CUTOFFS: lambda cutoffs: sorted(set(cutoffs)),
    Kind.MEASURE: lambda name: str(parse_measure(name)),
    Kind.GUARDRAILS: lambda text: guardrails_text(parse_guardrails(text)),
    Kind.ACTION_GRADES: lambda text: action_grades_text(parse_action_grades(text)),
}
# Kinds given as text that `Setting.normal` reads (a ValueError says what is wrong).
TEXT_KINDS = (Kind.MEASURE, Kind.GUARDRAILS, Kind.ACTION_GRADES)

CAMPAIGN_SETTINGS: tuple[Setting, ...] = (
    Setting(
        "overlap",
        Kind.INTEGER,
        3,
        _("Annotators per relevance task"),
        _("Annotators per relevance task."),
        low=1,
        high=1000,
        report=True,
    ),
    Setting(
        "gsb_overlap",
        Kind.INTEGER,
        3,
        _("Annotators per side-by-side task"),
        _("Annotators per side-by-side task."),
        low=1,
        high=1000,
        report=True,
    ),
    Setting(
        "pool_depth",
        Kind.INTEGER,
        10,
        _("Pool depth (top-k of every model graded)"),
        _("Top-k of every model pooled for grading."),
        low=1,
        high=1000,
        report=True,
    ),
    Setting(
        "gsb_depth",
        Kind.INTEGER,
        5,
        _("Side-by-side depth (results shown per list)"),
        _("Results of each model shown side by side."),
        low=1,
        high=1000,
        locks=Lock.SIDE_BY_SIDE,
        report=True,
    ),
    Setting(
        "gsb_scale",
        Kind.CHOICE,
        GSBScale.THREE_POINT.value,
        _("Side-by-side scale"),
        _(
            "How many points a side-by-side verdict has: 3 (better, same, worse) or 5 (much or slightly "
            "better, "
            "same, slightly or much worse)."
        ),
        choices=GSBScale,
        locks=Lock.SIDE_BY_SIDE,
        report=True,
    ),
    Setting(
        "auto_same_identical",
        Kind.BOOLEAN,
        True,
        _("Identical lists count as Same unasked"),
        _("Record a side-by-side task as Same without asking when both lists are identical."),
        report=True,
    ),
    Setting(
        "task_order",
        Kind.CHOICE,
        TaskOrder.INTERLEAVED.value,
        _("Task order"),
        _(
            "Which kind of task an annotator is handed first; `interleaved` draws it at each hand-out, so "
            "side-by-side verdicts arrive from the first minutes."
        ),
        choices=TaskOrder,
    ),
    Setting(
        "aggregation",
        Kind.CHOICE,
        Aggregation.MEAN.value,
        _("Aggregation of grades"),
        _("How the grades of a relevance task become its one label."),
        choices=Aggregation,
        report=True,
    ),
    Setting(
        "gain",
        Kind.CHOICE,
        Gain.EXPONENTIAL.value,
        _("Gain"),
        _("A grade's gain in DCG: 2^grade − 1 (exponential) or the grade itself (linear)."),
        choices=Gain,
        report=True,
    ),
    Setting(
        "cutoffs",
        Kind.CUTOFFS,
        default_cutoffs,
        _("nDCG cut-offs"),
        _("The k of every reported nDCG@k."),
        report=True,
    ),
    Setting(
        "position_weights",
        Kind.WEIGHTS,
        None,
        _("Position weights (one per rank; empty: the log2 discount)"),
        _(
            "One weight per rank, rank 1 first, in place of DCG's 1 / log2(rank + 1) discount (a promoted "
            "slot "
            "weighted 0.8 instead of 1); at least as many as the deepest cut-off; null: the log2 discount."
        ),
        report=True,
    ),
    Setting(
        "redundancy_aware",
        Kind.BOOLEAN,
        False,
        _("Redundancy-aware nDCG (near-duplicates gain once)"),
        _("In nDCG and DCG, a result annotators marked a near-duplicate of a higher one gains nothing."),
        report=True,
    ),
    Setting(
        "alpha",
        Kind.NUMBER,
        0.5,
        _("α of α-nDCG (redundancy intolerance)"),
        _(
            "How much a second document serving an intent is worth less in α-nDCG: 0 not at all, 1 nothing "
            "(ndeval's default 0.5)."
        ),
        low=0,
        high=1,
        report=True,
    ),
    Setting(
        "novelty_popularity",
        Kind.CHOICE,
        NoveltyPopularity.BUNDLE.value,
        _("Popularity for novelty"),
        _(
            "Where novelty's popularity comes from: `bundle` the documents' `popularity`, `rankings` the "
            "share "
            "of the campaign's lists (every model's, each query's) that show the document in their top k."
        ),
        choices=NoveltyPopularity,
        report=True,
    ),
    Setting(
        "primary_measure",
        Kind.MEASURE,
        "nDCG@10",
        _("Primary measure"),
        _("Decides when there are no side-by-side judgments."),
        max_length=32,
        report=True,
    ),
    Setting(
        "launch_min_gsb",
        Kind.NUMBER,
        0.05,
        _("Smallest GSB that may launch"),
        _("Smallest GSB that may launch."),
        low=0,
        high=1,
        # GSB runs from -1 to 1, but a launch needs it above 0: the decision rule takes 0 to 1.
        range_note=_("a launch needs GSB above 0"),
        report=True,
    ),
    Setting(
        "launch_alpha",
        Kind.NUMBER,
        0.05,
        _("Significance level"),
        _("Significance level of the guarded measures."),
        low=0,
        high=1,
        open=True,
        report=True,
    ),
    Setting(
        "min_queries",
        Kind.INTEGER,
        30,
        _("Queries with complete side-by-side judgments before a decision"),
        _("Queries with complete side-by-side judgments needed before a decision."),
        low=1,
        high=100_000,
        report=True,
    ),
    Setting(
        "min_coverage",
        Kind.NUMBER,
        0.9,
        _("Share of tasks complete before a decision"),
        _("Share of side-by-side and of relevance tasks complete at their overlap before a decision."),
        low=0,
        high=1,
        report=True,
    ),
    Setting(
        "repeat_rate",
        Kind.NUMBER,
        0.05,
        _("Share of tasks shown again to measure consistency (0 to 0.5)"),
        _("Share of an annotator's tasks shown to them again later, to measure consistency."),
        low=0,
        high=0.5,
    ),
    Setting(
        "reuse_labels",
        Kind.BOOLEAN,
        True,
        _("Reuse labels of earlier campaigns of the standard"),
        _("Count earlier campaigns' labels of its standard."),
    ),
    Setting(
        "reuse_max_age_days",
        Kind.INTEGER,
        0,
        _("Oldest reused label (days; 0: any)"),
        _("Oldest reused label, in days; 0: any."),
        low=0,
        high=36500,
        low_meaning=_("any age"),
    ),
    Setting(
        "flag_min_seconds",
        Kind.NUMBER,
        2.0,
        _("Flag annotators with a median below (seconds a label)"),
        _("Flag a median below this many seconds a label."),
        low=0,
        high=3600,
    ),
    Setting(
        "behaviour_grades",
        Kind.ACTION_GRADES,
        action_grades_text(ACTION_GRADE_DEFAULTS),
        _("Grades from behaviour (ACTION=grade, separated by commas)"),
        _(
            "The grade an impression's furthest action earns in the behaviour qrels: no click, click (dwell "
            "at "
            "least min_dwell seconds), cart, purchase rated at least good_rating, unrated, or rated below."
        ),
        max_length=300,
        report=True,
    ),
    Setting(
        "guardrails",
        Kind.GUARDRAILS,
        "IPS-CTR@10 >= -0.01",
        _("Guardrails on online metrics and diversity (METRIC >= or <= NUMBER; separated by semicolons)"),
        _(
            "Online metrics (read only when the campaign has interaction logs) and diversity measures the "
            "experiment must not degrade: `M >= t` needs the lower end of the interval of Δ M (experimental "
            "− "
            "online) at least t, `M <= t` its upper end at most t (`ILS@10 <= 0.05`: ILS@10 may not rise by "
            "more than 0.05). A failed one vetoes the launch."
        ),
        max_length=500,
        report=True,
    ),
    Setting(
        "flag_min_gold_accuracy",
        Kind.NUMBER,
        0.5,
        _("Flag annotators with gold accuracy below"),
        _("Flag exact gold accuracy below this."),
        low=0,
        high=1,
    ),
)
SETTINGS_BY_NAME: dict[str, Setting] = {setting.name: setting for setting in CAMPAIGN_SETTINGS}
SETTING_NAMES: tuple[str, ...] = tuple(SETTINGS_BY_NAME)


def setting_values(campaign: Any) -> dict[str, Any]:
    """A campaign's settings by name, as `parse_campaign_change` takes them."""
    return {name: getattr(campaign, name) for name in SETTING_NAMES}


def _allowed_text(setting: Setting) -> str:
    if setting.choices is not None:
        return ", ".join(f"`{value}`" for value in setting.choices.values)
    if setting.kind is Kind.BOOLEAN:
        return "`true`, `false`"
    if setting.kind is Kind.CUTOFFS:
        return "at least one, each 1 or more"
    if setting.kind is Kind.MEASURE:
        return "a measure of [docs/metrics.md](docs/metrics.md#measures)"
    if setting.kind is Kind.WEIGHTS:
        return "`null`, or each 0 or more, at least as many as the deepest cut-off"
    if setting.kind is Kind.GUARDRAILS:
        guide = "[docs/interactions.md](docs/interactions.md#guardrails)"
        return f"`METRIC >= NUMBER` or `METRIC <= NUMBER`, separated by `;` ({guide})"
    if setting.kind is Kind.ACTION_GRADES:
        guide = "[docs/interactions.md](docs/interactions.md#labels-from-behaviour)"
        return f"`ACTION=NUMBER`, separated by `,` ({guide})"
    if setting.low is None:
        return ""
    if setting.open:
        return f"more than {setting.low_text}, less than {setting.high}"
    return f"{setting.low_text} to {setting.high}"


def settings_table_markdown() -> str:
    """The README's table of the settings (`manage.py settings_table` prints it)."""
    lines = ["| setting | type | default | allowed | meaning |", "| --- | --- | --- | --- | --- |"]
    for setting in CAMPAIGN_SETTINGS:
        default = f"`{json.dumps(setting.default_value)}`"
        cells = [f"`{setting.name}`", setting.type_name, default, _allowed_text(setting), setting.description]
        lines.append(f"| {' | '.join(cells)} |")
    return "\n".join(lines) + "\n"
