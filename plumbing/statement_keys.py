"""PostgreSQL: a foreign key checked once a statement, by triggers, where a real one would check each row.

A foreign key runs one query per row written (at COMMIT when deferred): for the hundreds of thousands of rows
an import writes by COPY, most of its COMMIT. These triggers keep the same rule with one join per statement:
- rows written (INSERT, COPY): the parents they name are locked `FOR KEY SHARE`, as a key's check locks them,
  so none goes before COMMIT; a row whose parent does not exist refuses the statement. A parent whose
  version this transaction wrote is not locked: no other can delete it before COMMIT (a row it inserted is
  invisible to them, a row it updated is locked by the update), and an import writes its documents and
  queries just before the tasks that name them;
- a row's key changed (UPDATE): the same, for that row; an update that leaves the key alone costs nothing;
- parents deleted, truncated, or their key changed: refused while a row still names them.
Unlike a deferred key, the check is at the statement's end, not at COMMIT: parents are written first and
deleted last (Django's deletion does both). A deleting transaction sees rows committed while it waited for
their parents' lock only under READ COMMITTED, the project's isolation level (Django's default).
Errors are `foreign_key_violation`, as a key's: Django raises `IntegrityError`."""

from dataclasses import dataclass


@dataclass(frozen=True)
class Key:
    name: str  # the constraint's name, said in its errors
    child: str
    columns: list[str]
    parent: str
    parent_columns: list[str]


def _matches(key: Key, child: str, parent: str) -> str:
    return " AND ".join(
        f"{parent}.{p} = {child}.{c}" for c, p in zip(key.columns, key.parent_columns, strict=True)
    )


def _refuse(key: Key, table: str, what: str) -> str:
    return (
        f'RAISE foreign_key_violation USING MESSAGE = \'{what} on table "{table}" violates foreign key '
        f"constraint \"{key.name}\"', TABLE = '{table}', CONSTRAINT = '{key.name}';"
    )


# The transaction's own id, as a row version's `xmin` holds it when this transaction wrote that version
# (outside a savepoint: a savepoint's rows carry its id, and are locked as others' are). `xmin` has 32 bits:
# a version frozen 2^32 transactions earlier with the same id passes for this transaction's and goes unlocked.
OURS = "pg_current_xact_id()::xid"


def _changed(columns: list[str]) -> str:
    return " OR ".join(f"OLD.{column} IS DISTINCT FROM NEW.{column}" for column in columns)


def _triggers(key: Key) -> dict[str, tuple[str, str]]:
    """Each trigger's name: when it fires, what its function runs."""
    columns, parent_columns = ", ".join(key.columns), ", ".join(key.parent_columns)
    # One pass over the rows: their distinct keys and the parents found for them; fewer parents than keys
    # means a key with none. Then only parents other transactions wrote are locked (a second pass); one
    # deleted meanwhile is not found again.
    distinct = f"WITH k AS MATERIALIZED (SELECT DISTINCT {columns} FROM new)\n"
    parents = f"{key.parent} p JOIN k ON {_matches(key, 'k', 'p')}"
    # A block of its own: the statement's distinct keys, their parents found, of which this transaction wrote,
    # and then locked.
    added = (
        "DECLARE n_keys bigint; n_parents bigint; n_own bigint; n_locked bigint;\nBEGIN\n"
        f"{distinct}SELECT (SELECT count(*) FROM k), count(*), count(*) FILTER (WHERE p.xmin = {OURS})\n"
        f"INTO n_keys, n_parents, n_own FROM {parents};\n"
        f"IF n_parents < n_keys THEN\n{_refuse(key, key.child, 'insert')}\nEND IF;\n"
        "IF n_own < n_parents THEN\n"
        f"{distinct}SELECT count(*) INTO n_locked FROM (SELECT FROM {parents}"
        f" WHERE p.xmin <> {OURS} FOR KEY SHARE OF p) l;\n"
        f"IF n_locked < n_parents - n_own THEN\n{_refuse(key, key.child, 'insert')}\nEND IF;\n"
        "END IF;\nEND;"
    )
    changed = (
        f"PERFORM FROM {key.parent} p WHERE {_matches(key, 'NEW', 'p')} FOR KEY SHARE OF p;\n"
        f"IF NOT FOUND THEN\n{_refuse(key, key.child, 'update')}\nEND IF;"
    )
    gone = (
        f"IF EXISTS (SELECT FROM old o JOIN {key.child} c ON {_matches(key, 'c', 'o')}) THEN\n"
        f"{_refuse(key, key.parent, 'delete')}\nEND IF;"
    )
    moved = (
        f"IF EXISTS (SELECT FROM {key.child} c WHERE {_matches(key, 'c', 'OLD')}) THEN\n"
        f"{_refuse(key, key.parent, 'update')}\nEND IF;"
    )
    emptied = f"IF EXISTS (SELECT FROM {key.child}) THEN\n{_refuse(key, key.parent, 'truncate')}\nEND IF;"
    triggers = {
        "added": (f"INSERT ON {key.child} REFERENCING NEW TABLE AS new FOR EACH STATEMENT", added),
        "changed": (
            f"UPDATE OF {columns} ON {key.child} FOR EACH ROW WHEN ({_changed(key.columns)})",
            changed,
        ),
        "gone": (f"DELETE ON {key.parent} REFERENCING OLD TABLE AS old FOR EACH STATEMENT", gone),
        "moved": (
            f"UPDATE OF {parent_columns} ON {key.parent} FOR EACH ROW WHEN ({_changed(key.parent_columns)})",
            moved,
        ),
        # After a TRUNCATE of several tables, each is empty: a child truncated with its parent passes.
        "emptied": (f"TRUNCATE ON {key.parent} FOR EACH STATEMENT", emptied),
    }
    return {f"{key.name}_{event}": (when, body) for event, (when, body) in triggers.items()}


