"""An independent reader of the numbers a wrk or wrk2 report prints, for the published corpus.

Small and separate on purpose: regular expressions over the text, its own unit table, nothing
from perfkit. A test compares each number found here with perfkit's run.
"""

from __future__ import annotations

import math
import re

_TIME_MS = {"us": 1e-3, "ms": 1.0, "s": 1e3, "m": 6e4, "h": 3.6e6}
_METRIC = {"": 1.0, "k": 1e3, "M": 1e6, "G": 1e9}
_BYTES = {"B": 1.0, "KB": 1024.0, "MB": 1024.0**2, "GB": 1024.0**3, "TB": 1024.0**4}


def _scaled(token: str, table: dict[str, float]) -> float:
    m = re.fullmatch(r"(-?nan|[\d.]+)\s*([A-Za-z]*)", token)
    assert m and m.group(2) in table, token
    return math.nan if "nan" in m.group(1) else float(m.group(1)) * table[m.group(2)]


def printed(text: str) -> dict[str, float | str]:
    """Every number the first report in ``text`` prints, by perfkit's field name."""
    text = text.replace("\r\n", "\n")
    start = re.search(r"Running (\S+) test @ (\S+)", text)
    assert start, "no report"
    body = text[start.start():]
    out: dict[str, float | str] = {"url": start.group(2)}
    m = re.search(r"(\d+) threads and (\d+) connections", body)
    out["threads"], out["connections"] = float(m.group(1)), float(m.group(2))
    m = re.search(r"Latency\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)%", body)
    if m:
        out["latency_mean_ms"] = _scaled(m.group(1), _TIME_MS)
        out["latency_stdev_ms"] = _scaled(m.group(2), _TIME_MS)
        out["latency_max_ms"] = _scaled(m.group(3), _TIME_MS)
    m = re.search(r"Req/Sec\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)%", body)
    if m:
        out["req_per_thread_avg_rps"] = _scaled(m.group(1), _METRIC)
        # wrk2 prints "-nan -nan 0.00 0.00%" for no rate sample: its 0.00 is a placeholder too
        out["req_per_thread_max_rps"] = (math.nan if "nan" in m.group(1)
                                         else _scaled(m.group(3), _METRIC))
    dist = re.search(r"Latency Distribution \(HdrHistogram - Recorded Latency\)\n((?:.*\n){8})",
                     body)
    rows = re.findall(r"^\s*(\d+\.\d+)%\s+(\S+)\s*$", dist.group(1), re.M) if dist else \
        re.findall(r"^\s*(50|75|90|99)%\s+(\S+)\s*$", body, re.M)
    for q, v in rows:
        out[f"p{float(q):g}"] = _scaled(v, _TIME_MS)
    m = re.search(r"(\d+) requests in (\S+), (\S+) read", body)
    out["requests"] = float(m.group(1))
    out["duration_s"] = _scaled(m.group(2), _TIME_MS) / 1000
    out["bytes_read"] = _scaled(m.group(3), _BYTES)
    m = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", body)
    for i, name in enumerate(("errors_connect", "errors_read", "errors_write",
                              "errors_timeout"), start=1):
        out[name] = float(m.group(i)) if m else 0.0
    m = re.search(r"Non-2xx or 3xx responses: (\d+)", body)
    out["non_2xx_3xx"] = float(m.group(1)) if m else 0.0
    out["throughput_rps"] = float(re.search(r"Requests/sec:\s+(\S+)", body).group(1))
    out["transfer_bytes_per_s"] = _scaled(re.search(r"Transfer/sec:\s+(\S+)", body).group(1),
                                          _BYTES)
    return out


def of_run(run) -> dict[str, float | str | None]:
    """The same names, from a perfkit Run."""
    ts = run.extra.get("thread_stats", {})
    out = {"url": run.url, "threads": run.threads, "connections": run.connections,
           "latency_mean_ms": run.latency_mean_ms, "latency_stdev_ms": run.latency_stdev_ms,
           "latency_max_ms": run.latency_max_ms,
           "req_per_thread_avg_rps": ts.get("req_per_thread_avg_rps"),
           "req_per_thread_max_rps": ts.get("req_per_thread_max_rps"),
           "requests": run.requests, "duration_s": run.duration_s, "bytes_read": run.bytes_read,
           "errors_connect": run.errors_connect, "errors_read": run.errors_read,
           "errors_write": run.errors_write, "errors_timeout": run.errors_timeout,
           "non_2xx_3xx": run.non_2xx_3xx, "throughput_rps": run.throughput_rps,
           "transfer_bytes_per_s": run.transfer_bytes_per_s}
    for q, v in (run.percentiles_ms or {}).items():
        out[f"p{q:g}"] = v
    return out


def differences(text: str, run) -> list[str]:
    """Each printed number perfkit's run does not hold as printed (empty: all equal)."""
    want, got = printed(text), of_run(run)
    bad = []
    for name, value in want.items():
        have = got.get(name)
        if isinstance(value, str):
            if have != value:
                bad.append(f"{name}: printed {value!r}, read {have!r}")
        elif math.isnan(value):
            if have is not None and not math.isnan(have):
                bad.append(f"{name}: printed nan, read {have!r}")
        elif have is None or not math.isclose(float(have), value, rel_tol=1e-9, abs_tol=1e-12):
            bad.append(f"{name}: printed {value!r}, read {have!r}")
    return bad
