"""Reading decoded input field by field: every problem names its file, line and field path."""

import gzip
import json
import math
import tempfile
import zlib
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, BinaryIO, cast

from django.utils.functional import lazy
from django.utils.text import format_lazy
from django.utils.translation import gettext, pgettext_lazy
from django.utils.translation import gettext_lazy as _
from django_stubs_ext import StrOrPromise

from annotation.errors import InputError
from annotation.errors import InputErrorCode as Code
from trec.measures import MeasureError
from trec.tokenizer import TrecFormatError


class Reader:
    """Typed field access that names the file and the field path of every problem."""

    def __init__(self, source: str, line: int | None = None):
        self.source = source
        self.line = line

    def error(self, code: Code, path: str, message: StrOrPromise) -> InputError:
        return InputError(code, message, source=self.source, line=self.line, field=path)

    def get(self, obj: dict, key: str, path: str, kind: type | tuple, *, required=True, default=None):
        if key not in obj or obj[key] is None:
            if required:
                raise self.error(Code.MISSING_FIELD, path, _("is required"))
            return default
        value = obj[key]
        # bool is an int in Python; a grade of `true` is a type error, not 1.
        if isinstance(value, bool) and bool not in (kind if isinstance(kind, tuple) else (kind,)):
            message = format_lazy(_("must be {kind}, not a boolean"), kind=_kind_name(kind))
            raise self.error(Code.WRONG_TYPE, path, message)
        if not isinstance(value, kind):
            raise self.error(Code.WRONG_TYPE, path, must_be(_kind_name(kind), value))
        if isinstance(value, float) and not math.isfinite(value):
            raise self.error(Code.INVALID_VALUE, path, _("must be a finite number"))
        return value

    def refuse_bad_text(self, data: Any) -> Any:
        """Every string (keys too) free of NUL characters and lone surrogates, which no database stores.
        Walked with a stack, not recursion: a value nested 100,000 deep is an answer, not a RecursionError."""
        pending: list[tuple[Any, str]] = [(data, "")]  # popped from the end: pushed in reverse, read in order
        while pending:
            value, path = pending.pop()
            if isinstance(value, str):
                self._refuse_bad_string(value, path or TOP_LEVEL)
            elif isinstance(value, dict):
                for key in value:
                    self._refuse_bad_string(str(key), path or TOP_LEVEL)
                pending.extend((value[key], f"{path}.{key}" if path else str(key)) for key in reversed(value))
            elif isinstance(value, list):
                pending.extend((value[index], f"{path}[{index}]") for index in reversed(range(len(value))))
        return data

    def _refuse_bad_string(self, text: str, path: str) -> None:
        if "\x00" in text:
            raise self.error(Code.INVALID_VALUE, path, _("must not contain NUL characters"))
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            message = _("is not valid Unicode (a lone surrogate)")
            raise self.error(Code.INVALID_VALUE, path, message) from None

    def text(self, obj: dict, key: str, path: str, *, required=True, max_length: int | None = None) -> str:
        value = self.get(obj, key, path, str, required=required, default="")
        if required and not value.strip():
            raise self.error(Code.INVALID_VALUE, path, _("must not be empty"))
        if max_length is not None and len(value) > max_length:
            raise self.error(Code.INVALID_VALUE, path, longer_than(max_length))
        return value

    def items(self, obj: dict, key: str, *, required=True) -> list:
        return self.get(obj, key, key, list, required=required, default=[])

    def obj(self, value: Any, path: str) -> dict:
        if not isinstance(value, dict):
            raise self.error(Code.WRONG_TYPE, path, must_be(_("an object"), value))
        return value


# The field path of a whole document or line: said, not a path.
TOP_LEVEL = "(top level)"

_KIND_NAMES = {
    str: _("a string"),
    int: _("an integer"),
    float: _("a number"),
    list: _("a list"),
    dict: _("an object"),
    bool: _("a boolean"),
}
# The type a value was found to have, as Python names it (the English messages have always said `not int`).
_TYPE_NAMES = {
    str: pgettext_lazy("a JSON value's type", "str"),
    int: pgettext_lazy("a JSON value's type", "int"),
    float: pgettext_lazy("a JSON value's type", "float"),
    list: pgettext_lazy("a JSON value's type", "list"),
    dict: pgettext_lazy("a JSON value's type", "dict"),
    bool: pgettext_lazy("a JSON value's type", "bool"),
}


