"""Writing many rows at once: PostgreSQL's COPY, batched bulk_create elsewhere (SQLite).

Callers run inside their own transaction: COPY is part of it, so a failed import leaves nothing behind. A
COPY's errors are Django's (`IntegrityError`...), as the ORM's are.
Rows are plain tuples, never model instances: a million Django objects cost a hundred times the COPY.
"""

from collections.abc import Callable, Iterable, Iterator
from itertools import islice

import numpy as np
from django.db import connection
from django.db.models import JSONField
from psycopg.types.json import Jsonb

BATCH_SIZE = 5000
COPY_CHUNK_ROWS = 200_000
Progress = Callable[[int], None]

# PostgreSQL's binary COPY: a signature, flags and header-extension length, then per row a field count and
# each field as length + big-endian bytes; -1 as the field count ends the data.
_BINARY_HEADER = b"PGCOPY\n\xff\r\n\x00" + bytes(8)
_BINARY_TRAILER = b"\xff\xff"
_INTEGER_BYTES = {"smallint": 2, "integer": 4, "bigint": 8}


def batched(rows: Iterable, size: int = BATCH_SIZE) -> Iterator[list]:
    iterator = iter(rows)
    while batch := list(islice(iterator, size)):
        yield batch


def bulk_create_batched(model, rows: Iterable, progress: Progress | None = None) -> None:
    for batch in batched(rows):
        model.objects.bulk_create(batch, batch_size=BATCH_SIZE)
        if progress:
            progress(len(batch))


def _copy_statement(model, fields: list[str], binary: bool = False) -> str:
    quote = connection.ops.quote_name
    columns = ", ".join(quote(model._meta.get_field(name).column) for name in fields)
    return f"COPY {quote(model._meta.db_table)} ({columns}) FROM STDIN" + (
        " (FORMAT BINARY)" if binary else ""
    )


def rows_insert(model, fields: list[str], rows: Iterable[tuple], types: list[str] | None = None) -> None:
    """Insert rows of values for `fields` (attribute names, e.g. `campaign_id`); the others get defaults.
    With PostgreSQL `types` (e.g. `["int8", "bytea"]`) the COPY is binary: no text escaping of bytes."""
    if connection.vendor != "postgresql":
        bulk_create_batched(model, (model(**dict(zip(fields, row, strict=True))) for row in rows))
        return
    statement = _copy_statement(model, fields, binary=types is not None)
    # A JSON field's value is given as Python data, as the ORM takes it; COPY needs it wrapped.
    json_at = [i for i, name in enumerate(fields) if isinstance(model._meta.get_field(name), JSONField)]
    with (
        connection.cursor() as cursor,
        connection.wrap_database_errors,
        cursor.cursor.copy(statement) as copy,
    ):
        if types is not None:
            copy.set_types(types)
        for row in rows:
            if json_at:
                row = list(row)
                for i in json_at:
                    row[i] = Jsonb(row[i])
            copy.write_row(row)


def rows_insert_pks(model, fields: list[str], rows: Iterable[tuple], count: int) -> list[int]:
    """Insert `count` rows as `rows_insert` does and return their primary keys, in row order. On PostgreSQL
    the keys are drawn from the table's sequence first and written with the rows: nothing is read back."""
    if connection.vendor != "postgresql":
        pks: list[int] = []
        for batch in batched(model(**dict(zip(fields, row, strict=True))) for row in rows):
            pks += [instance.pk for instance in model.objects.bulk_create(batch)]  # SQLite returns the keys
        return pks
    pks = _pks_reserve(model, count)
    keyed = ((pk, *row) for pk, row in zip(pks, rows, strict=True))
    rows_insert(model, [model._meta.pk.attname, *fields], keyed)
    return pks


def _pks_reserve(model, count: int) -> list[int]:
    """`count` new primary keys from the table's sequence, as one value: their big-endian bytes joined."""
    with connection.cursor() as cursor:
        cursor.execute(
            # The sequence's name once (a subquery), not per row.
            "SELECT string_agg(int8send(nextval((SELECT pg_get_serial_sequence(%s, %s)::regclass))),"
            " ''::bytea) FROM generate_series(1, %s)",
            [model._meta.db_table, model._meta.pk.column, count],
        )
        (keys,) = cursor.fetchone()
    return np.frombuffer(keys or b"", dtype=">i8").tolist()


def integer_rows_insert(
    model, columns: dict[str, np.ndarray], progress: Progress | None = None, chunk: int = COPY_CHUNK_ROWS
) -> None:
    """Insert rows given as integer columns (attribute name → array, all of one length). On PostgreSQL the
    rows are packed into binary COPY by NumPy, with no Python object per row."""
    fields = list(columns)
    size = len(next(iter(columns.values())))
    if connection.vendor != "postgresql":
        for start in range(0, size, BATCH_SIZE):
            values = zip(
                *(column[start : start + BATCH_SIZE].tolist() for column in columns.values()), strict=True
            )
            model.objects.bulk_create([model(**dict(zip(fields, row, strict=True))) for row in values])
            if progress:
                progress(min(BATCH_SIZE, size - start))
        return
    widths = {name: _INTEGER_BYTES[model._meta.get_field(name).db_type(connection)] for name in fields}
    row_type = np.dtype(
        [("count", ">i2")]
        + [item for name in fields for item in ((f"{name}_length", ">i4"), (name, f">i{widths[name]}"))]
    )
    with (
        connection.cursor() as cursor,
        connection.wrap_database_errors,
        cursor.cursor.copy(_copy_statement(model, fields, binary=True)) as copy,
    ):
        copy.write(_BINARY_HEADER)
        for start in range(0, size, chunk):
            rows = np.empty(min(chunk, size - start), dtype=row_type)
            rows["count"] = len(fields)
            for name, column in columns.items():
                rows[f"{name}_length"] = widths[name]
                rows[name] = column[start : start + chunk]
            copy.write(rows.tobytes())
            if progress:
                progress(rows.size)
        copy.write(_BINARY_TRAILER)
