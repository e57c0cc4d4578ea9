"""Real outputs in wild states (tests/fixtures/wild, made by make_wild.py with ``perfkit run``):
every request timing out, refused or reset connections, a server hanging around wrk2's
calibration, runs shorter than calibration, Locust with every request failing.

Golden values come from the independent readers in tests/golden (make_golden_wrk.py,
make_golden_locust.py). Beyond the numbers: a placeholder is never 0, every missing value
carries a note naming its field, and a run whose tool refused to start still appears.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

import perfkit
from perfkit import units
from perfkit.ingest import wrk, wrk2
from perfkit.warning import Code, Warn

HERE = Path(__file__).resolve().parent
WILD = HERE / "fixtures" / "wild"
GOLDEN = HERE / "golden" / "wild"
PARSERS = {"wrk": wrk.parse, "wrk2": wrk2.parse}
WRK_RUNS = sorted(p.parent for t in PARSERS for p in (WILD / t).glob("*/stdout.txt")
                  if p.stat().st_size)
WRK_IDS = [f"{p.parent.name}/{p.name}" for p in WRK_RUNS]
#: the Locust runs in which every request failed (each with golden values)
LOCUST_RUNS = sorted(p.stem for p in (GOLDEN / "locust").glob("*.json"))
LATENCY_FIELDS = ("latency_mean_ms", "latency_stdev_ms", "latency_max_ms")


def parse_dir(run_dir: Path):
    path = run_dir / "stdout.txt"
    return PARSERS[run_dir.parent.name](path.read_text(), str(path))


def test_every_wild_state_is_there_with_its_manifest_and_readme_line():
    readme = (WILD / "README.md").read_text()
    dirs = sorted(p.parent for p in WILD.glob("*/*/manifest.json"))
    assert len(dirs) == 16
    for d in dirs:
        manifest = json.loads((d / "manifest.json").read_text())
        assert manifest["tool"] == d.parent.name and manifest["argv"]
        assert f"`{d.parent.name}/{d.name}`" in readme
        for name, entry in manifest["files"].items():  # kept byte for byte
            assert (d / name).stat().st_size == entry["bytes"]


@pytest.mark.parametrize("run_dir", WRK_RUNS, ids=WRK_IDS)
def test_wild_wrk_output_matches_golden_values(run_dir, wrk_check_golden):
    run = parse_dir(run_dir)
    wrk_check_golden(run, f"wild/{run_dir.parent.name}/{run_dir.name}")


@pytest.mark.parametrize("run_dir", WRK_RUNS, ids=WRK_IDS)
def test_a_placeholder_is_never_0_and_always_has_a_note(run_dir):
    run = parse_dir(run_dir)
    text = (run_dir / "stdout.txt").read_text()
    notes = {n.code: n for n in run.notes}
    if "0.00us    0.00us   0.00us" in text or "-nanus" in text:
        assert all(getattr(run, f) is None for f in LATENCY_FIELDS)
        assert run.percentiles_ms == {} and run.extra["thread_stats"][
            "latency_within_stdev_pct"] is None
        assert Code.NO_LATENCY_SAMPLES in notes  # its words name every latency field
        assert all(f in str(notes[Code.NO_LATENCY_SAMPLES]) for f in LATENCY_FIELDS)
        record = run.to_record()
        assert all(math.isnan(record[c]) for c in ("latency_mean_ms", "latency_p50_ms",
                                                   "latency_p99_ms", "latency_max_ms"))
    if "Total count    =            0" in text:
        assert run.histogram is None and run.extra["hdr"]["max_ms"] is None
        assert "percentiles_ms" in {n["field"] for n in run.notes
                                    if n.code is Code.HISTOGRAM_EMPTY}
    if "Req/Sec       -nan" in text:
        stats = run.extra["thread_stats"]
        assert all(stats[k] is None for k in stats if k.startswith("req_per_thread"))
        assert Code.NO_RATE_SAMPLES in notes
    # counts, throughput and errors are what the tool printed, including real zeros
    assert run.requests is not None and run.throughput_rps is not None
    assert run.errors_timeout is not None


def test_the_issue_case_an_empty_histogram_after_requests_loads():
    """wrk2 counted 6654 requests, but the upstream hung before calibration reset the
    histogram: Latency -nanus, empty spectrum. The run loads with its counts and a warning."""
    (run,) = perfkit.load(WILD / "wrk2" / "upstream_hangs_before_calibration")
    assert (run.requests, run.errors_timeout, run.throughput_rps) == (6654, 80, 472.5)
    assert run.latency_mean_ms is None and run.histogram is None and run.percentiles_ms == {}
    assert run.target_rate_rps == 2000.0  # from the manifest's argv
    assert any(w.code is Code.NO_LATENCY_SAMPLES and "-nanus" in w["row"] for w in run.warnings)


def test_a_calibration_on_an_empty_histogram_is_missing_not_a_huge_number():
    run = parse_dir(WILD / "wrk2" / "all_timeouts_calibrated_U")
    assert [c["mean_latency_ms"] for c in run.extra["calibration"]] == [None, None]
    assert Warn(Code.CALIBRATION_OUT_OF_RANGE, token="9223372036854776.000ms") in run.notes
    assert run.uncorrected_histogram is None and run.uncorrected_percentiles_ms == {}


@pytest.mark.parametrize("tool", ["wrk", "wrk2"])
def test_a_tool_that_refused_to_start_still_gives_a_run_saying_why(tool):
    (run,) = perfkit.load(WILD / tool / "connection_refused")
    assert run.requests is None and run.exit_code == 1
    (ended,) = [w for w in run.warnings if w.code is Code.RUN_ENDED]
    assert "Connection refused" in ended["reason"] and "stderr.txt" in ended["reason"]


def test_zero_requests_is_flagged_as_no_measurement():
    (run,) = perfkit.load(WILD / "wrk" / "all_timeouts")
    assert run.requests == 0 and run.throughput_rps == 0.0  # printed 0, a real 0
    assert Code.NO_REQUEST_COMPLETED in {w.code for w in run.warnings}


@pytest.mark.parametrize("run_dir", LOCUST_RUNS)
def test_wild_locust_runs_match_golden_and_every_request_failed(run_dir):
    golden = json.loads((GOLDEN / "locust" / f"{run_dir}.json").read_text())["runs"]
    runs = perfkit.load(WILD / "locust" / run_dir)
    got = {}
    for run in runs:
        key = "Aggregated" if run.is_aggregate else f"{run.method} {run.endpoint}"
        got[key] = run
        assert run.failures == run.requests > 0
        assert Code.FAILED_EVERY_RESPONSE in {w.code for w in run.warnings}
    assert got.keys() == golden.keys()
    for key, expected in golden.items():
        run = got[key]
        for field in ("requests", "failures", "histogram_count", "csv_requests"):
            value = run.extra[field] if field == "csv_requests" else getattr(run, field)
            assert value == expected[field], (key, field)
        for field in ("latency_mean_ms", "latency_min_ms", "latency_max_ms", "throughput_rps"):
            assert math.isclose(getattr(run, field), expected[field], rel_tol=1e-12)
        assert {f"{q:g}": v for q, v in run.percentiles_ms.items()} == expected["percentiles_ms"]


# every no-data token the tools can print (wrk2 44a94c1 and wrk 4.1.0 source: units.c
# format_units appends the unit to "-nan"; stats_within_stdev prints "-nan%"/"0.00%")
@pytest.mark.parametrize(("fn", "token"), [
    (units.time_ms, "-nanus"), (units.time_ms, "nanus"), (units.time_ms, "-nan"),
    (units.count, "-nan"), (units.count, "nan"), (units.percent, "-nan%"),
    (units.percent, "nan%"), (units.number, "-nan"), (units.bytes_, "-nanB"),
    (units.duration_s, "-nanus"),
])
def test_every_placeholder_token_is_nan(fn, token):
    assert math.isnan(fn(token)) and units.is_placeholder(token)


def test_inf_is_a_placeholder_too_and_junk_is_not():
    assert units.time_ms("infms") == math.inf and units.is_placeholder("-infms")
    assert units.count("inf") == math.inf
    assert not units.is_placeholder("1.00ms")
    with pytest.raises(units.UnitError):
        units.time_ms("nanxs")
