"""Campaign bundles (JSON), their settings and TREC runs, checked whole into plain data."""

import math
import unicodedata
from dataclasses import dataclass, field
from typing import Any

from django.utils.text import format_lazy
from django.utils.translation import gettext_lazy as _
from django_stubs_ext import StrOrPromise

from annotation.bundle.reading import TOP_LEVEL, Reader, longer_than, must_be, one_of, trec_message, with_id
from annotation.campaign_settings import CAMPAIGN_SETTINGS, SETTING_NAMES, TEXT_KINDS, Kind, Setting
from annotation.errors import InputErrorCode as Code
from annotation.models import RankingModel, Verdict, default_scale
from trec.measures import MeasureError, parse_measure

# How `Reader.get` reads a setting of each plain kind: a number may be written as an integer.
READ_AS: dict[Kind, type | tuple[type, ...]] = {
    Kind.INTEGER: int,
    Kind.NUMBER: (int, float),
    Kind.BOOLEAN: bool,
}
# A model name is part of page addresses and download file names: no `/`, `.`/`..`, quotes, spaces or line
# breaks. Letters and digits of any script (线上模型) and their combining marks: addresses percent-encode
# them and downloads name them in `filename*`.
MODEL_NAME_SIGNS = frozenset("._+:@-")
MODEL_NAME_RULE = _(
    "must start with a letter or digit (of any script) and hold only letters, digits, their marks "
    "and . _ - + : @"
)
MODEL_NAME_LENGTH = 100
GRADE_MIN, GRADE_MAX = -100, 100  # stored as a smallint; a scale has a handful of grades
GRADE_LABEL_MAX_LENGTH = 60
# Diversity data: a document's categorical attributes and a query's intents, bounded as a page shows them.
ATTRIBUTES_MAX, ATTRIBUTE_NAME_LENGTH, ATTRIBUTE_VALUE_LENGTH = 50, 100, 200
INTENTS_MAX, INTENT_ID_LENGTH, INTENT_TEXT_LENGTH = 50, 100, 1000


@dataclass(frozen=True)
class QueryRow:
    external_id: str
    text: str
    description: str = ""
    segment: str = ""
    weight: float = 1.0
    intents: list[dict[str, str]] = field(default_factory=list)  # [{id, text}]


@dataclass(frozen=True)
class DocumentRow:
    external_id: str
    title: str = ""
    url: str = ""
    body: str = ""
    attributes: dict[str, str | int | bool] = field(default_factory=dict)
    popularity: float | None = None


@dataclass(frozen=True)
class ModelRow:
    name: str
    role: str


@dataclass
class CampaignBundle:
    name: str
    description: str
    guidelines: str
    scale: list[dict]
    settings: dict[str, Any]
    models: list[ModelRow]
    queries: list[QueryRow]
    documents: list[DocumentRow]
    # model name -> query id -> document ids in rank order
    rankings: dict[str, dict[str, list[str]]] = field(default_factory=dict)
    standard: str = ""  # the judging standard's name: its label pool serves this campaign
    # (query id, document id) -> known grade; (query id, experimental model) -> known verdict
    gold_grades: dict[tuple[str, str], int] = field(default_factory=dict)
    gold_verdicts: dict[tuple[str, str], str] = field(default_factory=dict)
    source: str = ""  # the file it was read from, for errors found later (a name already taken)


VERDICT_RULE = _("must be 'good', 'same' or 'bad'")


def parse_scale(raw: Any, reader: Reader) -> list[dict]:
    if not isinstance(raw, list) or len(raw) < 2:
        raise reader.error(Code.INVALID_VALUE, "scale", _("must be a list of at least two grades"))
    scale: list = []
    seen: set = set()
    for i, item in enumerate(raw):
        path = f"scale[{i}]"
        grade = reader.obj(item, path)
        value = reader.get(grade, "value", f"{path}.value", int)
        if not GRADE_MIN <= value <= GRADE_MAX:
            message = format_lazy(_("must be between {low} and {high}"), low=GRADE_MIN, high=GRADE_MAX)
            raise reader.error(Code.INVALID_VALUE, f"{path}.value", message)
        if value in seen:
            message = format_lazy(_("grade {value} appears twice"), value=value)
            raise reader.error(Code.DUPLICATE_ID, f"{path}.value", message)
        seen.add(value)
        label = reader.text(grade, "label", f"{path}.label", max_length=GRADE_LABEL_MAX_LENGTH)
        description = reader.text(grade, "description", f"{path}.description", required=False)
        scale.append({"value": value, "label": label, "description": description})
    return sorted(scale, key=lambda grade: grade["value"])


