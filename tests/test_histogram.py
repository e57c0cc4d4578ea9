"""LatencyHistogram against hdrh's own record_value loop, known answers and numpy/scipy."""

from __future__ import annotations

import math
import pickle

import numpy as np
import pytest
from hdrh.histogram import HdrHistogram
from scipy import stats

from perfkit.histogram import (
    HIGHEST_US,
    LAYOUT,
    LOWEST_US,
    SIGNIFICANT_FIGURES,
    LatencyHistogram,
    check_percentile,
)

QS = (1.5, 10, 25, 50, 75, 90, 95, 99, 99.5, 99.9, 99.99, 99.999, 100)
EDGES = [0, 1, 2, 1023, 1024, 2047, 2048, 2049, 4095, 4096, 65535, 65536, 10**6, 2**35 + 1,
         HIGHEST_US - 1, HIGHEST_US]


def hdrh_of(values_us, counts=None) -> HdrHistogram:
    """The reference: one ``record_value`` call per value, as hdrh users do."""
    hist = HdrHistogram(LOWEST_US, HIGHEST_US, SIGNIFICANT_FIGURES)
    ints = np.rint(np.asarray(values_us, dtype=np.float64)).astype(np.int64).tolist()
    for i, v in enumerate(ints):
        c = 1 if counts is None else int(counts[i])
        if c:
            assert hist.record_value(v, c)
    return hist


