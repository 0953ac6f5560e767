"""The loaded case of a benchmark: another process keeps one core busy while the measured code runs.

    with other_core_busy():
        ...  # measured

The busy process is a plain Python loop (what another job on the machine looks like to the scheduler); it
is killed when the block ends. `load_average()` is printed beside every figure: a number someone else
cannot reproduce within 20 % needs the load it was measured under.
"""

import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def other_core_busy(busy: bool = True) -> Iterator[None]:
    if not busy:
        yield
        return
    loop = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        yield
    finally:
        loop.kill()
        loop.wait()


def load_average() -> str:
    return "load average " + ", ".join(f"{value:.2f}" for value in os.getloadavg())
