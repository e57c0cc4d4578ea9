"""No silent nonsense: a run that contradicts itself carries a warning naming the field; every
real output (fixtures, wild states, bundled data) is consistent."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

import perfkit
from perfkit.consistency import consistency_warnings
from perfkit.ingest import wrk2
from perfkit.warning import Code, Warn

HERE = Path(__file__).resolve().parent
RUN = HERE / "fixtures" / "wrk2" / "single" / "normal_tuned_R10000_c50" / "run.stdout"


@pytest.fixture(scope="module")
def run():
    return wrk2.parse(RUN.read_text(), str(RUN))


def test_every_real_run_is_consistent():
    # data/seeds holds outputs as the write-ups printed them; one is elided by its author
    # ("..."), and its refusal is tested in tests/test_analysis_seeds_published.py
    data = [p for p in (HERE.parent / "data").iterdir() if p.is_dir() and p.name != "seeds"]
    fixtures = [d for d in sorted((HERE / "fixtures").iterdir())
                if d.is_dir() and d.name != "published"]  # published/: refusals on purpose
    runs = [r for d in fixtures + list(data) for r in perfkit.load(d)]
    assert len(runs) > 300
    assert [(r.source, consistency_warnings(r)) for r in runs
            if consistency_warnings(r)] == []


@pytest.mark.parametrize(("changes", "code", "fields"), [
    ({"requests": -5}, Code.NEGATIVE, {"field": "requests"}),
    ({"throughput_rps": -1.0}, Code.NEGATIVE, {"field": "throughput_rps"}),
    ({"latency_mean_ms": math.nan}, Code.NOT_A_NUMBER, {"field": "latency_mean_ms"}),
    ({"latency_max_ms": math.inf}, Code.INFINITE, {"field": "latency_max_ms"}),
    ({"errors_timeout": -1}, Code.NEGATIVE, {"field": "errors_timeout"}),
    ({"latency_mean_ms": 500.0}, Code.MEAN_ABOVE_MAX, {"mean": 500.0}),
    ({"latency_min_ms": 900.0, "latency_max_ms": 10.0}, Code.MIN_ABOVE_MAX, {"low": 900.0}),
    ({"requests": 10}, Code.HISTOGRAM_ABOVE_REQUESTS, {"requests": 10}),
])
def test_a_damaged_field_is_named_in_a_warning(run, changes, code, fields):
    assert consistency_warnings(run) == []
    damaged = run.replace(**changes)
    found = [w for w in damaged.warnings if w.code is code]
    assert any(all(w.get(k) == v for k, v in fields.items()) for w in found), damaged.warnings


def test_percentiles_must_not_decrease_nor_pass_the_max(run):
    p = dict(run.percentiles_ms)
    p[99.0], p[90.0] = p[90.0], p[99.0] + 1.0
    (warning,) = [w for w in consistency_warnings(run.replace(percentiles_ms=p))
                  if w.code is Code.PERCENTILES_DECREASE and w["q2"] == 99.0]
    assert (warning["field"], warning["q1"]) == ("percentiles_ms", 90.0)
    assert str(warning).startswith("percentiles_ms: p99 (")
    high = dict(run.percentiles_ms)
    high[99.9] = run.latency_max_ms * 2
    assert any(w.code is Code.PERCENTILE_ABOVE_MAX
               for w in consistency_warnings(run.replace(percentiles_ms=high)))
    bad = {**run.uncorrected_percentiles_ms, 50.0: -1.0}
    assert Warn(Code.NEGATIVE, field="uncorrected_percentiles_ms[50]", value=-1.0) in \
        consistency_warnings(run.replace(uncorrected_percentiles_ms=bad))


def test_printing_precision_is_not_damage(run):
    """wrk2 prints Max 2.89s beside 100.000% 2.90s (a real output): within the slack."""
    p = dict(run.percentiles_ms)
    p[99.999] = p[100.0] = 2900.0
    warnings = consistency_warnings(run.replace(percentiles_ms=p, latency_max_ms=2890.0))
    assert not any(w.code is Code.PERCENTILE_ABOVE_MAX for w in warnings)

# -- kept out of every analysis (issue 30) ---------------------------------------------------
# Each damaged input is a copy of a real output with one value edited as its test says; the
# loader (perfkit.load, the one way runs enter an analysis) keeps the impossible values out.
FIX = HERE / "fixtures"
LOCUST = FIX / "locust" / "failures_u30"
WRK = FIX / "wrk" / "single" / "latency_default_c50"
WRK2_AA = HERE.parent / "data" / "demo-wrk2-aa"


def _locust_copy(tmp_path: Path, row: str, column: str, value: str) -> Path:
    """A copy of the real Locust run failures_u30 with one cell of its stats CSV replaced."""
    import csv
    import shutil

    run = tmp_path / "locust"
    shutil.copytree(LOCUST, run)
    stats = run / "failures_stats.csv"
    rows = list(csv.reader(stats.read_text().splitlines()))
    head = rows[0]
    for r in rows[1:]:
        if r[head.index("Name")] == row:
            r[head.index(column)] = value
    stats.write_text("\n".join(",".join(r) for r in rows) + "\n")
    (run / "run.stdout").unlink(missing_ok=True)  # the --json output: the CSV alone says it
    return run


def _aggregate(run_dir: Path):
    (agg,) = [r for r in perfkit.load(run_dir) if r.is_aggregate]
    return agg


def test_a_locust_aggregated_p90_of_1e308_is_kept_out_and_named(tmp_path):
    agg = _aggregate(_locust_copy(tmp_path, "Aggregated", "90%", "1e308"))
    assert 90.0 not in agg.percentiles_ms and agg.percentiles_ms[99.0] < 1000
    assert agg.to_record()["latency_p90_ms"] != agg.to_record()["latency_p90_ms"]  # NaN
    (note,) = [w for w in agg.warnings if "percentiles_ms[90]" in str(w)]
    assert "is 1e+308 ms, more than 24 h" in str(note) and note.code is Code.KEPT_OUT


def test_min_above_max_keeps_both_out(tmp_path):
    agg = _aggregate(_locust_copy(tmp_path, "Aggregated", "Min Response Time", "900"))
    assert agg.latency_min_ms is None and agg.latency_max_ms is None
    assert any(w.code is Code.KEPT_OUT and w["warning"].code is Code.MIN_ABOVE_MAX
               and "latency_min_ms (900.0) is above latency_max_ms" in str(w)
               for w in agg.warnings)


def test_failures_above_requests_keeps_both_out(tmp_path):
    agg = _aggregate(_locust_copy(tmp_path, "Aggregated", "Failure Count", "99999"))
    assert agg.failures is None and agg.requests is None and agg.error_ratio is None
    assert any("failures (99999) is above requests" in str(w) for w in agg.warnings)


def _wrk2_aa_copy(tmp_path: Path) -> Path:
    import shutil

    root = tmp_path / "aa"
    shutil.copytree(WRK2_AA, root, ignore=shutil.ignore_patterns(".perfkit"))
    return root


def test_a_wrk2_percentile_contradiction_is_not_what_compare_and_gate_use(tmp_path):
    """wrk2's p99 edited below its p90 was warned about, and still compared and gated."""
    root = _wrk2_aa_copy(tmp_path)
    run = root / "runs" / "0002-b01-arm=B"
    stdout = run / "stdout.txt"
    lines = stdout.read_text().split("\n")
    i = next(k for k, line in enumerate(lines) if line.startswith(" 99.000%"))
    lines[i] = " 99.000%    0.01ms"  # below its p90
    stdout.write_text("\n".join(lines))
    (damaged,) = [r for r in perfkit.load(root) if r.source == str(stdout)]
    assert 99.0 not in damaged.percentiles_ms and 90.0 not in damaged.percentiles_ms
    assert any(w.code is Code.KEPT_OUT and w["warning"].code is Code.PERCENTILES_DECREASE
               for w in damaged.warnings)
    from _cli_helpers import run_cli

    code, out, err = run_cli("gate", f"{root}::arm=A", f"{root}::arm=B", "--format", "json")
    import json

    rows = json.loads(out)["rows"]
    n_b = sum(1 for r in perfkit.load(root) if r.factors.get("arm") == "B")
    assert [r["n_new"] for r in rows] == [n_b - 1]  # the damaged run's p99 is not used
    assert "1 run(s) did not measure latency_p99_ms (left out, not failed): its value was " \
           "kept out as damaged (percentiles_ms: p99 (0.01 ms) is below p90" in rows[0]["warnings"]


