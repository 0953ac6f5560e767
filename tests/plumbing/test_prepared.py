"""A statement prepared once per connection (`plumbing.prepared`) answers as the statement sent as text."""

import pytest
from django.db import connection

from plumbing import prepared
from plumbing.prepared import PreparedStatement

pytestmark = pytest.mark.postgres

STATEMENT = PreparedStatement("SELECT %(a)s::int + %(b)s::int, %(a)s::int * 2, %(label)s::text")


@pytest.fixture(autouse=True)
def _needs_postgres(transactional_db):
    if connection.vendor != "postgresql":
        pytest.skip("needs PostgreSQL (DATABASE_URL=postgres://...)")


def prepared_count(name: str) -> int:
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM pg_prepared_statements WHERE name = %s", [name])
        return cursor.fetchone()[0]


def run(sql: str) -> tuple:
    with connection.cursor() as cursor:
        cursor.execute(sql, {"a": 3, "b": 4, "label": "it's"})
        return cursor.fetchone()


def test_prepared_once_a_connection_and_answering_as_the_text(settings):
    settings.PREPARED_STATEMENTS = True
    connection.close()  # a new session: nothing prepared in it yet
    assert run(STATEMENT.text()) == run(STATEMENT.sql) == (7, 6, "it's")
    assert STATEMENT.text().startswith(f"EXECUTE {STATEMENT.name}(")
    assert prepared_count(STATEMENT.name) == 1
    connection.close()
    assert prepared_count(STATEMENT.name) == 0  # gone with the session, so prepared again in the next
    assert run(STATEMENT.text()) == (7, 6, "it's")
    assert prepared_count(STATEMENT.name) == 1


def prepared_at(name: str):
    with connection.cursor() as cursor:
        cursor.execute("SELECT prepare_time FROM pg_prepared_statements WHERE name = %s", [name])
        return cursor.fetchone()[0]


def test_prepared_again_once_its_plan_is_old(settings, monkeypatch):
    """A generic plan made on small tables would stay until their statistics change: it is made anew."""
    settings.PREPARED_STATEMENTS = True
    connection.close()
    run(STATEMENT.text())
    first = prepared_at(STATEMENT.name)
    run(STATEMENT.text())
    assert prepared_at(STATEMENT.name) == first
    monkeypatch.setattr(prepared, "REPLAN_SECONDS", -1.0)
    assert run(STATEMENT.text()) == (7, 6, "it's")
    assert prepared_at(STATEMENT.name) > first and prepared_count(STATEMENT.name) == 1


def test_a_rolled_back_transaction_keeps_what_it_prepared(settings):
    settings.PREPARED_STATEMENTS = True
    connection.close()
    with connection.cursor() as cursor:
        cursor.execute("BEGIN")
        text = STATEMENT.text()
        cursor.execute("ROLLBACK")
    assert run(text) == (7, 6, "it's")


def test_off_the_statement_goes_as_text(settings):
    settings.PREPARED_STATEMENTS = False
    assert STATEMENT.text() == STATEMENT.sql


def test_a_changed_statement_has_a_name_of_its_own():
    assert PreparedStatement("SELECT 1").name != PreparedStatement("SELECT 2").name
