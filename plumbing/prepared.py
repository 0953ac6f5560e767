"""Statements PostgreSQL parses and plans once per connection (`PREPARE`), then runs by name (`EXECUTE`).

Django binds parameters on the client, so every statement reaches PostgreSQL as new text, parsed and planned
anew. For the label round trip's long hand-written statements that was most of their cost: a new lease took
2.25 ms of PostgreSQL's CPU sent as text, 0.35 ms prepared (docs/benchmarks.md). `EXECUTE` is a plain
query, so it still goes in one string with others (`round_trip`'s lock and lease).

Each is prepared again once REPLAN_SECONDS have passed: PostgreSQL keeps a prepared statement's generic plan
until the statistics of its tables change (autovacuum's ANALYZE, if it runs), and a plan made while the tables
were nearly empty scans them whole once they have grown (with autovacuum off, a label cost PostgreSQL 12 ms
more after 14,000 labels than after 2,000).

A prepared statement lives on one server connection: behind a pooler that lends a server connection per
transaction (PgBouncer's transaction mode), set PREPARED_STATEMENTS=0 (docs/scaling.md).
"""

import hashlib
import re
import time
import weakref

from django.conf import settings
from django.db import connection

_PARAMETER = re.compile(r"%\((\w+)\)s")

REPLAN_SECONDS = 10.0

# When each statement was prepared on each psycopg connection; a new connection is a new session with none.
_prepared: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


class PreparedStatement:
    """A statement with named parameters (`%(name)s`, as Django's cursors take them), each of a type
    PostgreSQL can tell from where it stands (a column it is compared with or written to, or a cast)."""

    def __init__(self, sql: str):
        names = list(dict.fromkeys(_PARAMETER.findall(sql)))
        self.sql = sql
        self.name = f"jb_{hashlib.sha1(sql.encode()).hexdigest()[:24]}"  # a changed statement, a new name
        positional = _PARAMETER.sub(lambda match: f"${names.index(match[1]) + 1}", sql)
        self.prepare = f"PREPARE {self.name} AS {positional}"
        self.execute = f"EXECUTE {self.name}({', '.join(f'%({name})s' for name in names)})"

    def text(self) -> str:
        """What to send on this connection for the statement, with the same parameters: `EXECUTE`, the
        statement prepared first when it is not yet; the statement itself when PREPARED_STATEMENTS is
        off."""
        if not settings.PREPARED_STATEMENTS:
            return self.sql
        connection.ensure_connection()
        session = connection.connection
        prepared = _prepared.setdefault(session, {})
        at, now = prepared.get(self.name), time.monotonic()
        if at is None or now - at > REPLAN_SECONDS:
            # On the connection itself, as Django sets a session up: no request's statement. The session
            # keeps it even if a transaction around it rolls back.
            if at is not None:
                session.execute(f"DEALLOCATE {self.name}")
            session.execute(self.prepare)
            prepared[self.name] = now
        return self.execute
