"""Shared test helpers. Keep additions small and prefixed by the area they serve."""

from __future__ import annotations

import io
import json
import os
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent
# The run store (perfkit.store.runcache) would write .perfkit/cache/ into tests/fixtures and
# data/: tests that exercise it pass cache=True on their own temporary copies.
os.environ["PERFKIT_CACHE"] = "0"


# -- wrk / wrk2 ------------------------------------------------------------------------------
def _wrk_as_golden(run) -> dict:
    """A parsed wrk/wrk2 Run in the shape written by tests/golden/make_golden_wrk.py."""
    ts = run.extra["thread_stats"]
    got = {
        "tool": run.tool, "url": run.url, "threads": run.threads,
        "connections": run.connections,
        "requested_duration_s": run.extra["requested_duration_s"],
        "calibration": [[c["mean_latency_ms"], c["rate_sampling_interval_ms"]]
                        for c in run.extra.get("calibration", ())],
        "latency_mean_ms": run.latency_mean_ms, "latency_stdev_ms": run.latency_stdev_ms,
        "latency_max_ms": run.latency_max_ms,
        "latency_within_stdev_pct": ts["latency_within_stdev_pct"],
        "req_per_thread": [ts["req_per_thread_avg_rps"], ts["req_per_thread_stdev_rps"],
                           ts["req_per_thread_max_rps"], ts["req_per_thread_within_stdev_pct"]],
        "percentiles_ms": {str(q): v for q, v in run.percentiles_ms.items()},
        "uncorrected_percentiles_ms": {
            str(q): v for q, v in run.uncorrected_percentiles_ms.items()},
        "hdr": dict(run.extra["hdr"]) if "hdr" in run.extra else None,
        "hdr_uncorrected": (dict(run.extra["hdr_uncorrected"])
                            if "hdr_uncorrected" in run.extra else None),
        "requests": run.requests, "duration_s": run.duration_s, "bytes_read": run.bytes_read,
        "errors": [run.errors_connect, run.errors_read, run.errors_write, run.errors_timeout],
        "non_2xx_3xx": run.non_2xx_3xx, "throughput_rps": run.throughput_rps,
        "transfer_bytes_per_s": run.transfer_bytes_per_s,
        "script_output": list(run.extra.get("script_output", ())),
    }
    return json.loads(json.dumps(got))


@pytest.fixture
def wrk_check_golden():
    """``check(run, name)``: compare a parsed run with tests/golden/<name>.json.

    A ``null`` golden percentile means "printed as a no-data placeholder": the run must not
    have that percentile at all. On a mismatch the parsed values are written beside the golden
    file as ``<name>.json.got`` (gitignored) for review.
    """

    def check(run, name: str) -> None:
        path = TESTS / "golden" / f"{name}.json"
        golden = json.loads(path.read_text())
        for key in ("percentiles_ms", "uncorrected_percentiles_ms"):
            golden[key] = {q: v for q, v in golden[key].items() if v is not None}
        got = _wrk_as_golden(run)
        got_path = path.with_name(path.name + ".got")
        if got != golden:
            got_path.write_text(json.dumps(got, indent=1, sort_keys=True) + "\n")
            diff = {k: (golden.get(k), got.get(k)) for k in golden.keys() | got.keys()
                    if golden.get(k) != got.get(k)}
            pytest.fail(f"{name}: parsed values differ from golden (see {got_path}): {diff}")
        got_path.unlink(missing_ok=True)

    return check


# -- temporary files: one private directory per session, removed at the end ------------------
def pytest_configure(config):
    """tmp_path directories go to a directory of this session's own (other pytest sessions on
    the machine share /tmp/pytest-of-USER and prune each other's), removed when it ends: the
    suite leaves nothing behind in /tmp."""
    if config.option.basetemp is None:
        import tempfile

        config._perfkit_basetemp = tempfile.mkdtemp(prefix="perfkit-pytest-")
        config.option.basetemp = config._perfkit_basetemp


def pytest_unconfigure(config):
    base = getattr(config, "_perfkit_basetemp", None)
    if base:
        import shutil

        shutil.rmtree(base, ignore_errors=True)


# -- full reports: each built once per session, shared read-only ---------------------------
#: the parameter file of each shared report (PERFKIT_TEST_PARAMS points the demo report
#: elsewhere while developing)
REPORT_PARAMS = {
    "demo": Path(os.environ.get("PERFKIT_TEST_PARAMS", ROOT / "params" / "demo.yaml")),
    "seeds": ROOT / "params" / "seeds.yaml",
}
#: the fixtures that hand out a full report: a test that takes one is in the slow tier
REPORT_FIXTURES = {f"{name}_report" for name in REPORT_PARAMS}


def _build_report(name: str, factory: pytest.TempPathFactory) -> Path:
    """``perfkit report -p params/NAME.yaml`` into this session's temporary directory."""
    from perfkit.cli import main

    out_dir = factory.mktemp(f"report-{name}") / name
    out, err = io.StringIO(), io.StringIO()
    status = main(["report", "-p", str(REPORT_PARAMS[name]), "-o", str(out_dir)], out, err)
    if status != 0:
        raise AssertionError(f"perfkit report -p {REPORT_PARAMS[name]} exited {status}:\n"
                             f"{err.getvalue()}")
    return out_dir


