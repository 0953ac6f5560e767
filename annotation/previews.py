"""What an import would create, and what looks wrong in it, worked out from the parsed bundle and runs before
anything is written (the validation preview of a campaign created in the browser)."""

import json
import re
from collections import Counter
from dataclasses import asdict, dataclass, field

import numpy as np
from django.utils.translation import gettext, ngettext

from annotation.bundle import CampaignBundle
from annotation.models import RankingModel
from trec.files import RankedRun


@dataclass(frozen=True)
class ModelPreview:
    name: str
    role: str
    rankings: int  # ranking rows
    queries: int  # queries it ranks


@dataclass(frozen=True)
class AttributePreview:
    name: str
    documents: int  # documents with a value for it
    values: int  # distinct values
    examples: list[str]  # a few of its values, most common first


@dataclass(frozen=True)
class DiversityPreview:
    """The data the diversity measures read: intents (α-nDCG, ERR-IA, subtopic recall), attributes (ILS)
    and popularity (novelty)."""

    queries_with_intents: int
    intents: int
    example_intents: list[str]  # "query id: intent text", a few
    attributes: list[AttributePreview]
    documents_with_attributes: int
    documents_with_popularity: int


@dataclass
class ImportPreview:
    name: str
    models: list[ModelPreview]
    queries: int
    documents: int
    rankings: int
    relevance_tasks: int
    side_by_side_tasks: int
    identical_lists: int
    overlap: int = 0  # annotators per relevance task
    gsb_overlap: int = 0  # per side-by-side task
    # Labels the campaign will ask for: every task at its overlap, identical lists aside when they count
    # as Same unasked (before any label the pool lends).
    label_budget: int = 0
    warnings: list[str] = field(default_factory=list)
    diversity: DiversityPreview | None = None
    reuse: dict | None = None  # the label pool's contribution (`ReuseSummary.as_dict`), when it has one

    def as_dict(self) -> dict:
        return asdict(self)


class _Codes:
    """One integer per distinct id across models' runs (each run codes its ids on its own), so that their
    entries compare as integers."""

    def __init__(self) -> None:
        self.of: dict[str, int] = {}

    def __call__(self, ids: list[str], indexes: np.ndarray) -> np.ndarray:
        """The codes of `ids[i]` for each i in `indexes`: each distinct id looked up once."""
        distinct, inverse = np.unique(indexes, return_inverse=True)
        of = self.of
        codes = np.fromiter(
            (of.setdefault(ids[i], len(of)) for i in distinct.tolist()), np.int64, distinct.size
        )
        return codes[inverse]


def _rankings(bundle: CampaignBundle, runs: dict[str, RankedRun]) -> dict[str, RankedRun]:
    """Each model's lists: a run given for a model stands in for the bundle's."""
    rankings = {name: RankedRun.from_lists(lists) for name, lists in bundle.rankings.items()}
    rankings.update(runs)
    return rankings


def _lengths(run: RankedRun) -> np.ndarray:
    """Each of the run's queries' list length (0: listed without documents)."""
    return np.bincount(run.query, minlength=len(run.queries))


def _listed(rankings: dict[str, RankedRun]) -> dict[str, set[str]]:
    """Each model's queries with a list of at least one document."""
    return {
        name: {run.queries[index] for index in np.flatnonzero(_lengths(run)).tolist()}
        for name, run in rankings.items()
    }


def _online(bundle: CampaignBundle) -> str:
    """The online model's name (a bundle has exactly one)."""
    return next(model.name for model in bundle.models if model.role == RankingModel.Role.ONLINE)


def _side_by_side_queries(bundle: CampaignBundle, listed: dict[str, set[str]]) -> dict[str, set[str]]:
    """Each experimental model's queries with both its list and the online model's: a side-by-side task
    each."""
    online = _online(bundle)
    return {
        model.name: listed.get(online, set()) & listed.get(model.name, set())
        for model in bundle.models
        if model.role == RankingModel.Role.EXPERIMENTAL
    }


