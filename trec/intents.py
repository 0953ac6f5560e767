"""ndeval's qrels: judgments of documents per intent of a query, the input of the TREC Web track's
diversity evaluation.

One judgment a line, `topic intent docno judgment`: the second column is the intent (ndeval's subtopic;
here any identifier, not only a number), not trec_eval's unused iteration column. The judgment is a number
(graded judgments are read as they are; which count as relevant is the evaluation's threshold). Lines whose
first non-blank character is `#` are comments; blank lines are skipped; fields are separated by any run of
spaces or tabs; a gzipped file is read as such. Errors name the file and line. Read with the windowed
tokenizer of `trec.files`.
"""

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from trec.files import LAST_BLANK, NEWLINE, Progress, read_columns

_COMMENT = ord("#")
_SPACE = ord(" ")


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
        prepare=_blank_comments,
    )
    return IntentQrels(query, intent, document, judgment, line, str(path))


def _blank_comments(window: np.ndarray) -> None:
    """Turns every comment line of a window of whole lines into spaces, in place: the tokenizer then skips
    it as a blank line, and the line numbers of the others stay right."""
    hashes = np.flatnonzero(window == _COMMENT)
    if not hashes.size:
        return
    line_starts = np.concatenate(([0], np.flatnonzero(window == NEWLINE) + 1))
    line = np.searchsorted(line_starts, hashes, side="right") - 1
    starts = line_starts[line]
    # A `#` starts a comment when only blanks come before it on its line.
    first = np.ones(hashes.size, dtype=bool)
    indented = hashes > starts
    if indented.any():
        text = window > LAST_BLANK
        bounds = np.column_stack((starts[indented], hashes[indented])).ravel()
        first[indented] = ~np.logical_or.reduceat(text, bounds)[::2]
    comment_lines = np.unique(line[first])
    if not comment_lines.size:
        return
    # Blank each comment line up to its newline: +1 where one starts and -1 where it ends, summed.
    ends = np.append(line_starts[1:] - 1, window.size)[comment_lines]
    marks = np.zeros(window.size + 1, dtype=np.int8)
    marks[line_starts[comment_lines]] = 1
    marks[ends] -= 1
    window[np.cumsum(marks[:-1], dtype=np.int8).astype(bool)] = _SPACE