def test_a_wrk_percentile_above_its_max_is_kept_out(tmp_path):
    import shutil

    run = tmp_path / "wrk"
    shutil.copytree(WRK, run)
    out = run / "run.stdout"
    out.write_text(out.read_text().replace("     99%    4.62ms", "     99%   40.62ms"))
    (loaded,) = perfkit.load(run)
    assert 99.0 not in loaded.percentiles_ms and loaded.latency_max_ms is None
    assert loaded.percentiles_ms[90.0] == 2.6  # the others stay
    assert any("p99 (40.62 ms) is above latency_max_ms (12.63 ms)" in str(w)
               for w in loaded.warnings)


def test_a_negative_counter_in_a_manifest_is_kept_out(tmp_path):
    import json
    import shutil

    src = HERE / "fixtures" / "counters" / "cache-ram-c16"
    run = tmp_path / "run"
    shutil.copytree(src, run)
    manifest = json.loads((run / "manifest.json").read_text())
    manifest["counters"]["values"]["server_requests"] = -5
    (run / "manifest.json").write_text(json.dumps(manifest))
    (loaded,) = perfkit.load(run)
    c = loaded.counters
    assert c.server_requests is None and c.server_connections_accepted is not None
    assert any(w.code is Code.KEPT_OUT and "server_requests is negative (-5)" in str(w)
               for w in loaded.warnings)


