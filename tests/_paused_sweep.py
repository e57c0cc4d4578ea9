"""``python tests/_paused_sweep.py EVENT:SEQ ARGS...``: ``perfkit ARGS...`` whose sweep stops
(asleep) right after it logs EVENT for run SEQ, so that a test's ``kill -9`` lands exactly at
that checkpoint. The pause lives here, in the tests, not in perfkit."""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from perfkit.cli import main  # noqa: E402
from perfkit.run.sweep import Sweep  # noqa: E402


def pause_at(checkpoint: str) -> None:
    """Make every Sweep sleep for good once it has logged ``checkpoint`` (``EVENT:SEQ``)."""
    logged = Sweep.event

    def event(self, name, seq, **fields):
        logged(self, name, seq, **fields)
        if f"{name}:{seq}" == checkpoint:
            while True:  # the test kills this process here
                time.sleep(3600)

    Sweep.event = event


if __name__ == "__main__":
    pause_at(sys.argv[1])
    sys.exit(main(sys.argv[2:]))
