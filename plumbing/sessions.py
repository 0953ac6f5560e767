"""Sessions in the database, read by one hand-written statement: Django's `db` engine builds its read through
the ORM on every signed-in request (0.81 ms of CPU against 0.37 ms, docs/performance.md). The engine when
REDIS_URL is unset; with Redis, `cached_db` reads sessions from Redis and this path is not taken."""

from functools import cache

from django.contrib.sessions.backends import db
from django.db import connections, router
from django.utils import timezone

from plumbing.rows import instance_at, select_list


@cache
def _read_statement(model) -> str:
    """Built once per process, as the other plain reads are."""
    return (
        f"SELECT {select_list(model, 's')} FROM {model._meta.db_table} s "
        "WHERE s.session_key = %s AND s.expire_date > %s"
    )


class SessionStore(db.SessionStore):
    """Django's `db` session store; only the read of a session differs, with the same result: the row of
    this key while it has not expired, else none (and the key dropped, so that a new one is made)."""

    def _get_session_from_db(self):
        if self.session_key is not None:
            model = self.model
            connection = connections[router.db_for_read(model)]
            now = connection.ops.adapt_datetimefield_value(timezone.now())
            with connection.cursor() as cursor:
                cursor.execute(_read_statement(model), [self.session_key, now])
                row = cursor.fetchone()
            if row is not None:
                return instance_at(model, row)[0]
        self._session_key = None
        return None
