"""Model instances from rows of hand-written SQL, for the requests every rater repeats all day (the task page,
the label round trip, the signed-in user): building a statement through the ORM costs a worker more CPU than
the database spends answering it (docs/performance.md). Values go through the same converters as the ORM's
(JSON, SQLite's dates and booleans), so an instance is the one a queryset would give."""

from dataclasses import dataclass

from django.db import connection
from django.db.models import Model
from django.db.models.base import ModelState
from django.db.models.signals import post_init, pre_init
from psycopg import _queries as psycopg_queries

# psycopg turns a statement's placeholders into its own once and keeps the result, but only for statements of
# at most 4 KB (longer ones are mostly an ORM's one-off bulk statements): the round trip's lease statement is
# 7 KB, and converting it anew cost every label about 0.15 ms. Hand-written statements are few and built once
# per process; 16 KB bounds what psycopg keeps (128 statements at most). tests/plumbing/test_rows.py sees it.
psycopg_queries.MAX_CACHED_STATEMENT_LENGTH = max(psycopg_queries.MAX_CACHED_STATEMENT_LENGTH, 16 * 1024)


@dataclass(frozen=True)
class _Columns:
    columns: tuple[str, ...]
    attnames: tuple[str, ...]
    # (position, the field's column expression, its converters), only for fields that have any
    converters: tuple[tuple[int, object, tuple], ...]


_COLUMNS: dict[type[Model], _Columns] = {}


def _model_columns(model: type[Model]) -> _Columns:
    known = _COLUMNS.get(model)
    if known is None:
        fields = model._meta.concrete_fields
        converters = []
        for position, field in enumerate(fields):
            column = field.get_col(model._meta.db_table)
            # The order of SQLCompiler.get_converters: the backend's, then the field's.
            found = connection.ops.get_db_converters(column) + column.get_db_converters(connection)
            if found:
                converters.append((position, column, tuple(found)))
        columns = tuple(str(field.column) for field in fields)
        attnames = tuple(field.attname for field in fields)
        known = _COLUMNS[model] = _Columns(columns, attnames, tuple(converters))
    return known


def select_list(model: type[Model], alias: str) -> str:
    """Every concrete column of `model` from the table named `alias`, in field order: what `instance_at`
    reads back."""
    return ", ".join(f'{alias}."{column}"' for column in _model_columns(model).columns)


def instance_at[M: Model](model: type[M], row: tuple, start: int = 0) -> tuple[M, int]:
    """The instance whose `select_list` begins at `row[start]`, and where the next one begins."""
    known = _model_columns(model)
    end = start + len(known.columns)
    values = list(row[start:end])
    for position, column, converters in known.converters:
        for convert in converters:
            values[position] = convert(values[position], column, connection)
    return instance_of(model, known.attnames, values), end


def instance_of[M: Model](model: type[M], attnames: tuple[str, ...], values: list) -> M:
    """`model.from_db(alias, attnames, values)`: the fields named in `attnames` (in field order) loaded, any
    other deferred. Built without `Model.__init__` when it would do no more than store the values: its loop
    over every field and its two signals were most of the cost of a dozen instances a label (a campaign has
    35 fields)."""
    if not _plain_build(model) or pre_init.has_listeners(model) or post_init.has_listeners(model):
        return model.from_db(connection.alias, attnames, values)
    instance = model.__new__(model)
    state = ModelState()
    state.adding, state.db = False, connection.alias
    fields = instance.__dict__
    fields["_state"] = state
    fields.update(zip(attnames, values, strict=True))
    return instance


_PLAIN_BUILD: dict[type[Model], bool] = {}


def _plain_build(model: type[Model]) -> bool:
    """Whether the model builds as `Model` does: neither it nor a class between overrides `__init__` or
    `from_db`."""
    plain = _PLAIN_BUILD.get(model)
    if plain is None:
        own = model.__mro__[: model.__mro__.index(Model)]
        plain = _PLAIN_BUILD[model] = not any("__init__" in vars(c) or "from_db" in vars(c) for c in own)
    return plain


def placeholders(count: int) -> str:
    """`%s, %s, ...` for an `IN (...)` of `count` values, on every database."""
    return ", ".join(["%s"] * count)