def import_preview(bundle: CampaignBundle, runs: dict[str, RankedRun]) -> ImportPreview:
    """Counts as `campaign_import` and the pooling would make them, the labels they will need, and the
    warnings of `import_warnings`. Worked out on the runs' columns: a million lines stay arrays."""
    settings = bundle.settings
    rankings = _rankings(bundle, runs)
    empty = RankedRun.from_lists({})
    models = [
        ModelPreview(
            model.name,
            model.role,
            int(rankings.get(model.name, empty).rank.size),
            int(np.count_nonzero(_lengths(rankings.get(model.name, empty)))),
        )
        for model in bundle.models
    ]
    listed = _listed(rankings)
    pairs = _side_by_side_queries(bundle, listed)
    side_by_side = sum(len(queries) for queries in pairs.values())
    relevance_tasks, identical = _pool_counts(bundle, rankings, pairs)
    documents = {doc.external_id for doc in bundle.documents}
    for run in rankings.values():
        documents.update(run.documents)
    preview = ImportPreview(
        name=bundle.name,
        models=models,
        queries=len(bundle.queries),
        documents=len(documents),
        rankings=sum(model.rankings for model in models),
        relevance_tasks=relevance_tasks,
        side_by_side_tasks=side_by_side,
        identical_lists=identical,
        overlap=settings["overlap"],
        gsb_overlap=settings["gsb_overlap"],
        label_budget=relevance_tasks * settings["overlap"]
        + (side_by_side - (identical if settings["auto_same_identical"] else 0)) * settings["gsb_overlap"],
    )
    preview.warnings = _warnings(bundle, rankings, listed, pairs)
    preview.diversity = diversity_preview(bundle)
    return preview


def _pool_counts(
    bundle: CampaignBundle, rankings: dict[str, RankedRun], pairs: dict[str, set[str]]
) -> tuple[int, int]:
    """The relevance tasks the pooling makes (distinct (query, document) in some model's top `pool_depth`)
    and the side-by-side tasks whose two lists' top `gsb_depth` are the same."""
    pool_depth, gsb_depth = bundle.settings["pool_depth"], bundle.settings["gsb_depth"]
    queries, documents = _Codes(), _Codes()
    entries = {}
    for name, run in rankings.items():
        top = run.rank <= max(pool_depth, gsb_depth)
        entries[name] = (
            queries(run.queries, run.query[top]),
            documents(run.documents, run.document[top]),
            run.rank[top],
        )
    pooled = [
        query[rank <= pool_depth] * len(documents.of) + document[rank <= pool_depth]
        for query, document, rank in entries.values()
    ]
    relevance_tasks = np.unique(np.concatenate([np.empty(0, np.int64), *pooled])).size

    def tops(name: str) -> np.ndarray:
        """A row per query code: the model's top `gsb_depth` document codes, -1 past the list's end."""
        query, document, rank = entries[name]
        top = rank <= gsb_depth
        table = np.full((len(queries.of), gsb_depth), -1, dtype=np.int64)
        table[query[top], rank[top] - 1] = document[top]
        return table

    identical = 0
    if any(pairs.values()):
        online = tops(_online(bundle))
        for name, both in pairs.items():
            if both:
                rows = [queries.of[query] for query in both]
                identical += int(np.all(online[rows] == tops(name)[rows], axis=1).sum())
    return int(relevance_tasks), identical


EXAMPLES = 3


