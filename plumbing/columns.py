"""A queryset's rows as NumPy columns, for selectors that read a whole campaign's labels.

Building a Python tuple per row costs more than the database spends on the query, so on PostgreSQL the rows
come back as one value: `string_agg` of each row's fields in binary (`int8send`, `float8send`), fixed-size
records that NumPy reads in place. (One array per column, `array_agg`, cost the server a third more and
sent a length with every value; `COPY ... TO STDOUT` sends a message per row, which psycopg reads one by one
in Python.) A last column of bytes (a ranked list) comes back the same way, as the rows' bytes end to end with
each one's length among the records. Elsewhere (SQLite) the rows come from `fetchall`.

`read_beside` starts reads on a second connection, so that PostgreSQL reads two tables on two cores.
"""

import time
from collections.abc import Callable
from concurrent.futures import Future
from itertools import chain

import numpy as np
import psycopg
from django.db import connections, router, transaction
from django.db.models import Model, QuerySet

from plumbing.threads import done, started

# kind: (big-endian field as sent, NumPy type)
_PG_TYPES = {"i": (">i8", np.int64), "f": (">f8", np.float64)}
_WORK_MEM = "64MB"


def fetch_columns(queryset: QuerySet, kinds: str) -> list[np.ndarray]:
    """The `values_list` queryset's columns: kinds[i] "i" (int64; the column must not be NULL) or "f"
    (float64; NULL becomes NaN)."""
    columns, _ = _fetch(queryset, kinds, with_bytes=False)
    return columns


def fetch_columns_and_bytes(queryset: QuerySet, kinds: str) -> tuple[list[np.ndarray], bytes]:
    """`fetch_columns` of every field of the `values_list` queryset but its last, which holds bytes (not
    NULL): those columns, then each row's length of bytes (int64), and the rows' bytes end to end."""
    return _fetch(queryset, kinds, with_bytes=True)


def _fetch(queryset: QuerySet, kinds: str, *, with_bytes: bool) -> tuple[list[np.ndarray], bytes]:
    sql, params = queryset.query.sql_with_params()
    connection = connections[queryset.db]
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            # Binary results: the bytes as they are, not as hex text (Django's cursors send text).
            aggregated = _aggregated(sql, kinds, with_bytes)
            started = time.monotonic()
            with psycopg.Cursor(cursor.connection) as binary:
                binary.execute(aggregated, params, binary=True)
                # An aggregate: always one row.
                *found, n_rows = binary.fetchone() or (None, None, 0)
            if connection.queries_logged:
                # Logged as Django's debug cursor logs its own, so query counts (CaptureQueriesContext,
                # DEBUG's connection.queries) see this read too.
                elapsed = time.monotonic() - started
                connection.queries_log.append({"sql": aggregated, "time": f"{elapsed:.3f}"})
            columns = _record_columns(found[0], kinds + "i" * with_bytes)
            if columns[0].size != n_rows:
                # string_agg skips a row whose record is NULL: a NULL in an "i" column.
                raise ValueError(f"NULL in an integer column of {sql}")
            return columns, (found[1] or b"") if with_bytes else b""
        cursor.execute(sql, params)
        rows = cursor.fetchall()
    data = b""
    if with_bytes:
        data = b"".join(row[-1] for row in rows)
        rows = [(*row[:-1], len(row[-1])) for row in rows]
        kinds += "i"
    if "f" not in kinds:
        # fromiter over the flat rows: no per-row array.
        flat = np.fromiter(chain.from_iterable(rows), dtype=np.int64, count=len(rows) * len(kinds))
        return list(flat.reshape(len(rows), len(kinds)).T), data
    columns = [
        np.array([row[i] for row in rows], dtype=float if kind == "f" else np.int64)
        for i, kind in enumerate(kinds)
    ]
    return columns, data


def read_beside[T](read: Callable[..., T], /, *args, using: str | None = None) -> Future[T]:
    """`read(*args)` (queries on the `using` database; by default where reads go now: the replica inside
    `routers.replica_reads`), started now on a second connection of a thread. Only on PostgreSQL outside a
    transaction (another connection would not see its writes); otherwise `read` runs here, before this
    returns."""
    using = using or router.db_for_read(Model)  # the project's router goes by the context, not the model
    connection = connections[using]
    if connection.vendor != "postgresql" or connection.in_atomic_block:
        return done(read, *args)
    return started(_read_and_close, read, args, using)


def _read_and_close[T](read: Callable[..., T], args: tuple, using: str) -> T:
    # The thread's own connections (Django's are per thread), closed with the thread: a connection left
    # open would stay open, idle, until the garbage collector found it.
    connection = connections[using]
    try:
        with transaction.atomic(using=using):
            with connection.cursor() as cursor:
                # Room for hashing a whole campaign's tasks when a read joins them (the default 4 MB spills
                # the join to disk); LOCAL: for this transaction only, even behind a connection pooler.
                cursor.execute(f"SET LOCAL work_mem = '{_WORK_MEM}'")
            return read(*args)
    finally:
        connections.close_all()


def _aggregated(sql: str, kinds: str, with_bytes: bool) -> str:
    names = [f"c{i}" for i in range(len(kinds) + with_bytes)]
    fields = [
        f"int8send({name}::int8)" if kind == "i" else f"float8send(coalesce({name}::float8, 'NaN'))"
        for name, kind in zip(names, kinds, strict=False)
    ]
    aggregates = []
    if with_bytes:
        # Each row's length among its record, its bytes in a second aggregate over the same rows in the same
        # order; NULL bytes would leave the record out (the count tells) and the bytes too.
        fields.append(f"int8send(octet_length({names[-1]})::int8)")
        aggregates.append(f"string_agg({names[-1]}, ''::bytea)")
    records = f"string_agg({' || '.join(fields)}, ''::bytea)"
    return f"SELECT {', '.join([records, *aggregates])}, count(*) FROM ({sql}) AS rows ({', '.join(names)})"


def _record_columns(data: bytes | None, kinds: str) -> list[np.ndarray]:
    """The columns of the concatenated records (None: no rows)."""
    record = np.dtype([(f"c{i}", _PG_TYPES[kind][0]) for i, kind in enumerate(kinds)])
    rows = np.frombuffer(data or b"", dtype=record)
    return [rows[f"c{i}"].astype(_PG_TYPES[kind][1]) for i, kind in enumerate(kinds)]
