"""ndeval's qrels: judgments of documents per intent of a query, the input of the TREC Web track's
diversity evaluation.

One judgment a line, `topic intent docno judgment`: the second column is the intent (ndeval's subtopic;
here any identifier, not only a number), not trec_eval's unused iteration column. The judgment is a number
(graded judgments are read as they are; which count as relevant is the evaluation's threshold). Lines whose
first non-blank character is `#` are comments; blank lines are skipped; fields are separated by any run of
spaces or tabs; a gzipped file is read as such. Errors name the file and line. Read with the windowed
tokenizer of `trec.tokenizer`.
"""

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

import numpy as np

from trec.tokenizer import Comments, Progress, read_columns


@dataclass(frozen=True)
class IntentQrels:
    """One entry per judgment, in file order."""

    query: np.ndarray  # S: query id
    intent: np.ndarray  # S: intent id
    document: np.ndarray  # S: document id
    judgment: np.ndarray  # float64
    line: np.ndarray  # int32: 1-based line of each entry, for error messages
    path: str


def read_intent_qrels(path: str | Path, progress: Progress | None = None) -> IntentQrels:
    """Reads `topic intent docno judgment`; `progress` is told the bytes read as they are."""
    query, intent, document, judgment, line = read_columns(
        str(path),
        n_fields=4,
        keep=(0, 1, 2, 3),
        names=("query id", "intent", "document id", "judgment"),
        progress=progress,
        comments=Comments.FIRST_TEXT,
    )
    return IntentQrels(query, intent, document, judgment, line, str(path))


def write_intent_qrels(out: TextIO, rows: Iterable[tuple[str, str, str, int]]) -> None:
    """Writes ndeval's qrels, `topic intent docno judgment`, one (query, intent, document, judgment) a
    line, as `read_intent_qrels` reads them."""
    for query, intent, document, judgment in rows:
        out.write(f"{query} {intent} {document} {judgment}\n")