def diversity_preview(bundle: CampaignBundle) -> DiversityPreview:
    with_intents = [query for query in bundle.queries if query.intents]
    values: dict[str, Counter] = {}
    for document in bundle.documents:
        for name, value in document.attributes.items():
            values.setdefault(name, Counter())[json.dumps(value, ensure_ascii=False).strip('"')] += 1
    return DiversityPreview(
        queries_with_intents=len(with_intents),
        intents=sum(len(query.intents) for query in with_intents),
        example_intents=[
            f"{query.external_id}: {intent['text']}"
            for query in with_intents[:EXAMPLES]
            for intent in query.intents[:EXAMPLES]
        ][:EXAMPLES],
        attributes=[
            AttributePreview(
                name,
                sum(counts.values()),
                len(counts),
                [value for value, _ in counts.most_common(EXAMPLES)],
            )
            for name, counts in sorted(values.items())
        ],
        documents_with_attributes=sum(bool(document.attributes) for document in bundle.documents),
        documents_with_popularity=sum(document.popularity is not None for document in bundle.documents),
    )


def import_warnings(bundle: CampaignBundle, runs: dict[str, RankedRun]) -> list[str]:
    """What looks wrong in an import: fewer queries (with both lists) than `min_queries`, a model without
    rankings, queries without both lists, lists shorter than `gsb_depth`, cut-offs deeper than
    `pool_depth`, and a model name in annotator-visible text."""
    rankings = _rankings(bundle, runs)
    listed = _listed(rankings)
    return _warnings(bundle, rankings, listed, _side_by_side_queries(bundle, listed))


def _warnings(
    bundle: CampaignBundle,
    rankings: dict[str, RankedRun],
    listed: dict[str, set[str]],
    pairs: dict[str, set[str]],
) -> list[str]:
    settings = bundle.settings
    paired = set().union(*pairs.values())  # the queries a side-by-side task will ask about
    decidable = len(paired) if paired else len(bundle.queries)
    warnings = []
    if decidable < settings["min_queries"]:
        if paired:
            template = gettext(
                "%(queries)s queries with both lists, fewer than min_queries %(needed)s: no launch decision "
                "can ever be reached (add queries or lower min_queries)"
            )
        else:
            template = gettext(
                "%(queries)s queries, fewer than min_queries %(needed)s: no launch decision can ever be "
                "reached (add queries or lower min_queries)"
            )
        warnings.append(template % {"queries": decidable, "needed": settings["min_queries"]})
    warnings += [
        gettext("model %(name)r has no rankings") % {"name": model.name}
        for model in bundle.models
        if model.name not in rankings or not rankings[model.name].rank.size
    ]
    online = _online(bundle)
    query_ids = [query.external_id for query in bundle.queries]
    for name in pairs:
        missing = [q for q in query_ids if q not in listed.get(name, ()) or q not in listed.get(online, ())]
        if missing:
            warnings.append(
                gettext(
                    "%(missing)s of %(queries)s queries lack the %(online)r or %(name)r list "
                    "(e.g. %(example)r): no side-by-side task for them"
                )
                % {
                    "missing": len(missing),
                    "queries": len(query_ids),
                    "online": online,
                    "name": name,
                    "example": missing[0],
                }
            )
    for name, run in rankings.items():
        lengths = _lengths(run)
        short = int(np.count_nonzero((lengths > 0) & (lengths < settings["gsb_depth"])))
        if short:
            warnings.append(
                ngettext(
                    "%(short)s list of %(name)r shorter than gsb_depth %(depth)s",
                    "%(short)s lists of %(name)r shorter than gsb_depth %(depth)s",
                    short,
                )
                % {"short": short, "name": name, "depth": settings["gsb_depth"]}
            )
    deepest = max(settings["cutoffs"])
    if deepest > settings["pool_depth"]:
        warnings.append(
            gettext(
                "cut-off %(cutoff)s is deeper than pool_depth %(depth)s: documents below the pool are "
                "unjudged"
            )
            % {"cutoff": deepest, "depth": settings["pool_depth"]}
        )
    warnings += model_name_warnings(bundle)
    return warnings


