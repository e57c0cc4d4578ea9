"""Locust ingest on the real fixtures (tests/fixtures/locust), against golden values written by
an independent reader (tests/golden/make_golden_locust.py: csv/json stdlib only)."""

from __future__ import annotations

import json
import math
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import perfkit
from perfkit.ingest import locust
from perfkit.ingest.locust_json import LOCUST_FRACTIONS, locust_percentile_ms
from perfkit.ingest.sniffer import sniff
from perfkit.warning import Code, Warn, texts

HERE = Path(__file__).resolve().parent
FIXTURES = HERE / "fixtures" / "locust"
GOLDEN = HERE / "golden" / "locust"
RUNS = {"clean_u20": "clean", "failures_u30": "failures", "processes2_u40": "procs"}
USERS = {"clean_u20": 20, "failures_u30": 30, "processes2_u40": 40}


def _key(run) -> str:
    return "Aggregated" if run.is_aggregate else f"{run.method} {run.endpoint}"


def _pct_label(q: float) -> str:
    return f"{q:g}"


def _files(run_dir: str, names=None) -> list[tuple[str, str, str]]:
    out = []
    for path in sorted((FIXTURES / run_dir).iterdir()):
        text = path.read_bytes().decode("utf-8")  # keep CRLF, as the loader does
        kind = sniff(text[:16384])
        if kind and kind.startswith("locust") and (names is None or path.name in names):
            out.append((kind, str(path), text))
    return out


