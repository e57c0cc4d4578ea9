"""The bucket layout every perfkit histogram shares: wrk2's HdrHistogram configuration.

Lowest 1 us, highest 24 h, 3 significant digits: 27 buckets of 2048 sub-buckets. The per-index
tables here (lowest, highest and median value of each counts index) let numpy do what hdrh does
one value at a time: find a value's bucket, and a percentile's value from cumulative counts.
"""

from __future__ import annotations

import numpy as np
from hdrh.histogram import HdrHistogram

LOWEST_US = 1
HIGHEST_US = 24 * 3600 * 1_000_000  # wrk2's MAX_LATENCY: 24 h in microseconds
SIGNIFICANT_FIGURES = 3


def check_percentile(q: float) -> float:
    """Return ``q`` as a float in (1, 100], refusing fractions such as 0.99.

    Percentiles are on the 0-100 scale everywhere in perfkit. ``q <= 1`` is refused so that
    0.99 is never silently read as the 0.99th percentile when p99 was meant.
    """
    qf = float(q)
    if not 1 < qf <= 100:
        raise ValueError(
            f"percentile must be in (1, 100] (e.g. 99 for p99, 99.9 for p99.9), got {q!r}"
        )
    return qf


class _Layout:
    """Per-index value tables of the shared HdrHistogram layout (computed once)."""

    def __init__(self) -> None:
        ref = HdrHistogram(LOWEST_US, HIGHEST_US, SIGNIFICANT_FIGURES)
        self.counts_len = ref.counts_len
        self.unit_magnitude = ref.unit_magnitude
        self.sub_bucket_half_count_magnitude = ref.sub_bucket_half_count_magnitude
        self.sub_bucket_half_count = ref.sub_bucket_half_count
        self.sub_bucket_mask = ref.sub_bucket_mask
        self.bucket_count = ref.bucket_count
        self.sub_bucket_count = ref.sub_bucket_count
        index = np.arange(self.counts_len, dtype=np.int64)
        bucket = (index >> self.sub_bucket_half_count_magnitude) - 1
        sub = (index & (self.sub_bucket_half_count - 1)) + self.sub_bucket_half_count
        first = bucket < 0
        sub = np.where(first, sub - self.sub_bucket_half_count, sub)
        bucket = np.where(first, 0, bucket)
        shift = bucket + self.unit_magnitude
        #: lowest value (us) that lands in each counts index
        self.lowest = sub << shift
        #: highest value (us) that lands in each counts index
        self.highest = self.lowest + (np.int64(1) << shift) - 1
        #: hdrh's "median equivalent" value, used by its mean and stdev
        self.median = self.lowest + ((np.int64(1) << shift) >> 1)

    def index_of(self, values_us: np.ndarray) -> np.ndarray:
        """Vectorised ``HdrHistogram._counts_index_for`` for non-negative int64 values."""
        v = np.asarray(values_us).astype(np.int64, copy=False)
        return self._index(v, v.astype(np.float64))

    def _index(self, v: np.ndarray, v_float: np.ndarray) -> np.ndarray:
        """Counts index of int64 ``v``, given the same values as float64 (``v_float``).

        hdrh's bucket is ``bit_length(v | sub_bucket_mask) - unit_magnitude -
        (sub_bucket_half_count_magnitude + 1)``, i.e. ``max(bit_length(v) - unit_magnitude -
        sub_bucket_half_count_magnitude - 1, 0)``. ``bit_length(v)`` is read from the float64
        exponent field (exact for integers below 2**53; 0 gives bucket 0). Works in place on
        one temporary so large inputs stay cheap.
        """
        bucket = v_float.view(np.int64) >> 52
        bucket -= 1022 + self.unit_magnitude + self.sub_bucket_half_count_magnitude + 1
        np.maximum(bucket, 0, out=bucket)
        sub = v >> (bucket + self.unit_magnitude) if self.unit_magnitude else v >> bucket
        bucket += 1
        bucket <<= self.sub_bucket_half_count_magnitude
        bucket += sub
        bucket -= self.sub_bucket_half_count
        return bucket


LAYOUT = _Layout()
def values_at_percentiles(cumulative: np.ndarray, qs: np.ndarray) -> np.ndarray:
    """Percentile values (us) from cumulative counts, exactly as hdrh picks them.

    ``cumulative`` may be 2-d (one histogram per row, e.g. bootstrap resamples); ``qs`` are
    percentiles in (1, 100]. hdrh's rank is ``max(1, int(q * N / 100 + 0.5))`` and it returns the
    highest value equivalent to the bucket where the cumulative count first reaches that rank.
    """
    cum = np.atleast_2d(cumulative)
    total = cum[:, -1:].astype(np.float64)
    ranks = np.maximum(np.floor(np.asarray(qs)[None, :] * total / 100.0 + 0.5), 1)
    idx = np.empty(ranks.shape, dtype=np.int64)
    for row in range(cum.shape[0]):
        idx[row] = np.searchsorted(cum[row], ranks[row], side="left")
    idx = np.minimum(idx, LAYOUT.counts_len - 1)
    values = LAYOUT.highest[idx].astype(np.float64)
    values[np.broadcast_to(total == 0, values.shape)] = np.nan
    return values[0] if np.ndim(cumulative) == 1 else values
