"""The interval logs the report ships (perfkit.store.hlog), written from the real wrk2 runs of
data/demo-wrk2-sweep and read back by perfkit.store.hlog: each run's rate and printed
percentiles come back."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from perfkit.hdrlayout import LAYOUT
from perfkit.ingest import load
from perfkit.store import hlog

SWEEP = Path(__file__).resolve().parents[1] / "data" / "demo-wrk2-sweep"


@pytest.fixture(scope="module")
def wrk2_runs():
    runs = [r for r in load(SWEEP) if r.tool == "wrk2" and r.histogram is not None]
    assert len(runs) == 48
    return runs


@pytest.fixture(scope="module")
def read_back(wrk2_runs):
    """Every run as the reader gives it back from one shipped log (run id -> Run)."""
    backs = hlog.parse(hlog.interval_log(wrk2_runs), "shipped.hlog")
    return {back.endpoint: back for back in backs}


def _bucket_width_us(value_us: float) -> int:
    i = int(np.searchsorted(LAYOUT.highest, round(value_us)))
    return int(LAYOUT.highest[i] - LAYOUT.lowest[i] + 1)


def _printed_rounding_us(value_ms: float) -> float:
    """Half a unit of wrk2's last printed digit: it prints two decimals of us, ms or s."""
    return 0.005 if value_ms < 1 else 5.0 if value_ms < 1000 else 5000.0


def test_a_wrk2_run_holds_its_window_after_calibration():
    """wrk2 resets each thread's histogram 10 s + 5 ms per connection of the thread after it
    starts: a 15 s run at 64 connections on 2 threads keeps its last 4.84 s."""
    (run,) = [r for r in load(SWEEP / "runs" / "default_R15000_c64_rep1")]
    start, length, kind = hlog.measurement_interval(run)
    assert (kind, round(start, 3), round(length, 3)) == ("wrk2", 10.16, 4.84)


@pytest.mark.slow  # the reader decodes 48 logs' lines: about 9 s
def test_a_shipped_log_reads_the_rate_of_every_run_that_kept_its_rate(wrk2_runs, read_back):
    """Over its interval, a log's count is the run's rate within 1% (the window's rate: wrk2
    at 64 connections opens its connections in its first 160 ms, so its whole-run rate is
    0.5% below the window's). A run that fell short of its target rate did not send at one
    rate throughout: its window's rate is its own (the comment line gives both)."""
    kept = [r for r in wrk2_runs if not r.below_target]
    assert len(kept) == 45
    for run in kept:
        assert read_back[run.run_id].throughput_rps == pytest.approx(run.throughput_rps,
                                                                     rel=0.01), run.run_id
    for run in wrk2_runs:
        start, length, _ = hlog.measurement_interval(run)
        back = read_back[run.run_id]
        assert back.duration_s == pytest.approx(length, abs=1e-3)
        assert back.extra["interval_start_s"] == pytest.approx(start, abs=1e-3)


@pytest.mark.slow
def test_a_shipped_log_reads_wrk2s_printed_percentiles(wrk2_runs, read_back):
    """Every printed percentile the reader gives back is within the print's rounding and one
    histogram bucket of the printed value (the spectrum alone put p99 at its next row, up to
    78 buckets away)."""
    checked = 0
    for run in wrk2_runs:
        back = read_back[run.run_id]
        for q, printed_ms in run.percentiles_ms.items():
            got_ms = back.percentiles_ms.get(q)
            if got_ms is None:
                continue
            allowed_us = (_printed_rounding_us(printed_ms) * 1000.0
                          + _bucket_width_us(printed_ms * 1000.0))
            assert abs(got_ms - printed_ms) * 1000.0 <= allowed_us, (run.run_id, q)
            checked += 1
    assert checked == 48 * 7


def test_two_runs_read_back_with_their_rate_and_printed_percentiles(wrk2_runs):
    """The fast tier's sample of the two tests above: a run at 16 and one at 64 connections."""
    runs = [r for r in wrk2_runs if r.run_id in ("default_R15000_c16_rep1",
                                                 "tuned_R30000_c64_rep2")]
    for back, run in zip(hlog.parse(hlog.interval_log(runs), "two.hlog"), runs, strict=True):
        assert back.throughput_rps == pytest.approx(run.throughput_rps, rel=0.01)
        for q in (50.0, 90.0, 99.0, 99.9):
            printed_ms = run.percentiles_ms[q]
            allowed_us = 5.0 + _bucket_width_us(printed_ms * 1000.0)
            assert abs(back.percentiles_ms[q] - printed_ms) * 1000.0 <= allowed_us, q


def test_the_shipped_histogram_keeps_the_spectrum_rows(wrk2_runs):
    """Placing the printed percentiles moves requests only within a spectrum row's range: the
    requests at or below every row's value (its TotalCount) stay as printed, and so do the
    count and the maximum."""
    for run in wrk2_runs:
        shipped = hlog.shipped_histogram(run)
        assert shipped.total_count == run.histogram.total_count
        assert shipped.max_us == run.histogram.max_us
        rows = np.asarray(run.histogram.bucket_indexes)
        cumulative = np.cumsum(np.asarray(run.histogram.bucket_counts))
        at = np.searchsorted(np.asarray(shipped.bucket_indexes), rows, side="right")
        shipped_cumulative = np.cumsum(np.asarray(shipped.bucket_counts))[at - 1]
        assert (shipped_cumulative == cumulative).all(), run.run_id


def test_the_log_says_how_it_was_made(wrk2_runs):
    text = hlog.interval_log(wrk2_runs[:2], ["demo: default"])
    assert "printed output: the Detailed Percentile spectrum" in text
    assert "measurement window" in text
    run = wrk2_runs[0]
    assert f"wrk2 printed {run.requests:,} requests in {run.duration_s:.2f} s" in text
    assert text.splitlines()[0] == "# demo: default"
