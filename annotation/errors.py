"""Errors users see, each with a code and the place it was found (file, line, field)."""

from dataclasses import dataclass
from enum import StrEnum

from django.utils.translation import gettext_lazy as _
from django_stubs_ext import StrOrPromise


class InputErrorCode(StrEnum):
    MALFORMED = "malformed"
    MISSING_FIELD = "missing_field"
    WRONG_TYPE = "wrong_type"
    INVALID_VALUE = "invalid_value"
    DUPLICATE_ID = "duplicate_id"
    UNKNOWN_QUERY = "unknown_query"
    UNKNOWN_DOCUMENT = "unknown_document"
    UNKNOWN_MODEL = "unknown_model"
    UNKNOWN_CAMPAIGN = "unknown_campaign"
    GRADE_NOT_ON_SCALE = "grade_not_on_scale"
    ALREADY_EXISTS = "already_exists"
    TOO_LARGE = "too_large"


@dataclass
class InputError(Exception):
    """Bad input, located: `source` is a file name (or "request"), `line` 1-based when known. The message may
    be lazy (`gettext_lazy`, `format_lazy`): said in the language active where it is shown (the page's, the
    API request's; a command's English), not where the file was read (a thread reading a run knows none)."""

    code: InputErrorCode
    message: StrOrPromise
    source: str = ""
    line: int | None = None
    field: str = ""

    def __str__(self) -> str:
        """As a command line words it: `file:line: field: message`, the form editors and terminals link."""
        place = self.source
        if self.line is not None:
            place = f"{place}:{self.line}" if place else f"line {self.line}"
        parts = [part for part in (place, self.field) if part]
        return ": ".join([*parts, str(self.message)])

    def for_page(self) -> str:
        """As a page words it: the file, then the line and the field named as such, then the message."""
        place = _PAGE_PLACES[bool(self.source), self.line is not None, bool(self.field)]
        message = str(self.message)
        return str(place).format(source=self.source, line=self.line, field=self.field, message=message)


# (file?, line?, field?) -> the sentence a page shows.
_PAGE_PLACES = {
    (True, True, True): _("{source}, line {line}, field {field}: {message}"),
    (True, True, False): _("{source}, line {line}: {message}"),
    (True, False, True): _("{source}, field {field}: {message}"),
    (True, False, False): _("{source}: {message}"),
    (False, True, True): _("Line {line}, field {field}: {message}"),
    (False, True, False): _("Line {line}: {message}"),
    (False, False, True): _("Field {field}: {message}"),
    (False, False, False): "{message}",
}


class TaskErrorCode(StrEnum):
    NOT_ASSIGNED = "not_assigned"
    LEASE_EXPIRED_FULL = "lease_expired_full"
    INVALID_LABEL = "invalid_label"
    NOT_FOUND = "not_found"
    GRADE_NOT_ON_SCALE = "grade_not_on_scale"
    SKIPPED = "skipped"
    NOT_LEASED = "not_leased"
    NOT_MEMBER = "not_member"
    STALE = "stale"
    ARCHIVED = "archived"
    EXCLUDED = "excluded"


@dataclass
class TaskError(Exception):
    """A submission the rules refuse, with a message for the annotator."""

    code: TaskErrorCode
    message: str
    field: str = ""

    def __str__(self) -> str:
        return f"{self.field}: {self.message}" if self.field else self.message

    def for_page(self) -> str:
        """As a page says it: the field named when it is one the reader filled in, not the page's hidden
        `version` (a stale tab's message starts with what happened)."""
        return self.message if self.field in ("", "version") else str(self)
