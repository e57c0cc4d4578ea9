"""Coordinated-omission audit: the 100 s stall known answer and the real wrk2, wrk, Locust runs."""

from pathlib import Path

import numpy as np
import pytest
from hdrh.histogram import HdrHistogram

import perfkit
from perfkit.analysis.context import coordinated_omission
from perfkit.histogram import HIGHEST_US, LOWEST_US, SIGNIFICANT_FIGURES, LatencyHistogram
from perfkit.model import Run

FIXTURES = Path(__file__).parent / "fixtures"


def _stall_histograms() -> tuple[LatencyHistogram, LatencyHistogram]:
    """10,000 requests of 1 ms sent every 10 ms, then one request stalled for 100 s."""
    plain = HdrHistogram(LOWEST_US, HIGHEST_US, SIGNIFICANT_FIGURES)
    corrected = HdrHistogram(LOWEST_US, HIGHEST_US, SIGNIFICANT_FIGURES)
    for value_us in [1_000] * 10_000 + [100_000_000]:
        plain.record_value(value_us)
        corrected.record_corrected_value(value_us, 10_000)
    return LatencyHistogram(corrected), LatencyHistogram(plain)


@pytest.fixture(scope="module")
def stall_audit():
    corrected, plain = _stall_histograms()
    run = Run(tool="wrk2", source="synthetic-stall", latency_source="hdr_corrected",
              run_id="stall", connections=1, target_rate_rps=100.0, throughput_rps=100.0,
              histogram=corrected, uncorrected_histogram=plain)
    return coordinated_omission([run], percentiles=(50, 75, 99, 99.99)).iloc[0]


def test_stall_uncorrected_tail_shows_nothing(stall_audit):
    assert stall_audit["uncorrected_p99_99_ms"] == pytest.approx(1.0, rel=1e-3)
    assert stall_audit["uncorrected_p99_ms"] == pytest.approx(1.0, rel=1e-3)


def test_stall_corrected_tail_shows_the_stall(stall_audit):
    assert stall_audit["p75_ms"] == pytest.approx(50_000, rel=0.01)
    assert stall_audit["p99_99_ms"] == pytest.approx(100_000, rel=0.01)


def test_stall_is_flagged_as_coordinated_omission(stall_audit):
    # corrected p99 sits 98% of the way into the stall: ~98 s against 1 ms
    assert stall_audit["co_ratio_p99"] == pytest.approx(98_000, rel=0.01)
    assert stall_audit["co_flag"] is True
    assert stall_audit["below_target"] is False
    assert "stalls hid requests" in stall_audit["note"]


def test_a_q_below_one_is_refused():
    with pytest.raises(ValueError):
        coordinated_omission([], percentiles=(0.99,))


@pytest.fixture(scope="module")
def wrk2_single():
    runs = perfkit.load(FIXTURES / "wrk2" / "single", strict=False)
    return coordinated_omission(runs).set_index("run_id")


def test_real_minus_u_run_side_by_side(wrk2_single):
    # wrk2 -U printed p99 2.68 ms corrected and 1.20 ms uncorrected (run.stdout lines 12, 121)
    row = wrk2_single.loc["uncorrected_U_default_R20000_c50"]
    assert row["p99_ms"] == 2.68 and row["uncorrected_p99_ms"] == 1.20
    assert row["p50_ms"] == 1.30 and row["uncorrected_p50_ms"] == 0.439
    assert row["p99_9_ms"] == 4.63 and row["uncorrected_p99_9_ms"] == 2.71
    assert row["ratio_p99"] == pytest.approx(2.68 / 1.20)
    assert row["co_flag"] is True
    assert row["below_target"] is False


def test_real_run_without_minus_u_cannot_be_judged(wrk2_single):
    row = wrk2_single.loc["normal_tuned_R10000_c50"]
    assert row["co_flag"] is None and np.isnan(row["co_ratio_p99"])
    assert "-U" in row["note"]


def test_real_saturated_run_is_flagged(wrk2_single):
    # -R150000 against nginx default: ~48.8k req/s achieved
    row = wrk2_single.loc["saturated_default_R150000_c100"]
    assert row["below_target"] is True
    # the raw check in words, not a verdict: one run alone cannot tell a saturated server from
    # a generator that fell short
    assert "below target: achieved 0.3" in row["note"] and "one run alone" in row["note"]
    assert not row["note"].startswith("saturated")


def test_real_closed_loop_tools_are_flagged():
    runs = (perfkit.load(FIXTURES / "wrk" / "single" / "latency_default_c50")
            + perfkit.load(FIXTURES / "locust" / "clean_u20"))
    audit = coordinated_omission(runs)
    assert audit["closed_loop"].all()
    assert audit["note"].str.contains("closed-loop").all()
    assert audit["below_target"].isna().all()  # unknown: no target rate
    assert audit["co_flag"].isna().all()