def parse_settings(raw: Any, reader: Reader) -> dict[str, Any]:
    """Every setting of `CAMPAIGN_SETTINGS`: the given ones checked against its type and range, the others
    at their defaults."""
    raw = reader.obj(raw, "settings")
    unknown = sorted(set(raw) - set(SETTING_NAMES))
    if unknown:
        message = format_lazy(_("is not a setting ({settings})"), settings=", ".join(SETTING_NAMES))
        raise reader.error(Code.INVALID_VALUE, f"settings.{unknown[0]}", message)
    values = {setting.name: raw.get(setting.name, setting.default_value) for setting in CAMPAIGN_SETTINGS}
    settings = {setting.name: _parse_setting(setting, values, reader) for setting in CAMPAIGN_SETTINGS}
    _check_weights_cover(settings, reader)
    return settings


MAX_POSITION_WEIGHTS = 1000
DISCOUNTED = ("DCG", "nDCG")


def _parse_weights(value: Any, path: str, reader: Reader) -> list[float] | None:
    if value is None:
        return None
    if not isinstance(value, list) or not value:
        raise reader.error(Code.INVALID_VALUE, path, _("must be null or a non-empty list of numbers"))
    if len(value) > MAX_POSITION_WEIGHTS:
        message = format_lazy(_("holds more than {count} weights"), count=MAX_POSITION_WEIGHTS)
        raise reader.error(Code.INVALID_VALUE, path, message)
    for rank, weight in enumerate(value, start=1):
        if isinstance(weight, bool) or not isinstance(weight, int | float):
            message = format_lazy(_("the weight of rank {rank} must be a number"), rank=rank)
            raise reader.error(Code.WRONG_TYPE, path, message)
        if not (math.isfinite(weight) and weight >= 0):
            message = format_lazy(_("the weight of rank {rank} must be finite and ≥ 0"), rank=rank)
            raise reader.error(Code.INVALID_VALUE, path, message)
    return [float(weight) for weight in value]


def _check_weights_cover(settings: dict[str, Any], reader: Reader) -> None:
    """Position weights stand in for the discount of each rank: the reported nDCG@k and a DCG-family
    primary measure need one weight per rank (the measures' own rule, `metrics.compute.ranking`)."""
    weights = settings["position_weights"]
    if weights is None:
        return
    deepest = max(settings["cutoffs"])
    if deepest > len(weights):
        message = format_lazy(
            _("{count} weights are fewer than the deepest cut-off, {deepest}: give one per rank"),
            count=len(weights),
            deepest=deepest,
        )
        raise reader.error(Code.INVALID_VALUE, "settings.position_weights", message)
    primary = parse_measure(settings["primary_measure"])
    if primary.family in DISCOUNTED and (primary.k is None or primary.k > len(weights)):
        message = format_lazy(
            _("{measure} needs a cut-off of at most {count} with position weights"),
            measure=str(primary),
            count=len(weights),
        )
        raise reader.error(Code.INVALID_VALUE, "settings.primary_measure", message)


def _parse_setting(setting: Setting, values: dict[str, Any], reader: Reader) -> Any:
    name, path = setting.name, f"settings.{setting.name}"
    if setting.choices is not None:
        allowed = setting.choices.values
        if values[name] not in allowed:
            raise reader.error(Code.INVALID_VALUE, path, one_of(map(str, allowed)))
        return allowed[allowed.index(values[name])]  # 3.0 is stored as the choice 3
    if setting.kind is Kind.CUTOFFS:
        cutoffs = setting.default_value if values[name] is None else values[name]
        if (
            not isinstance(cutoffs, list)
            or not cutoffs
            or not all(type(k) is int and k >= 1 for k in cutoffs)
        ):
            raise reader.error(Code.INVALID_VALUE, path, _("must be a non-empty list of positive integers"))
        return setting.normal(cutoffs)
    if setting.kind is Kind.WEIGHTS:
        return _parse_weights(values[name], path, reader)
    if setting.kind in TEXT_KINDS:
        try:
            measure = setting.normal(reader.get(values, name, path, str))
        except MeasureError as exc:
            raise reader.error(Code.INVALID_VALUE, path, trec_message(exc)) from None
        except ValueError as exc:  # worded by `campaign_settings`, lazily
            raise reader.error(Code.INVALID_VALUE, path, exc.args[0]) from None
        if setting.max_length is not None and len(measure) > setting.max_length:
            raise reader.error(Code.INVALID_VALUE, path, longer_than(setting.max_length))
        return measure
    value = reader.get(values, name, path, READ_AS[setting.kind])
    if not setting.in_range(value):
        message = format_lazy(_("must be between {range}"), range=setting.range_text)
        raise reader.error(Code.INVALID_VALUE, path, message)
    return value