def latencies_us(n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return np.clip(rng.lognormal(np.log(2000.0), 1.5, n), 0, HIGHEST_US)


def assert_same_as_hdrh(mine: LatencyHistogram, ref: HdrHistogram) -> None:
    assert np.array_equal(mine.counts, LatencyHistogram(ref).counts)
    assert mine.total_count == ref.get_total_count()
    assert mine.min_us == ref.get_min_value()
    assert mine.max_us == ref.get_max_value()
    for q in QS:
        assert mine.percentile_us(q) == ref.get_value_at_percentile(q), q
    assert mine.mean_us == pytest.approx(ref.get_mean_value(), rel=1e-12)
    assert mine.stdev_us == pytest.approx(ref.get_stddev(), rel=1e-9)


@pytest.mark.parametrize("n", [1, 100, 5000, 150_000])
def test_from_values_equals_a_record_value_loop(n):
    values = np.concatenate([latencies_us(n, seed=n), EDGES])
    ref = hdrh_of(values)
    assert_same_as_hdrh(LatencyHistogram.from_values_us(values), ref)
    # integers in give the same histogram as floats
    ints = np.rint(values).astype(np.int64)
    assert_same_as_hdrh(LatencyHistogram.from_values_us(ints), ref)
    assert_same_as_hdrh(LatencyHistogram.from_values_us(ints.tolist()), ref)


@pytest.mark.parametrize("n", [50, 80_000])
def test_weighted_values_equal_record_value_with_counts(n):
    values = np.concatenate([latencies_us(n, seed=7), EDGES])
    counts = np.random.default_rng(8).integers(0, 4, len(values))
    mine = LatencyHistogram.from_values_us(values, counts)
    assert_same_as_hdrh(mine, hdrh_of(values, counts))


def test_values_are_rounded_to_the_nearest_microsecond():
    hist = LatencyHistogram.from_values_us([0.4, 1.6, 999.5, 1000.49])
    assert hist.min_us == 0 and hist.max_us == 1000
    assert hist.percentile_us(50) == 2.0  # rank 2 of [0, 2, 1000, 1000] (999.5 -> 1000)


def test_index_of_matches_hdrh_at_every_bucket_boundary():
    ref = HdrHistogram(LOWEST_US, HIGHEST_US, SIGNIFICANT_FIGURES)
    powers = np.array([2**k for k in range(37)] + [HIGHEST_US], dtype=np.int64)
    values = np.unique(np.clip(np.concatenate([powers - 1, powers, powers + 1]), 0, None))
    expected = [ref._counts_index_for(int(v)) for v in values]
    assert LAYOUT.index_of(values).tolist() == expected
    assert LAYOUT.index_of(np.array([HIGHEST_US]))[0] < LAYOUT.counts_len


@pytest.mark.parametrize("bad", [-1.0, -0.6, HIGHEST_US + 1.0, -1, HIGHEST_US + 1])
def test_out_of_range_values_raise_instead_of_being_dropped(bad):
    with pytest.raises(ValueError, match="outside"):
        LatencyHistogram.from_values_us(np.concatenate([latencies_us(10, 1), [bad]]))
    with pytest.raises(ValueError, match="outside"):
        LatencyHistogram.from_values_us(np.concatenate([latencies_us(9000, 1), [bad]]))


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
def test_non_finite_values_raise(bad):
    with pytest.raises(ValueError, match="finite"):
        LatencyHistogram.from_values_us([1.0, bad])
    with pytest.raises(ValueError, match="finite"):
        LatencyHistogram.from_values_us(np.append(latencies_us(9000, 2), bad))


def test_negative_or_mismatched_counts_raise():
    with pytest.raises(ValueError, match="non-negative"):
        LatencyHistogram.from_values_us([1, 2], [1, -1])
    with pytest.raises(ValueError, match="same length"):
        LatencyHistogram.from_values_us([1, 2], [1])


@pytest.mark.parametrize("q", [0.99, 1, 0.5, 0, -5, 100.0001, 101])
def test_percentiles_refuse_fractions_and_out_of_range(q):
    hist = LatencyHistogram.from_values_us([1000, 2000])
    with pytest.raises(ValueError, match=r"\(1, 100\]"):
        hist.percentile_us(q)
    with pytest.raises(ValueError):
        check_percentile(q)


def test_empty_histogram_gives_nan_not_zero():
    for empty in (LatencyHistogram(), LatencyHistogram.from_values_us([]),
                  LatencyHistogram.from_values_us([5, 6], [0, 0]),
                  LatencyHistogram.from_buckets_ms({})):
        assert empty.total_count == 0
        assert math.isnan(empty.percentile_us(50)) and math.isnan(empty.percentile_ms(99))
        assert math.isnan(empty.mean_us) and math.isnan(empty.stdev_us)
        assert math.isnan(empty.min_us) and math.isnan(empty.max_us)
        assert np.isnan(empty.percentiles_us([50, 99])).all()


def test_known_answers_for_unit_buckets():
    """Below 2048 us every bucket is one microsecond wide: percentiles are exact order stats."""
    hist = LatencyHistogram.from_values_us(np.arange(1, 1001))
    assert [hist.percentile_us(q) for q in (50, 90, 99, 99.9, 100)] == [500, 900, 990, 999, 1000]
    assert hist.mean_us == 500.5
    assert hist.stdev_us == pytest.approx(math.sqrt((1000**2 - 1) / 12), rel=1e-12)


def test_percentiles_mean_and_stdev_agree_with_numpy_and_scipy():
    values = np.random.default_rng(3).integers(1, 2048, 10_000)
    hist = LatencyHistogram.from_values_us(values)
    # q * N / 100 must be a whole number in floating point too (99.9 * 100 is not), or
    # numpy's ceil and hdrh's round-half-up pick neighbouring ranks
    for q in (10, 25, 50, 75, 90, 99):
        assert hist.percentile_us(q) == np.percentile(values, q, method="inverted_cdf")
    assert hist.mean_us == pytest.approx(np.mean(values), rel=1e-12)
    assert hist.stdev_us == pytest.approx(stats.tstd(values) * math.sqrt(9999 / 10_000),
                                          rel=1e-9)


def test_hdr_precision_holds_for_wide_values():
    """The answer is the top of the bucket holding the exact order statistic: at most 1/1024
    (3 significant figures: 2048 sub-buckets, the upper half used) above it."""
    values = np.sort(np.rint(latencies_us(50_000, seed=11)))
    hist = LatencyHistogram.from_values_us(values)
    for q in (50, 90, 99, 99.9, 99.99):
        rank = max(1, math.floor(q * len(values) / 100 + 0.5))
        exact = values[rank - 1]
        assert exact <= hist.percentile_us(q) <= exact * (1 + 1 / 1024), q


def test_encode_decode_round_trip():
    hist = LatencyHistogram.from_values_us(np.concatenate([latencies_us(20_000, 5), EDGES]))
    back = LatencyHistogram.decode(hist.encode())
    assert back == hist
    assert (back.total_count, back.min_us, back.max_us) == (hist.total_count, hist.min_us,
                                                            hist.max_us)
    assert LatencyHistogram.decode(hist.encode().encode("ascii")) == hist
    # hdrh reads what perfkit writes, and the other way round
    assert np.array_equal(LatencyHistogram(HdrHistogram.decode(hist.encode())).counts,
                          hist.counts)
    ref = hdrh_of(latencies_us(300, 6))
    assert LatencyHistogram.decode(ref.encode()) == LatencyHistogram(ref)
    assert pickle.loads(pickle.dumps(hist)) == hist


def test_merge_sums_counts():
    a_values, b_values = latencies_us(3000, 21), latencies_us(7000, 22) * 3
    a = LatencyHistogram.from_values_us(a_values)
    b = LatencyHistogram.from_values_us(b_values)
    merged = LatencyHistogram.merge([a, b])
    assert np.array_equal(merged.counts, a.counts + b.counts)
    assert merged == LatencyHistogram.from_values_us(np.concatenate([a_values, b_values]))
    assert merged.min_us == min(a.min_us, b.min_us) and merged.max_us == max(a.max_us, b.max_us)
    assert (a + b) == merged
    assert LatencyHistogram.merge([a, LatencyHistogram()]) == a
    assert LatencyHistogram.merge([]).total_count == 0


def test_from_buckets_ms_reads_locust_response_times():
    buckets = {"1": 3, "2": 5, "150": 2, "1000": 1, "12000": 4}
    hist = LatencyHistogram.from_buckets_ms(buckets)
    ref = hdrh_of([float(k) * 1000 for k in buckets], list(buckets.values()))
    assert_same_as_hdrh(hist, ref)
    assert hist.total_count == 15
    assert hist.percentile_ms(50) == pytest.approx(2.0, rel=1e-3)
    assert hist.hdr.max_value == 12_000_000  # hdrh reports the top of its bucket
    assert hist.max_us == LAYOUT.highest[LAYOUT.index_of(np.array([12_000_000]))[0]]


@pytest.mark.slow
def test_from_spectrum_reproduces_a_histograms_own_rows():
    """Rows printed from a histogram rebuild a histogram that prints the same rows."""
    source = LatencyHistogram.from_values_us(latencies_us(40_000, 31))
    rows = [line.split() for line in source.spectrum_text().split("\n")[2:]
            if line and not line.startswith("#")]
    values_ms = [float(r[0]) for r in rows]
    totals = [int(r[2]) for r in rows]
    rebuilt = LatencyHistogram.from_spectrum(values_ms, totals)
    assert rebuilt.spectrum_text().split("#[Mean")[0] == source.spectrum_text().split(
        "#[Mean")[0]
    assert rebuilt.total_count == source.total_count
    with pytest.raises(ValueError, match="non-decreasing"):
        LatencyHistogram.from_spectrum([1.0, 0.5], [1, 2])


def test_spectrum_text_prints_the_standard_deviation_in_its_unit():
    """hdrh prints the footer's StdDeviation unscaled (us under an ms heading); ours is in ms."""
    values = latencies_us(40_000, 7)
    footer = LatencyHistogram.from_values_us(values).spectrum_text().split("#[Mean")[1]
    mean_ms, sd_ms = (float(x.split("=")[1].strip(" ]\n")) for x in footer.split("\n")[0]
                      .split(","))
    max_ms = float(footer.split("Max     =")[1].split(",")[0])
    assert sd_ms == pytest.approx(np.std(values) / 1000, rel=0.01)
    assert mean_ms == pytest.approx(np.mean(values) / 1000, rel=0.01)
    assert sd_ms < max_ms
