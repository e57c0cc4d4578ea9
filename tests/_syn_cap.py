"""An oracle for the tests of the 1 s SYN-retransmission cap, written by hand from its rule."""

from __future__ import annotations

import numpy as np


def on_syn_cap(frame, column):
    """By hand: ``column`` within 5% of 1000 ms, or, where the run's namespace counted SYN
    retransmissions, within [950, 1050 ms plus the run's median] (a retried request waits the
    1 s, then its turn)."""
    v = frame[column].to_numpy(float)
    retried = frame["tcp_syn_retransmits"].fillna(0).to_numpy(float) > 0
    edge = 1050.0 + frame["latency_p50_ms"].to_numpy(float)
    return np.isclose(v, 1000.0, rtol=0.05) | (retried & (v >= 950.0) & (v <= edge))
