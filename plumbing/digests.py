"""SHA-256 digests of what a computation read and of the code that computes, for results kept in the shared
cache under them: any change of an input, or a deployment that changes the code, gives another digest, so
a kept result is never served for other inputs and needs no stamp kept in step with the tables."""

import dataclasses
import hashlib
import json
from collections.abc import Iterable
from datetime import date, datetime, time, timedelta
from decimal import Decimal
from pathlib import Path

import numpy as np
from django.db.models import Model


def inputs_digest(*values: object) -> str:
    """A digest of `values`: NumPy arrays (dtype, shape and every element), dataclasses (each field), model
    instances (each column), lists, tuples and dicts of these, and plain scalars. Another type raises
    TypeError rather than being digested by something that might leave part of it out."""
    digest = hashlib.sha256()
    for value in values:
        _feed(digest, value)
    return digest.hexdigest()


_SCALARS = (str, int, float, bool, type(None), date, datetime, time, timedelta, Decimal)


def _feed(digest, value: object) -> None:
    if isinstance(value, np.ndarray):
        digest.update(f"array {value.dtype.str} {value.shape}\n".encode())
        if value.dtype.hasobject:
            _feed_objects(digest, value.tolist())
        else:
            digest.update(np.ascontiguousarray(value).tobytes())
    elif isinstance(value, Model):
        digest.update(f"model {value._meta.label}\n".encode())
        _feed(
            digest, [(field.attname, getattr(value, field.attname)) for field in value._meta.concrete_fields]
        )
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        digest.update(f"dataclass {type(value).__module__}.{type(value).__qualname__}\n".encode())
        for field in dataclasses.fields(value):
            _feed(digest, field.name)
            _feed(digest, getattr(value, field.name))
    elif isinstance(value, list | tuple | dict):
        try:
            # Rows of plain values (a diversity read's intents and attributes) in C: whatever JSON can
            # write is plain, and its repr tells every value and type apart (1 from "1", a tuple from a list).
            json.dumps(value)
        except TypeError:
            digest.update(f"{type(value).__name__} {len(value)}\n".encode())
            for item in value.items() if isinstance(value, dict) else value:
                _feed(digest, item)
        else:
            text = repr(value)
            digest.update(f"plain {len(text)}\n".encode() + text.encode())
    elif isinstance(value, (*_SCALARS, np.generic)):
        text = repr(value)
        digest.update(f"{type(value).__name__} {len(text)}\n".encode() + text.encode())
    else:
        raise TypeError(f"no digest of {type(value).__qualname__}")


def _feed_objects(digest, items: list) -> None:
    try:
        # Text only (a campaign's query ids and texts): every length, then the text joined, which tells
        # them apart as the list's repr does, in a fifth of its time; join refuses anything but text.
        joined = "".join(items)
    except TypeError:
        _feed(digest, items)
    else:
        lengths = np.fromiter(map(len, items), dtype=np.int64, count=len(items))
        digest.update(b"text\n" + lengths.tobytes())
        digest.update(joined.encode("utf-8", "surrogatepass"))


def sources_digest(paths: Iterable[Path]) -> str:
    """A digest of the Python source under `paths` (files, or folders read recursively), in path order."""
    digest = hashlib.sha256()
    files = sorted(
        file for path in paths for file in (sorted(path.rglob("*.py")) if path.is_dir() else [path])
    )
    for file in files:
        text = file.read_bytes()
        digest.update(f"{file.name} {len(text)}\n".encode() + text)
    return digest.hexdigest()
