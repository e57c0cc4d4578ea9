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


# -- Locust CSVs -------------------------------------------------------------------------------
# Read with the csv module, by header, nothing from perfkit. Locust's names changed over the
# versions (0.8-0.14 wrote '# requests', 'Median response time', ...), so each value is found by
# any of its names. What Locust prints where it measured nothing is no value: N/A; the 0s of a
# row without requests (its mean, min, max, median, content size and 0 percentiles); a windowed
# history row whose percentiles are all 0. Those must read as missing.
_NAMES = {
    "requests": ("Request Count", "# requests"), "failures": ("Failure Count", "# failures"),
    "latency_mean_ms": ("Average Response Time", "Average response time"),
    "latency_min_ms": ("Min Response Time", "Min response time"),
    "latency_max_ms": ("Max Response Time", "Max response time"),
    "latency_median_ms": ("Median Response Time", "Median response time"),
    "content_size_mean_bytes": ("Average Content Size",),
    "throughput_rps": ("Requests/s",), "failures_per_s": ("Failures/s", "Requests Failed/s"),
}
_NO_DATA_WITHOUT_REQUESTS = ("latency_mean_ms", "latency_min_ms", "latency_max_ms",
                             "latency_median_ms", "content_size_mean_bytes")
_HISTORY = {
    "timestamp_s": ("Timestamp",), "user_count": ("User Count",),
    "requests_per_s": ("Requests/s",), "failures_per_s": ("Failures/s", "Requests Failed/s"),
    "total_requests": ("Total Request Count", "# requests"),
    "total_failures": ("Total Failure Count", "# failures"),
    "total_latency_median_ms": ("Total Median Response Time", "Median response time"),
    "total_latency_mean_ms": ("Total Average Response Time", "Average response time"),
    "total_latency_min_ms": ("Total Min Response Time", "Min response time"),
    "total_latency_max_ms": ("Total Max Response Time", "Max response time"),
    "total_content_size_mean_bytes": ("Total Average Content Size", "Average Content Size"),
}


def _rows(path) -> list[dict]:
    import csv
    data = path.read_bytes()
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        text = data.decode("latin-1")
    # a record per line, numbered as an editor does (split on "\n": some files end their lines
    # with "\r\r\n"); no cell of these files holds a newline
    lines = [(n, line.rstrip("\r")) for n, line in enumerate(text.split("\n"), start=1)]
    records = [(n, next(csv.reader([line]))) for n, line in lines if line]
    header = [h.strip() for h in records[0][1]]
    return [dict(zip(header, row, strict=True)) | {"#line": n} for n, row in records[1:]]


def _cell(row: dict, names: tuple[str, ...]):
    for name in names:
        if name in row:
            text = row[name].strip()
            return None if text == "N/A" else float(text)
    return None


def _percentiles(row: dict) -> dict[float, float | None]:
    out = {}
    for h in row:
        m = re.fullmatch(r"(\d+(?:\.\d+)?)%?", h)
        if m and not h.isdigit() or (m and h.endswith("%")):
            out[float(m.group(1))] = None if row[h].strip() == "N/A" else float(row[h])
    return out


def _method(row: dict) -> str | None:
    value = row.get("Type", row.get("Method", ""))
    return None if value in ("", "None") else value


