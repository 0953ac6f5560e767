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

from annotation.errors import InputError
from annotation.errors import InputErrorCode as Code


class Reader:
    """Typed field access that names the file and the field path of every problem."""

    def __init__(self, source: str, line: int | None = None):
        self.source = source
        self.line = line

    def error(self, code: Code, path: str, message: str) -> InputError:
        return InputError(code, message, source=self.source, line=self.line, field=path)

    def get(self, obj: dict, key: str, path: str, kind: type | tuple, *, required=True, default=None):
        if key not in obj or obj[key] is None:
            if required:
                raise self.error(Code.MISSING_FIELD, path, "is required")
            return default
        value = obj[key]
        # bool is an int in Python; a grade of `true` is a type error, not 1.
        if isinstance(value, bool) and bool not in (kind if isinstance(kind, tuple) else (kind,)):
            raise self.error(Code.WRONG_TYPE, path, f"must be {_kind_name(kind)}, not a boolean")
        if not isinstance(value, kind):
            raise self.error(Code.WRONG_TYPE, path, f"must be {_kind_name(kind)}, not {type(value).__name__}")
        if isinstance(value, float) and not math.isfinite(value):
            raise self.error(Code.INVALID_VALUE, path, "must be a finite number")
        return value

    def refuse_bad_text(self, data: Any) -> Any:
        """Every string (keys too) free of NUL characters and lone surrogates, which no database stores.
        Walked with a stack, not recursion: a value nested 100,000 deep is an answer, not a RecursionError."""
        pending: list[tuple[Any, str]] = [(data, "")]  # popped from the end: pushed in reverse, read in order
        while pending:
            value, path = pending.pop()
            if isinstance(value, str):
                self._refuse_bad_string(value, path or "(top level)")
            elif isinstance(value, dict):
                for key in value:
                    self._refuse_bad_string(str(key), path or "(top level)")
                pending.extend((value[key], f"{path}.{key}" if path else str(key)) for key in reversed(value))
            elif isinstance(value, list):
                pending.extend((value[index], f"{path}[{index}]") for index in reversed(range(len(value))))
        return data

    def _refuse_bad_string(self, text: str, path: str) -> None:
        if "\x00" in text:
            raise self.error(Code.INVALID_VALUE, path, "must not contain NUL characters")
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            raise self.error(Code.INVALID_VALUE, path, "is not valid Unicode (a lone surrogate)") from None

    def text(self, obj: dict, key: str, path: str, *, required=True, max_length: int | None = None) -> str:
        value = self.get(obj, key, path, str, required=required, default="")
        if required and not value.strip():
            raise self.error(Code.INVALID_VALUE, path, "must not be empty")
        if max_length is not None and len(value) > max_length:
            raise self.error(Code.INVALID_VALUE, path, f"is longer than {max_length} characters")
        return value

    def items(self, obj: dict, key: str, *, required=True) -> list:
        return self.get(obj, key, key, list, required=required, default=[])

    def obj(self, value: Any, path: str) -> dict:
        if not isinstance(value, dict):
            raise self.error(Code.WRONG_TYPE, path, f"must be an object, not {type(value).__name__}")
        return value


def _kind_name(kind: type | tuple) -> str:
    names = {
        str: "a string",
        int: "an integer",
        float: "a number",
        list: "a list",
        dict: "an object",
        bool: "a boolean",
    }
    kinds = kind if isinstance(kind, tuple) else (kind,)
    return " or ".join(names.get(k, k.__name__) for k in kinds)


def _no_constant(name: str):
    raise ValueError(f"{name} is not a number JSON allows")


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
        raise InputError(
            Code.MALFORMED, f"malformed JSON: {exc.msg}", source=source, line=exc.lineno
        ) from None
    except ValueError as exc:
        raise InputError(Code.MALFORMED, f"malformed JSON: {exc}", source=source) from None
    except RecursionError:
        raise InputError(Code.MALFORMED, "malformed JSON: nested too deeply", source=source) from None


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
            raise InputError(Code.MALFORMED, f"not a valid gzip file: {exc}", source=source) from None
        raise InputError(Code.MALFORMED, f"cannot read: {exc.strerror}", source=source) from None
    except (EOFError, zlib.error) as exc:
        message = f"not a valid gzip file: {exc or 'truncated'}"
        raise InputError(Code.MALFORMED, message, source=source) from None


def read_text_file(path: str | Path, source: str, max_bytes: int | None = None) -> str:
    """A file's text: UTF-8, gunzipped first when it starts with gzip's signature. More than `max_bytes`
    (once gunzipped) is refused as it is read: a small file that inflates to gigabytes takes no more memory
    than `max_bytes`."""
    with _opened(path, source) as (stream, gzipped):
        raw = _read_bounded(stream, max_bytes)
    if raw is None:
        grown = "inflates to" if gzipped else "is"
        raise InputError(Code.TOO_LARGE, f"{grown} more than {max_bytes} bytes", source=source)
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(Code.MALFORMED, f"not UTF-8 text (byte {exc.start})", source=source) from None


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
                grown = "inflates to" if gzipped else "is"
                raise InputError(Code.TOO_LARGE, f"{grown} more than {max_bytes} bytes", source=source)
            if len(raw) > MAX_LINE_BYTES:
                message = f"the line is longer than {MAX_LINE_BYTES} bytes"
                raise InputError(Code.TOO_LARGE, message, source=source, line=number)
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                message = f"not UTF-8 text (byte {exc.start})"
                raise InputError(Code.MALFORMED, message, source=source, line=number) from None
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
        raise reader.error(Code.MALFORMED, "", f"malformed JSON: {exc.msg}") from None
    except ValueError as exc:
        raise reader.error(Code.MALFORMED, "", f"malformed JSON: {exc}") from None
    except RecursionError:
        raise reader.error(Code.MALFORMED, "", "malformed JSON: nested too deeply") from None
