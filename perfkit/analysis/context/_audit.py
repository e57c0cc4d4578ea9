"""Coordinated-omission audit: how far each run's latencies can be trusted for the tail.

Coordinated omission (Tene, "How NOT to Measure Latency", 2015; wrk2's README): a load
generator that waits for a response before sending the next request stops measuring exactly
when the server stalls, so the requests that *would* have been sent during the stall, and would
have waited, are never recorded. The tail is understated, often by orders of magnitude.

- **wrk2** sends on a constant-rate schedule and measures latency from the *intended* send time
  (corrected). With ``-U`` it also prints the uncorrected distribution; the audit puts the two
  side by side and flags a run whose p99 ratio corrected / uncorrected exceeds
  :data:`CO_RATIO_FLAG` (1.5): there, measuring without the correction would have hidden a
  third or more of the p99.
- **wrk** and **Locust** are closed-loop: their percentiles understate the tail. (wrk 4 pads its
  statistics with synthetic samples at the *achieved* per-connection interval, its
  ``stats_correct`` step, a partial correction that cannot recover the intended schedule.)
- **Below target** (wrk2, the ``below_target`` column): a run whose achieved rate is below 0.99 x
  its target did not keep up. If the server saturated, its corrected latencies include
  queueing and grow with the run length, describing the overload, not the server at that
  rate; if the generator fell short, they do not. One run alone cannot tell which: the
  run-status rule (:mod:`perfkit.analysis.core._runstatus`) decides among the run's peers, and the
  note says so. ``None`` means unknown (no target).

Percentiles come from what the tool printed when it printed them, else from the run's
histogram (the same rule for the corrected and the uncorrected side).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from perfkit.histogram import LatencyHistogram, check_percentile
from perfkit.model import below_target, percentile_label

#: p99 ratio corrected / uncorrected above which coordinated omission is flagged
CO_RATIO_FLAG = 1.5
AUDIT_PERCENTILES = (50.0, 99.0, 99.9)

NOTES = {
    "closed_loop": "{tool} is closed-loop: its tail latencies are understated (coordinated "
                   "omission); measure the tail with wrk2 at a fixed rate",
    "co_large": "corrected p99 is {ratio:.2f}x the uncorrected p99 (> {flag:g}): stalls hid "
                "requests; only the corrected numbers describe the tail",
    "co_small": "corrected p99 is {ratio:.2f}x the uncorrected p99 (<= {flag:g}): little "
                "coordinated omission in this run",
    "corrected_only": "corrected latencies only (run wrk2 with -U to see the size of the "
                      "correction)",
    # one run alone: the raw check, not the run-status verdict (which needs the run's peers)
    "below_target": "{below}; one run alone cannot tell a saturated server (its latencies then "
                 "include queueing and grow with the run length) from a generator that fell "
                 "short: compare it with its peers (perfkit compare, the report's run status)",
    "saturation_unknown": "saturation unknown: no target rate (-R) known for this run",
    "no_latency": "no latency percentiles in this run",
}


def _value(printed: Mapping[float, float], hist: LatencyHistogram | None, q: float) -> float:
    if q in printed:
        return float(printed[q])
    if hist is not None and hist.total_count:
        return hist.percentile_ms(q)
    return float("nan")


def _ratio(corrected: float, uncorrected: float) -> float:
    return corrected / uncorrected if uncorrected > 0 else float("nan")


def _row(run, qs: Sequence[float], flag_at: float) -> dict:
    row = {"run_id": run.run_id, "tool": run.tool, "endpoint": run.endpoint,
           "closed_loop": run.closed_loop, "target_rate_rps": run.target_rate_rps,
           "throughput_rps": run.throughput_rps, "below_target": run.below_target}
    for q in qs:
        label = percentile_label(q)
        corrected = _value(run.percentiles_ms, run.histogram, q)
        uncorrected = _value(run.uncorrected_percentiles_ms, run.uncorrected_histogram, q)
        row[f"p{label}_ms"] = corrected
        row[f"uncorrected_p{label}_ms"] = uncorrected
        row[f"ratio_p{label}"] = _ratio(corrected, uncorrected)
    ratio = _ratio(_value(run.percentiles_ms, run.histogram, 99.0),
                   _value(run.uncorrected_percentiles_ms, run.uncorrected_histogram, 99.0))
    row["co_ratio_p99"] = ratio
    row["co_flag"] = bool(ratio > flag_at) if np.isfinite(ratio) else None
    row["note"] = "; ".join(_notes(run, row, ratio, flag_at))
    return row


def _notes(run, row: dict, ratio: float, flag_at: float) -> list[str]:
    notes = []
    if run.closed_loop:
        notes.append(NOTES["closed_loop"].format(tool=run.tool))
    elif run.tool == "wrk2":
        if np.isfinite(ratio):
            key = "co_large" if ratio > flag_at else "co_small"
            notes.append(NOTES[key].format(ratio=ratio, flag=flag_at))
        else:
            notes.append(NOTES["corrected_only"])
        if run.below_target:
            notes.append(NOTES["below_target"].format(below=below_target(run)))
        elif run.below_target is None:
            notes.append(NOTES["saturation_unknown"])
    if all(np.isnan(row[k]) for k in row if k.startswith("p") and k.endswith("_ms")):
        notes.append(NOTES["no_latency"])
    return notes


def coordinated_omission(runs: Iterable, percentiles: Sequence[float] = AUDIT_PERCENTILES,
                         flag_ratio: float = CO_RATIO_FLAG) -> pd.DataFrame:
    """Audit every run for coordinated omission and saturation.

    Parameters
    ----------
    runs : iterable of :class:`perfkit.model.Run`
        Any mix of wrk2, wrk and Locust runs.
    percentiles : sequence of float
        Percentiles (0-100 scale) to put side by side; p99 is always used for the flag.
    flag_ratio : float
        Corrected / uncorrected p99 above which ``co_flag`` is True.

    Returns
    -------
    DataFrame
        One row per run: ``run_id, tool, endpoint, closed_loop, target_rate_rps,
        throughput_rps, below_target`` (True / False / None = unknown), then per percentile
        ``pQ_ms`` (as the tool reports it: corrected for wrk2), ``uncorrected_pQ_ms`` and
        ``ratio_pQ``; ``co_ratio_p99``, ``co_flag`` (None without an uncorrected
        distribution) and ``note`` (what to make of the run's latencies).

    Notes
    -----
    Tene (2015); HdrHistogram's ``recordValueWithExpectedInterval``: a 100 s stall in a
    stream of 1 ms requests sent every 10 ms leaves the uncorrected p99.99 at 1 ms, while the
    corrected distribution has p75 of about 50 s and p99.99 of about 100 s (see the tests).
    """
    qs = [check_percentile(q) for q in percentiles]
    rows = [_row(run, qs, flag_ratio) for run in runs]
    frame = pd.DataFrame.from_records(rows)
    if "below_target" in frame:
        frame["below_target"] = frame["below_target"].astype(object)
        frame["co_flag"] = frame["co_flag"].astype(object)
    return frame
