"""Latency distributions as HdrHistograms in integer microseconds.

:class:`LatencyHistogram` wraps :class:`hdrh.histogram.HdrHistogram` and hides its traps in one
place:

- values are integers, so latencies are stored in microseconds;
- percentiles run 0-100 (a ``q`` of 1 or less is refused: 0.99 is not p99);
- ``record_value`` silently returns False for a value out of range; here that raises;
- an empty histogram reports mean 0; here it reports NaN.

The layout is wrk2's (lowest 1 us, highest 24 h, 3 significant digits: 27 buckets of 2048
sub-buckets), so a histogram rebuilt from wrk2's spectrum lands in the same buckets wrk2 used.
Bulk operations (building from arrays, percentiles, merging) are vectorised with numpy on the
counts array that hdrh itself owns, so the object stays a genuine hdrh histogram: it encodes,
decodes and prints its percentile distribution with hdrh's own code.
"""

from __future__ import annotations

import io
import math
from collections.abc import Iterable, Mapping, Sequence
from functools import cached_property

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
#: values per chunk when building from a large array (temporaries stay in cache)
_CHUNK = 1 << 16
#: below this many values, add straight into hdrh's counts instead of a dense bincount
_SPARSE_BELOW = 2048


def _rounded_index(chunk: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Validate one chunk of latencies (us), round to integers, return (values, counts index)."""
    if not len(chunk):
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    low, high = float(chunk.min()), float(chunk.max())
    if chunk.dtype.kind == "f":
        if not (math.isfinite(low) and math.isfinite(high)):
            raise ValueError("latency values must be finite")
        if low < -0.5 or high >= HIGHEST_US + 0.5:
            bad = chunk[(chunk < -0.5) | (chunk >= HIGHEST_US + 0.5)][0]
            raise ValueError(f"latency {bad} us is outside [0, {HIGHEST_US}] us")
        rounded = np.rint(chunk)
        iv = rounded.astype(np.int64)
        return iv, LAYOUT._index(iv, rounded)
    if low < 0 or high > HIGHEST_US:
        bad = chunk[(chunk < 0) | (chunk > HIGHEST_US)][0]
        raise ValueError(f"latency {bad} us is outside [0, {HIGHEST_US}] us")
    iv = chunk.astype(np.int64, copy=False)
    return iv, LAYOUT._index(iv, iv.astype(np.float64))


class LatencyHistogram:
    """An HdrHistogram of request latencies in microseconds.

    Build one with :meth:`from_values_us`, :meth:`from_spectrum`, :meth:`from_buckets_ms`,
    :meth:`decode` or :meth:`merge`; it is treated as immutable once built.
    """

    __slots__ = ("_hdr", "__dict__")

    def __init__(self, hdr: HdrHistogram | None = None):
        if hdr is None:
            hdr = HdrHistogram(LOWEST_US, HIGHEST_US, SIGNIFICANT_FIGURES)
        if hdr.counts_len != LAYOUT.counts_len or hdr.unit_magnitude != LAYOUT.unit_magnitude:
            other = HdrHistogram(LOWEST_US, HIGHEST_US, SIGNIFICANT_FIGURES)
            other.add(hdr)
            hdr = other
        self._hdr = hdr

    # -- construction -------------------------------------------------------------------------
    @classmethod
    def from_counts(cls, counts: np.ndarray) -> LatencyHistogram:
        """Build from a counts array in this module's layout (length <= ``LAYOUT.counts_len``)."""
        counts = np.asarray(counts)
        if counts.ndim != 1 or len(counts) > LAYOUT.counts_len:
            raise ValueError("counts must be a 1-d array no longer than the layout")
        if len(counts) and (counts.min() < 0):
            raise ValueError("counts must be non-negative")
        hist = cls()
        hdr = hist._hdr
        view = np.ctypeslib.as_array(hdr.counts)
        view[: len(counts)] = counts
        nonzero = np.flatnonzero(counts)
        if len(nonzero):
            hdr.set_internal_tacking_values(int(nonzero[0]), int(nonzero[-1]), int(counts.sum()))
        return hist

    @classmethod
    def from_values_us(
        cls, values_us: Iterable[float] | np.ndarray, counts: Iterable[int] | None = None
    ) -> LatencyHistogram:
        """Record many latencies (microseconds) at once.

        Values are rounded to the nearest microsecond. ``counts`` optionally gives how many
        times each value occurred. A negative, non-finite or over-range (> 24 h) value raises
        ValueError naming it; nothing is dropped silently.

        The result equals an ``hdrh`` ``record_value`` loop (counts, total, min, max). Large
        inputs are processed in chunks that stay in cache; small ones (a wrk2 spectrum) are
        added straight into hdrh's counts array without a dense temporary.
        """
        v = np.asarray(values_us)
        if v.dtype.kind not in "iuf":
            v = v.astype(np.float64)
        v = v.ravel()
        weights = None
        if counts is not None:
            weights = np.asarray(counts, dtype=np.int64).ravel()
            if weights.shape != v.shape:
                raise ValueError("values and counts must have the same length")
            if len(weights) and weights.min() < 0:
                raise ValueError("counts must be non-negative")
        if len(v) < _SPARSE_BELOW:
            return cls._from_few(v, weights)
        binned = np.zeros(LAYOUT.counts_len, dtype=np.int64)
        low = high = None
        for start in range(0, len(v), _CHUNK):
            iv, idx = _rounded_index(v[start:start + _CHUNK])
            w = None if weights is None else weights[start:start + _CHUNK]
            if w is None:
                binned += np.bincount(idx, minlength=LAYOUT.counts_len)
                used = iv
            else:
                binned += np.rint(np.bincount(idx, weights=w, minlength=LAYOUT.counts_len)
                                  ).astype(np.int64)
                used = iv[w > 0]
            if len(used):
                lo, hi = int(used.min()), int(used.max())
                low = lo if low is None else min(low, lo)
                high = hi if high is None else max(high, hi)
        hist = cls.from_counts(binned)
        if low is not None:
            # keep hdrh's exact min/max (it tracks the raw values, not bucket edges)
            hist._hdr.min_value = low
            hist._hdr.max_value = high
        return hist

    @classmethod
    def _from_few(cls, v: np.ndarray, weights: np.ndarray | None) -> LatencyHistogram:
        iv, idx = _rounded_index(v)
        hist = cls()
        hdr = hist._hdr
        w = np.ones(len(idx), dtype=np.int64) if weights is None else weights
        np.add.at(np.frombuffer(hdr.counts, dtype=np.uint64), idx, w.astype(np.uint64))
        used = w > 0
        if used.any():
            hdr.set_internal_tacking_values(int(idx[used].min()), int(idx[used].max()),
                                            int(w.sum()))
            hdr.min_value = int(iv[used].min())
            hdr.max_value = int(iv[used].max())
        return hist

    @classmethod
    def from_spectrum(
        cls, values_ms: Sequence[float], total_counts: Sequence[int]
    ) -> LatencyHistogram:
        """Rebuild from a "Detailed Percentile spectrum" (wrk2, HdrHistogram ``.hgrm``).

        ``values_ms`` is the Value column (milliseconds, as printed with 3 decimals, so exact
        microseconds) and ``total_counts`` the cumulative TotalCount column. The requests between
        two rows are placed at the later row's value: each row's value is the highest value of
        its HDR bucket, so the result has HDR precision at every printed row and reproduces the
        printed spectrum exactly (see the round-trip test).
        """
        us = np.rint(np.asarray(values_ms, dtype=np.float64) * 1000.0)
        cum = np.asarray(total_counts, dtype=np.int64)
        if us.shape != cum.shape:
            raise ValueError("values and counts must have the same length")
        if len(cum) and (np.any(np.diff(cum) < 0) or np.any(np.diff(us) < 0) or cum[0] < 0):
            raise ValueError("a spectrum must be non-decreasing in value and count")
        deltas = np.diff(cum, prepend=0)
        return cls.from_values_us(us, deltas)

    @classmethod
    def from_buckets_ms(cls, buckets: Mapping[str | float, int]) -> LatencyHistogram:
        """Rebuild from Locust's ``response_times`` (rounded ms -> count, keys may be strings)."""
        if not buckets:
            return cls()
        keys = np.array([float(k) for k in buckets], dtype=np.float64)
        counts = np.array([int(c) for c in buckets.values()], dtype=np.int64)
        return cls.from_values_us(keys * 1000.0, counts)

    @classmethod
    def merge(cls, hists: Iterable[LatencyHistogram]) -> LatencyHistogram:
        """Sum the counts of several histograms (the only honest way to combine percentiles)."""
        hists = list(hists)
        if not hists:
            return cls()
        counts = np.sum([h.counts for h in hists], axis=0)
        merged = cls.from_counts(counts)
        nonempty = [h for h in hists if h.total_count]
        if nonempty:
            merged._hdr.min_value = min(h._hdr.min_value for h in nonempty)
            merged._hdr.max_value = max(h._hdr.max_value for h in nonempty)
        return merged

    def __add__(self, other: LatencyHistogram) -> LatencyHistogram:
        return LatencyHistogram.merge([self, other])

    @classmethod
    def decode(cls, encoded: str | bytes) -> LatencyHistogram:
        """Read HdrHistogram's compressed base64 form (as written by :meth:`encode`)."""
        if isinstance(encoded, str):
            encoded = encoded.encode("ascii")
        return cls(HdrHistogram.decode(encoded))

    def encode(self) -> str:
        """HdrHistogram's compressed base64 form, as text (for JSON and Parquet)."""
        return self._hdr.encode().decode("ascii")

    # -- reading ------------------------------------------------------------------------------
    @property
    def hdr(self) -> HdrHistogram:
        """The underlying :class:`hdrh.histogram.HdrHistogram` (do not modify it)."""
        return self._hdr

    @cached_property
    def counts(self) -> np.ndarray:
        """Read-only int64 copy of the counts array (``LAYOUT.counts_len`` long)."""
        view = np.ctypeslib.as_array(self._hdr.counts)
        out = np.zeros(LAYOUT.counts_len, dtype=np.int64)
        out[: len(view)] = view[: LAYOUT.counts_len]
        out.flags.writeable = False
        return out

    @cached_property
    def _cumulative(self) -> np.ndarray:
        return np.cumsum(self.counts)

    @property
    def total_count(self) -> int:
        return int(self._cumulative[-1])

    def __len__(self) -> int:
        return self.total_count

    def __bool__(self) -> bool:
        return True

    def percentile_us(self, q: float) -> float:
        """Latency at percentile ``q`` (0-100], as hdrh's ``get_value_at_percentile``; NaN if empty.

        Like HdrHistogram, it returns the highest value equivalent to the bucket that holds the
        requested rank, ``max(1, round(q/100 * N))``.
        """
        return float(self.percentiles_us([q])[0])

    def percentiles_us(self, qs: Sequence[float]) -> np.ndarray:
        """Vectorised :meth:`percentile_us` for several percentiles (each in (1, 100])."""
        qs = np.array([check_percentile(q) for q in qs], dtype=np.float64)
        total = self.total_count
        if total == 0:
            return np.full(len(qs), np.nan)
        return values_at_percentiles(self._cumulative, qs)

    def percentile_ms(self, q: float) -> float:
        return self.percentile_us(q) / 1000.0

    @property
    def min_us(self) -> float:
        return float(self._hdr.get_min_value()) if self.total_count else float("nan")

    @property
    def max_us(self) -> float:
        return float(self._hdr.get_max_value()) if self.total_count else float("nan")

    @property
    def mean_us(self) -> float:
        """Mean as hdrh computes it (bucket medians), NaN when empty."""
        if not self.total_count:
            return float("nan")
        return float(np.dot(self.counts, LAYOUT.median) / self.total_count)

    @property
    def stdev_us(self) -> float:
        """Population standard deviation as hdrh computes it, NaN when empty."""
        if not self.total_count:
            return float("nan")
        dev = LAYOUT.median - self.mean_us
        return float(np.sqrt(np.dot(self.counts, dev * dev) / self.total_count))

    def spectrum_text(self, ticks_per_half_distance: int = 5, scale: float = 1000.0) -> str:
        """hdrh's own ``output_percentile_distribution`` (values divided by ``scale``: ms)."""
        buf = io.BytesIO()
        self._hdr.output_percentile_distribution(buf, scale, ticks_per_half_distance)
        return buf.getvalue().decode("ascii")

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, LatencyHistogram):
            return NotImplemented
        return bool(np.array_equal(self.counts, other.counts))

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        if not self.total_count:
            return "LatencyHistogram(empty)"
        return (
            f"LatencyHistogram(n={self.total_count}, p50={self.percentile_ms(50):.3f} ms, "
            f"p99={self.percentile_ms(99):.3f} ms, max={self.max_us / 1000:.3f} ms)"
        )

    def __reduce__(self):
        return (LatencyHistogram.decode, (self.encode(),))


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
