"""Recognise which tool wrote a file, from its name and first few kilobytes."""

from __future__ import annotations

import re

HEAD_BYTES = 16_384

#: the first line of a wrk or wrk2 report, anywhere in the head: a report pasted after a
#: prompt, a command line or a heading, indented or not (see perfkit.ingest.pasted)
WRK_START = re.compile(r"^[ \t]*(?:\^C)?Running \S+ test @ \S+", re.MULTILINE | re.ASCII)
#: a wrk2 command line before the report: ``wrk2 ...``, or ``wrk ... -R 2000`` (wrk2 builds a
#: binary named wrk); its -R is what tells a short wrk2 run from wrk
WRK2_COMMAND = re.compile(r"(?:^|[\s/$#>%])(?:wrk2\s|wrk\s.*\s(?:-R\s*\d|--rate[\s=]\d))",
                          re.MULTILINE | re.ASCII)
WRK2_MARKERS = (
    "Thread calibration:",
    "Latency Distribution (HdrHistogram",
    "Detailed Percentile spectrum",
)
WRK2_NAN_REQSEC = re.compile(r"^\s+Req/Sec\s+-nan\s+-nan", re.MULTILINE | re.ASCII)
HLOG_MARKERS = (
    "#[Histogram log format version",
    "#[StartTime:",
    "#[BaseTime:",
    '"StartTimestamp","Interval_Length","Interval_Max","Interval_Compressed_Histogram"',
)

#: an interval line of a log without any header (HdrHistogramJS writes such logs)
_N = r"\d+(?:\.\d*)?"
HLOG_INTERVAL = re.compile(rf"(?:Tag=[^,]*,)?{_N},{_N},{_N},HIST[A-Za-z0-9+/]", re.ASCII)
#: what every marker starts with: a line can start with a marker only if the text holds
#: one of these (most files hold neither, and are never split into lines)
_HLOG_HINTS = ("#[", '"StartTimestamp"')

#: every kind of file perfkit reads
KINDS = (
    "wrk", "wrk2", "locust_json", "locust_stats", "locust_distribution", "locust_history",
    "locust_failures", "locust_exceptions", "hlog",
)


def _csv_header(head: str) -> list[str]:
    first = head.split("\n", 1)[0].strip().lstrip("\ufeff")
    return [c.strip().strip('"') for c in first.split(",")]


def sniff(head: str) -> str | None:
    """The kind of tool output ``head`` (the start of a file) is, or None.

    wrk and wrk2 print the same header; wrk2 is recognised by its calibration lines, its
    HdrHistogram tables or its ``-nan`` Req/Sec line. A wrk2 run too short to calibrate and run
    without ``--latency`` looks exactly like wrk: a manifest naming the tool settles it.
    """
    text = head.lstrip("\ufeff")
    stripped = text.lstrip()
    if not stripped:
        return None
    start = WRK_START.search(text) if "Running" in text else None
    if start is not None:
        if (any(m in text for m in WRK2_MARKERS) or WRK2_NAN_REQSEC.search(text)
                or WRK2_COMMAND.search(text, 0, start.start())):
            return "wrk2"
        return "wrk"
    if stripped.startswith("["):
        if '"num_requests"' in text or re.fullmatch(r"(?:\s*\[\s*\])+\s*", text, re.ASCII):
            return "locust_json"
        return None
    if ((_HLOG_HINTS[0] in text or _HLOG_HINTS[1] in text)
            and any(line.startswith(HLOG_MARKERS) for line in text.splitlines()[:20])):
        return "hlog"
    if ",HIST" in text and HLOG_INTERVAL.match(stripped):
        return "hlog"
    cols = set(_csv_header(text))
    # Locust 1.x names, and those of 0.8-0.14 (see perfkit.ingest.locust_legacy)
    if {"Timestamp", "User Count", "Name"} <= cols or {"Timestamp", "Name", "# requests"} <= cols:
        return "locust_history"
    if {"Name", "Request Count", "Failure Count"} <= cols or {"Name", "# requests",
                                                              "# failures"} <= cols:
        return "locust_stats"
    if {"Name", "# requests", "50%"} <= cols:
        return "locust_distribution"
    if {"Method", "Name", "Error", "Occurrences"} <= cols:
        return "locust_failures"
    if {"Count", "Message", "Traceback"} <= cols:
        return "locust_exceptions"
    return None
