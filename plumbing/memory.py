"""Process-wide memory behaviour for the long imports (the command and the task worker)."""

import ctypes

M_MMAP_THRESHOLD = -3  # glibc's mallopt parameter


def free_memory_eagerly() -> None:
    """Have glibc's malloc hand large freed blocks back to the system at once (a fixed mmap threshold).

    By default glibc raises the threshold after the first large free, so the NumPy arrays an import makes
    next come from a heap that does not shrink: a million-line import peaked at 310 MiB instead of 230.
    At 2 MiB, the run reader's per-window temporaries (about a megabyte each) come from the heap: at 128 KiB
    each was a fresh mapping, twice the page faults and 0.5 s more of system time for the same peak.
    Elsewhere than glibc this does nothing."""
    libc = _glibc()
    if libc is not None:
        libc.mallopt(M_MMAP_THRESHOLD, 2 << 20)


def free_memory_return() -> None:
    """Hand the free pages inside malloc's heaps back to the system (glibc's `malloc_trim`): the runs' two
    readers leave their threads' heaps full of holes, which the rest of an import would otherwise sit on
    top of (a peak of 195 MiB instead of 178 for two million-line runs). Takes a few milliseconds."""
    libc = _glibc()
    if libc is not None:
        libc.malloc_trim(0)


def _glibc():
    try:
        return ctypes.CDLL("libc.so.6")
    except OSError:
        return None
