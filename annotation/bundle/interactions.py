"""Interaction logs (JSONL, docs/interactions.md): one impression a line, read as a stream.

A line is an object with `query`, `model`, `request`, `position`, `document`, `clicked`, and optionally
`session`, `dwell`, `cart`, `purchase`, `rating`. Lines are checked one at a time and handed on as rows,
so a file of any length is read in the memory of one line, plus 16 bytes a request (some 50 at the end)
for the check that a request's lines come together (as a search log writes them): a request whose id
comes back after another request's lines is refused at the line where it comes back.
"""

import hashlib
import math
from array import array
from collections.abc import Iterable, Iterator
from typing import NamedTuple

import numpy as np
from django.utils.text import format_lazy
from django.utils.translation import gettext_lazy as _
from django_stubs_ext import StrOrPromise

from annotation.bundle.reading import Reader, json_decoder, load_json_line, longer_than
from annotation.errors import InputError
from annotation.errors import InputErrorCode as Code

REQUIRED = ("query", "model", "request", "position", "document", "clicked")
OPTIONAL = ("session", "dwell", "cart", "purchase", "rating")
FIELDS = frozenset(REQUIRED + OPTIONAL)
DOCUMENT_MAX_LENGTH = 200  # Document.external_id's
_DECODER = json_decoder()


class ImpressionRow(NamedTuple):
    """A checked line: the query's and model's primary keys, the document's id, the request's number in the
    file (0, 1, ... in order of first appearance) and the session's 64-bit key (None without sessions)."""

    line: int
    query: int
    model: int
    request: int
    session: int | None
    position: int
    document: str
    clicked: bool
    dwell: float | None
    cart: bool
    purchase: bool
    rating: float | None