def _function(name: str, body: str) -> str:
    return (
        f"CREATE OR REPLACE FUNCTION {name}() RETURNS trigger LANGUAGE plpgsql AS $$\n"
        f"BEGIN\n{body}\nRETURN NULL;\nEND $$"
    )


def triggers_create(key: Key) -> list[str]:
    """The statements that create `key`'s functions and triggers."""
    statements = []
    for name, (when, body) in _triggers(key).items():
        statements += [_function(name, body), f"CREATE TRIGGER {name} AFTER {when} EXECUTE FUNCTION {name}()"]
    return statements


def functions_replace(key: Key) -> list[str]:
    """The statements that make `key`'s triggers run what this module says now."""
    return [_function(name, body) for name, (_, body) in _triggers(key).items()]


def triggers_drop(key: Key) -> list[str]:
    """The statements that drop what `triggers_create` made (dropping a function drops its trigger)."""
    return [f"DROP FUNCTION {name}() CASCADE" for name in _triggers(key)]


def foreign_key_add(key: Key) -> str:
    """The real foreign key the triggers stand for (deferred to COMMIT, as Django makes them)."""
    return (
        f"ALTER TABLE {key.child} ADD CONSTRAINT {key.name} FOREIGN KEY ({', '.join(key.columns)})"
        f" REFERENCES {key.parent} ({', '.join(key.parent_columns)}) DEFERRABLE INITIALLY DEFERRED"
    )


def foreign_key_to_triggers(schema_editor, key: Key, replaced: list[str] | None = None) -> None:
    """Replace the foreign key Django made on `replaced` (by default `key.columns`; its name is Django's hash)
    by `key`'s triggers. Django's state keeps the key: SQLite, which has no such triggers, keeps the real
    one."""
    with schema_editor.connection.cursor() as cursor:
        cursor.execute(
            "SELECT c.conname FROM pg_constraint c WHERE c.contype = 'f' AND c.conrelid = %s::regclass"
            " AND (SELECT array_agg(a.attname::text ORDER BY k.i) FROM unnest(c.conkey) WITH ORDINALITY"
            " k(attnum, i) JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = k.attnum) = %s",
            [key.child, replaced or key.columns],
        )
        (name,) = cursor.fetchone()
    schema_editor.execute(f'ALTER TABLE {key.child} DROP CONSTRAINT "{name}"')
    for statement in triggers_create(key):
        schema_editor.execute(statement)


def triggers_to_foreign_key(schema_editor, key: Key) -> None:
    """Undo `foreign_key_to_triggers` (the key's name is then `key.name`)."""
    for statement in triggers_drop(key):
        schema_editor.execute(statement)
    schema_editor.execute(foreign_key_add(key))
