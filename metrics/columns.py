"""A queryset's rows as NumPy columns, for selectors that read a whole campaign's labels.

Building a Python tuple per row costs more than the database spends on the query, so on PostgreSQL each
column comes back as one value: `array_send(array_agg(column))`, the binary form of an int8 (or float8) array,
which NumPy reads as fixed-size (length, value) records. The aggregates of one query see the rows in the same
order, so the i-th entries of the columns are one row. (`COPY ... TO STDOUT` would send a message per row,
and psycopg reads those one by one in Python.) Elsewhere (SQLite) the rows come from `fetchall`.
"""

from itertools import chain

import numpy as np
import psycopg
from django.db import connections
from django.db.models import QuerySet

_PG_TYPES = {"i": ("int8", ">i8", np.int64), "f": ("float8", ">f8", np.float64)}


def fetch_columns(queryset: QuerySet, kinds: str) -> list[np.ndarray]:
    """The `values_list` queryset's columns: kinds[i] "i" (int64; the column must not be NULL) or "f"
    (float64; NULL becomes NaN)."""
    sql, params = queryset.query.sql_with_params()
    connection = connections[queryset.db]
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            # Binary results: the arrays' bytes as they are, not as hex text (Django's cursors send text).
            with psycopg.Cursor(cursor.connection) as binary:
                binary.execute(_aggregated(sql, kinds), params, binary=True)
                row = binary.fetchone()
            return [_array_values(value, kind) for value, kind in zip(row, kinds, strict=True)]
        cursor.execute(sql, params)
        rows = cursor.fetchall()
    if "f" not in kinds:
        # fromiter over the flat rows: no per-row array.
        flat = np.fromiter(chain.from_iterable(rows), dtype=np.int64, count=len(rows) * len(kinds))
        return list(flat.reshape(len(rows), len(kinds)).T)
    return [
        np.array([row[i] for row in rows], dtype=float if kind == "f" else np.int64)
        for i, kind in enumerate(kinds)
    ]


def _aggregated(sql: str, kinds: str) -> str:
    names = [f"c{i}" for i in range(len(kinds))]
    arrays = []
    for name, kind in zip(names, kinds, strict=True):
        pg_type = _PG_TYPES[kind][0]
        value = f"{name}::{pg_type}" if kind == "i" else f"coalesce({name}::float8, 'NaN')"
        arrays.append(f"array_send(coalesce(array_agg({value}), '{{}}'::{pg_type}[]))")
    return f"SELECT {', '.join(arrays)} FROM ({sql}) AS rows ({', '.join(names)})"


def _array_values(data: bytes, kind: str) -> np.ndarray:
    """The values of a one-dimensional array without NULLs in PostgreSQL's binary format: ndim, has-null flag
    and element type, then per dimension its size and lower bound, then per element its length and value."""
    _, pg_code, dtype = _PG_TYPES[kind]
    ndim, has_null = np.frombuffer(data, dtype=">i4", count=2)
    if ndim == 0:
        return np.zeros(0, dtype=dtype)
    if ndim != 1 or has_null:
        raise ValueError("expected a one-dimensional array without NULLs")
    (size,) = np.frombuffer(data, dtype=">i4", count=1, offset=12)
    element = np.dtype([("length", ">i4"), ("value", pg_code)])
    return np.frombuffer(data, dtype=element, count=int(size), offset=20)["value"].astype(dtype)