def test_no_real_run_loses_a_value():
    """The slack of every check is a real output's printing: loading keeps every value of
    every bundled and fixture run (test_every_real_run_is_consistent, through the loader)."""
    for root in (HERE.parent / "data", HERE / "fixtures"):
        assert not [r.source for r in perfkit.scan(root, cache=False).runs
                    if any(w.code is Code.KEPT_OUT for w in r.warnings)]


@pytest.mark.parametrize("field", __import__("perfkit.ingest.counters").ingest.counters.COLUMNS)
def test_every_recorded_counter_is_kept_out_when_negative(run, field):
    import dataclasses

    from perfkit.consistency import kept_out

    damaged = run.replace(counters=dataclasses.replace(run.counters, **{field: -1}))
    cleaned = kept_out(damaged)
    assert getattr(cleaned.counters, field) is None
    assert any(f"{field} is negative (-1)" in str(w) for w in cleaned.warnings)


def test_kept_out_leaves_no_decrease_behind(run):
    """Found by the ingest fuzz: p99.9 20, p99.99 20, p99.999 0, p100 0 (a real run's tail
    edited so): the pair that decreases is removed, which leaves p99.9 above p100; removed too,
    so no decrease is left."""
    from perfkit.consistency import kept_out, problems

    tail = {**run.percentiles_ms, 99.9: 20.0, 99.99: 20.0, 99.999: 0.0, 100.0: 0.0}
    cleaned = kept_out(run.replace(percentiles_ms=tail, latency_max_ms=None))
    assert problems(cleaned) == []
    assert set(cleaned.percentiles_ms) == {q for q in run.percentiles_ms if q < 99.9}
