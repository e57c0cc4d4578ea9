"""HdrHistogram's values of a sum of histograms, with numpy over their counts arrays.

``hdrh`` (HdrHistogram_py) sums and reads histograms with Python loops (``add`` value by value
when two layouts differ; ``get_value_at_percentile``, ``get_mean_value`` and ``get_stddev`` over
every index): most of the time of reading an interval log. Here the counts arrays are summed and
read at once, with hdrh's own definitions, so the values are hdrh's:

- a layout is hdrh's (``HdrHistogram(lowest, highest, significant figures)``); histograms of the
  same lowest value and significant figures share their indexes (a higher highest value only
  adds buckets) and are summed index by index; another is placed value by value at its indexes'
  lowest values (hdrh's ``add`` of unequal layouts);
- percentile q: the highest equivalent value of the first index whose cumulative count reaches
  ``max(int(q * total / 100 + 0.5), 1)`` (the lowest equivalent value for q = 0);
- mean: the sum of count x median equivalent value, in integers, over the total; standard
  deviation: hdrh's sum of squared deviations, in index order (the same rounding);
- maximum: the highest equivalent value of the highest index counted; minimum: the lowest
  equivalent value of the lowest index counted (0 when index 0 is).

``tests/test_store_hdrsum.py`` compares every index's values with hdrh's and each statistic with
hdrh's on real logs.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from hdrh.histogram import HdrHistogram


def counts_of(hist: HdrHistogram) -> np.ndarray:
    """The counts of ``hist`` as int64, ``counts_len`` long (a decoded histogram's array may be
    shorter: the rest is 0)."""
    raw = np.ctypeslib.as_array(hist.counts)
    out = np.zeros(hist.counts_len, dtype=np.int64)
    n = min(len(raw), hist.counts_len)
    out[:n] = raw[:n]
    return out


def lowest_values(hist: HdrHistogram, index: np.ndarray) -> np.ndarray:
    """hdrh's ``get_value_from_index`` of each ``index`` (its bucket's lowest value)."""
    half, shift = hist.sub_bucket_half_count, hist.sub_bucket_half_count_magnitude
    bucket = (index >> shift) - 1
    sub = (index & (half - 1)) + half
    first = bucket < 0
    sub = np.where(first, sub - half, sub)
    bucket = np.where(first, 0, bucket)
    return sub << (bucket + hist.unit_magnitude)


def range_sizes(hist: HdrHistogram, index: np.ndarray) -> np.ndarray:
    """How many values each ``index``'s bucket holds (hdrh's equivalent value range)."""
    bucket = np.maximum((index >> hist.sub_bucket_half_count_magnitude) - 1, 0)
    return np.left_shift(np.int64(1), bucket + hist.unit_magnitude)


@dataclass(frozen=True)
class Summed:
    """A sum of histograms: its layout (an empty hdrh histogram) and counts."""

    layout: HdrHistogram
    counts: np.ndarray

    @property
    def total(self) -> int:
        return int(self.counts.sum())

    def counted(self) -> tuple[np.ndarray, np.ndarray]:
        """The indexes with a count, and their counts (index order)."""
        index = np.flatnonzero(self.counts)
        return index, self.counts[index]

    def percentile(self, q: float) -> int:
        """hdrh's ``get_value_at_percentile(q)``, q in [0, 100]."""
        total = self.total
        target = max(int((min(q, 100.0) * total / 100) + 0.5), 1)
        index, counts = self.counted()
        at = int(np.searchsorted(np.cumsum(counts), target, side="left"))
        if at == len(index):
            return 0
        i = index[at:at + 1]
        low = int(lowest_values(self.layout, i)[0])
        return low + int(range_sizes(self.layout, i)[0]) - 1 if q else low

    def _medians(self) -> tuple[list[int], list[int]]:
        index, counts = self.counted()
        medians = lowest_values(self.layout, index) + (range_sizes(self.layout, index) >> 1)
        return medians.tolist(), counts.tolist()

    def mean(self) -> float:
        """hdrh's ``get_mean_value()`` (0.0 when empty)."""
        total = self.total
        if not total:
            return 0.0
        medians, counts = self._medians()
        return float(sum(m * c for m, c in zip(medians, counts, strict=True))) / total

    def stddev(self) -> float:
        """hdrh's ``get_stddev()`` (0.0 when empty)."""
        total = self.total
        if not total:
            return 0.0
        mean = self.mean()
        medians, counts = self._medians()
        dev_total = 0.0
        for m, c in zip(medians, counts, strict=True):
            dev = (m * 1.0) - mean
            dev_total += (dev * dev) * c
        return math.sqrt(dev_total / total)

    def max(self) -> int:
        index, _ = self.counted()
        if not len(index):
            return 0
        i = index[-1:]
        return int(lowest_values(self.layout, i)[0] + range_sizes(self.layout, i)[0] - 1)

    def min(self) -> int:
        index, _ = self.counted()
        return int(lowest_values(self.layout, index[:1])[0]) if len(index) else 0

    def highest_equivalent(self) -> tuple[np.ndarray, np.ndarray]:
        """The highest equivalent value of each counted index, and its count."""
        index, counts = self.counted()
        return (lowest_values(self.layout, index) + range_sizes(self.layout, index) - 1,
                counts)


def summed(hists: list[HdrHistogram]) -> Summed:
    """The sum of ``hists`` in the first one's lowest value and significant figures, wide
    enough for the highest of all (as perfkit summed them with hdrh's ``add``)."""
    first = hists[0]
    layout = HdrHistogram(first.lowest_trackable_value,
                          max(h.highest_trackable_value for h in hists),
                          first.significant_figures)
    total = np.zeros(layout.counts_len, dtype=np.int64)
    for h in hists:
        if not h.get_total_count():
            continue
        counts = counts_of(h)
        if (h.unit_magnitude, h.sub_bucket_count) == (layout.unit_magnitude,
                                                      layout.sub_bucket_count):
            total[:len(counts)] += counts  # the same indexes: a prefix of the layout's
            continue
        index = np.flatnonzero(counts)  # hdrh's add: each count at its lowest value
        for value, count in zip(lowest_values(h, index).tolist(), counts[index].tolist(),
                                strict=True):
            at = layout._counts_index_for(value)
            if 0 <= at < layout.counts_len:  # hdrh's record_value drops any other
                total[at] += count
    return Summed(layout, total)
