"""Tidy pandas frames of runs, with units in every column name.

- :func:`runs_frame`: one row per run (per endpoint for Locust), the record columns of
  :data:`perfkit.model.RECORD_COLUMNS` first, then extra percentiles and the factors.
- :func:`percentiles_frame`: long form ``run_index, run_id, endpoint, percentile, latency_ms,
  kind`` (``kind`` is ``printed``, ``uncorrected`` or ``histogram``).
- :func:`timeseries_frame`: Locust's per-second history with throughput derived by differencing
  the cumulative request counts.

Missing values are NaN. Integer columns that may be missing use pandas' nullable ``Int64``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np
import pandas as pd

from perfkit.counters import INT_COLUMNS as COUNTER_INT_COLUMNS
from perfkit.model import RECORD_COLUMNS, Run

_INT_COLUMNS = ("threads", "connections", "users", "requests", "errors_connect", "errors_read",
                "errors_write", "errors_timeout", "non_2xx_3xx", "failures", "histogram_count",
                "repetition", "block", "order", "exit_code",
                *COUNTER_INT_COLUMNS)

#: percentiles drawn from a histogram for :func:`percentiles_frame` (the spectrum's ticks)
SPECTRUM_PERCENTILES = (
    1.5, 10, 25, 50, 75, 90, 95, 99, 99.5, 99.9, 99.95, 99.99, 99.999, 100,
)


def runs_frame(runs: Iterable[Run]) -> pd.DataFrame:
    """One row per run; contract columns first, then further percentiles and factors."""
    records = [r.to_record() for r in runs]
    if not records:
        return pd.DataFrame(columns=list(RECORD_COLUMNS))
    frame = pd.DataFrame.from_records(records)
    ordered = list(RECORD_COLUMNS) + [c for c in frame.columns if c not in RECORD_COLUMNS]
    frame = frame[ordered]
    for col in _INT_COLUMNS:
        if col in frame:
            frame[col] = pd.array(
                [None if v is None or (isinstance(v, float) and np.isnan(v)) else int(v)
                 for v in frame[col]], dtype="Int64")
    return frame


def percentiles_frame(runs: Sequence[Run],
                      histogram_percentiles: Sequence[float] = SPECTRUM_PERCENTILES
                      ) -> pd.DataFrame:
    """Long form of every percentile: as printed, uncorrected (wrk2 ``-U``) and from histograms.

    ``run_index`` is the position of the run in ``runs`` (runs need not have ids).
    """
    rows: list[dict] = []
    for i, run in enumerate(runs):
        base = {"run_index": i, "run_id": run.run_id, "endpoint": run.endpoint}
        for q, v in sorted(run.percentiles_ms.items()):
            rows.append({**base, "percentile": q, "latency_ms": v, "kind": "printed"})
        for q, v in sorted(run.uncorrected_percentiles_ms.items()):
            rows.append({**base, "percentile": q, "latency_ms": v, "kind": "uncorrected"})
        if run.histogram is not None and run.histogram.total_count:
            values = run.histogram.percentiles_us(histogram_percentiles) / 1000.0
            for q, v in zip(histogram_percentiles, values, strict=True):
                rows.append({**base, "percentile": float(q), "latency_ms": float(v),
                             "kind": "histogram"})
    columns = ["run_index", "run_id", "endpoint", "percentile", "latency_ms", "kind"]
    return pd.DataFrame.from_records(rows, columns=columns)


#: columns of :func:`timeseries_frame`, in order
TIMESERIES_COLUMNS = (
    "run_id", "endpoint", "timestamp_s", "elapsed_s", "user_count", "throughput_rps",
    "failures_per_s", "requests_per_s_printed", "latency_p50_ms", "latency_p95_ms",
    "latency_p99_ms", "ramp_up", "cumulative_percentiles",
)


def _differenced(totals: np.ndarray, times: np.ndarray) -> np.ndarray:
    """Per-second rate between consecutive rows: diff(totals) / diff(times); NaN for the first
    row, where a count is missing, and where two rows share a timestamp."""
    rate = np.full(len(totals), np.nan)
    if len(totals) > 1:
        dt = np.diff(times)
        with np.errstate(divide="ignore", invalid="ignore"):
            rate[1:] = np.where(dt > 0, np.diff(totals) / dt, np.nan)
    return rate


def _ramp_up(users: np.ndarray) -> np.ndarray:
    """True for the rows before the user count first reaches its peak (the -u target).

    The peak, not the last row, is the final value: Locust's last history rows can show 0 users
    as it stops them at the end of the run.
    """
    out = np.zeros(len(users), dtype=bool)
    finite = ~np.isnan(users)
    if finite.any():
        first_peak = int(np.flatnonzero(users == np.nanmax(users))[0])
        out[:first_peak] = True
    return out


def timeseries_frame(runs: Iterable[Run]) -> pd.DataFrame:
    """Locust's per-second history (``Run.extra["history"]``) as a tidy frame.

    One row per history row and run (per endpoint with ``--csv-full-history``; only the
    Aggregated run without it). Columns:

    - ``run_id`` (the run's id, else its source), ``endpoint``;
    - ``timestamp_s`` (epoch seconds), ``elapsed_s`` (since the run's first history row, over
      all its endpoints), ``user_count``;
    - ``throughput_rps`` and ``failures_per_s``: derived by differencing the cumulative
      ``Total Request Count`` / ``Total Failure Count`` over the timestamps, not Locust's
      smoothed ``Requests/s`` (kept as ``requests_per_s_printed``);
    - ``latency_p50_ms``, ``latency_p95_ms``, ``latency_p99_ms`` as printed;
    - ``ramp_up``: True before the user count first reaches its peak;
    - ``cumulative_percentiles``: True when the percentiles cover the run so far, False for
      Locust's ~10 s window (``--csv-full-history``).

    The first row of each endpoint has NaN rates (nothing to difference). With ``--processes``
    or workers the master's totals move only when a worker reports (every ~3 s), so the
    differenced rate alternates between 0 and bursts: smooth it over a few seconds before
    reading it as a rate. Missing values are NaN.
    """
    frames = []
    for run in runs:
        rows = run.extra.get("history") if run.extra else None
        if not rows:
            continue
        ts = _history_column(rows, "timestamp_s")
        frames.append(pd.DataFrame({
            "run_id": run.run_id if run.run_id is not None else run.source,
            "endpoint": run.endpoint,
            "timestamp_s": pd.array([r.get("timestamp_s") for r in rows], dtype="Int64"),
            "elapsed_s": ts,
            "user_count": pd.array([r.get("user_count") for r in rows], dtype="Int64"),
            "throughput_rps": _differenced(_history_column(rows, "total_requests"), ts),
            "failures_per_s": _differenced(_history_column(rows, "total_failures"), ts),
            "requests_per_s_printed": _history_column(rows, "requests_per_s"),
            "latency_p50_ms": _history_column(rows, "latency_p50_ms"),
            "latency_p95_ms": _history_column(rows, "latency_p95_ms"),
            "latency_p99_ms": _history_column(rows, "latency_p99_ms"),
            "ramp_up": _ramp_up(_history_column(rows, "user_count")),
            "cumulative_percentiles": run.extra.get("history_cumulative_percentiles"),
        }))
    if not frames:
        return pd.DataFrame(columns=list(TIMESERIES_COLUMNS))
    out = pd.concat(frames, ignore_index=True)
    # elapsed from the first row of the whole Locust run (Aggregated rows start first)
    out["elapsed_s"] = out["elapsed_s"] - out.groupby("run_id")["elapsed_s"].transform("min")
    return out[list(TIMESERIES_COLUMNS)]


def _history_column(rows: Sequence[dict], key: str) -> np.ndarray:
    return np.array([np.nan if r.get(key) is None else r[key] for r in rows], dtype=np.float64)
