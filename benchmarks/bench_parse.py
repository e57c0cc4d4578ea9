"""Parse throughput over >= 1,000 wrk2 outputs, histograms included.

Run: ``.venv/bin/python benchmarks/bench_parse.py [--corpus varied|sweep] [--copies 21]``

``--corpus varied`` (default, issue 24): 2,000 varied real wrk2 run directories
(``benchmarks/_corpus.py``: every distinct wrk2 run directory of tests/fixtures,
/work/shared/fixtures and data/, -U, non-2xx, calibration, short, saturated and failed runs,
with their manifests, copied round-robin). ``--corpus sweep``: the 48 wrk2 sweep outputs of
``tests/fixtures/wrk2/sweep`` (each with its ``meta.json``) copied ``--copies`` times (default
21 x 48 = 1,008 files), all of the common shape. Measured side by side in this one process,
best of ``--repeats``:

- ``wrk2.parse`` on the texts already in memory (the parser alone: line grammar, unit
  conversion, spectrum -> HdrHistogram, footer cross-checks, the frozen Run), and the batch
  that ``perfkit.load`` runs (``fastwrk2.parse_many``, the careful parser for what it leaves);
- ``perfkit.load`` on the directory (adds reading, format sniffing and the meta.json merge),
  without the run store (``cache=False``): warm (best of ``--repeats`` in this process) and
  cold (a fresh process, imports done before the clock starts: the issue-10 target);
- for scale, ``LatencyHistogram.from_spectrum`` alone on the already-split spectra, and the
  allocation floor: one empty ``LatencyHistogram()`` per file, all kept (sparse: the dense hdrh
  counts array, 28,672 x 8 bytes, is built only when encoding or printing needs it).

Throughput is megabytes of ``run.stdout`` per second (10**6 bytes), from wall-clock time and from
process CPU time (the box is shared and noisy: CPU time is the steadier figure). Targets: the
careful parser (issue 2) and ``perfkit.load`` on a directory, cold process (issue 10), >= 50 MB/s.
Exit status 1 if the cold ``perfkit.load`` misses it. ``wrk2.parse`` is the careful line parser,
which ``perfkit.load`` uses only for outputs the fast path (``perfkit.ingest.fastwrk2``) leaves
to it.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import perfkit
from perfkit.histogram import LatencyHistogram
from perfkit.ingest import fastwrk2, wrk2

SWEEP = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "wrk2" / "sweep"
TARGET_MB_S = 50.0
COLD = """
import json, sys, time
import numpy, hdrh  # imported before the clock starts
import importlib
import perfkit
for name in ("ingest.loader", "ingest.manifest", "ingest.wrk2", "ingest.fastwrk2",
             "ingest.discover", "store.discover", "store.manifest", "store.runcache",
             "ingest.cache"):
    try:
        importlib.import_module("perfkit." + name)
    except ImportError:  # an older perfkit (before/after comparisons; the run store moved)
        pass
c0, w0 = time.process_time(), time.perf_counter()
try:
    runs = perfkit.load(sys.argv[1], cache=False, strict=False)
except TypeError:  # a perfkit from before the run store (for before/after comparisons)
    runs = perfkit.load(sys.argv[1], strict=False)
print(json.dumps({"cpu": time.process_time() - c0, "wall": time.perf_counter() - w0,
                  "runs": len(runs)}))
