"""HdrHistogram interval logs (``.hlog``) written by perfkit: one run per tagged line.

The report ships each run's latency histogram so that every figure drawn from per-run
percentiles can be rebuilt from the report's own files. The format is HdrHistogram's interval
log (version 1.2), which :mod:`perfkit.ingest.hlog` and HdrHistogram's own tools read: one
line per run, tagged with its run id, holding the run's whole histogram as one interval::

    #[Histogram log format version 1.2]
    #[StartTime: 0.000 (seconds since epoch)]
    #[ValueUnit: us]
    "StartTimestamp","Interval_Length","Interval_Max","Interval_Compressed_Histogram"
    Tag=default_R30000_c64_rep1,0.000,15.000,4.211,HISTFAAAA...

Values are microseconds (``#[ValueUnit: us]``, perfkit's convention); ``Interval_Max`` is in
ms, as HdrHistogram's tools print it. A tag cannot hold a comma or a space: such characters in
a run id are written as ``_``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from perfkit.histogram import LatencyHistogram

HEADER = ('#[Histogram log format version 1.2]\n#[StartTime: 0.000 (seconds since epoch)]\n'
          '#[ValueUnit: us]\n'
          '"StartTimestamp","Interval_Length","Interval_Max","Interval_Compressed_Histogram"\n')


def tag(name: str) -> str:
    """A run id as an interval-log tag (no comma, whitespace or line break)."""
    return re.sub(r"[,\s]+", "_", str(name)) or "untagged"


def interval_log(runs: Iterable[tuple[str, LatencyHistogram, float | None]],
                 comments: Iterable[str] = ()) -> str:
    """The text of an interval log with one tagged line per ``(run id, histogram, duration
    in s)``; empty histograms are left out; ``comments`` become ``#`` lines at the top."""
    lines = [f"# {c}\n" for c in comments]
    lines.append(HEADER)
    for name, hist, duration_s in runs:
        if hist is None or not hist.total_count:
            continue
        length = duration_s if duration_s is not None and math.isfinite(duration_s) else 0.0
        lines.append(f"Tag={tag(name)},0.000,{length:.3f},{hist.max_us / 1000.0:.3f},"
                     f"{hist.encode()}\n")
    return "".join(lines)


def write_run_logs(folder: Path, groups: Mapping[str, Sequence[Any]], stems: Mapping[str, str],
                   about: str = "") -> list[tuple[str, Path]]:
    """Per configuration of ``groups`` (label -> runs), its runs' histograms as one interval
    log ``folder/<stem>.hlog`` (``stems``: label -> file stem), headed by ``about`` and the run
    count; configurations without a histogram get no file. Returns ``(label, path)`` of each
    file written."""
    out = []
    for label, runs in groups.items():
        kept = [(r.run_id or r.source, r.histogram, r.duration_s) for r in runs
                if r.histogram is not None and r.histogram.total_count]
        if not kept:
            continue
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"{stems[label]}.hlog"
        head = [f"{about}: {label}" if about else str(label),
                f"{len(kept)} runs, one tagged line per run (tag = run id)"]
        path.write_text(interval_log(kept, head), encoding="utf-8")
        out.append((str(label), path))
    return out
