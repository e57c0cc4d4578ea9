"""HdrHistogram interval logs (``.hlog``) written by perfkit: one run per tagged line.

The report ships each run's latency histogram so that every figure drawn from per-run
percentiles can be rebuilt from the report's own files. The format is HdrHistogram's interval
log (version 1.2), which :mod:`perfkit.ingest.hlog` and HdrHistogram's own tools read: one
line per run, tagged with its run id, holding the run's whole histogram as one interval, after
a comment line saying what the run printed::

    #[Histogram log format version 1.2]
    #[StartTime: 0.000 (seconds since epoch)]
    #[ValueUnit: us]
    "StartTimestamp","Interval_Length","Interval_Max","Interval_Compressed_Histogram"
    # default_R30000_c64_rep1: wrk2 printed 447,675 requests in 15.00 s ...
    Tag=default_R30000_c64_rep1,10.160,4.840,4.211,HISTFAAAA...

Values are microseconds (``#[ValueUnit: us]``, perfkit's convention); ``Interval_Max`` is in
ms, as HdrHistogram's tools print it. A tag cannot hold a comma or a space: such characters in
a run id are written as ``_``.

**The interval is the run's measurement window** (:func:`measurement_interval`), so that the
log's count over its interval is the rate of the requests it holds. wrk2 records its histogram
only after calibrating: each thread resets it ``CALIBRATE_DELAY_MS`` (10 s) plus 5 ms per
connection of the thread (its connections open 5 ms apart) after it starts, and stops at the
run's end (giltene/wrk2 ``src/wrk.h``, ``src/wrk.c`` ``thread_main`` and ``calibrate``). So
a wrk2 run's interval starts there and ends at its printed runtime: a 15 s run at 64
connections on 2 threads holds the requests of its last 4.84 s. (Interval_Length 15 s, as
before, read a third of the run's rate.) The log's rate is the window's: where the run's rate
was not steady (it fell short before calibrating, or did not sustain the rate) it differs from
the run's whole-run Requests/sec, which the comment line gives beside it.

**The histogram of a wrk2 run is rebuilt from its printed output** (:func:`shipped_histogram`):
the "Detailed Percentile spectrum" gives a bucket per row (the requests between two rows are
placed at the later row's value), and the percentiles printed above it (50% ... 99.999%),
which fall between rows, are placed at their printed values. Read back, its percentiles are
wrk2's printed ones within the printed rounding and one histogram bucket.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from perfkit.hdrlayout import LAYOUT
from perfkit.histogram import LatencyHistogram

HEADER = ('#[Histogram log format version 1.2]\n#[StartTime: 0.000 (seconds since epoch)]\n'
          '#[ValueUnit: us]\n'
          '"StartTimestamp","Interval_Length","Interval_Max","Interval_Compressed_Histogram"\n')
#: wrk2 resets a thread's histograms this long after the thread starts (src/wrk.h) ...
WRK2_CALIBRATE_DELAY_S = 10.0
#: ... plus this per connection of the thread (its connects are staggered 5 ms apart)
WRK2_CONNECT_STAGGER_S = 0.005
#: how each kind of interval was found, in the log's header
HOW = {
    "wrk2": "wrk2 runs: Interval_Length is wrk2's measurement window, StartTimestamp its "
            "start: the printed runtime less the calibration, 10 s + 5 ms x connections per "
            "thread (giltene/wrk2 src/wrk.c thread_main, calibrate); histograms rebuilt from "
            "wrk2's printed output: the Detailed Percentile spectrum (the requests between "
            "two rows at the later row's value) with the printed percentiles placed at their "
            "printed values",
    "run": "other runs: Interval_Length is the run's duration; the histogram is the run's",
}


def tag(name: str) -> str:
    """A run id as an interval-log tag (no comma, whitespace or line break)."""
    return re.sub(r"[,\s]+", "_", str(name)) or "untagged"


def measurement_interval(run: Any) -> tuple[float, float, str]:
    """``(start_s, length_s, kind)`` of the window a run's histogram covers, in seconds from
    the run's start; ``kind`` a key of :data:`HOW`. A wrk2 run (HdrHistogram corrected
    latency) with its runtime, connections and threads known: its window after calibration
    (module docstring); any other run: its whole duration (0 when unknown)."""
    duration = run.duration_s if run.duration_s is not None else math.nan
    if (run.tool == "wrk2" and run.latency_source == "hdr_corrected" and run.connections
            and run.threads and math.isfinite(duration)):
        start = WRK2_CALIBRATE_DELAY_S + WRK2_CONNECT_STAGGER_S * (
            run.connections // run.threads)
        if duration > start:
            return start, duration - start, "wrk2"
    return 0.0, duration if math.isfinite(duration) else 0.0, "run"


def shipped_histogram(run: Any) -> LatencyHistogram:
    """The histogram a log ships for ``run``: a wrk2 run's with its printed percentiles placed
    at their printed values (module docstring), any other run's as it is.

    Each printed percentile ``q`` (below 100) names the value at rank ``max(1, round(q / 100 x
    N))`` (HdrHistogram_c ``hdr_value_at_percentile``); where that rank falls between two
    spectrum rows, that many requests of the later row's bucket are placed at the printed
    value, kept above the earlier row's value and at most the later row's (a value rounded
    beyond them is placed at the nearest end): every row keeps its TotalCount."""
    hist = run.histogram
    if run.tool != "wrk2" or hist is None or not hist.total_count or not run.percentiles_ms:
        return hist
    values = LAYOUT.highest[np.asarray(hist.bucket_indexes)].astype(np.int64)
    cumulative = np.cumsum(np.asarray(hist.bucket_counts, dtype=np.int64))
    total = int(cumulative[-1])
    rows = list(zip(values.tolist(), cumulative.tolist(), strict=True))
    for q, printed_ms in sorted(run.percentiles_ms.items()):
        if not 0 < q < 100 or not math.isfinite(printed_ms):
            continue
        rank = max(1, math.floor(q / 100.0 * total + 0.5))
        i = int(np.searchsorted(cumulative, rank, side="left"))
        if i >= len(cumulative) or cumulative[i] == rank:
            continue  # a row of its own: the spectrum has it exactly
        low = int(values[i - 1]) + 1 if i else 0  # above the row before: it keeps its count
        rows.append((min(max(round(printed_ms * 1000.0), low), int(values[i])), rank))
    rows.sort(key=lambda row: (row[1], row[0]))
    return LatencyHistogram.from_spectrum_us([v for v, _ in rows], [c for _, c in rows])


def _printed(run: Any) -> str:
    """What the run printed, for its comment line."""
    parts = [f"{run.tool} printed"]
    if run.requests is not None and run.duration_s is not None:
        parts.append(f"{run.requests:,} requests in {run.duration_s:.2f} s")
    if run.throughput_rps is not None:
        parts.append(f"({run.throughput_rps:,.2f} req/s over the whole run)")
    return " ".join(parts)


def interval_log(runs: Iterable[Any], comments: Iterable[str] = ()) -> str:
    """The text of an interval log with one tagged line per run (``run_id`` or ``source`` its
    tag; :func:`shipped_histogram` over :func:`measurement_interval`), each after a comment
    with what the run printed; runs without a histogram are left out; ``comments`` become
    ``#`` lines at the top, then how the intervals and histograms were made."""
    lines = [f"# {c}\n" for c in comments]
    body = []
    kinds: dict[str, None] = {}
    for run in runs:
        hist = shipped_histogram(run)
        if hist is None or not hist.total_count:
            continue
        start, length, kind = measurement_interval(run)
        kinds[kind] = None
        name = tag(run.run_id or run.source)
        body.append(f"# {name}: {_printed(run)}; the histogram holds {hist.total_count:,} "
                    f"requests of its window from {start:.3f} s to {start + length:.3f} s "
                    f"({hist.total_count / length:,.2f} req/s)\n" if length > 0 else
                    f"# {name}: {_printed(run)}\n")
        body.append(f"Tag={name},{start:.3f},{length:.3f},{hist.max_us / 1000.0:.3f},"
                    f"{hist.encode()}\n")
    lines += [f"# {HOW[k]}\n" for k in kinds]
    lines.append(HEADER)
    return "".join(lines + body)


def write_run_logs(folder: Path, groups: Mapping[str, Sequence[Any]], stems: Mapping[str, str],
                   about: str = "") -> list[tuple[str, Path]]:
    """Per configuration of ``groups`` (label -> runs), its runs' histograms as one interval
    log ``folder/<stem>.hlog`` (``stems``: label -> file stem), headed by ``about`` and the run
    count; configurations without a histogram get no file. Returns ``(label, path)`` of each
    file written."""
    out = []
    for label, runs in groups.items():
        kept = [r for r in runs if r.histogram is not None and r.histogram.total_count]
        if not kept:
            continue
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"{stems[label]}.hlog"
        head = [f"{about}: {label}" if about else str(label),
                f"{len(kept)} runs, one tagged line per run (tag = run id)"]
        path.write_text(interval_log(kept, head), encoding="utf-8")
        out.append((str(label), path))
    return out
