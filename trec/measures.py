"""Measure names as the evaluation tools spell them (trec_eval's aliases too): the grammar both apps read,
the campaign settings (`primary_measure`) when checking input and the metrics when computing."""

import re
from dataclasses import dataclass

# Canonical spelling of every measure family, keyed by its lower-case name and aliases.
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
_NEEDS_CUTOFF = {"CG", "P", "R", "Judged"}
_MEASURE = re.compile(r"^\s*([A-Za-z_]+)\s*(?:@\s*(\d+))?\s*$")


@dataclass(frozen=True)
class Measure:
    """A measure family with an optional cut-off k; `str()` is its canonical name (`nDCG@10`, `AP`)."""

    family: str
    k: int | None = None

    def __str__(self) -> str:
        return self.family if self.k is None else f"{self.family}@{self.k}"


def parse_measure(name: str) -> Measure:
    """Reads a measure name, case-insensitively: `ndcg@10` → nDCG@10, `map` → AP, `mrr` → RR.

    Raises ValueError naming the measure when it is unknown, lacks a needed cut-off or has k < 1.
    """
    match = _MEASURE.match(name) if isinstance(name, str) else None
    family = _FAMILIES.get(match.group(1).lower()) if match else None
    if match is None or family is None:
        known = "nDCG, nDCG@k, DCG@k, CG@k, AP, AP@k, RR, P@k, R@k, Judged@k"
        raise ValueError(f"unknown measure {name!r}; known: {known}")
    k = int(match.group(2)) if match.group(2) is not None else None
    if k is not None and k < 1:
        raise ValueError(f"measure {name!r}: the cut-off must be at least 1")
    if k is None and family in _NEEDS_CUTOFF:
        raise ValueError(f"measure {name!r} needs a cut-off, e.g. {family}@10")
    return Measure(family, k)
