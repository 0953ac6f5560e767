"""Report and export reads on a read replica (DATABASE_REPLICA_URL); everything else on the primary.

A model alone cannot tell a report's read of judgments from the read an annotator's next write depends on,
so the views that build reports and exports say so: their reads run inside `replica_reads()`. A replica
lags the primary by a little; a report may miss the last seconds of labels, an annotator never does.
"""

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from functools import wraps
from typing import cast

REPLICA = "replica"
_on_replica: ContextVar[bool] = ContextVar("replica_reads", default=False)


@contextmanager
def replica_reads():
    """Reads inside go to the replica when one is configured (writes still go to the primary)."""
    token = _on_replica.set(True)
    try:
        yield
    finally:
        _on_replica.reset(token)


def reads_from_replica[F: Callable](view: F) -> F:
    """A view (function or method) whose reads go to the replica."""

    @wraps(view)
    def wrapped(*args, **kwargs):
        with replica_reads():
            return view(*args, **kwargs)

    return cast(F, wrapped)


def replica_stream[T](rows: Iterator[T]) -> Iterator[T]:
    """A lazily read stream (a streamed export) whose reads go to the replica as it is consumed."""
    with replica_reads():
        yield from rows


class ReplicaRouter:
    """Installed only when the `replica` alias exists (settings)."""

    def db_for_read(self, model, **hints):
        return REPLICA if _on_replica.get() else "default"

    def db_for_write(self, model, **hints):
        return "default"

    def allow_relation(self, obj1, obj2, **hints):
        return True  # one database, two servers

    def allow_migrate(self, db, app_label, model_name=None, **hints):
        return db == "default"  # the replica follows the primary's schema
