"""perfkit.store.hdrsum gives hdrh's values: per index (every index of several layouts), and
per statistic on the sums of the published logs' intervals (tests/fixtures/published/hlog), the
standard deviation and the sums of unequal layouts included."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hdrh.histogram import HdrHistogram

from perfkit.hdrcodec import decode
from perfkit.store.hdrsum import lowest_values, range_sizes, summed

LOGS = Path(__file__).parent / "fixtures" / "published" / "hlog"
LAYOUTS = [(1, 2097151, 3), (20000, 3_600_000_000_000, 2), (1, 9007199254740991, 3),
           (1, 268435455, 2), pytest.param((1000, 10**9, 5), marks=pytest.mark.slow),
           (7, 10**6, 1)]


@pytest.mark.parametrize("layout", LAYOUTS)
def test_every_index_has_hdrhs_lowest_and_highest_equivalent_values(layout):
    h = HdrHistogram(*layout)
    index = np.arange(h.counts_len, dtype=np.int64)
    low = lowest_values(h, index)
    high = low + range_sizes(h, index) - 1
    assert low.tolist() == [h.get_value_from_index(i) for i in range(h.counts_len)]
    assert high.tolist() == [h.get_highest_equivalent_value(v) for v in low.tolist()]


def _intervals(path: Path) -> dict:
    by_tag: dict = {}
    for line in path.read_text().splitlines():
        if ",HIST" in line and not line.startswith("#"):
            fields = line.strip().split(",")
            tag = fields[0][4:] if fields[0].startswith("Tag=") else None
            by_tag.setdefault(tag, []).append(decode(fields[-1]))
    return by_tag


def _hdrh_sum(hists: list) -> HdrHistogram:
    total = HdrHistogram(hists[0].lowest_trackable_value,
                         max(h.highest_trackable_value for h in hists),
                         hists[0].significant_figures)
    for h in hists:
        if h.get_total_count():
            total.add(h)
    return total


SUMS = [(path.name, tag, hists) for path in sorted(LOGS.glob("*.hlog"))
        for tag, hists in _intervals(path).items()
        if any(h.get_total_count() for h in hists)]


@pytest.mark.parametrize(("name", "tag", "hists"), SUMS,
                         ids=[f"{n[:40]}-{t}" for n, t, _ in SUMS])
def test_statistics_of_a_sum_are_hdrhs(name, tag, hists):
    ref = _hdrh_sum(hists)
    ours = summed(hists)
    assert ours.total == ref.get_total_count()
    for q in (0.0, 1.0, 50.0, 75.0, 90.0, 99.0, 99.9, 99.99, 100.0):
        assert ours.percentile(q) == ref.get_value_at_percentile(q), q
    assert ours.mean() == ref.get_mean_value()
    assert ours.stddev() == ref.get_stddev()
    assert (ours.min(), ours.max()) == (ref.get_min_value(), ref.get_max_value())


def test_the_ycsb_log_sums_unequal_layouts_as_hdrh_does():
    """Its intervals' layouts differ (highest values of 2^n - 1): the counts of those that do
    not share the first one's indexes are placed value by value, as hdrh's add does."""
    hists = _intervals(LOGS / "HdrHistogram-ycsb.logV1.hlog")[None]
    assert len({(h.unit_magnitude, h.sub_bucket_count) for h in hists}) > 1 or len(
        {h.highest_trackable_value for h in hists}) > 1
    ref = _hdrh_sum(hists)
    ours = summed(hists)
    assert ours.counts.tolist() == [ref.get_count_at_index(i) for i in range(ref.counts_len)]
