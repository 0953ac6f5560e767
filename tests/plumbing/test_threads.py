"""The heartbeat thread: it calls beside the block's work, and ends with the block."""

import threading

import pytest

from plumbing.threads import repeating


def test_repeating_calls_while_the_block_runs_and_stops_with_it():
    beats = []
    beaten_twice = threading.Event()

    def beat():
        beats.append(threading.get_ident())
        if len(beats) == 2:
            beaten_twice.set()

    with repeating(beat, 0.001):
        assert beaten_twice.wait(timeout=60)  # the block waits; the thread beats
    after = len(beats)
    threading.Event().wait(0.05)  # fifty beats' time
    assert len(beats) == after  # none once the block is over: the thread has ended
    assert threading.get_ident() not in beats


def test_an_exception_of_the_function_is_raised_at_the_end_of_the_block():
    failed = threading.Event()

    def fail():
        failed.set()
        raise OSError("the disk is gone")

    with pytest.raises(OSError, match="the disk is gone"), repeating(fail, 0.001):
        assert failed.wait(timeout=60)
