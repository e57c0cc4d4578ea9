"""Latency distributions as HdrHistograms in integer microseconds.

:class:`LatencyHistogram` wraps :class:`hdrh.histogram.HdrHistogram` and hides its traps in one
place:

- values are integers, so latencies are stored in microseconds;
- percentiles run 0-100 (a ``q`` of 1 or less is refused: 0.99 is not p99);
- ``record_value`` silently returns False for a value out of range; here that raises;
- an empty histogram reports mean 0; here it reports NaN;
- ``output_percentile_distribution`` divides the mean and max by its scale but prints the
  standard deviation unscaled (in microseconds under a millisecond heading);
  :meth:`spectrum_text` prints it scaled.

The layout is wrk2's (lowest 1 us, highest 24 h, 3 significant digits: 27 buckets of 2048
sub-buckets), so a histogram rebuilt from wrk2's spectrum lands in the same buckets wrk2 used.
Bulk operations (building from arrays, percentiles, merging) are vectorised with numpy on sparse
counts in hdrh's own bucket layout; encoding, decoding and printing the percentile distribution
go through a genuine hdrh histogram, built when first needed.
"""

from __future__ import annotations

import io
import math
import typing
from collections.abc import Iterable, Mapping, Sequence
from functools import cached_property

import numpy as np
from hdrh.histogram import HdrHistogram