CAMPAIGN_TEXTS = ("description", "guidelines")
CHANGEABLE = (*CAMPAIGN_TEXTS, "scale", "settings")


def parse_campaign_change(data: Any, current: dict[str, Any], source: str) -> dict[str, Any]:
    """A change to a campaign (`description`, `guidelines`, `scale` and any of `settings`), checked whole
    against its current settings; returns the changed fields only. Whether a change is still allowed (the
    scale once graded) is the service's call."""
    reader = Reader(source)
    data = reader.obj(reader.refuse_bad_text(data), TOP_LEVEL)
    unknown = sorted(set(data) - set(CHANGEABLE))
    if unknown:
        message = format_lazy(_("cannot be changed here ({fields} can)"), fields=", ".join(CHANGEABLE))
        raise reader.error(Code.INVALID_VALUE, unknown[0], message)
    changes: dict[str, Any] = {
        key: reader.text(data, key, key, required=False) for key in CAMPAIGN_TEXTS if key in data
    }
    if "scale" in data:
        changes["scale"] = parse_scale(data["scale"], reader)
    raw = reader.obj({} if data.get("settings") is None else data["settings"], "settings")
    settings = parse_settings({**current, **raw}, reader)
    changes.update({key: settings[key] for key in raw})
    return changes


def parse_bundle(data: Any, source: str, *, require_rankings: bool = True) -> CampaignBundle:
    """Check a decoded bundle whole and return it as dataclasses; raise `InputError` at the first problem."""
    reader = Reader(source)
    data = reader.obj(reader.refuse_bad_text(data), TOP_LEVEL)
    scale = parse_scale(data["scale"], reader) if data.get("scale") is not None else default_scale()
    bundle = CampaignBundle(
        name=reader.text(data, "name", "name", max_length=200),
        description=reader.text(data, "description", "description", required=False),
        guidelines=reader.text(data, "guidelines", "guidelines", required=False),
        standard=reader.text(data, "standard", "standard", required=False, max_length=100),
        scale=scale,
        settings=parse_settings({} if data.get("settings") is None else data["settings"], reader),
        models=_parse_models(reader.items(data, "models"), reader),
        queries=_parse_queries(reader.items(data, "queries"), reader),
        documents=_parse_documents(reader.items(data, "documents"), reader),
        source=source,
    )
    rankings = reader.items(data, "rankings", required=require_rankings)
    bundle.rankings = _parse_rankings(rankings, bundle, reader)
    _parse_gold(reader.items(data, "gold", required=False), bundle, reader)
    return bundle


def _unique(reader: Reader, seen: set, value: str, path: str, what: StrOrPromise) -> None:
    """`what` says the duplicate with its value: `_("duplicate model {value}")`."""
    if value in seen:
        raise reader.error(Code.DUPLICATE_ID, path, format_lazy(what, value=repr(value)))
    seen.add(value)


def is_model_name(name: str) -> bool:
    """Whether `name` keeps `MODEL_NAME_RULE` (its length aside)."""

    def kind(char: str) -> str:
        """L(etter), M(ark), N(umber), P(unctuation), S(ymbol), Z (space) or C(ontrol)."""
        return unicodedata.category(char)[0]

    return (
        bool(name) and kind(name[0]) in "LN" and all(kind(c) in "LMN" or c in MODEL_NAME_SIGNS for c in name)
    )


def _parse_models(items: list, reader: Reader) -> list[ModelRow]:
    models: list = []
    seen: set = set()
    for i, item in enumerate(items):
        path = f"models[{i}]"
        row = reader.obj(item, path)
        name = reader.text(row, "name", f"{path}.name", max_length=MODEL_NAME_LENGTH)
        if not is_model_name(name):
            raise reader.error(Code.INVALID_VALUE, f"{path}.name", MODEL_NAME_RULE)
        _unique(reader, seen, name, f"{path}.name", _("duplicate model {value}"))
        role = reader.text(row, "role", f"{path}.role")
        if role not in RankingModel.Role.values:
            raise reader.error(Code.INVALID_VALUE, f"{path}.role", _("must be 'online' or 'experimental'"))
        models.append(ModelRow(name, role))
    roles = [model.role for model in models]
    if roles.count(RankingModel.Role.ONLINE) != 1:
        raise reader.error(Code.INVALID_VALUE, "models", _("a campaign needs exactly one online model"))
    if RankingModel.Role.EXPERIMENTAL not in roles:
        message = _("a campaign needs at least one experimental model")
        raise reader.error(Code.INVALID_VALUE, "models", message)
    return models


