"""Build a latency histogram from 10M samples: perfkit vs an hdrh record_value loop vs numpy.

Run: ``.venv/bin/python benchmarks/bench_histogram.py [--samples N]``

- perfkit: :meth:`perfkit.histogram.LatencyHistogram.from_values_us` on all samples;
- hdrh: ``HdrHistogram.record_value`` in a Python loop, timed on 1M samples and scaled up
  (a 10M loop takes a minute and says nothing more);
- numpy: ``numpy.histogram`` with 2048 uniform bins on the same samples (the speed floor of a
  vectorised histogram; it has no HDR precision).

Targets (issue 2): perfkit >= 50x the loop, and within 2x of numpy. Each timing is the best of
a few repeats, measured side by side in this one process. Exit status 1 if a target is missed.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable

import numpy as np
from hdrh.histogram import HdrHistogram

from perfkit.histogram import HIGHEST_US, LOWEST_US, SIGNIFICANT_FIGURES, LatencyHistogram

LOOP_SAMPLES = 1_000_000
TARGET_VS_LOOP = 50.0
TARGET_VS_NUMPY = 2.0


def best_of(fn: Callable[[], object], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def samples_us(n: int, seed: int = 20241121) -> np.ndarray:
    """Log-normal latencies around 1 ms with a long tail, in microseconds (float64)."""
    rng = np.random.default_rng(seed)
    return np.clip(rng.lognormal(np.log(1000.0), 0.9, n), 1.0, 60e6)


def hdrh_loop(values: list[int]) -> HdrHistogram:
    hist = HdrHistogram(LOWEST_US, HIGHEST_US, SIGNIFICANT_FIGURES)
    record = hist.record_value
    for v in values:
        record(v)
    return hist


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=10_000_000)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    n = args.samples
    values = samples_us(n)
    ints = np.rint(values).astype(np.int64)
    loop_n = min(LOOP_SAMPLES, n)
    loop_values = ints[:loop_n].tolist()

    # the same answer first: perfkit's counts equal hdrh's record_value loop
    ref = hdrh_loop(loop_values)
    mine = LatencyHistogram.from_values_us(values[:loop_n])
    same = (np.array_equal(mine.counts, LatencyHistogram(ref).counts)
            and mine.hdr.get_max_value() == ref.get_max_value()
            and mine.hdr.get_min_value() == ref.get_min_value())

    t_float = best_of(lambda: LatencyHistogram.from_values_us(values), args.repeats)
    t_int = best_of(lambda: LatencyHistogram.from_values_us(ints), args.repeats)
    t_numpy = best_of(lambda: np.histogram(values, bins=2048), args.repeats)
    t_loop = best_of(lambda: hdrh_loop(loop_values), 1) * (n / loop_n)

    vs_loop = t_loop / t_float
    vs_numpy = t_float / t_numpy
    print(f"samples: {n:,} log-normal latencies (us); hdrh loop timed on {loop_n:,} and scaled")
    print(f"counts identical to the hdrh loop: {same}")
    print(f"{'method':<44}{'seconds':>10}{'vs perfkit':>12}")
    rows = (("perfkit from_values_us (float64 us)", t_float),
            ("perfkit from_values_us (int64 us)", t_int),
            ("numpy.histogram, 2048 uniform bins", t_numpy),
            ("hdrh record_value loop (scaled)", t_loop))
    for name, t in rows:
        print(f"{name:<44}{t:>10.3f}{t / t_float:>11.2f}x")
    ok_loop = vs_loop >= TARGET_VS_LOOP
    ok_numpy = vs_numpy <= TARGET_VS_NUMPY
    print(f"speed-up over the hdrh loop: {vs_loop:.0f}x (target >= {TARGET_VS_LOOP:.0f}x) "
          f"{'ok' if ok_loop else 'MISSED'}")
    print(f"time relative to numpy.histogram: {vs_numpy:.2f}x (target <= {TARGET_VS_NUMPY:.0f}x) "
          f"{'ok' if ok_numpy else 'MISSED'}")
    return 0 if (ok_loop and ok_numpy and same) else 1


if __name__ == "__main__":
    sys.exit(main())
