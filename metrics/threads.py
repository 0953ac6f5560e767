"""Work started on a second thread, so that a report uses both cores: a second database connection reads
beside the first, or NumPy computes beside the main thread (it lets go of the GIL in its array loops)."""

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor


def started[T](function: Callable[..., T], /, *args, **kwargs) -> Callable[[], T]:
    """`function(*args, **kwargs)`, started on a new thread; the returned function waits for its result
    (or raises its exception)."""
    executor = ThreadPoolExecutor(max_workers=1)
    future = executor.submit(function, *args, **kwargs)
    executor.shutdown(wait=False)
    return future.result