def _parse_queries(items: list, reader: Reader) -> list[QueryRow]:
    queries: list = []
    seen: set = set()
    for i, item in enumerate(items):
        path = f"queries[{i}]"
        row = reader.obj(item, path)
        external_id = reader.text(row, "id", f"{path}.id", max_length=100)
        _unique(reader, seen, external_id, f"{path}.id", _("duplicate query id {value}"))
        weight = reader.get(row, "weight", f"{path}.weight", (int, float), required=False, default=1.0)
        if not weight > 0:
            raise reader.error(Code.INVALID_VALUE, f"{path}.weight", _("must be positive"))
        queries.append(
            QueryRow(
                external_id=external_id,
                text=reader.text(row, "text", f"{path}.text"),
                description=reader.text(row, "description", f"{path}.description", required=False),
                segment=reader.text(row, "segment", f"{path}.segment", required=False, max_length=100),
                weight=float(weight),
                intents=_parse_intents(row, path, reader),
            )
        )
    if not queries:
        raise reader.error(Code.INVALID_VALUE, "queries", _("must list at least one query"))
    return queries


def _parse_documents(items: list, reader: Reader) -> list[DocumentRow]:
    documents: list = []
    seen: set = set()
    for i, item in enumerate(items):
        path = f"documents[{i}]"
        row = reader.obj(item, path)
        external_id = reader.text(row, "id", f"{path}.id", max_length=200)
        _unique(reader, seen, external_id, f"{path}.id", _("duplicate document id {value}"))
        documents.append(
            DocumentRow(
                external_id=external_id,
                title=reader.text(row, "title", f"{path}.title", required=False),
                url=reader.text(row, "url", f"{path}.url", required=False),
                body=reader.text(row, "body", f"{path}.body", required=False),
                attributes=_parse_attributes(row, path, reader),
                popularity=_parse_popularity(row, path, reader),
            )
        )
    return documents


def _parse_intents(row: dict, path: str, reader: Reader) -> list[dict[str, str]]:
    """A query's intents: `[{"id", "text"}]`, ids unique within the query."""
    items = reader.get(row, "intents", f"{path}.intents", list, required=False, default=[])
    if len(items) > INTENTS_MAX:
        message = format_lazy(_("lists more than {count} intents"), count=INTENTS_MAX)
        raise reader.error(Code.INVALID_VALUE, f"{path}.intents", message)
    intents: list[dict[str, str]] = []
    seen: set = set()
    for i, item in enumerate(items):
        at = f"{path}.intents[{i}]"
        intent = reader.obj(item, at)
        unknown = sorted(set(intent) - {"id", "text"})
        if unknown:
            message = _("is not a field of an intent (id, text)")
            raise reader.error(Code.INVALID_VALUE, f"{at}.{unknown[0]}", message)
        intent_id = reader.text(intent, "id", f"{at}.id", max_length=INTENT_ID_LENGTH)
        _unique(reader, seen, intent_id, f"{at}.id", _("duplicate intent id {value}"))
        text = reader.text(intent, "text", f"{at}.text", max_length=INTENT_TEXT_LENGTH)
        intents.append({"id": intent_id, "text": text})
    return intents


def _parse_attributes(row: dict, path: str, reader: Reader) -> dict[str, str | int | bool]:
    """A document's attributes: a flat object of categories (a string, an integer or a boolean each); a
    null value is no value."""
    at = f"{path}.attributes"
    raw = reader.obj(row["attributes"], at) if row.get("attributes") is not None else {}
    if len(raw) > ATTRIBUTES_MAX:
        message = format_lazy(_("has more than {count} fields"), count=ATTRIBUTES_MAX)
        raise reader.error(Code.INVALID_VALUE, at, message)
    attributes: dict[str, str | int | bool] = {}
    for name, value in raw.items():
        if not name.strip() or len(name) > ATTRIBUTE_NAME_LENGTH:
            message = format_lazy(
                _("a field name must be 1 to {length} characters, not {name}"),
                length=ATTRIBUTE_NAME_LENGTH,
                name=repr(name[:40]),
            )
            raise reader.error(Code.INVALID_VALUE, at, message)
        if value is None:
            continue
        if not isinstance(value, str | int | bool):
            message = must_be(_("a category (a string, an integer or a boolean)"), value)
            raise reader.error(Code.WRONG_TYPE, f"{at}.{name}", message)
        if isinstance(value, str) and len(value) > ATTRIBUTE_VALUE_LENGTH:
            raise reader.error(Code.INVALID_VALUE, f"{at}.{name}", longer_than(ATTRIBUTE_VALUE_LENGTH))
        attributes[name] = value
    return attributes


