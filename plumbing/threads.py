"""Work started on a second thread, so that a report uses both cores: a second database connection reads
beside the first, or NumPy computes beside the main thread (it lets go of the GIL in its array loops); and
a heartbeat beside long work."""

import threading
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from contextvars import copy_context


def started[T](function: Callable[..., T], /, *args, **kwargs) -> Future[T]:
    """`function(*args, **kwargs)`, started on a new thread; `.result()` waits for it (or raises its
    exception). The thread sees the caller's context variables (e.g. `replica_reads`)."""
    executor = ThreadPoolExecutor(max_workers=1)
    future = executor.submit(copy_context().run, function, *args, **kwargs)
    executor.shutdown(wait=False)
    return future


def done[T](function: Callable[..., T], /, *args, **kwargs) -> Future[T]:
    """`function(*args, **kwargs)` run here and now, as a finished Future: the plain path where a thread
    cannot help (another connection would not see this transaction's writes; SQLite)."""
    future: Future[T] = Future()
    try:
        future.set_result(function(*args, **kwargs))
    except Exception as exc:
        future.set_exception(exc)
    return future


def map_parallel[K, T](function: Callable[..., T], calls: dict[K, tuple], /, workers: int = 2) -> dict[K, T]:
    """`function(*args)` for each key's arguments, `workers` at a time; the results by key in the given
    order. The first call (in that order) that raised raises, once every call has ended."""
    with ThreadPoolExecutor(max_workers=workers) as pool:
        running = {key: pool.submit(copy_context().run, function, *args) for key, args in calls.items()}
        return {key: future.result() for key, future in running.items()}


@contextmanager
def repeating(function: Callable[[], object], every: float) -> Iterator[None]:
    """`function()` every `every` seconds on a thread while the block runs: a heartbeat beside long work
    (Python hands the GIL over every few milliseconds, NumPy and database waits let go of it). The thread
    has ended when the block has; an exception of `function` ends the thread and is raised there."""
    stop = threading.Event()

    def beat() -> None:
        while not stop.wait(every):
            function()

    beating = started(beat)
    try:
        yield
    finally:
        stop.set()
        beating.result()
