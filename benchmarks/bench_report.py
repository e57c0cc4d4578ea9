"""Time the full demo report from a clean state; target (issue 24): <= 40 s on 2 cores.

``benchmarks/bench_speed.py`` prints this row beside the other four of issue 24 (with the
sequential baseline, the notebooks' CPU sum and the critical path); this script adds
papermill's own overhead and the HTML export per notebook.

Run: ``.venv/bin/python benchmarks/bench_report.py [--params params/demo.yaml] [--repeat 1]``

Measured side by side, in this order:

1. papermill's own cost: executing an *empty* parameterized notebook (a parameters cell and
   nothing else: kernel start, parameter injection, writing the result), and the same with
   perfkit's imports (what every report notebook pays before its first result);
2. the full report, ``perfkit report -p PARAMS -o <new temporary folder>``, in a fresh Python
   process (interpreter start, parameter check, the kernels in parallel, HTML export, index);
3. per notebook: papermill's execution time (from the executed notebook's metadata) and the
   HTML export time.

Prints the ratios overhead / total, and PASS or FAIL against the 40 s budget.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_notebook

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from perfkit.report.execute import execute_notebook  # noqa: E402
from perfkit.report.export import export_html  # noqa: E402

BUDGET_S = 40.0
IMPORTS = ("from perfkit import plots\nfrom perfkit.report import nb\n"
           "from perfkit.report.sections import aa, common, effects, latency, overview, scaling")


def _notebook(path: Path, imports: bool) -> Path:
    nb = new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}
    params = new_code_cell('output_dir: str = ""  # where results go')
    params.metadata["tags"] = ["parameters"]
    nb.cells = [params] + ([new_code_cell(IMPORTS)] if imports else [])
    nbformat.write(nb, str(path))
    return path


def papermill_overhead(tmp: Path, repeat: int) -> tuple[float, float]:
    """Median seconds of an empty parameterized notebook, and of one with perfkit's imports."""
    out = []
    for imports in (False, True):
        source = _notebook(tmp / f"empty-{imports}.ipynb", imports)
        times = []
        for _ in range(repeat):
            result = execute_notebook(source, tmp / "executed.ipynb", {"output_dir": ""})
            if result.error:
                raise result.error
            times.append(result.seconds)
        out.append(statistics.median(times))
    return out[0], out[1]


def full_report(params: Path, tmp: Path) -> tuple[float, Path, str]:
    out_dir = tmp / "report"
    env = {**os.environ, "PERFKIT_NO_PROGRESS": "1"}
    start = time.perf_counter()
    proc = subprocess.run(  # noqa: S603 - fixed argv
        [sys.executable, "-m", "perfkit", "report", "-p", str(params), "-o", str(out_dir)],
        cwd=ROOT, env=env, capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"perfkit report failed ({proc.returncode}):\n{proc.stderr}")
    return seconds, out_dir, proc.stdout


def per_notebook(out_dir: Path, tmp: Path) -> list[tuple[str, float, float]]:
    rows = []
    for executed in sorted(out_dir.glob("*.ipynb")):
        nb = nbformat.read(str(executed), as_version=4)
        run_s = float(nb.metadata.get("papermill", {}).get("duration") or float("nan"))
        start = time.perf_counter()
        export_html(executed, tmp / f"{executed.stem}.html")
        rows.append((executed.stem, run_s, time.perf_counter() - start))
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--params", type=Path, default=ROOT / "params" / "demo.yaml")
    parser.add_argument("--repeat", type=int, default=1, help="full reports to time")
    args = parser.parse_args()
    print(f"cores: {os.cpu_count()}   load average: {os.getloadavg()[0]:.2f}")
    with tempfile.TemporaryDirectory(prefix="perfkit-bench-") as name:
        tmp = Path(name)
        empty_s, imports_s = papermill_overhead(tmp, repeat=3)
        totals = []
        for i in range(args.repeat):
            seconds, out_dir, stdout = full_report(args.params, tmp / f"r{i}")
            totals.append(seconds)
        rows = per_notebook(out_dir, tmp)
    total = statistics.median(totals)
    n = len(rows)
    print(f"\nfull report ({args.params.name}, {n} notebooks, fresh process, new folder):")
    print(f"  wall time        {total:7.1f} s   (runs: {', '.join(f'{t:.1f}' for t in totals)})")
    print("\nper notebook       papermill s   HTML export s")
    for name, run_s, html_s in rows:
        print(f"  {name:<16} {run_s:9.1f}   {html_s:11.2f}")
    print("\npapermill overhead (median of 3):")
    print(f"  empty parameterized notebook   {empty_s:5.2f} s  "
          f"({n} notebooks: {n * empty_s:5.1f} s = {n * empty_s / total:.0%} of the report)")
    print(f"  + perfkit imports              {imports_s:5.2f} s  "
          f"({n} notebooks: {n * imports_s:5.1f} s = {n * imports_s / total:.0%} of the report)")
    verdict = "PASS" if total <= BUDGET_S else "FAIL"
    print(f"\n{verdict}: {total:.1f} s vs budget {BUDGET_S:.0f} s "
          f"(ratio {total / BUDGET_S:.2f})")
    return 0 if verdict == "PASS" else 1


if __name__ == "__main__":
    sys.exit(main())
