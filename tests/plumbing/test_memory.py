"""The import's memory settings act on this process's malloc (glibc only)."""

import ctypes.util
import sys

import numpy as np
import pytest

from plumbing.memory import free_memory_eagerly, free_memory_return, keep_freed_memory

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux") or ctypes.util.find_library("c") != "libc.so.6",
    reason="glibc's malloc only",
)


def resident_mib() -> float:
    with open("/proc/self/status") as status:
        line = next(line for line in status if line.startswith("VmRSS"))
    return int(line.split()[1]) / 1024


def test_free_pages_inside_the_heap_go_back_to_the_system():
    free_memory_eagerly()  # blocks under 2 MiB come from the heap, as the run reader's temporaries do
    blocks = [np.ones(1 << 20, dtype=np.uint8) for _ in range(160)]  # touched: resident
    del blocks[::2]  # holes between the blocks still held: free, yet resident
    before = resident_mib()
    free_memory_return()
    assert before - resident_mib() > 40  # most of the 80 MiB of holes
    assert all(block[0] == 1 for block in blocks)


def test_freed_arrays_stay_for_the_next_ones():
    keep_freed_memory()
    block = np.ones(24 << 20, dtype=np.uint8)  # over glibc's default threshold: a mapping of its own
    before = resident_mib()
    del block
    assert before - resident_mib() < 4  # kept in the heap, not handed back
