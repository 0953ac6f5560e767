"""Process-wide memory behaviour for the long imports (the command and the task worker) and for `evaluate`."""

import ctypes

# glibc's mallopt parameters
M_TRIM_THRESHOLD = -1
M_TOP_PAD = -2
M_MMAP_THRESHOLD = -3
M_ARENA_MAX = -8


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


def keep_freed_memory() -> None:
    """Have glibc's malloc keep freed blocks of up to 32 MiB for the next ones, in one heap for every
    thread, instead of handing them back to the system: for a one-shot command that makes and drops
    arrays of the same few sizes window after window (`evaluate`). Memory handed back comes back as new
    pages the kernel must zero; kept, `evaluate` at 50,000 queries took about half the minor page faults
    (54 k → 28–34 k, counted in one process), for a peak a few percent higher. Call it before starting
    threads: a thread's own heap (without this, the qrels reader's) would not be reused by the others.
    Elsewhere than glibc this does nothing."""
    libc = _glibc()
    if libc is not None:
        libc.mallopt(M_ARENA_MAX, 1)
        # The largest glibc allows; fixed, it no longer moves with the frees.
        libc.mallopt(M_MMAP_THRESHOLD, 32 << 20)
        libc.mallopt(M_TRIM_THRESHOLD, (1 << 31) - 1)
        libc.mallopt(M_TOP_PAD, 64 << 20)


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
