"""wrk 4.x text output -> :class:`~perfkit.model.Run`.

wrk is closed-loop and, with ``--latency``, prints four percentiles (wrk.c
``print_stats_latency``)::

      Latency Distribution
         50%    0.99ms
         75%    1.71ms
         90%    2.60ms
         99%    4.62ms

They are kept as printed (``latency_source = "summary_only"``); no histogram is ever invented
from them. The rest of the grammar is shared with wrk2 (:mod:`perfkit.ingest._wrkcommon`).
"""

from __future__ import annotations

import re

from perfkit.ingest._wrkcommon import (
    Accumulator,
    Cursor,
    read_header,
    read_tail,
    read_thread_stats,
)
from perfkit.ingest.nodata import zeros_missing
from perfkit.model import Run
from perfkit.units import time_ms
from perfkit.warning import Code, Warn

#: the percentiles wrk prints, in order (wrk.c ``print_stats_latency``)
WRK_PERCENTILES = (50.0, 75.0, 90.0, 99.0)

# ASCII only: \d would admit any Unicode digit (see perfkit.ingest._wrkcommon)
DISTRIBUTION = re.compile(r"\s*Latency Distribution\s*$", re.ASCII)
PERCENTILE_ROW = re.compile(r"\s*(\d+)%\s+(\S+)\s*$", re.ASCII)


def parse(text: str, source: str = "<string>") -> Run:
    """Parse the standard output of one wrk run.

    Parameters
    ----------
    text : str
        wrk's standard output, as written.
    source : str
        Where it came from (a path), used in ``Run.source`` and in error messages.

    Returns
    -------
    Run
        ``tool="wrk"``, ``latency_source="summary_only"``. Thread statistics go to
        ``extra["thread_stats"]`` and lines printed by a Lua ``done()`` hook to
        ``extra["script_output"]``.

    Raises
    ------
    perfkit.errors.ParseError
        At the 1-based line where the output stops following wrk's format, including an output
        cut short before its ``Requests/sec`` and ``Transfer/sec`` lines.
    """
    cur = Cursor(text, source)
    acc = Accumulator()
    read_header(cur, acc, "wrk")
    read_thread_stats(cur, acc, "wrk")
    if cur.take_if(DISTRIBUTION):
        _read_distribution(cur, acc)
        expected = ""
    else:
        expected = "'Latency Distribution' or "
    read_tail(cur, acc, expected)
    return acc.run("wrk", source, "summary_only")


def _read_distribution(cur: Cursor, acc: Accumulator) -> None:
    printed: dict[str, float | None] = {}
    for q in WRK_PERCENTILES:
        expected = f"the {q:.0f}% line of the latency distribution"
        m = cur.take(PERCENTILE_ROW, expected)
        if float(m.group(1)) != q:
            raise cur.error(expected, cur.pos - 1)
        name = f"percentiles_ms[{q:g}]"
        value = cur.convert(time_ms, m.group(2), "a latency such as 0.99ms")
        printed[name] = acc.printed(name, value, m.group(2), "latency")
    if acc.no_samples:  # the Latency row recorded nothing: its 0.00us are placeholders
        printed, _ = zeros_missing(printed, "no-sample")
        left = [name for name, value in printed.items() if value is not None]
        if left:  # (the zeros are in the Latency row's note already)
            acc.notes.append(Warn(Code.PERCENTILES_WITHOUT_SAMPLES, fields=left))
    acc.fields["percentiles_ms"] = {q: v for q, v in zip(WRK_PERCENTILES, printed.values(),
                                                         strict=True) if v is not None}
