"""perfkit.analysis.core._runstatus on the seeds' backlog experiment: a run whose peers all fell
short is kept in doubt and never called "like its peers'"; a run with kept-up peers is still
judged by their latency."""

from __future__ import annotations

from pathlib import Path

from perfkit.analysis import load_experiment, metric, run_statuses
from perfkit.analysis.core import SHORT, UNDECIDED, kept_up

DATA = Path(__file__).resolve().parents[1] / "data"


def test_a_run_whose_peers_all_fell_short_is_not_called_like_its_peers():
    # seeds-backlog at 1000 connections: every run of both arms fell short of its rate
    exp = load_experiment(DATA / "seeds-backlog")
    for queue, span in ((128, "0.916-0.939"), (32768, "0.915-0.927")):
        rows = exp.rows({"accept_queue": queue, "connections": 1000})
        assert not kept_up(rows).any()
        statuses = run_statuses(rows, metric("latency_p99_ms"))
        assert [s.status for s in statuses] == [SHORT] * len(rows)  # kept in doubt
        for s in statuses:
            assert "like its peers'" not in s.reason
            assert f"every run of its configuration and load fell short ({span} x" \
                in s.reason
            assert f"not sustained by this setup, {UNDECIDED}" in s.reason


def test_a_run_with_kept_up_peers_is_still_judged_by_their_latency():
    exp = load_experiment(DATA / "seeds-backlog")
    rows = exp.rows({"accept_queue": 32768, "connections": 100})  # three runs kept 0.993 x
    assert kept_up(rows).sum() == 3
    shorts = [s for s in run_statuses(rows, metric("latency_p99_ms")) if s.status == SHORT]
    assert len(shorts) == 2  # 0.963 and 0.964 x
    for short in shorts:
        assert "its latency is like its peers'" in short.reason and UNDECIDED not in short.reason