def _close(a, b) -> bool:
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_close(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_close(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, float) or isinstance(b, float):
        return a is not None and b is not None and math.isclose(a, b, rel_tol=1e-12)
    return a == b


def _check_golden(name: str, section: str, got) -> None:
    path = GOLDEN / f"{name}.json"
    expected = json.loads(path.read_text(encoding="utf-8"))[section]
    got = json.loads(json.dumps(got))
    if not _close(got, expected):
        got_path = path.with_name(f"{path.name}.got")  # the same layout, for review
        previous = json.loads(got_path.read_text("utf-8")) if got_path.exists() else {}
        previous[section] = got
        got_path.write_text(json.dumps(previous, indent=1, sort_keys=True) + "\n", "utf-8")
        pytest.fail(f"{name} {section} differs from {path}; wrote {got_path}")


@pytest.fixture(scope="module")
def loaded() -> dict[str, list]:
    runs = perfkit.load(FIXTURES)  # strict: the HTML reports, locustfile and logs are skipped
    by_dir: dict[str, list] = {}
    for run in runs:
        by_dir.setdefault(run.run_id, []).append(run)
    return by_dir


def test_every_locust_fixture_loads_through_perfkit_load(loaded):
    assert sorted(loaded) == sorted(RUNS)
    for run_dir, runs in loaded.items():
        assert [r.is_aggregate for r in runs].count(True) == 1
        assert runs[-1].is_aggregate and runs[-1].endpoint == "Aggregated"
        for run in runs:
            assert run.tool == "locust" and run.latency_source == "locust_rounded"
            assert run.users == USERS[run_dir]  # from meta.json argv -u, not the parser
            assert run.url == "http://127.0.0.1:8080"
            assert run.source.endswith("run.stdout")  # the --json numbers won


@pytest.mark.parametrize("run_dir", sorted(RUNS))
def test_runs_match_independent_golden_values(loaded, run_dir):
    got = {}
    for run in loaded[run_dir]:
        row = {
            "requests": run.requests,
            "failures": run.failures,
            "latency_mean_ms": run.latency_mean_ms,
            "latency_min_ms": run.latency_min_ms,
            "latency_max_ms": run.latency_max_ms,
            "histogram_count": run.histogram_count,
            "percentiles_ms": {_pct_label(q): v for q, v in run.percentiles_ms.items()},
            "throughput_rps": run.throughput_rps,
            "csv_requests": run.extra["csv_requests"],
        }
        if run.extra["throughput_basis"].startswith("json"):
            row["duration_s"] = run.duration_s
        got[_key(run)] = row
    _check_golden(run_dir, "runs", got)


@pytest.mark.parametrize("run_dir", sorted(RUNS))
def test_stats_csv_alone_matches_golden(run_dir):
    path = FIXTURES / run_dir / f"{RUNS[run_dir]}_stats.csv"
    runs = locust.parse_stats_csv(path.read_bytes().decode("utf-8"), str(path))
    got = {_key(r): {
        "requests": r.requests, "failures": r.failures, "latency_mean_ms": r.latency_mean_ms,
        "latency_min_ms": r.latency_min_ms, "latency_max_ms": r.latency_max_ms,
        "throughput_rps": r.throughput_rps, "transfer_bytes_per_s": r.transfer_bytes_per_s,
        "percentiles_ms": {_pct_label(q): v for q, v in r.percentiles_ms.items()},
    } for r in runs}
    _check_golden(run_dir, "stats_csv", got)
    assert all(r.histogram is None and r.histogram_count is None for r in runs)


@pytest.mark.parametrize("run_dir", sorted(RUNS))
def test_each_locust_file_loads_when_named_explicitly(run_dir):
    for path in sorted((FIXTURES / run_dir).iterdir()):
        if path.suffix == ".csv" or path.name == "run.stdout":
            runs = perfkit.load(path)
            assert runs and runs[-1].is_aggregate, path
            assert runs[-1].users == USERS[run_dir]


def test_html_report_named_explicitly_is_an_error():
    with pytest.raises(perfkit.LoadError, match="not the output"):
        perfkit.load(FIXTURES / "clean_u20" / "clean.html")


def _console_percentiles(stderr: str) -> dict[float, float]:
    """The Aggregated row of the last "Response time percentiles (approximated)" table."""
    table = stderr[stderr.rindex("Response time percentiles (approximated)"):]
    header = next(line for line in table.splitlines() if line.startswith("Type"))
    labels = [float(x) for x in re.findall(r"([\d.]+)%", header)]
    m = re.search(r"^\s+Aggregated\s+([\d\s]+?)\s*$", table, re.MULTILINE)
    values = [float(v) for v in m.group(1).split()]
    assert len(values) == len(labels) + 1  # the last column is "# reqs"
    return dict(zip(labels, values[:-1], strict=True)) | {"requests": values[-1]}


@pytest.mark.parametrize("run_dir", sorted(RUNS))
def test_json_percentiles_match_locust_console_table(loaded, run_dir):
    console = _console_percentiles((FIXTURES / run_dir / "run.stderr").read_text("utf-8"))
    agg = loaded[run_dir][-1]
    assert console.pop("requests") == agg.requests
    assert dict(agg.percentiles_ms) == console


def test_csv_lag_is_noted_and_json_totals_win(loaded):
    agg = loaded["clean_u20"][-1]
    assert agg.requests == 11738
    assert Warn(Code.LOCUST_CSV_LAGS_JSON, csv_requests=11300, json_requests=11738,
                csv_failures=0, json_failures=0) in agg.warnings
    failures = loaded["failures_u30"][-1]
    assert ("CSV stats lag the --json totals: 16216 vs 16836 requests, 6278 vs 6503 failures; "
            "using --json") in texts(failures.notes)  # the words of both counts


def test_processes_uses_the_masters_last_json_document(loaded):
    text = (FIXTURES / "processes2_u40" / "run.stdout").read_text(encoding="utf-8")
    assert text.startswith("[]\n[]\n[")
    runs = locust.parse_json(text, "run.stdout")
    assert runs[-1].extra["json_documents"] == 3
    assert runs[-1].requests == 23676
    combined = loaded["processes2_u40"]
    assert not any(n.code is Code.LOCUST_CSV_LAGS_JSON  # CSV is final here
                   for r in combined for n in r.notes)
    nodes = combined[-1].extra["exceptions"][0]["nodes"]
    assert nodes == ("vm_5552634beb644d70925ba9afd222a99c",)


def test_final_csv_and_json_agree_where_both_are_complete(loaded):
    """processes2_u40's CSV holds the final totals: Locust's own printed numbers must equal
    what perfkit rebuilds from the JSON buckets (an independent check of the percentiles)."""
    path = FIXTURES / "processes2_u40" / "procs_stats.csv"
    printed_runs = locust.parse_stats_csv(path.read_bytes().decode("utf-8"), str(path))
    csv_runs = {_key(r): r for r in printed_runs}
    for run in loaded["processes2_u40"]:
        printed = csv_runs[_key(run)]
        assert dict(run.percentiles_ms) == dict(printed.percentiles_ms), _key(run)
        assert run.latency_mean_ms == pytest.approx(printed.latency_mean_ms, rel=1e-12)
        assert (run.latency_min_ms, run.latency_max_ms) == (
            printed.latency_min_ms, printed.latency_max_ms)
        assert run.extra["latency_median_ms"] == printed.extra["latency_median_ms"]
        assert run.throughput_rps == printed.throughput_rps  # Locust's own total_rps


def test_without_json_the_numbers_come_from_the_stats_csv():
    files = [f for f in _files("clean_u20") if f[0] != "locust_json"]
    runs = locust.parse_files(files)
    agg = runs[-1]
    assert agg.requests == 11300 and agg.source.endswith("clean_stats.csv")
    assert agg.histogram is None and agg.histogram_count is None
    assert agg.throughput_rps == 594.0366339531648  # printed Requests/s
    assert agg.transfer_bytes_per_s == 1024.0 * 594.0366339531648
    assert agg.users is None and agg.url is None  # only the loader knows them


def test_json_histograms_hold_every_bucket(loaded):
    text = (FIXTURES / "failures_u30" / "run.stdout").read_text(encoding="utf-8")
    entries = json.loads(text)
    for run in loaded["failures_u30"][:-1]:
        entry = next(e for e in entries if e["name"] == run.endpoint)
        assert run.histogram_count == sum(entry["response_times"].values())
        slowest = max(float(k) for k in entry["response_times"])
        assert run.histogram.max_us == pytest.approx(slowest * 1000, rel=1e-3)
    agg = loaded["failures_u30"][-1]
    assert agg.histogram == perfkit.LatencyHistogram.merge(r.histogram for r in
                                                            loaded["failures_u30"][:-1])


def test_history_failures_and_exceptions_ride_along(loaded):
    for run_dir, runs in loaded.items():
        golden = json.loads((GOLDEN / f"{run_dir}.json").read_text(encoding="utf-8"))
        hist = golden["history"]
        agg = runs[-1]
        assert agg.extra["history_cumulative_percentiles"] is (not hist["full_history"])
        for run in runs:
            assert len(run.extra["history"]) == hist["rows_per_name"][_key(run)]
        last = agg.extra["history"][-1]
        assert {k: last[k] for k in hist["last_aggregated"]} == hist["last_aggregated"]
        assert agg.extra["history"][0]["timestamp_s"] == hist["first_timestamp_s"]
        got_failures = [{k: f[k] for k in ("method", "name", "error", "occurrences")}
                        for f in agg.extra["failures"]]
        assert got_failures == golden["failures"]
        got_exc = [{"count": e["count"], "message": e["message"], "nodes": ", ".join(e["nodes"]),
                    "traceback_lines": e["traceback"].count("\n")}
                   for e in agg.extra["exceptions"]]
        assert got_exc == golden["exceptions"]
    assert loaded["clean_u20"][-1].extra["failures"] == ()
    assert loaded["clean_u20"][-1].extra["exceptions"] == ()
    per_endpoint = {r.endpoint: r.extra["failures"] for r in loaded["failures_u30"]}
    assert [f["occurrences"] for f in per_endpoint["/missing-page"]] == [2713]
    assert per_endpoint["/"] == ()


def test_history_na_and_placeholder_zeros_become_missing(loaded):
    rows = loaded["clean_u20"][-1].extra["history"]
    first = rows[0]  # 1795291681,0,,Aggregated,...,N/A x 11,0,0,0,0.0,0,0,0
    assert first["latency_p50_ms"] is None and first["latency_p100_ms"] is None
    assert first["total_requests"] == 0 and first["total_latency_mean_ms"] is None
    second = rows[1]  # windowed percentiles all printed 0 with 293 requests: no window yet
    assert second["total_requests"] == 293 and second["latency_p99_ms"] is None
    assert rows[2]["latency_p99_9_ms"] == 13.0 and rows[2]["user_count"] == 20
    notes = loaded["clean_u20"][-1].notes
    assert Warn(Code.LOCUST_HISTORY_NA, rows=1) in notes
    assert Warn(Code.LOCUST_HISTORY_WINDOW_ZERO, rows=3) in notes


def test_history_without_full_history_is_flagged_cumulative():
    """Locust without --csv-full-history writes only the Aggregated rows (derived here by
    keeping only those rows of the real file)."""
    text = (FIXTURES / "clean_u20" / "clean_stats_history.csv").read_bytes().decode("utf-8")
    lines = text.splitlines(keepends=True)
    only_agg = lines[0] + "".join(line for line in lines[1:] if ",,Aggregated," in line)
    history = locust.parse_history_csv(only_agg, "h.csv")
    assert history.cumulative_percentiles is True
    assert len(history.rows) == 20
    # cumulative mode keeps printed zeros: they are real cumulative values there
    assert history.rows[1]["latency_p50_ms"] == 0.0


def test_zero_request_json_gives_an_empty_aggregated_run():
    runs = locust.parse_json("[]\n[]\n[]\n", "run.stdout")
    assert len(runs) == 1 and runs[0].is_aggregate
    assert runs[0].requests == 0 and runs[0].throughput_rps is None
    assert not runs[0].percentiles_ms
    assert Warn(Code.LOCUST_JSON_EMPTY) in runs[0].notes


def test_percentile_rule_matches_locusts_own_function():
    """Compare with locust.stats.calculate_response_time_percentile, run in a subprocess
    (importing locust monkey-patches the process with gevent)."""
    rng = np.random.default_rng(20241121)
    cases = []
    for size in (1, 2, 3, 7, 100, 1001, 11738):
        raw = rng.lognormal(1.5, 1.2, size) * rng.choice([1, 10, 100], size)
        rounded = [round(v) if v < 100 else int(round(v, -1)) if v < 1000 else
                   int(round(v, -2)) for v in raw]
        buckets: dict[int, int] = {}
        for v in rounded:
            buckets[v] = buckets.get(v, 0) + 1
        cases.append(buckets)
    script = (
        "import json, sys\n"
        "from locust.stats import calculate_response_time_percentile as f\n"
        "cases, fracs = json.load(sys.stdin)\n"
        "print(json.dumps([[f({int(k): v for k, v in c.items()}, sum(c.values()), p)"
        " for p in fracs] for c in cases]))\n"
    )
    fractions = list(LOCUST_FRACTIONS.values())
    done = subprocess.run([sys.executable, "-c", script], input=json.dumps([cases, fractions]),
                          capture_output=True, text=True, timeout=120, check=True)
    expected = json.loads(done.stdout)
    for buckets, want in zip(cases, expected, strict=True):
        n = sum(buckets.values())
        got = [locust_percentile_ms(buckets, n, p) for p in fractions]
        assert got == [float(w) for w in want]