def model_name_warnings(bundle: CampaignBundle) -> list[str]:
    """Every text of a bundle an annotator sees (the campaign's name and guidelines, the scale's labels and
    descriptions, each query's text, description and intents, each document's title, URL and body) that
    names a model. Documents are many: one warning per field and model, with a count and an example."""
    names = [model.name for model in bundle.models]
    texts = campaign_texts(bundle.name, bundle.guidelines, bundle.scale)
    for query in bundle.queries:
        texts += [(f"queries[{query.external_id}].text", query.text)]
        texts += [(f"queries[{query.external_id}].description", query.description)]
        texts += [(f"queries[{query.external_id}].intents[{i['id']}]", i["text"]) for i in query.intents]
    warnings = model_names_in(texts, names)
    found = _names_finder(names)
    for part in ("title", "url", "body"):
        hits: dict[str, list[str]] = {}
        for document in bundle.documents:
            for name in found(getattr(document, part)):
                hits.setdefault(name, []).append(document.external_id)
        for name, documents in hits.items():
            example = f"documents[{documents[0]}].{part}"
            if len(documents) > 1:
                warning = gettext(
                    "%(documents)s documents' %(part)ss name the model %(name)r, which annotators would see "
                    "(e.g. %(example)s)"
                )
            else:
                warning = gettext("%(example)s names the model %(name)r, which annotators would see")
            warnings.append(
                warning % {"documents": len(documents), "part": part, "name": name, "example": example}
            )
    return warnings


def campaign_texts(name: str, guidelines: str, scale: list[dict]) -> list[tuple[str, str]]:
    """The campaign's own texts an annotator sees, as (place, text): its name, guidelines and scale."""
    texts = [("name", name), ("guidelines", guidelines)]
    for index, grade in enumerate(scale):
        texts += [
            (f"scale[{index}].label", grade["label"]),
            (f"scale[{index}].description", grade["description"]),
        ]
    return texts


# Scripts written without spaces between words (Chinese, Japanese kana, Thai, Lao, Myanmar, Khmer): beside
# them a name is a word of its own, as 线上模型 in "不要提及线上模型的名字" or exp in "使用exp的结果".
UNSPACED = (
    "\u0e00-\u0eff\u1000-\u109f\u1780-\u17ff"  # Thai, Lao, Myanmar, Khmer
    "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0003ffff"  # kana, CJK ideographs
)
UNSPACED_CHAR = re.compile(f"[{UNSPACED}]")
# A letter, digit or _ of a script that spaces its words.
SPACED_WORD = f"[^\\W{UNSPACED}]"


def _as_word(name: str) -> str:
    """A pattern of `name` as a whole word: a letter or digit of a spaced script beside it would make it part
    of a longer word, unless the name's end beside it is itself unspaced."""
    before = "" if UNSPACED_CHAR.match(name[0]) else f"(?<!{SPACED_WORD})"
    after = "" if UNSPACED_CHAR.match(name[-1]) else f"(?!{SPACED_WORD})"
    return f"{before}{re.escape(name)}{after}"


def _names_finder(names: list[str]):
    """A function from a text to the model names it holds as whole words (any case), in `names`' order."""
    if not names:
        return lambda text: []
    # One pass per text: a group per name, longest first, so that "exp-v2" is found whole, not as "exp".
    order = sorted(range(len(names)), key=lambda index: len(names[index]), reverse=True)
    alternatives = "|".join(f"(?P<n{index}>{_as_word(names[index])})" for index in order)
    pattern = re.compile(alternatives, re.IGNORECASE)

    def found(text: str) -> list[str]:
        hits = {int(match.lastgroup[1:]) for match in pattern.finditer(text or "") if match.lastgroup}
        return [names[index] for index in sorted(hits)]

    return found


def model_names_in(texts: list[tuple[str, str]], names: list[str]) -> list[str]:
    """A warning for each (place, text) that names a model as a whole word (any case): shown to
    annotators, it would unblind the side-by-side judgments."""
    found = _names_finder(names)
    return [
        gettext("%(place)s names the model %(name)r, which annotators would see")
        % {"place": place, "name": name}
        for place, text in texts
        for name in found(text)
    ]
