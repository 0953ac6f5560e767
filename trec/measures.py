"""Measure names as the evaluation tools spell them (trec_eval's aliases too): the grammar both apps read,
the campaign settings (`primary_measure`) when checking input and the metrics when computing.

Two kinds of measure: ranking measures over graded labels (`nDCG@10`, `AP`: trec_eval's), and intent-aware
measures over intent-level judgments (`alpha_nDCG@20`, `ERR_IA@20`, `StRecall@20`: ndeval's, spelt as
ir_measures spells them). A caller says which kind it can compute; the other is refused by name.
"""

import math
import re
from dataclasses import dataclass

# Canonical spelling of every measure family, keyed by its lower-case name and aliases ("-" read as "_").
_FAMILIES = {
    "ndcg": "nDCG",
    "dcg": "DCG",
    "cg": "CG",
    "ap": "AP",
    "map": "AP",
    "rr": "RR",
    "mrr": "RR",
    "recip_rank": "RR",
    "p": "P",
    "r": "R",
    "recall": "R",
    "judged": "Judged",
}
# ir_measures' names, and ndeval's column names (alpha-nDCG, ERR-IA, strec...) as aliases.
_INTENT_FAMILIES = {
    "alpha_ndcg": "alpha_nDCG",
    "alpha_dcg": "alpha_DCG",
    "err_ia": "ERR_IA",
    "nerr_ia": "nERR_IA",
    "p_ia": "P_IA",
    "strecall": "StRecall",
    "strec": "StRecall",
}
INTENT_FAMILIES = frozenset(_INTENT_FAMILIES.values())
_TAKE_ALPHA = {"alpha_nDCG", "alpha_DCG"}
DEFAULT_ALPHA = 0.5  # ndeval's and ir_measures' default
_NEEDS_CUTOFF = {"CG", "P", "R", "Judged", *INTENT_FAMILIES}
_MEASURE = re.compile(
    r"^\s*([A-Za-z_-]+)\s*(?:\(\s*alpha\s*=\s*([^)\s]*)\s*\))?\s*(?:@\s*(\d+))?\s*$", re.IGNORECASE
)
_KNOWN = "nDCG, nDCG@k, DCG@k, CG@k, AP, AP@k, RR, P@k, R@k, Judged@k"
_KNOWN_INTENT = "alpha_nDCG@k, alpha_nDCG(alpha=a)@k, alpha_DCG@k, ERR_IA@k, nERR_IA@k, P_IA@k, StRecall@k"


@dataclass(frozen=True)
class Measure:
    """A measure family with an optional cut-off k and, for alpha_nDCG and alpha_DCG, a redundancy
    intolerance `alpha` (None: the default 0.5). `str()` is its canonical name (`nDCG@10`, `AP`,
    `alpha_nDCG(alpha=0.3)@20`), the alpha shown only when it is not the default, as ir_measures does."""

    family: str
    k: int | None = None
    alpha: float | None = None

    @property
    def intent_aware(self) -> bool:
        return self.family in INTENT_FAMILIES

    def __str__(self) -> str:
        name = self.family
        if self.alpha is not None and self.alpha != DEFAULT_ALPHA:
            name += f"(alpha={self.alpha!r})"
        return name if self.k is None else f"{name}@{self.k}"


class MeasureError(ValueError):
    """A measure name that cannot be read. The message is the English `template % values`; both are kept, so
    that an application can say it in its reader's language (`make messages` gathers the templates)."""

    def __init__(self, template: str, **values: object):
        self.template, self.values = template, values
        super().__init__(template % values if values else template)


def parse_measure(name: str, *, intents: bool = False) -> Measure:
    """Reads a measure name, case-insensitively: `ndcg@10` → nDCG@10, `map` → AP, `mrr` → RR; with
    `intents`, the intent-aware ones instead: `alpha-ndcg@20` → alpha_nDCG@20, `strec@10` → StRecall@10.

    Raises MeasureError naming the measure when it is unknown, of the other kind, lacks a needed cut-off, has
    k < 1 or an alpha outside [0, 1].
    """
    match = _MEASURE.match(name) if isinstance(name, str) else None
    key = match.group(1).lower().replace("-", "_") if match else ""
    family = (_INTENT_FAMILIES if intents else _FAMILIES).get(key)
    if match is None or family is None:
        if match and not intents and key in _INTENT_FAMILIES:
            raise MeasureError(
                "measure %(name)s is intent-aware: it needs qrels with intents", name=repr(name)
            )
        if match and intents and key in _FAMILIES:
            raise MeasureError(
                "measure %(name)s is not intent-aware; intent-aware measures: %(known)s",
                name=repr(name),
                known=_KNOWN_INTENT,
            )
        known = _KNOWN_INTENT if intents else _KNOWN
        raise MeasureError("unknown measure %(name)s; known: %(known)s", name=repr(name), known=known)
    k = int(match.group(3)) if match.group(3) is not None else None
    if k is not None and k < 1:
        raise MeasureError("measure %(name)s: the cut-off must be at least 1", name=repr(name))
    if k is None and family in _NEEDS_CUTOFF:
        raise MeasureError(
            "measure %(name)s needs a cut-off, e.g. %(family)s@10", name=repr(name), family=family
        )
    alpha = None
    if match.group(2) is not None:
        if family not in _TAKE_ALPHA:
            raise MeasureError(
                "measure %(name)s: only alpha_nDCG and alpha_DCG take an alpha", name=repr(name)
            )
        alpha = _alpha(match.group(2), name)
    return Measure(family, k, alpha)


# trec_eval's `-m family.k1,k2`: each parameter a cut-off of one of these.
_TREC_EVAL_CUT_OFFS = {"ndcg_cut": "nDCG", "map_cut": "AP", "p": "P", "recall": "R"}
_TREC_EVAL_NAME = re.compile(r"^\s*([A-Za-z_]+)\.(\d+(?:,\d+)*)\s*$")


def trec_eval_names(text: str) -> list[str]:
    """A measure argument as `parse_measure` reads it, trec_eval's parameterised spelling included:
    `ndcg_cut.5,10` → nDCG@5, nDCG@10; `P.10` → P@10; `map_cut.100` → AP@100; `recall.1000` → R@1000.
    Any other text is returned as it is (one name). trec_eval's gain is linear: its `ndcg_cut.10` is
    nDCG@10 with `Gain.LINEAR`; the gain is the caller's setting, not the name's."""
    match = _TREC_EVAL_NAME.match(text)
    family = _TREC_EVAL_CUT_OFFS.get(match.group(1).lower()) if match else None
    if match is None or family is None:
        return [text]
    return [f"{family}@{k}" for k in match.group(2).split(",")]


def _alpha(text: str, name: str) -> float:
    """The alpha, a float: `1` reads as 1.0, which ir_measures prints as `1.0` (and, as `1`, would refuse)."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not 0 <= value <= 1:
        raise MeasureError("measure %(name)s: alpha must be a number from 0 to 1", name=repr(name))
    return value