def _kind_name(kind: type | tuple) -> StrOrPromise:
    first, *others = kind if isinstance(kind, tuple) else (kind,)
    name: StrOrPromise = _KIND_NAMES.get(first, first.__name__)
    for other in others:
        name = format_lazy(_("{kind} or {other}"), kind=name, other=_KIND_NAMES.get(other, other.__name__))
    return name


def type_name(value: Any) -> StrOrPromise:
    """The type of a JSON value, as a message says it."""
    return _TYPE_NAMES.get(type(value), type(value).__name__)


def must_be(kind: StrOrPromise, value: Any) -> StrOrPromise:
    return format_lazy(_("must be {kind}, not {found}"), kind=kind, found=type_name(value))


def one_of(allowed: Iterable[str]) -> StrOrPromise:
    return format_lazy(_("must be one of {allowed}"), allowed=", ".join(allowed))


def longer_than(max_length: int) -> StrOrPromise:
    return format_lazy(_("is longer than {max_length} characters"), max_length=max_length)


class NotJsonNumber(ValueError):
    """NaN, Infinity or -Infinity in a JSON text."""

    def __init__(self, name: str):
        super().__init__(f"{name} is not a number JSON allows")
        self.problem = format_lazy(_("{name} is not a number JSON allows"), name=name)


def _no_constant(name: str):
    raise NotJsonNumber(name)


def json_decoder() -> json.JSONDecoder:
    """A decoder of JSON as the standard allows it: NaN and Infinity refused (Python's json accepts them)."""
    return json.JSONDecoder(parse_constant=_no_constant)


def json_decode(text: str) -> Any:
    """JSON as the standard allows it: NaN and Infinity refused (Python's json accepts them)."""
    return json.loads(text, parse_constant=_no_constant)


def load_json(text: str, source: str) -> Any:
    try:
        return json_decode(text)
    except json.JSONDecodeError as exc:
        raise InputError(Code.MALFORMED, malformed_json(exc.msg), source=source, line=exc.lineno) from None
    except NotJsonNumber as exc:
        raise InputError(Code.MALFORMED, malformed_json(exc.problem), source=source) from None
    except ValueError as exc:  # Python's own words, e.g. an integer of more digits than it converts
        raise InputError(Code.MALFORMED, malformed_json(str(exc)), source=source) from None
    except RecursionError:
        raise InputError(Code.MALFORMED, malformed_json(NESTED_TOO_DEEPLY), source=source) from None


NESTED_TOO_DEEPLY = _("nested too deeply")


def malformed_json(problem: StrOrPromise) -> StrOrPromise:
    """The JSON decoder's own words (`Expecting value`) stay as it says them."""
    return format_lazy(_("malformed JSON: {problem}"), problem=problem)


@contextmanager
def _opened(path: str | Path, source: str) -> Iterator[tuple[BinaryIO, bool]]:
    """The file's bytes, gunzipped when it starts with gzip's signature, and whether it did; a file that
    cannot be read, or a broken gzip stream, is an `InputError` of `source` wherever the reading fails."""
    try:
        with open(path, "rb") as file:
            gzipped = file.read(2) == b"\x1f\x8b"
            file.seek(0)
            yield cast(BinaryIO, gzip.GzipFile(fileobj=file)) if gzipped else file, gzipped
    except OSError as exc:
        if isinstance(exc, gzip.BadGzipFile):
            raise InputError(Code.MALFORMED, not_gzip(str(exc)), source=source) from None
        raise InputError(Code.MALFORMED, cannot_read(exc.strerror or str(exc)), source=source) from None
    except (EOFError, zlib.error) as exc:
        raise InputError(Code.MALFORMED, not_gzip(str(exc) or _("truncated")), source=source) from None


def not_gzip(problem: StrOrPromise) -> StrOrPromise:
    return format_lazy(_("not a valid gzip file: {problem}"), problem=problem)


def cannot_read(problem: str) -> StrOrPromise:
    """The system's words (`No such file or directory`) stay as it says them."""
    return format_lazy(_("cannot read: {problem}"), problem=problem)


def too_large(max_bytes: int | None, gzipped: bool) -> StrOrPromise:
    if gzipped:
        return format_lazy(_("inflates to more than {max_bytes} bytes"), max_bytes=max_bytes)
    return format_lazy(_("is more than {max_bytes} bytes"), max_bytes=max_bytes)


def line_too_long(max_bytes: int) -> StrOrPromise:
    return format_lazy(_("the line is longer than {max_bytes} bytes"), max_bytes=max_bytes)


def not_utf8(byte: int) -> StrOrPromise:
    return format_lazy(_("not UTF-8 text (byte {byte})"), byte=byte)


