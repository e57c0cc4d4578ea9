"""Several clients' runs as one (perfkit.combine): wrk2 histograms merged by summing counts,
wrk sums only, runs of different tools refused. Real recorded runs; the live clients that
produce such groups are tests/test_run_distributed.py."""

from __future__ import annotations

from pathlib import Path

import pytest
from _runner_helpers import FIXTURES
from hdrh.histogram import HdrHistogram

import perfkit
from perfkit.combine import combine_runs
from perfkit.errors import PerfkitError
from perfkit.histogram import HIGHEST_US, LOWEST_US, SIGNIFICANT_FIGURES
from perfkit.warning import Code, Warn

WRK2 = FIXTURES / "wrk2" / "sweep"
WRK = FIXTURES / "wrk" / "sweep"


def load_one(path: Path):
    [run] = perfkit.load(path)
    return run


@pytest.fixture
def wrk2_pair():
    """Two real wrk2 runs of one cell. They ran one after the other (there is no wrk2 binary
    here to run two at once); merging is the same arithmetic for concurrent clients."""
    return [load_one(WRK2 / "tuned_R15000_c64_rep1"), load_one(WRK2 / "tuned_R15000_c64_rep2")]


def test_wrk2_clients_sum_their_counts_and_rates(wrk2_pair):
    a, b = wrk2_pair
    both = combine_runs(wrk2_pair, run_id="g")
    assert both.requests == a.requests + b.requests
    assert both.throughput_rps == pytest.approx(a.throughput_rps + b.throughput_rps)
    assert both.target_rate_rps == 30000 and both.connections == 128
    assert both.histogram_count == a.histogram_count + b.histogram_count


def test_wrk2_percentiles_come_from_the_merged_histogram_as_hdrhistogram_adds_them(wrk2_pair):
    both = combine_runs(wrk2_pair)
    reference = HdrHistogram(LOWEST_US, HIGHEST_US, SIGNIFICANT_FIGURES)
    for run in wrk2_pair:
        reference.add(run.histogram.hdr)  # hdrh's own merge, an independent implementation
    assert set(both.percentiles_ms) == set(wrk2_pair[0].percentiles_ms)
    for q, value in both.percentiles_ms.items():
        assert value == reference.get_value_at_percentile(q) / 1000, q
    # a quantile of the union lies between the clients' quantiles (of their histograms)
    lo, hi = sorted(r.histogram.percentile_ms(99.0) for r in wrk2_pair)
    assert lo <= both.percentiles_ms[99.0] <= hi


def test_wrk_clients_sum_throughput_and_errors_and_invent_no_percentile():
    runs = [load_one(WRK / "default_c50_rep1"), load_one(WRK / "default_c50_rep2")]
    both = combine_runs(runs)
    assert both.throughput_rps == pytest.approx(sum(r.throughput_rps for r in runs))
    assert both.requests == sum(r.requests for r in runs)
    assert both.errors_timeout == sum(r.errors_timeout for r in runs)
    assert both.histogram is None and dict(both.percentiles_ms) == {}
    weighted = sum(r.requests * r.latency_mean_ms for r in runs) / sum(r.requests for r in runs)
    assert both.latency_mean_ms == pytest.approx(weighted)
    assert Warn(Code.COMBINED_WRK_PERCENTILES) in both.notes


def test_runs_of_different_tools_are_not_combined(wrk2_pair):
    with pytest.raises(PerfkitError, match="one tool"):
        combine_runs([wrk2_pair[0], load_one(WRK / "default_c50_rep1")])
