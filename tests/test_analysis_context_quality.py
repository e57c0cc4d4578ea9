"""Data quality under the rules every page uses: one generator-busy count on the overview, in the
threats and in the Methods; run statuses (failed, saturated vs short), not the raw flags."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from perfkit.analysis import load_experiment
from perfkit.analysis.context import provenance, quality, threats
from perfkit.analysis.core import GENERATOR_BUSY, experiment_statuses
from perfkit.report.methods import host_sentence
from perfkit.warning import Code

DATA = Path(__file__).resolve().parents[1] / "data"


@pytest.fixture(scope="module")
def locust():
    return load_experiment(DATA / "demo-locust")


def test_one_generator_busy_count_on_the_overview_in_the_threats_and_the_methods(locust):
    shares = [(r.manifest or {}).get("cpu", {}).get("generator_cpu_share")
              for r in locust.rows().runs]
    busy = sum(1 for s in shares if isinstance(s, float) and s >= GENERATOR_BUSY)
    near = sum(1 for s in shares if isinstance(s, float) and 0.85 <= s < 0.9)
    assert busy and near, "demo-locust no longer tells the two old thresholds apart"
    summary = quality([locust]).summary_frame().iloc[0]
    assert summary["generator_busy"] == busy == provenance(locust).generator_busy
    (threat,) = [t.text for t in threats(locust) if t.kind == "generator-busy"]
    assert f">= {GENERATOR_BUSY:.0%} of its cores in {busy} of {len(shares)} runs" in threat
    assert f"at or above {GENERATOR_BUSY:.0%} of its cores in {busy}" in host_sentence(
        provenance(locust))


def test_quality_counts_run_statuses_not_the_raw_saturation_flag():
    sweep = load_experiment(DATA / "demo-wrk2-sweep")
    assert sum(r.below_target for r in sweep.rows().runs) == 3  # achieved < 0.99 x target
    table = quality([sweep])
    summary = table.summary_frame().iloc[0]
    assert (summary["saturated"], summary["short"], summary["failed"]) == (2, 1, 0)
    frame = table.to_frame().set_index("run_id")
    assert frame.loc["tuned_R5000_c64_rep2", "status"] == "short"
    assert frame.loc["default_R45000_c64_rep2", "status"] == "saturated"
    # the same runs the Methods section names
    named = {re.split(r":", s)[0] for v in provenance(sweep).statuses.values() for s in v}
    assert named == set(frame.index[frame["status"] != "ok"])


def test_a_run_whose_every_response_failed_is_failed_whatever_its_exit_code():
    exp = load_experiment(DATA / "seeds-worker-connections")
    frame = quality([exp]).to_frame()
    failed = frame[frame["status"] == "failed"]
    every = failed[failed["reason"] == "every response failed"]
    assert len(every) == 3 and (failed["exit_code"] == 0).all()
    # and the runs whose most requests failed (0004: 99.0%, 0011: 99.99%) fail too
    most = failed.drop(every.index)
    assert sorted(most["run_id"]) == ["0004-b01-worker_connections=1024_c4000",
                                      "0011-b02-worker_connections=1024_c4000"]
    assert list(most["reason"].str.extract(r"^([\d.]+)% of requests failed")[0]) == \
        ["99.0", "99.9"]
    assert quality([exp]).summary_frame().iloc[0]["failed"] == 5


def test_the_raw_below_target_warning_never_gives_a_verdict_the_status_contradicts():
    # seeds-keepalive: 27 runs fell below 0.99 x their target, 8 of them saturated by the
    # run-status rule and 19 short (in doubt); the per-run warning once said "saturated" of all
    exp = load_experiment(DATA / "seeds-keepalive")
    rows = exp.rows()
    statuses = experiment_statuses(exp)
    below = [(run, s) for run, s in zip(rows.runs, statuses, strict=True) if run.below_target]
    assert len(below) == 27
    assert sum(s.status == "saturated" for _, s in below) == 8
    assert sum(s.status == "short" for _, s in below) == 19
    for run in rows.runs:
        assert not any(str(w).startswith("saturated") for w in run.warnings), run.run_id
        below_target = [w for w in run.warnings if w.code is Code.BELOW_TARGET]
        assert len(below_target) == bool(run.below_target), run.run_id
        if below_target:
            ratio = run.throughput_rps / run.target_rate_rps
            assert str(below_target[0]).startswith(
                f"below target: achieved {ratio:.3f} x the target rate (< 0.99): ")


def test_the_runs_table_names_its_warning_count_as_a_count():
    exp = load_experiment(DATA / "demo-wrk2-sweep")
    frame = quality([exp]).to_frame()
    assert "warnings" not in frame and "n_warnings" in frame
    assert list(frame["n_warnings"]) == [len(r.warnings) for r in exp.rows().runs]


def test_the_aa_rates_hold_the_test_and_the_runs_per_arm_in_two_columns():
    from perfkit.analysis.compare import aa_calibration

    rows = load_experiment(DATA / "demo-aa").rows()
    frame = aa_calibration(rows, "arm", ["latency_p99_ms"], k=5, n_splits=20).to_frame()
    assert list(frame.columns[:2]) == ["test", "runs_per_arm"]
    assert list(frame["test"]) == ["Mann-Whitney U", "Welch z"]
    assert list(frame["runs_per_arm"]) == [5, 1]
    assert frame["runs_per_arm"].dtype.kind == "i"


def test_an_experiments_provenance_is_worked_out_once_per_object(monkeypatch):
    import dataclasses
    import gc

    from perfkit.analysis.context import _provenance

    exp = load_experiment(DATA / "demo-aa")
    calls = []
    real = _provenance._provenance
    monkeypatch.setattr(_provenance, "_provenance", lambda e: calls.append(e) or real(e))
    first = provenance(exp)
    assert provenance(exp) is first and len(calls) == 1
    other = dataclasses.replace(exp, runs=exp.runs[:4], frame=exp.frame.iloc[:4])
    assert provenance(other).n_runs == 4 and len(calls) == 2  # another object: its own
    assert provenance(exp) is first
    key = id(other)
    del other, calls[:]
    gc.collect()
    assert key not in _provenance._KEPT  # gone with its experiment