def read_text_file(path: str | Path, source: str, max_bytes: int | None = None) -> str:
    """A file's text: UTF-8, gunzipped first when it starts with gzip's signature. More than `max_bytes`
    (once gunzipped) is refused as it is read: a small file that inflates to gigabytes takes no more memory
    than `max_bytes`."""
    with _opened(path, source) as (stream, gzipped):
        raw = _read_bounded(stream, max_bytes)
    if raw is None:
        raise InputError(Code.TOO_LARGE, too_large(max_bytes, gzipped), source=source)
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(Code.MALFORMED, not_utf8(exc.start), source=source) from None


def _read_bounded(file, max_bytes: int | None) -> bytes | bytearray | None:
    """The file's bytes, read a mebibyte at a time; None as soon as more than `max_bytes` were read."""
    if max_bytes is None:
        return file.read()
    raw = bytearray()
    while chunk := file.read(min(max_bytes + 1 - len(raw), 1 << 20)):
        raw += chunk
        if len(raw) > max_bytes:
            return None
    return raw


MAX_LINE_BYTES = 1 << 16


def text_lines(path: str | Path, source: str, max_bytes: int | None = None) -> Iterator[tuple[int, str]]:
    """A file's lines as (number, text), read as a stream: gunzipped first when it starts with gzip's
    signature, each line UTF-8 and at most MAX_LINE_BYTES, more than `max_bytes` in all (once gunzipped)
    refused as it is read. Memory holds one buffer and one line, whatever the file's size."""
    with _opened(path, source) as (stream, gzipped):
        total = 0
        number = 0
        while raw := stream.readline(MAX_LINE_BYTES + 1):
            number += 1
            total += len(raw)
            if max_bytes is not None and total > max_bytes:
                raise InputError(Code.TOO_LARGE, too_large(max_bytes, gzipped), source=source)
            if len(raw) > MAX_LINE_BYTES:
                message = line_too_long(MAX_LINE_BYTES)
                raise InputError(Code.TOO_LARGE, message, source=source, line=number)
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise InputError(Code.MALFORMED, not_utf8(exc.start), source=source, line=number) from None
            yield number, text


@contextmanager
def spooled_lines(
    chunks: Iterable[bytes], source: str, max_bytes: int | None = None
) -> Iterator[Iterator[tuple[int, str]]]:
    """An upload's lines as `text_lines` reads them: its chunks are spooled to a temporary file first (a
    gzip upload is only known whole), which is removed on leaving."""
    with tempfile.NamedTemporaryFile(suffix=".upload") as file:
        for chunk in chunks:
            file.write(chunk)
        file.flush()
        yield text_lines(file.name, source, max_bytes)


def load_json_line(text: str, reader: Reader) -> Any:
    """One line's JSON, its problems located at the reader's line."""
    try:
        return json_decode(text)
    except json.JSONDecodeError as exc:
        raise reader.error(Code.MALFORMED, "", malformed_json(exc.msg)) from None
    except NotJsonNumber as exc:
        raise reader.error(Code.MALFORMED, "", malformed_json(exc.problem)) from None
    except ValueError as exc:
        raise reader.error(Code.MALFORMED, "", malformed_json(str(exc))) from None
    except RecursionError:
        raise reader.error(Code.MALFORMED, "", malformed_json(NESTED_TOO_DEEPLY)) from None


def with_id(message: StrOrPromise, identifier: str) -> StrOrPromise:
    """`message` naming an id as Python writes it: `_("unknown query {id}")` → unknown query 'q9'."""
    return format_lazy(message, id=repr(identifier))


# The columns a TREC reader names in its errors (`trec.files.read_run`, `read_qrels`).
TREC_COLUMNS = {
    "query id": pgettext_lazy("a TREC file's column", "query id"),
    "document id": pgettext_lazy("a TREC file's column", "document id"),
    "score": pgettext_lazy("a TREC file's column", "score"),
    "label": pgettext_lazy("a TREC file's column", "label"),
}


def _trec_said(template: str, values: dict[str, object]) -> str:
    if not values:
        return gettext(template)
    named = dict(values)
    if "name" in named:
        named["name"] = TREC_COLUMNS.get(str(named["name"]), named["name"])
    return gettext(template) % named


_trec_said_lazily = lazy(_trec_said, str)


def trec_message(error: TrecFormatError | MeasureError) -> StrOrPromise:
    """A TREC reader's error (or a measure name's) in the language it is shown in: its template through the
    catalogue."""
    return _trec_said_lazily(error.template, error.values)