from perfkit.hdrlayout import (  # noqa: F401  (re-exported: the histogram's public names)
    HIGHEST_US,
    LAYOUT,
    LOWEST_US,
    SIGNIFICANT_FIGURES,
    check_percentile,
    values_at_percentiles,
)

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
    :meth:`from_counts`, :meth:`decode` or :meth:`merge`; it is immutable once built.

    The counts are held sparsely (the used bucket indexes of the shared layout and their
    counts), so a histogram rebuilt from a 100-row spectrum costs a few hundred bytes, and
    percentiles, mean and merges are numpy operations on those arrays. The genuine
    :class:`hdrh.histogram.HdrHistogram` is built on first use of :attr:`hdr`,
    :meth:`encode` or :meth:`spectrum_text`, so encoding and printing are hdrh's own code.
    """

    __slots__ = ("_idx", "_cnt", "_total", "_min_raw", "_max_raw", "__dict__")

    def __init__(self, hdr: HdrHistogram | None = None):
        if hdr is None:
            self._set(np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64))
            return
        if hdr.counts_len != LAYOUT.counts_len or hdr.unit_magnitude != LAYOUT.unit_magnitude:
            other = HdrHistogram(LOWEST_US, HIGHEST_US, SIGNIFICANT_FIGURES)
            other.add(hdr)
            hdr = other
        view = np.ctypeslib.as_array(hdr.counts)[: LAYOUT.counts_len]
        idx = np.flatnonzero(view)
        total = hdr.get_total_count()
        self._set(idx.astype(np.int64), view[idx].astype(np.int64),
                  hdr.min_value if total else None, hdr.max_value if total else None)

    def _set(self, idx: np.ndarray, cnt: np.ndarray, min_raw: int | None = None,
             max_raw: int | None = None, total: int | None = None) -> None:
        idx.flags.writeable = False
        cnt.flags.writeable = False
        self._idx = idx
        self._cnt = cnt
        self._total = int(cnt.sum()) if total is None else total
        self._min_raw = min_raw
        self._max_raw = max_raw

    @classmethod
    def _sparse(cls, idx: np.ndarray, cnt: np.ndarray, min_raw: int | None = None,
                max_raw: int | None = None, total: int | None = None) -> LatencyHistogram:
        """From sorted unique bucket indexes and their positive counts (no copy, no checks;
        ``total``, the counts' sum, when the caller has it)."""
        hist = cls.__new__(cls)
        hist._set(idx, cnt, min_raw, max_raw, total)
        return hist

    # -- construction -------------------------------------------------------------------------
    @classmethod
    def from_counts(cls, counts: np.ndarray) -> LatencyHistogram:
        """Build from a counts array in this module's layout (length <= ``LAYOUT.counts_len``)."""
        counts = np.asarray(counts)
        if counts.ndim != 1 or len(counts) > LAYOUT.counts_len:
            raise ValueError("counts must be a 1-d array no longer than the layout")
        if len(counts) and (counts.min() < 0):
            raise ValueError("counts must be non-negative")
        idx = np.flatnonzero(counts).astype(np.int64)
        return cls._sparse(idx, counts[idx].astype(np.int64))

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
        combined without a dense temporary.
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
        nonzero = np.flatnonzero(binned).astype(np.int64)
        # keep hdrh's exact min/max (it tracks the raw values, not bucket edges)
        return cls._sparse(nonzero, binned[nonzero], low, high)

    @classmethod
    def _from_few(cls, v: np.ndarray, weights: np.ndarray | None) -> LatencyHistogram:
        iv, idx = _rounded_index(v)
        if weights is not None:
            used = weights > 0
            iv, idx, w = iv[used], idx[used], weights[used]
        else:
            w = np.ones(len(idx), dtype=np.int64)
        if not len(idx):
            return cls()
        if np.any(idx[1:] < idx[:-1]):  # a spectrum is sorted already
            order = np.argsort(idx, kind="stable")
            idx, w = idx[order], w[order]
        starts = np.flatnonzero(np.concatenate(([True], idx[1:] != idx[:-1])))
        return cls._sparse(idx[starts], np.add.reduceat(w, starts).astype(np.int64),
                           int(iv.min()), int(iv.max()))

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
        return cls.from_spectrum_us(us.astype(np.int64), total_counts)

    @classmethod
    def from_spectrum_us(cls, values_us: Sequence[int] | np.ndarray,
                         total_counts: Sequence[int] | np.ndarray) -> LatencyHistogram:
        """:meth:`from_spectrum` with the Value column already in integer microseconds."""
        v = np.asarray(values_us, dtype=np.int64)
        cum = np.asarray(total_counts, dtype=np.int64)
        if v.shape != cum.shape or v.ndim != 1:
            raise ValueError("values and counts must be 1-d and of the same length")
        if not len(v):
            return cls()
        deltas = np.empty_like(cum)
        deltas[0] = cum[0]
        np.subtract(cum[1:], cum[:-1], out=deltas[1:])
        if deltas.min() < 0 or (v[1:] < v[:-1]).any():
            raise ValueError("a spectrum must be non-decreasing in value and count")
        if v[0] < 0 or v[-1] > HIGHEST_US:
            raise ValueError(f"spectrum values must lie in [0, {HIGHEST_US}] us")
        return cls._from_checked_spectrum(v, deltas, LAYOUT._index(v, v.astype(np.float64)))

    @classmethod
    def _from_checked_spectrum(cls, v: np.ndarray, deltas: np.ndarray,
                               idx: np.ndarray) -> LatencyHistogram:
        """The core of :meth:`from_spectrum_us` for rows already checked (parsers that check
        them themselves, to report the line, skip a second pass): non-decreasing in-range
        values ``v`` (us), non-negative per-row counts ``deltas`` and the rows' bucket ``idx``.
        """
        used = np.flatnonzero(deltas)
        if not len(used):
            return cls()
        starts = np.flatnonzero(np.concatenate(([True], idx[1:] != idx[:-1])))
        summed = np.add.reduceat(deltas, starts)
        keep = summed > 0
        return cls._sparse(idx[starts][keep], summed[keep], int(v[used[0]]), int(v[used[-1]]))

    @classmethod
    def from_buckets_ms(cls, buckets: Mapping[str, int] | Mapping[float, int]) -> LatencyHistogram:
        """Rebuild from Locust's ``response_times`` (rounded ms -> count, keys may be strings)."""
        if not buckets:
            return cls()
        keys = np.array([float(k) for k in buckets], dtype=np.float64)
        counts = np.array([int(c) for c in buckets.values()], dtype=np.int64)
        return cls.from_values_us(keys * 1000.0, counts)

    @classmethod
    def merge(cls, hists: Iterable[LatencyHistogram]) -> LatencyHistogram:
        """Sum the counts of several histograms (the only honest way to combine percentiles)."""
        nonempty = [h for h in hists if h._total]
        if not nonempty:
            return cls()
        idx = np.concatenate([h._idx for h in nonempty])
        cnt = np.concatenate([h._cnt for h in nonempty])
        used, inverse = np.unique(idx, return_inverse=True)
        summed = np.zeros(len(used), dtype=np.int64)
        np.add.at(summed, inverse, cnt)
        lows = [h._min_raw for h in nonempty]
        highs = [h._max_raw for h in nonempty]
        return cls._sparse(used.astype(np.int64), summed,
                           None if None in lows else min(typing.cast(list[int], lows)),
                           None if None in highs else max(typing.cast(list[int], highs)))

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
        return self.hdr.encode().decode("ascii")

    # -- reading ------------------------------------------------------------------------------
    @cached_property
    def hdr(self) -> HdrHistogram:
        """An :class:`hdrh.histogram.HdrHistogram` with these counts (do not modify it)."""
        hdr = HdrHistogram(LOWEST_US, HIGHEST_US, SIGNIFICANT_FIGURES)
        if self._total:
            counts = np.frombuffer(hdr.counts, dtype=np.uint64)
            counts[self._idx] = self._cnt
            hdr.set_internal_tacking_values(int(self._idx[0]), int(self._idx[-1]), self._total)
            if self._min_raw is not None:
                hdr.min_value = self._min_raw
            if self._max_raw is not None:
                hdr.max_value = self._max_raw
        return hdr

    @cached_property
    def counts(self) -> np.ndarray:
        """Read-only dense int64 counts array (``LAYOUT.counts_len`` long)."""
        out = np.zeros(LAYOUT.counts_len, dtype=np.int64)
        out[self._idx] = self._cnt
        out.flags.writeable = False
        return out

    @property
    def bucket_indexes(self) -> np.ndarray:
        """The used counts indexes of the layout, ascending (read-only)."""
        return self._idx

    @property
    def bucket_counts(self) -> np.ndarray:
        """The counts at :attr:`bucket_indexes` (read-only, all positive)."""
        return self._cnt

    @cached_property
    def _cumulative(self) -> np.ndarray:
        return np.cumsum(self._cnt)

    @property
    def total_count(self) -> int:
        return self._total

    def __len__(self) -> int:
        return self._total

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
        q_arr = np.array([check_percentile(q) for q in qs], dtype=np.float64)
        if self._total == 0:
            return np.full(len(q_arr), np.nan)
        ranks = np.maximum(np.floor(q_arr * self._total / 100.0 + 0.5), 1)
        pos = np.minimum(np.searchsorted(self._cumulative, ranks, side="left"),
                         len(self._idx) - 1)
        return LAYOUT.highest[self._idx[pos]].astype(np.float64)

    def percentile_ms(self, q: float) -> float:
        return self.percentile_us(q) / 1000.0

    @property
    def min_us(self) -> float:
        """hdrh's ``get_min_value``: the lowest value of the lowest used bucket; NaN if empty."""
        return float(LAYOUT.lowest[self._idx[0]]) if self._total else float("nan")

    @property
    def max_us(self) -> float:
        """hdrh's ``get_max_value``: the highest value of the highest used bucket; NaN if empty."""
        return float(LAYOUT.highest[self._idx[-1]]) if self._total else float("nan")

    @property
    def mean_us(self) -> float:
        """Mean as hdrh computes it (bucket medians), NaN when empty."""
        if not self._total:
            return float("nan")
        return float(np.dot(self._cnt, LAYOUT.median[self._idx]) / self._total)

    @property
    def stdev_us(self) -> float:
        """Population standard deviation as hdrh computes it, NaN when empty."""
        if not self._total:
            return float("nan")
        dev = LAYOUT.median[self._idx] - self.mean_us
        return float(np.sqrt(np.dot(self._cnt, dev * dev) / self._total))

    def spectrum_text(self, ticks_per_half_distance: int = 5, scale: float = 1000.0) -> str:
        """hdrh's own ``output_percentile_distribution`` (values divided by ``scale``: ms)."""
        buf = io.BytesIO()
        hdr = self.hdr
        hdr.output_percentile_distribution(buf, scale, ticks_per_half_distance)
        text = buf.getvalue().decode("ascii")
        unscaled = f"StdDeviation   = %12.{SIGNIFICANT_FIGURES}f]" % hdr.get_stddev()
        scaled = f"StdDeviation   = %12.{SIGNIFICANT_FIGURES}f]" % (hdr.get_stddev() / scale)
        return text.replace(unscaled, scaled, 1)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, LatencyHistogram):
            return NotImplemented
        return bool(np.array_equal(self._idx, other._idx)
                    and np.array_equal(self._cnt, other._cnt))

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        if not self._total:
            return "LatencyHistogram(empty)"
        return (
            f"LatencyHistogram(n={self._total}, p50={self.percentile_ms(50):.3f} ms, "
            f"p99={self.percentile_ms(99):.3f} ms, max={self.max_us / 1000:.3f} ms)"
        )

    def __reduce__(self):
        return (LatencyHistogram._sparse, (np.array(self._idx), np.array(self._cnt),
                                           self._min_raw, self._max_raw))