class InteractionLogReader:
    """Reads a log's lines into `ImpressionRow`s against the campaign's queries and models (id → key).

    After `rows` is exhausted, `requests` counts the lists and `sessions` says whether lines name sessions
    (all do or none do)."""

    def __init__(self, source: str, *, queries: dict[str, int], models: dict[str, int]):
        self.source = source
        self.queries = queries
        self.models = models
        self.requests = 0
        self.sessions: bool | None = None
        # Per request: the hash of its id and its first line, to find a request that comes back.
        self._request_hashes = array("q")
        self._request_lines = array("q")

    def rows(self, lines: Iterable[tuple[int, str]]) -> Iterator[ImpressionRow]:
        current: object = None
        current_key: tuple = ()
        positions: set[int] = set()
        session_raw: object = None
        session_key: int | None = None
        for number, text in lines:
            if not text.strip():
                continue
            row = self._object(number, text)
            values = self._fast(row) or self._checked(Reader(self.source, number), row)
            query, model, request, session, position = values[:5]
            has_session = session is not None
            if self.sessions is None:
                self.sessions = has_session
            elif has_session != self.sessions:
                reader = Reader(self.source, number)
                if self.sessions:
                    message = _("is required: earlier lines name theirs")
                    raise reader.error(Code.MISSING_FIELD, "session", message)
                message = _("earlier lines name none: all lines or none")
                raise reader.error(Code.INVALID_VALUE, "session", message)
            if session != session_raw:
                session_raw, session_key = session, _key(session)
            if request != current:
                current, positions = request, set()
                current_key = (query, model, session_key)
                self._request_hashes.append(hash(request))
                self._request_lines.append(number)
                self.requests += 1
            elif (query, model, session_key) != current_key:
                differs = [a != b for a, b in zip((query, model, session_key), current_key, strict=True)]
                name = ("query", "model", "session")[differs.index(True)]
                message = format_lazy(
                    _("differs within request {request}: a request shows one list"), request=repr(request)
                )
                raise Reader(self.source, number).error(Code.INVALID_VALUE, name, message)
            if position in positions:
                message = format_lazy(
                    _("{position} is shown twice in request {request}"),
                    position=position,
                    request=repr(request),
                )
                raise Reader(self.source, number).error(Code.DUPLICATE_ID, "position", message)
            positions.add(position)
            yield ImpressionRow(number, query, model, self.requests - 1, session_key, *values[4:])
        self._refuse_returning_requests()

    def _fast(self, row: dict) -> tuple | None:
        """The line's values when it is plainly valid (ids as strings, every value of its exact type), else
        None: `_checked` then says what is wrong, or takes what the fast path does not (ids as integers).
        Most of an import's time is here, so it tests types with `is`, not `isinstance`."""
        if not FIELDS.issuperset(row):
            return None
        get = row.get
        query = self.queries.get(get("query"))  # type: ignore[arg-type]
        model = self.models.get(get("model"))  # type: ignore[arg-type]
        request, session, position = get("request"), get("session"), get("position")
        document, clicked, dwell = get("document"), get("clicked"), get("dwell")
        cart, purchase, rating = get("cart", False), get("purchase", False), get("rating")
        plain = (
            query is not None
            and model is not None
            and type(request) is str
            and request
            and not request.isspace()
            and (session is None or (type(session) is str and session and not session.isspace()))
            and type(position) is int
            and position >= 1
            and type(document) is str
            and document
            and document.isascii()
            and not document.isspace()
            and "\x00" not in document
            and len(document) <= DOCUMENT_MAX_LENGTH
            and type(clicked) is bool
            and (dwell is None or ((type(dwell) is float or type(dwell) is int) and 0 <= dwell < math.inf))
            and type(cart) is bool
            and type(purchase) is bool
            and (rating is None or ((type(rating) is float or type(rating) is int) and math.isfinite(rating)))
        )
        if not plain:
            return None
        dwell = None if dwell is None else float(dwell)
        rating = None if rating is None else float(rating)
        return query, model, request, session, position, document, clicked, dwell, cart, purchase, rating

    def _checked(self, reader: Reader, row: dict) -> tuple:
        """The line's values, each field checked in turn: the first problem raised with its field."""
        unknown = row.keys() - FIELDS
        if unknown:
            name = sorted(unknown)[0]
            known = ", ".join(REQUIRED + OPTIONAL)
            message = format_lazy(_("is not a field of a log line ({known})"), known=known)
            raise reader.error(Code.INVALID_VALUE, name, message)
        query = self._lookup(
            reader,
            row,
            "query",
            self.queries,
            Code.UNKNOWN_QUERY,
            _("{id} is not one of the campaign's queries"),
        )
        model = self._lookup(
            reader,
            row,
            "model",
            self.models,
            Code.UNKNOWN_MODEL,
            _("{id} is not one of the campaign's models"),
        )
        request = _identifier(reader, row, "request")
        session = _identifier(reader, row, "session") if row.get("session") is not None else None
        position = reader.get(row, "position", "position", int)
        if position < 1:
            raise reader.error(Code.INVALID_VALUE, "position", _("must be 1 or more (1 is the top)"))
        return (
            query,
            model,
            request,
            session,
            position,
            _document(reader, row),
            reader.get(row, "clicked", "clicked", bool),
            _seconds(reader, row),
            reader.get(row, "cart", "cart", bool, required=False, default=False),
            reader.get(row, "purchase", "purchase", bool, required=False, default=False),
            _number(reader, row, "rating"),
        )

    def _object(self, number: int, text: str) -> dict:
        try:
            raw, end = _DECODER.raw_decode(text)  # the common case: no leading space, only a newline after
            if end == len(text) or text[end:].isspace():
                return raw if type(raw) is dict else Reader(self.source, number).obj(raw, "(line)")
        except (ValueError, RecursionError):
            pass  # said again, with its place, below
        reader = Reader(self.source, number)
        return reader.obj(load_json_line(text, reader), "(line)")

    @staticmethod
    def _lookup(
        reader: Reader, row: dict, name: str, keys: dict[str, int], code: Code, unknown: StrOrPromise
    ) -> int:
        """`unknown` says an id that is not among `keys`: `_("{id} is not one of the campaign's models")`."""
        value = _identifier(reader, row, name)
        try:
            return keys[value]
        except KeyError:
            raise reader.error(code, name, format_lazy(unknown, id=repr(value))) from None

    def _refuse_returning_requests(self) -> None:
        hashes = np.frombuffer(self._request_hashes, dtype=np.int64)
        order = np.argsort(hashes, kind="stable")
        again = np.flatnonzero(hashes[order][1:] == hashes[order][:-1])
        if again.size:
            first, second = sorted(np.asarray(self._request_lines)[order[again[0] : again[0] + 2]])
            message = format_lazy(
                _(
                    "the request of line {first} comes back after other requests' lines; "
                    "a request's lines must come together (sort the log by request)"
                ),
                first=first,
            )
            raise InputError(
                Code.INVALID_VALUE, message, source=self.source, line=int(second), field="request"
            )


def _identifier(reader: Reader, row: dict, name: str) -> str:
    """An id given as a string or an integer, as a non-empty string."""
    value = reader.get(row, name, name, (str, int))
    text = str(value)
    if not text.strip():
        raise reader.error(Code.INVALID_VALUE, name, _("must not be empty"))
    return text


def _document(reader: Reader, row: dict) -> str:
    document = _identifier(reader, row, "document")
    if len(document) > DOCUMENT_MAX_LENGTH:
        raise reader.error(Code.INVALID_VALUE, "document", longer_than(DOCUMENT_MAX_LENGTH))
    reader.refuse_bad_text({"document": document})
    return document


def _number(reader: Reader, row: dict, name: str) -> float | None:
    value = reader.get(row, name, name, (int, float), required=False)
    return None if value is None else float(value)


def _seconds(reader: Reader, row: dict) -> float | None:
    dwell = _number(reader, row, "dwell")
    if dwell is not None and not (dwell >= 0 and math.isfinite(dwell)):
        raise reader.error(Code.INVALID_VALUE, "dwell", _("must be seconds, 0 or more"))
    return dwell


def _key(session: str | None) -> int | None:
    """A session id as a signed 64-bit key, the same in every process."""
    if session is None:
        return None
    digest = hashlib.blake2b(session.encode("utf-8", "surrogatepass"), digest_size=8).digest()
    return int.from_bytes(digest, "big", signed=True)