"""


def cold_load(root: str) -> tuple[float, float]:
    """(wall, CPU) seconds of perfkit.load(root) in a fresh process."""
    out = subprocess.run([sys.executable, "-c", COLD, root], check=True, capture_output=True,
                         text=True).stdout
    result = json.loads(out.strip().splitlines()[-1])
    return result["wall"], result["cpu"]


def best_of(fn: Callable[[], object], repeats: int) -> tuple[float, float]:
    """(wall seconds, CPU seconds), each the best of ``repeats`` runs."""
    walls, cpus = [], []
    for _ in range(repeats):
        w0, c0 = time.perf_counter(), time.process_time()
        fn()
        walls.append(time.perf_counter() - w0)
        cpus.append(time.process_time() - c0)
    return min(walls), min(cpus)


def make_varied(root: Path, runs: int) -> list[Path]:
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import _corpus

    _corpus.build(root, runs, tools=("wrk2",))
    from perfkit.ingest.loader import classify

    return sorted(p for p in root.rglob("*") if p.is_file() and (f := classify(str(p)))
                  is not None and f.kind == "wrk2")


def make_tree(root: Path, copies: int) -> list[Path]:
    files = []
    for k in range(copies):
        for run_dir in sorted(p for p in SWEEP.iterdir() if p.is_dir()):
            target = root / f"copy{k:03d}" / run_dir.name
            target.mkdir(parents=True)
            for name in ("run.stdout", "meta.json"):
                shutil.copy(run_dir / name, target / name)
            files.append(target / "run.stdout")
    return files


def _parses(text: str, source: str) -> bool:
    try:
        wrk2.parse(text, source)
    except perfkit.ParseError:
        return False
    return True


def spectra(text: str) -> list[tuple[list[float], list[int]]]:
    out = []
    for part in text.split("Detailed Percentile spectrum:")[1:]:
        rows = [line.split() for line in part.split("#[Mean")[0].split("\n")[3:] if line]
        out.append(([float(r[0]) for r in rows], [int(r[2]) for r in rows]))
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", choices=("varied", "sweep"), default="varied")
    parser.add_argument("--copies", type=int, default=21, help="--corpus sweep: copies")
    parser.add_argument("--runs", type=int, default=2000, help="--corpus varied: runs")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="perfkit-bench-") as tmp:
        files = (make_tree(Path(tmp), args.copies) if args.corpus == "sweep"
                 else make_varied(Path(tmp), args.runs))
        texts = [(str(f), f.read_text()) for f in files]
        megabytes = sum(len(t.encode()) for _, t in texts) / 1e6
        parses = [(source, text) for source, text in texts if _parses(text, source)]
        rows = [s for _, t in parses for s in spectra(t)]

        def parse_all() -> None:
            runs = [wrk2.parse(text, source) for source, text in parses]
            assert len(runs) == len(parses)

        def parse_streaming() -> None:
            for source, text in parses:
                wrk2.parse(text, source)

        def parse_batch() -> None:  # what perfkit.load does with the texts it has read
            batch = [(text, source) for source, text in parses]
            fast = fastwrk2.parse_many(batch)
            runs = [r if r is not None else wrk2.parse(text, source)
                    for r, (text, source) in zip(fast, batch, strict=True)]
            assert len(runs) == len(parses)

        def load_all() -> None:
            try:
                runs = perfkit.load(tmp, cache=False, strict=False)
            except TypeError:  # a perfkit from before the run store
                runs = perfkit.load(tmp, strict=False)
            assert len(runs) >= len(parses)

        def rebuild_all() -> None:
            for values_ms, totals in rows:
                LatencyHistogram.from_spectrum(values_ms, totals)

        def empty_histograms() -> None:
            kept = [LatencyHistogram() for _ in rows]
            assert len(kept) == len(rows)

        parse_all()  # warm up imports and caches of the interpreter, not of the data
        results = [("wrk2.parse (careful), runs kept", best_of(parse_all, args.repeats)),
                   ("wrk2.parse (careful), runs dropped", best_of(parse_streaming,
                                                                  args.repeats)),
                   ("fast path + careful for the rest", best_of(parse_batch, args.repeats)),
                   ("  of which from_spectrum alone", best_of(rebuild_all, args.repeats)),
                   ("  empty LatencyHistogram(), kept", best_of(empty_histograms,
                                                               args.repeats)),
                   ("perfkit.load(directory), warm", best_of(load_all, args.repeats)),
                   ("perfkit.load(directory), cold process",
                    min((cold_load(tmp) for _ in range(args.repeats)), key=lambda r: r[1]))]
    n = len(files)
    print(f"{n} wrk2 outputs ({args.corpus}), {megabytes:.2f} MB "
          f"({megabytes / n * 1e3:.2f} kB each, {len(rows)} spectra; "
          f"{n - len(parses)} refused by the parser, in the load rows only)")
    print(f"{'what':<40}{'wall MB/s':>11}{'CPU MB/s':>10}{'us/file (CPU)':>15}")
    for name, (wall, cpu) in results:
        print(f"{name:<40}{megabytes / wall:>11.1f}{megabytes / cpu:>10.1f}"
              f"{cpu / n * 1e6:>15.0f}")
    cpu = results[-1][1][1]
    ok = megabytes / cpu >= TARGET_MB_S
    print(f"perfkit.load(directory), cold process, CPU time: {megabytes / cpu:.1f} MB/s "
          f"(target >= {TARGET_MB_S:.0f} MB/s) {'ok' if ok else 'MISSED'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
