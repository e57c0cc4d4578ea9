"""Little's-law check N = X (R + Z) on synthetic rows and on the real wrk, wrk2, Locust runs."""

from pathlib import Path

import pandas as pd
import pytest

import perfkit
from perfkit.frames import runs_frame
from perfkit.stats.littles import littles_law

FIXTURES = Path(__file__).parent / "fixtures"


def _rows(**cols):
    return pd.DataFrame(cols)


def test_closed_loop_row_that_obeys_littles_law_is_ok():
    # 10 connections, 1000 req/s, 10 ms each: exactly 10 requests in flight
    out = littles_law(_rows(tool=["wrk"], connections=[10], throughput_rps=[1000.0],
                            latency_mean_ms=[10.0]))
    assert out["implied_concurrency"].iloc[0] == pytest.approx(10.0)
    assert out["ratio"].iloc[0] == pytest.approx(1.0)
    assert out["flag"].iloc[0] == "ok"


@pytest.mark.parametrize("connections, flag", [(13, "client_bound"), (12, "ok"), (9, "ok"),
                                               (8, "latency_inflated")])
def test_the_twenty_percent_threshold(connections, flag):
    out = littles_law(_rows(tool=["wrk"], connections=[connections], throughput_rps=[1000.0],
                            latency_mean_ms=[10.0]))
    assert out["flag"].iloc[0] == flag


def test_locust_reports_the_implied_think_time():
    # 20 users, 500 req/s, 10 ms responses: each user cycle is 40 ms, so Z = 30 ms
    frame = _rows(tool=["locust"], users=[20], throughput_rps=[500.0], latency_mean_ms=[10.0],
                  is_aggregate=[True])
    out = littles_law(frame)
    assert out["implied_think_time_ms"].iloc[0] == pytest.approx(30.0)
    assert out["flag"].iloc[0] == "think_time_unknown"
    checked = littles_law(frame, think_time_ms=30.0)
    assert checked["ratio"].iloc[0] == pytest.approx(1.0)
    assert checked["flag"].iloc[0] == "ok"
    slow_client = littles_law(frame, think_time_ms=5.0)  # users waited far longer than asked
    assert slow_client["flag"].iloc[0] == "client_bound"


def test_missing_numbers_are_flagged_not_guessed():
    out = littles_law(_rows(tool=["wrk"], connections=[10], throughput_rps=[1000.0],
                            latency_mean_ms=[float("nan")]))
    assert out["flag"].iloc[0] == "no_data" and pd.isna(out["ratio"].iloc[0])


@pytest.fixture(scope="module")
def wrk_single():
    frame = runs_frame(perfkit.load(FIXTURES / "wrk" / "single", strict=False))
    return littles_law(frame, keep=["run_id"]).set_index("run_id")


def test_real_wrk_fd_limit_run_is_client_bound(wrk_single):
    # prlimit --nofile=256 with -c400: 149 connects failed, so far fewer than 400 were open
    assert wrk_single.loc["connect_errors_fd_limit", "flag"] == "client_bound"
    assert wrk_single.loc["connect_errors_fd_limit", "implied_concurrency"] < 256


def test_real_wrk_connection_close_is_client_bound(wrk_single):
    # a new TCP connection per request: set-up time is outside wrk's measured latency
    assert wrk_single.loc["connection_close_default_c50", "flag"] == "client_bound"


def test_real_wrk_keepalive_run_is_consistent(wrk_single):
    assert wrk_single.loc["latency_default_c50", "flag"] == "ok"
    assert wrk_single.loc["latency_default_c50", "ratio"] == pytest.approx(1.0, abs=0.1)


def test_real_wrk_all_timeouts_has_no_latency_to_check(wrk_single):
    assert wrk_single.loc["timeouts_slow_upstream", "flag"] == "no_data"


def test_real_wrk_sweep_never_client_bound_and_inflation_follows_the_tail():
    frame = runs_frame(perfkit.load(FIXTURES / "wrk" / "sweep"))
    out = littles_law(frame, keep=["run_id", "latency_p99_ms"]).set_index("run_id")
    assert len(out) == 24
    assert not (out["flag"] == "client_bound").any()
    assert (out["ratio"] > 1 - 0.2).all()
    # wrk's stats_correct adds synthetic samples for latencies above N/X: the inflated runs
    # are those with a p99 many times that interval
    interval_ms = out["concurrency"] / out["throughput_rps"] * 1000
    tail = out["latency_p99_ms"] / interval_ms
    inflated = out.index[out["flag"] == "latency_inflated"]
    assert set(inflated) == {"default_c10_rep1", "default_c10_rep2", "tuned_c50_rep2"}
    assert tail[inflated].min() > tail.drop(inflated).median()


def test_real_locust_runs_imply_the_configured_wait_time():
    # CleanUser/FlakyUser wait between(0.01, 0.05): 30 ms mean; ramp-up adds a little
    frame = runs_frame(perfkit.load(FIXTURES / "locust"))
    out = littles_law(frame, keep=["run_id", "endpoint"])
    assert list(out["endpoint"]) == ["Aggregated"] * 3  # per-endpoint rows are not checked
    assert out["implied_think_time_ms"].between(28, 36).all()
    assert (littles_law(frame, think_time_ms=30.0)["flag"] == "ok").all()


def test_real_wrk2_saturated_run_exhausts_its_connections():
    frame = runs_frame(perfkit.load(FIXTURES / "wrk2" / "single", strict=False))
    out = littles_law(frame, keep=["run_id"]).set_index("run_id")
    assert out.loc["saturated_default_R150000_c100", "flag"] == "connections_exhausted"
    assert out.loc["normal_tuned_R10000_c50", "flag"] == "ok"