def _parse_popularity(row: dict, path: str, reader: Reader) -> float | None:
    at = f"{path}.popularity"
    popularity = reader.get(row, "popularity", at, (int, float), required=False)
    if popularity is None:
        return None
    if not 0 < popularity <= 1:
        raise reader.error(Code.INVALID_VALUE, at, _("must be a probability above 0, at most 1"))
    return float(popularity)


def _parse_rankings(items: list, bundle: CampaignBundle, reader: Reader) -> dict[str, dict[str, list[str]]]:
    model_names = {model.name for model in bundle.models}
    query_ids = {query.external_id for query in bundle.queries}
    document_ids = {document.external_id for document in bundle.documents}
    rankings: dict[str, dict[str, list[str]]] = {name: {} for name in model_names}
    for i, item in enumerate(items):
        path = f"rankings[{i}]"
        row = reader.obj(item, path)
        model = reader.text(row, "model", f"{path}.model")
        if model not in model_names:
            raise reader.error(Code.UNKNOWN_MODEL, f"{path}.model", with_id(_("unknown model {id}"), model))
        query = reader.text(row, "query", f"{path}.query")
        if query not in query_ids:
            raise reader.error(Code.UNKNOWN_QUERY, f"{path}.query", with_id(_("unknown query {id}"), query))
        if query in rankings[model]:
            message = format_lazy(
                _("model {model} has a second ranking for query {query}"),
                model=repr(model),
                query=repr(query),
            )
            raise reader.error(Code.DUPLICATE_ID, path, message)
        documents = reader.get(row, "documents", f"{path}.documents", list)
        seen: set[str] = set()
        for j, document in enumerate(documents):
            doc_path = f"{path}.documents[{j}]"
            if not isinstance(document, str):
                raise reader.error(Code.WRONG_TYPE, doc_path, _("must be a document id (a string)"))
            if document not in document_ids:
                message = with_id(_("unknown document {id}"), document)
                raise reader.error(Code.UNKNOWN_DOCUMENT, doc_path, message)
            _unique(reader, seen, document, doc_path, _("duplicate document in one ranking: {value}"))
        rankings[model][query] = documents
    return rankings


def _parse_gold(items: list, bundle: CampaignBundle, reader: Reader) -> None:
    """Gold items: `{"query", "document", "grade"}` or `{"query", "model", "verdict"}`."""
    query_ids = {query.external_id for query in bundle.queries}
    experimental = {model.name for model in bundle.models if model.role == RankingModel.Role.EXPERIMENTAL}
    document_ids = {document.external_id for document in bundle.documents}
    scale_values = {grade["value"] for grade in bundle.scale}
    for i, item in enumerate(items):
        path = f"gold[{i}]"
        row = reader.obj(item, path)
        query = reader.text(row, "query", f"{path}.query")
        if query not in query_ids:
            raise reader.error(Code.UNKNOWN_QUERY, f"{path}.query", with_id(_("unknown query {id}"), query))
        if "grade" in row:
            document = reader.text(row, "document", f"{path}.document")
            if document not in document_ids:
                message = with_id(_("unknown document {id}"), document)
                raise reader.error(Code.UNKNOWN_DOCUMENT, f"{path}.document", message)
            grade = reader.get(row, "grade", f"{path}.grade", int)
            if grade not in scale_values:
                message = format_lazy(_("{grade} is not on the scale"), grade=grade)
                raise reader.error(Code.GRADE_NOT_ON_SCALE, f"{path}.grade", message)
            bundle.gold_grades[query, document] = grade
        else:
            model = reader.text(row, "model", f"{path}.model")
            if model not in experimental:
                message = with_id(_("{id} is not an experimental model"), model)
                raise reader.error(Code.UNKNOWN_MODEL, f"{path}.model", message)
            verdict = reader.text(row, "verdict", f"{path}.verdict")
            if verdict not in Verdict.values:
                raise reader.error(Code.INVALID_VALUE, f"{path}.verdict", VERDICT_RULE)
            bundle.gold_verdicts[query, model] = verdict