def locust_printed(folder) -> dict:
    """Every value the Locust CSVs of one run folder print: {(method, name): {field: value}},
    the aggregate (the last stats row named Aggregated or Total, without a method) under
    ``"aggregate"``; a run's history rows under ``"history"`` by line."""
    from pathlib import Path
    # the stats, requests, distribution and history files (failures and exceptions are text)
    files = {p: _rows(p) for p in sorted(Path(folder).glob("*.csv"))
             if not p.name.endswith(("_failures.csv", "_exceptions.csv"))}
    stats = next((rows for p, rows in files.items() if rows and any(
        n in rows[0] for n in ("Request Count", "# requests")) and any(
        n in rows[0] for n in ("Failure Count", "# failures"))), None)
    dist = next((rows for p, rows in files.items() if rows and "# requests" in rows[0]
                 and "# failures" not in rows[0]), None)
    history = next((rows for p, rows in files.items() if rows and "Timestamp" in rows[0]), [])
    out: dict = {}
    for i, row in enumerate(stats or []):
        key = (_method(row), row["Name"])
        if i == len(stats) - 1 and key[0] is None and key[1] in ("Aggregated", "Total"):
            key = "aggregate"
        values = {field: _cell(row, names) for field, names in _NAMES.items()}
        values.update({f"p{q:g}": v for q, v in _percentiles(row).items()})
        if dist is not None:  # 0.8-0.13.2: the percentiles are in the distribution file
            names = {f"{key[0]} {key[1]}", key[1]} if key != "aggregate" else {
                "Total", "None Total", "Aggregated", "None Aggregated"}
            match = [d for d in dist if d["Name"] in names]
            if match:
                values.update({f"p{q:g}": v for q, v in _percentiles(match[-1]).items()})
        if values["requests"] == 0:
            for field in _NO_DATA_WITHOUT_REQUESTS:
                if values[field] == 0:
                    values[field] = None
            for q in [k for k in values if k.startswith("p") and values[k] == 0]:
                values[q] = None
        out[key] = values
    windowed = any(r["Name"] != "Aggregated" or _method(r) for r in history)
    out["history"] = {}
    for row in history:
        values = {field: _cell(row, names) for field, names in _HISTORY.items()}
        pcts = _percentiles(row)
        if windowed and pcts and not any(pcts.values()) and None not in pcts.values():
            pcts = dict.fromkeys(pcts)
        if values["total_requests"] == 0:
            pcts = {q: None if v == 0 else v for q, v in pcts.items()}
            for field in _HISTORY:
                if field.startswith("total_") and field not in ("total_requests",
                                                                "total_failures"):
                    values[field] = None
        values.update({f"p{q:g}": v for q, v in pcts.items()})
        out["history"][row["#line"]] = values
    return out


def _same(want, have) -> bool:
    if want is None:
        return have is None or (isinstance(have, float) and math.isnan(have))
    return have is not None and math.isclose(float(have), want, rel_tol=1e-9, abs_tol=1e-12)


def locust_differences(folder, runs) -> list[str]:
    """Each value the run folder's Locust CSVs print that perfkit's runs do not hold as
    printed, and each printed row without a run (empty: all equal)."""
    want = locust_printed(folder)
    history = want.pop("history")
    by_key = {"aggregate" if r.is_aggregate else (r.method, r.endpoint): r for r in runs}
    bad = [f"no printed row for run {k}" for k in by_key if k not in want]
    seen_history: dict[int, dict] = {}
    for key, values in want.items():
        run = by_key.get(key)
        if run is None:
            bad.append(f"{key}: printed, but no run")
            continue
        got = {"requests": run.requests, "failures": run.failures,
               "latency_mean_ms": run.latency_mean_ms, "latency_min_ms": run.latency_min_ms,
               "latency_max_ms": run.latency_max_ms, "throughput_rps": run.throughput_rps,
               "latency_median_ms": run.extra.get("latency_median_ms"),
               "content_size_mean_bytes": run.extra.get("content_size_mean_bytes"),
               "failures_per_s": run.extra.get("failures_per_s")}
        got.update({f"p{q:g}": v for q, v in (run.percentiles_ms or {}).items()})
        for field, value in values.items():
            if not _same(value, got.get(field)):
                bad.append(f"{key} {field}: printed {value!r}, read {got.get(field)!r}")
        for row in run.extra.get("history", ()):
            seen_history[row["line"]] = row
    for line, values in history.items():
        row = seen_history.get(line)
        if row is None:
            bad.append(f"history line {line}: printed, but on no run")
            continue
        for field, value in values.items():
            name = (f"latency_p{field[1:].replace('.', '_')}_ms" if field.startswith("p")
                    else field)
            have = row.get(name)
            if not _same(value, have):
                bad.append(f"history line {line} {field}: printed {value!r}, read {have!r}")
    return bad
