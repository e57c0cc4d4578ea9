"""Little's-law consistency check per run: N = X * (R + Z).

Little's law (Little 1961; Jain, *The Art of Computer Systems Performance Analysis*, 1991,
sec. 33.2) holds for any stable system in steady state: the mean number of requests in flight
equals throughput times mean time in the system. For a load generator:

- **wrk** (closed loop, think time Z = 0): each connection has one request outstanding, so
  ``ratio = X * R / connections`` should be about 1. A ratio below ``1 - LITTLE_TOLERANCE``
  means connections sat idle outside the measured latency (client CPU, connection set-up,
  socket errors): the *client*, not the server, limited the load. A ratio above
  ``1 + LITTLE_TOLERANCE`` means the printed mean latency is larger than Little's law allows:
  wrk 4 adds synthetic samples to its latency statistics before printing them (its
  ``stats_correct`` step, with expected interval ``runtime / (requests / connections)``), so a
  heavy tail inflates the printed mean. The printed mean is never below the measured one, so a
  low ratio is a sound signal and a high one is about wrk's statistics, not the server.
- **Locust** (closed loop with think time): ``implied_think_time_ms = N / X - R`` is reported.
  With the configured mean wait (``think_time_ms``, e.g. 30 ms for ``between(0.01, 0.05)``),
  ``ratio = X * (R + Z) / users`` is checked like wrk's. Runs that ramp users up count the full
  user number for the whole run, which lowers the ratio (raises the implied think time).
- **wrk2** (open loop): connections cap the requests in flight. ``X * R / connections`` near or
  above 1 (R is the corrected latency, measured from the intended send time) means every
  connection was busy (flagged from ``WRK2_BUSY_RATIO = 1``): requests waited for a free
  connection in the client, because the server fell behind or the connections are too few.

``LITTLE_TOLERANCE = 0.2``: start-up and the last partial requests, the 3-significant-digit
printing of the mean latency, and run-time rounding each move the ratio by a few percent in
runs of a few seconds or more; 20 % is far outside that, so only a real mismatch is flagged.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

LITTLE_TOLERANCE = 0.2
#: wrk2: mean requests in flight (corrected latency) per connection at which the pool was full
WRK2_BUSY_RATIO = 1.0

#: flags, with what each means for the numbers
FLAGS = {
    "ok": "consistent with Little's law",
    "client_bound": "connections idle outside the measured latency: the client, not the "
                    "server, limited the load (client CPU, connection set-up or errors)",
    "latency_inflated": "the printed mean latency is larger than N connections, each with one "
                        "request at a time, allow at the measured throughput (X*R > N): wrk "
                        "adds synthetic samples to its latency statistics before printing them "
                        "(stats_correct: below every latency above twice the per-connection "
                        "interval N/X, one at each interval), which raises the printed mean "
                        "most where N/X is short against the tail, at few connections; errors "
                        "can do the same. The throughput is counted directly, not affected",
    "connections_exhausted": "every connection was busy: requests queued in the client "
                             "(the server fell behind, or use more connections)",
    "think_time_unknown": "Locust: the implied think time Z = N/X - R is reported; give the "
                          "configured mean wait (think_time_ms; CLI --think-time-ms) to check it",
    "no_data": "throughput, latency or concurrency missing",
}

COLUMNS = ("tool", "concurrency", "concurrency_kind", "throughput_rps", "latency_mean_ms",
           "think_time_ms", "implied_concurrency", "ratio", "implied_think_time_ms", "flag",
           "note")


def _num(frame: pd.DataFrame, col: str) -> np.ndarray:
    if col not in frame:
        return np.full(len(frame), np.nan)
    return pd.to_numeric(frame[col], errors="coerce").astype("float64").to_numpy()


def _think_time(frame: pd.DataFrame, think_time_ms) -> np.ndarray:
    if think_time_ms is None:
        return np.full(len(frame), np.nan)
    if isinstance(think_time_ms, str):
        return _num(frame, think_time_ms)
    return np.full(len(frame), float(think_time_ms))


def _flag(tool: str, ratio: float, think_known: bool) -> str:
    if not np.isfinite(ratio):
        return "no_data"
    if tool == "wrk2":
        return "connections_exhausted" if ratio >= WRK2_BUSY_RATIO else "ok"
    if tool == "locust" and not think_known:
        return "latency_inflated" if ratio > 1 + LITTLE_TOLERANCE else "think_time_unknown"
    if ratio < 1 - LITTLE_TOLERANCE:
        return "client_bound"
    if ratio > 1 + LITTLE_TOLERANCE:
        return "latency_inflated"
    return "ok"


def littles_law(frame: pd.DataFrame, think_time_ms: float | str | None = None,
                keep: Sequence[str] = ("run_id", "endpoint")) -> pd.DataFrame:
    """Check N = X * (R + Z) for every run of a runs frame.

    Parameters
    ----------
    frame : DataFrame
        A :func:`perfkit.frames.runs_frame` (columns ``tool, connections, users,
        throughput_rps, latency_mean_ms``). For Locust only the ``Aggregated`` rows are checked
        (per-endpoint throughput is a share of the users' time, not a population).
    think_time_ms : float or str, optional
        Mean configured think time of Locust users (a number, or a column name).
    keep : sequence of str
        Columns of ``frame`` copied to the result (missing ones are skipped), e.g. factors.

    Returns
    -------
    DataFrame
        One row per checked run, indexed like ``frame``: ``keep`` columns, then ``tool,
        concurrency, concurrency_kind, throughput_rps, latency_mean_ms, think_time_ms,
        implied_concurrency`` (X * (R + Z)), ``ratio`` (implied / N), ``implied_think_time_ms``
        (N / X - R, Locust), ``flag`` (a key of :data:`FLAGS`) and ``note`` (its meaning).
    """
    if "is_aggregate" in frame and "tool" in frame:
        locust = frame["tool"].eq("locust")
        frame = frame[~locust | frame["is_aggregate"].fillna(False).astype(bool)]
    tool: np.ndarray = (frame["tool"].astype(str).to_numpy() if "tool" in frame
                        else np.full(len(frame), ""))
    users, conns = _num(frame, "users"), _num(frame, "connections")
    is_locust = tool == "locust"
    n = np.where(is_locust, users, conns)
    x = _num(frame, "throughput_rps")
    r_ms = _num(frame, "latency_mean_ms")
    z_ms = np.where(is_locust, _think_time(frame, think_time_ms), 0.0)
    z_used = np.where(np.isnan(z_ms), 0.0, z_ms)
    implied = x * (r_ms + z_used) / 1000.0
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(n > 0, implied / n, np.nan)
        implied_z = np.where(is_locust & (x > 0), n / x * 1000.0 - r_ms, np.nan)
    flags = [_flag(t, q, not np.isnan(z)) for t, q, z in zip(tool, ratio, z_ms, strict=True)]
    out = frame[[c for c in keep if c in frame]].copy()
    out["tool"] = tool
    out["concurrency"] = n
    out["concurrency_kind"] = np.where(is_locust, "users", "connections")
    out["throughput_rps"] = x
    out["latency_mean_ms"] = r_ms
    out["think_time_ms"] = np.where(is_locust, z_ms, np.where(tool == "wrk", 0.0, np.nan))
    out["implied_concurrency"] = implied
    out["ratio"] = ratio
    out["implied_think_time_ms"] = implied_z
    out["flag"] = flags
    out["note"] = [FLAGS[f] for f in flags]
    return out
