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

from perfkit.model import RECORD_COLUMNS, Run

_INT_COLUMNS = ("threads", "connections", "users", "requests", "errors_connect", "errors_read",
                "errors_write", "errors_timeout", "non_2xx_3xx", "failures", "histogram_count",
                "repetition", "block", "order", "exit_code")

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
