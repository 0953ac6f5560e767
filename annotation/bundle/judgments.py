"""Judgment files (JSONL): one grade or one side-by-side verdict per line."""

import re
from dataclasses import dataclass

from django.contrib.auth.validators import UnicodeUsernameValidator
from django.utils.text import format_lazy
from django.utils.translation import gettext_lazy as _

from annotation.bundle.campaign import VERDICT_RULE
from annotation.bundle.reading import Reader, load_json_line, one_of
from annotation.errors import InputErrorCode as Code
from annotation.models import Verdict

USERNAME = re.compile(UnicodeUsernameValidator.regex)  # anchored: ^...\Z
EXPORT_RECORDS = ("final", "skip")  # the export's lines that are no annotator's label


@dataclass(frozen=True)
class JudgmentRow:
    line: int
    annotator: str
    query: str
    document: str
    grade: int
    comment: str = ""
    seconds_spent: float | None = None


@dataclass(frozen=True)
class PreferenceRow:
    line: int
    annotator: str
    query: str
    model: str
    verdict: str
    strength: int | None = None
    experimental_on_left: bool | None = None
    comment: str = ""
    seconds_spent: float | None = None


def parse_judgment_lines(
    lines, source: str, *, scale_values: set[int]
) -> tuple[list[JudgmentRow], list[PreferenceRow]]:
    """Read JSONL labels: a grade has `document` and `grade`, a side-by-side verdict `model` and `verdict`;
    the export's `"record": "final"` and `"record": "skip"` lines are read past."""
    judgments: list[JudgmentRow] = []
    preferences: list[PreferenceRow] = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        reader = Reader(source, number)
        raw = load_json_line(line, reader)
        row = reader.obj(reader.refuse_bad_text(raw), "(line)")
        if "record" in row:
            # A reviewer's final label or a skip, as the export writes them: not a label to import.
            if row["record"] not in EXPORT_RECORDS:
                raise reader.error(Code.INVALID_VALUE, "record", one_of(EXPORT_RECORDS))
            continue
        annotator = reader.text(row, "annotator", "annotator", max_length=150)
        if not USERNAME.match(annotator):
            message = _("may hold only letters, digits and @ . + - _ (Django's rule)")
            raise reader.error(Code.INVALID_VALUE, "annotator", message)
        query = reader.text(row, "query", "query")
        comment = reader.text(row, "comment", "comment", required=False)
        seconds = reader.get(row, "seconds_spent", "seconds_spent", (int, float), required=False)
        if seconds is not None and seconds < 0:
            raise reader.error(Code.INVALID_VALUE, "seconds_spent", _("must not be negative"))
        if "grade" in row or "document" in row:
            grade = reader.get(row, "grade", "grade", int)
            if grade not in scale_values:
                allowed = ", ".join(map(str, sorted(scale_values)))
                message = format_lazy(
                    _("{grade} is not on the scale ({allowed})"), grade=grade, allowed=allowed
                )
                raise reader.error(Code.GRADE_NOT_ON_SCALE, "grade", message)
            document = reader.text(row, "document", "document")
            judgments.append(JudgmentRow(number, annotator, query, document, grade, comment, seconds))
        elif "verdict" in row or "model" in row:
            verdict = reader.text(row, "verdict", "verdict")
            if verdict not in Verdict.values:
                raise reader.error(Code.INVALID_VALUE, "verdict", VERDICT_RULE)
            strength = reader.get(row, "strength", "strength", int, required=False)
            if strength is not None and (strength not in (1, 2) or verdict == Verdict.SAME):
                raise reader.error(
                    Code.INVALID_VALUE, "strength", _("must be 1 or 2, and only for good or bad")
                )
            side = reader.get(row, "experimental_side", "experimental_side", str, required=False)
            if side not in (None, "left", "right"):
                raise reader.error(Code.INVALID_VALUE, "experimental_side", _("must be 'left' or 'right'"))
            preferences.append(
                PreferenceRow(
                    number,
                    annotator,
                    query,
                    reader.text(row, "model", "model"),
                    verdict,
                    strength,
                    None if side is None else side == "left",
                    comment,
                    seconds,
                )
            )
        else:
            message = _("a line needs `document` and `grade`, or `model` and `verdict`")
            raise reader.error(Code.MISSING_FIELD, "grade", message)
    return judgments, preferences