@pytest.fixture(scope="session")
def demo_report(tmp_path_factory) -> Path:
    """The demo report (params/demo.yaml), built once per session. Read it, never change it:
    a test that must modify a report copies it (``shutil.copytree``) first."""
    return _build_report("demo", tmp_path_factory)


@pytest.fixture(scope="session")
def seeds_report(tmp_path_factory) -> Path:
    """The seeds report (params/seeds.yaml), built once per session; read-only as above."""
    return _build_report("seeds", tmp_path_factory)


@pytest.fixture(scope="session")
def seeds_analysis():
    """The seeds page's analysis of the bundled data (``report.sections.seeds.analyse`` with
    its defaults: threshold 10%, alpha 0.05), once per session; read-only."""
    from perfkit.report.sections import seeds

    return seeds.analyse(str(ROOT / "data"))


# -- the bundled demo experiments and their page analyses: once per session, read-only -------
@pytest.fixture(scope="session")
def demo_sweep():
    """data/demo-wrk2-sweep, loaded (wrk2: default vs tuned nginx, 5000-45000 req/s, 16 and 64
    connections, 3 runs each)."""
    from perfkit.analysis import load_experiment

    return load_experiment(ROOT / "data" / "demo-wrk2-sweep")


@pytest.fixture(scope="session")
def demo_slo(demo_sweep):
    """The scaling page's SLO table of the demo sweep: p99 <= 5 ms at 95% confidence, by
    profile and connections (2000 resamples, seed 1)."""
    from perfkit.report.sections import scaling

    return scaling.slo(demo_sweep.rows(), ["profile", "connections"], 5.0, 99.0, 0.95, seed=1,
                       n_resamples=2000)


@pytest.fixture(scope="session")
def demo_factorial():
    """The demo factorial as first recorded (tests/fixtures/stalls/factorial-upstream-backlog100:
    keepalive x cache at 16, 64, 256 connections, 5 runs per cell, with the upstream's queue
    of 100 and its 1 s stalls), loaded."""
    from perfkit.analysis import load_experiment

    return load_experiment(ROOT / "tests" / "fixtures" / "stalls" / "factorial-upstream-backlog100")


@pytest.fixture(scope="session")
def demo_tuning(demo_factorial):
    """The tuning-effects page of the first demo factorial (:func:`demo_factorial`): ``(rows,
    factorial results, A/B tables, answers)`` for p99 latency and throughput, keepalive x
    cache by connections."""
    from perfkit.report.sections import effects

    rows = demo_factorial.rows()
    factors, metrics = ["keepalive", "cache"], ["latency_p99_ms", "throughput_rps"]
    results = effects.factorials(rows, factors, metrics, "connections", 0.95, 0.05)
    tables = effects.ab_tables(rows, factors, metrics, "connections", 0.05, 0.95)
    return rows, results, tables, effects.answers(tables, results)


@pytest.fixture(scope="session")
def demo_aa_calibration():
    """The A/A page's calibration of data/demo-aa: p50, p99 latency and throughput, alpha 0.05,
    5 runs per split, 200 splits, seed 1."""
    from perfkit.report.sections import aa

    return aa.calibrate("demo-aa", str(ROOT / "data"), "arm",
                        ["latency_p50_ms", "latency_p99_ms", "throughput_rps"], 0.05, 5, 200, 1)


# -- system tools: a missing one skips every test that needs it, with one reason -------------
_INSTALL_HINT = "run `bash scripts/install-system-packages.sh` (make test does)"


def _missing_tools(tools: tuple[str, ...]) -> list[str]:
    import shutil

    def present(tool: str) -> bool:
        if tool == "nginx" and os.access("/usr/sbin/nginx", os.X_OK):
            return True
        found = shutil.which(tool)
        return found is not None and os.access(found, os.X_OK)

    return [t for t in tools if not present(t)]


@pytest.hookimpl(tryfirst=True)  # before -m deselects: the marks below must be there
def pytest_collection_modifyitems(config, items):
    """The tiers: a test that takes a full report (:data:`REPORT_FIXTURES`) or is a notebook
    cell (nbval) is marked ``slow``, so ``-m "not live and not slow"`` (make check) leaves out
    every report build. Live tests need Debian's nginx and wrk, the browser check chromium:
    where one is missing they are skipped, all with the same reason, instead of failing in
    set-up."""
    needs = {"live": ("nginx", "wrk"), "browser": ("chromium",)}
    missing = {kind: _missing_tools(tools) for kind, tools in needs.items()}
    for item in items:
        module = getattr(item, "module", None)  # notebook cells (nbval) have none
        if module is None or REPORT_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.slow)
        kind = ("live" if item.get_closest_marker("live") else
                "browser" if module is not None
                and module.__name__.endswith("test_browser") else None)
        if kind and missing[kind]:
            item.add_marker(pytest.mark.skip(
                reason=f"needs {', '.join(missing[kind])} (Debian packages, not installed): "
                       f"{_INSTALL_HINT}"))
