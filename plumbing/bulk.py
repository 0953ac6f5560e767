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
# Rows packed at once: a chunk's temporaries stay a few MiB, however many rows are written.
COPY_CHUNK_ROWS = 20_000
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
    pks = _pks_reserve(model, count).tolist()
    keyed = ((pk, *row) for pk, row in zip(pks, rows, strict=True))
    rows_insert(model, [model._meta.pk.attname, *fields], keyed)
    return pks


def _pks_reserve(model, count: int) -> np.ndarray:
    """`count` new primary keys from the table's sequence, as one value: their big-endian bytes joined."""
    with connection.cursor() as cursor:
        cursor.execute(
            # The sequence's name once (a subquery), not per row.
            "SELECT string_agg(int8send(nextval((SELECT pg_get_serial_sequence(%s, %s)::regclass))),"
            " ''::bytea) FROM generate_series(1, %s)",
            [model._meta.db_table, model._meta.pk.column, count],
        )
        (keys,) = cursor.fetchone()
    return np.frombuffer(keys or b"", dtype=">i8")


def columns_insert(
    model,
    columns: dict[str, np.ndarray | list[str]],
    progress: Progress | None = None,
    chunk: int = COPY_CHUNK_ROWS,
) -> None:
    """Insert rows given as columns (attribute name → an integer array, or a list of str for a text field),
    all of one length. On PostgreSQL the rows are packed into binary COPY by NumPy, with no Python object per
    row but a text value's encoded bytes."""
    fields = list(columns)
    size = len(next(iter(columns.values())))
    if connection.vendor != "postgresql":
        rows = zip(*map(_listed, columns.values()), strict=True)
        bulk_create_batched(model, (model(**dict(zip(fields, row, strict=True))) for row in rows), progress)
        return
    # A text column's width is None: its values' own lengths.
    widths = [
        None if isinstance(column, list) else _INTEGER_BYTES[model._meta.get_field(name).db_type(connection)]
        for name, column in columns.items()
    ]
    with (
        connection.cursor() as cursor,
        connection.wrap_database_errors,
        cursor.cursor.copy(_copy_statement(model, fields, binary=True)) as copy,
    ):
        copy.write(_BINARY_HEADER)
        for start in range(0, size, chunk):
            part = [column[start : start + chunk] for column in columns.values()]
            copy.write(_binary_rows(part, widths))
            if progress:
                progress(len(part[0]))
        copy.write(_BINARY_TRAILER)


def columns_insert_pks(model, columns: dict[str, np.ndarray | list[str]]) -> list[int]:
    """Insert rows as `columns_insert` does and return their primary keys, in row order, as `rows_insert_pks`
    does."""
    size = len(next(iter(columns.values())))
    if connection.vendor != "postgresql":
        return rows_insert_pks(model, list(columns), zip(*map(_listed, columns.values()), strict=True), size)
    pks = _pks_reserve(model, size)
    columns_insert(model, {model._meta.pk.attname: pks, **columns})
    return pks.tolist()  # once the rows are written: the list and the chunks' temporaries never coexist


def _listed(column: np.ndarray | list[str]) -> list:
    return column.tolist() if isinstance(column, np.ndarray) else column


def _binary_rows(columns: list[np.ndarray | list[str]], widths: list[int | None]) -> bytes:
    """Rows of binary COPY: per row a field count, then each field as its length and big-endian bytes. Every
    field is scattered into place for all rows at once; rows differ in length by their text values."""
    size = len(columns[0])
    texts: dict[int, tuple[np.ndarray, np.ndarray]] = {}  # column → its values' bytes, and their lengths
    row_bytes = np.full(size, 2, dtype=np.int64)
    for i, (column, width) in enumerate(zip(columns, widths, strict=True)):
        if width is None:
            values = [value.encode() for value in column]
            lengths = np.fromiter(map(len, values), dtype=np.int64, count=size)
            texts[i] = (np.frombuffer(b"".join(values), dtype=np.uint8), lengths)
            row_bytes += 4 + lengths
        else:
            row_bytes += 4 + width
    ends = np.cumsum(row_bytes)
    out = np.empty(int(ends[-1]) if size else 0, dtype=np.uint8)
    at = ends - row_bytes  # where each row's next field goes
    # Rows of one length (no text) are the rows of a matrix: each field a slice of its columns.
    matrix = out.reshape(size, -1) if not texts and size else None

    def put(values: np.ndarray, width: int) -> None:
        if matrix is not None:
            offset = int(at[0])
            matrix[:, offset : offset + width] = values.view(np.uint8).reshape(size, width)
        else:
            out[at[:, None] + np.arange(width)] = values.view(np.uint8).reshape(size, width)
        at[:] += width

    put(np.full(size, len(columns), dtype=">i2"), 2)
    for i, (column, width) in enumerate(zip(columns, widths, strict=True)):
        if width is not None:
            put(np.full(size, width, dtype=">i4"), 4)
            put(np.asarray(column).astype(f">i{width}"), width)
            continue
        data, lengths = texts[i]
        put(lengths.astype(">i4"), 4)
        # Byte j of all the values' bytes goes to its row's place plus its offset in its value.
        value_start = np.cumsum(lengths) - lengths
        out[np.repeat(at - value_start, lengths) + np.arange(data.size)] = data
        at += lengths
    return out.tobytes()
