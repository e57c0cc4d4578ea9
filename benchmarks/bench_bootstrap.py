"""Cluster-bootstrap p99 CI over 30 runs x 1M requests: perfkit's histogram path vs raw numpy.

Run: ``.venv/bin/python benchmarks/bench_bootstrap.py [--runs 30] [--requests 1000000]``

- perfkit: :func:`perfkit.stats.cluster_bootstrap_quantile` with 2000 resamples on the runs'
  LatencyHistograms (resample weights x cumulative bucket counts, binary search per resample);
- numpy: the same resampling of runs done on the raw requests (concatenate the drawn runs,
  ``numpy.percentile``), timed on 200 resamples and scaled x10 (the full baseline takes many
  minutes and says nothing more).

Target (issue 3): perfkit < 2 s. Both are timed side by side in this one process; the
intervals are printed too, so the two paths can be seen to agree (up to HDR's 0.1%
precision). Exit status 1 if the target is missed.
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np

from perfkit.histogram import LatencyHistogram
from perfkit.stats import cluster_bootstrap_quantile

TARGET_S = 2.0
RESAMPLES = 2000
BASELINE_RESAMPLES = 200


def make_runs(n_runs: int, requests: int, seed: int = 20241121) -> list[np.ndarray]:
    """Log-normal latencies around 1 ms (us), with a 5% run-to-run spread."""
    rng = np.random.default_rng(seed)
    return [np.clip(rng.lognormal(np.log(1000.0) + rng.normal(0, 0.05), 0.6, requests), 1, 6e7)
            for _ in range(n_runs)]


def numpy_bootstrap(runs: list[np.ndarray], resamples: int, seed: int = 1) -> np.ndarray:
    rng = np.random.default_rng(seed)
    out = np.empty(resamples)
    for b in range(resamples):
        picks = rng.integers(0, len(runs), len(runs))
        out[b] = np.percentile(np.concatenate([runs[i] for i in picks]), 99)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--requests", type=int, default=1_000_000)
    args = parser.parse_args(argv)
    runs = make_runs(args.runs, args.requests)
    t0 = time.perf_counter()
    hists = [LatencyHistogram.from_values_us(v) for v in runs]
    build_s = time.perf_counter() - t0

    t0 = time.perf_counter()
    ci = cluster_bootstrap_quantile(hists, 99, n_resamples=RESAMPLES, seed=1)
    perfkit_s = time.perf_counter() - t0

    t0 = time.perf_counter()
    raw = numpy_bootstrap(runs, BASELINE_RESAMPLES)
    numpy_s = (time.perf_counter() - t0) * RESAMPLES / BASELINE_RESAMPLES
    raw_low, raw_high = np.quantile(raw, [0.025, 0.975]) / 1000.0

    print(f"{args.runs} runs x {args.requests:,} requests, p99, {RESAMPLES} resamples")
    print(f"  building the {args.runs} histograms (once):   {build_s:8.3f} s")
    print(f"  perfkit cluster_bootstrap_quantile:        {perfkit_s:8.3f} s   "
          f"CI [{ci.low_ms:.4f}, {ci.high_ms:.4f}] ms")
    print(f"  numpy on raw requests ({BASELINE_RESAMPLES} x10, scaled):  {numpy_s:8.3f} s   "
          f"CI [{raw_low:.4f}, {raw_high:.4f}] ms ({BASELINE_RESAMPLES} resamples)")
    print(f"  ratio numpy / perfkit:                     {numpy_s / perfkit_s:8.0f} x")
    ok = perfkit_s < TARGET_S
    print(f"  target perfkit < {TARGET_S:g} s: {'met' if ok else 'MISSED'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
