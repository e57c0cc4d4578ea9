"""Benchmark rows: the share of the published corpus (tests/fixtures/published) read exactly, per
tool, and the time per output.

Each output (a file, or a Locust run folder) is loaded with ``perfkit.load`` (no run store) and
judged against its verdict in ``sources.json``: an accepted wrk/wrk2 output or Locust folder is
*exact* when every value the independent reader (tests/_printed.py) finds equals perfkit's, an
accepted log when perfkit loads it (tests/test_ingest_published.py compares it with hdrh to the
bucket); a refused output is *fair* when perfkit refuses it with a ``path:line`` error. Time
per output is the best of 3 passes over each tool's outputs, CPU seconds, divided by their
number.

``--before DIR`` measures another checkout (``git worktree add DIR COMMIT``, or ``git archive
COMMIT perfkit | tar -x -C DIR``) in the same run, a fresh process with its ``perfkit`` first on
``PYTHONPATH``, and prints it beside this one.

    .venv/bin/python benchmarks/bench_published.py [--before DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]
ROOT = HERE / "tests" / "fixtures" / "published"
TOOLS = ("wrk", "wrk2", "locust", "hlog")


def judge(source: dict) -> str:
    from _printed import differences, locust_differences

    import perfkit
    from perfkit.errors import PerfkitError

    path = ROOT / source["file"]
    try:
        runs = perfkit.load(path, cache=False)
    except PerfkitError as exc:
        errors = getattr(exc, "errors", [exc])
        names_line = bool(re.match(rf"{re.escape(str(path))}[^:]*:\d+: ", str(errors[0])))
        return "refused at a line" if names_line else "refused without a line"
    except Exception:  # noqa: BLE001 - a crash is a result here
        return "crashed"
    if source["shape"] == "hlog":
        return "exact"
    if source["shape"].startswith("locust"):
        return "exact" if not locust_differences(path, runs) else "wrong"
    return "exact" if not differences(path.read_text(encoding="utf-8"), runs[0]) else "wrong"


def _timed(sources: list[dict]) -> float:
    import perfkit

    start = time.process_time()
    for s in sources:
        try:
            perfkit.load(ROOT / s["file"], cache=False)
        except Exception:  # noqa: BLE001
            pass
    return time.process_time() - start


def measure() -> dict:
    """Per tool: outputs, accepted, exact, wrong, refused (at a line), ms CPU per output."""
    sources = json.loads((ROOT / "sources.json").read_text())
    out = {}
    for tool in TOOLS:
        mine = [s for s in sources if s["file"].split("/")[0] == tool]
        outcome = {s["file"]: judge(s) for s in mine}
        accepted = [s for s in mine if s["verdict"] == "accept"]
        refused = [s for s in mine if s["verdict"] == "refuse"]
        out[tool] = {
            "outputs": len(mine), "accepted": len(accepted),
            "exact": sum(outcome[s["file"]] == "exact" for s in accepted),
            "wrong": sum(outcome[s["file"]] == "wrong" for s in mine),
            "refused": len(refused),
            "fair": sum(outcome[s["file"]] == "refused at a line" for s in refused),
            "accepted_refused_at_a_line": sum(outcome[s["file"]] == "refused at a line"
                                              for s in accepted),
            "ms": min(_timed(mine) for _ in range(3)) / max(len(mine), 1) * 1000,
        }
    return out


def _show(label: str, rows: dict) -> None:
    print(f"{label}:")
    print(f"  {'tool':7} {'outputs':>7} {'accepted':>8} {'exact':>6} {'wrong':>5} "
          f"{'accepted, refused at a line':>28} {'refused fairly':>14} {'ms CPU/output':>13}")
    total = {k: sum(r[k] for r in rows.values()) for k in next(iter(rows.values()))}
    for tool, r in [*rows.items(), ("all", total)]:
        ms = f"{r['ms']:.2f}" if tool != "all" else ""
        print(f"  {tool:7} {r['outputs']:>7} {r['accepted']:>8} {r['exact']:>6} "
              f"{r['wrong']:>5} {r['accepted_refused_at_a_line']:>28} "
              f"{r['fair']:>9}/{r['refused']:<4} {ms:>13}")
    share = total["exact"] / total["accepted"]
    print(f"  read exactly: {total['exact']}/{total['accepted']} ({share:.1%}); wrong values: "
          f"{total['wrong']}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--before", type=Path, help="another checkout, measured beside this")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    sys.path.insert(0, str(HERE / "tests"))
    if args.child:
        print(json.dumps(measure()))
        return
    if args.before is not None:
        env = dict(os.environ, PYTHONPATH=str(args.before.resolve()))
        done = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--child"],
                              capture_output=True, text=True, check=True, env=env,
                              cwd=tempfile.gettempdir())  # not this checkout first
        _show(f"before ({args.before})", json.loads(done.stdout))
    _show("this checkout", measure())


if __name__ == "__main__":
    main()
