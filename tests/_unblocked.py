"""A guard for tests of readers given a FIFO: fail, rather than hang for ever, when a read
waits on it."""

from __future__ import annotations

import contextlib
import signal
from collections.abc import Iterator


@contextlib.contextmanager
def unblocked(seconds: float = 60.0) -> Iterator[None]:
    """Fail, rather than hang for ever, if the block waits on a FIFO (a guard, not a timing:
    the refusal happens before anything is read)."""

    def blocked(signum, frame):
        raise AssertionError("the read blocked on the FIFO")

    previous = signal.signal(signal.SIGALRM, blocked)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
