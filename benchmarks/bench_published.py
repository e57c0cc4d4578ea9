"""Benchmark row: the share of the published corpus (tests/fixtures/published) read exactly, and
the time per output.

Each output is loaded with ``perfkit.load`` (no run store) and judged against its verdict in
``sources.json``: an accepted wrk/wrk2 output is *exact* when every number the independent
reader (tests/_printed.py) finds equals perfkit's, an accepted log when perfkit loads it; a
refused output is *fair* when perfkit refuses it with a ``path:line`` error. Time per output is
the best of 3 passes over the whole corpus, CPU seconds, divided by the number of outputs.

    .venv/bin/python benchmarks/bench_published.py            # this checkout
    PYTHONPATH=/tmp/before .venv/bin/python benchmarks/bench_published.py   # another perfkit
"""

from __future__ import annotations

import json
import re
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(HERE / "tests"))

from _printed import differences  # noqa: E402

import perfkit  # noqa: E402
from perfkit.errors import PerfkitError  # noqa: E402

ROOT = HERE / "tests" / "fixtures" / "published"


def judge(source: dict) -> str:
    path = ROOT / source["file"]
    try:
        runs = perfkit.load(path, cache=False)
    except PerfkitError as exc:
        errors = getattr(exc, "errors", [exc])
        names_line = bool(re.match(rf"{re.escape(str(path))}:\d+: ", str(errors[0])))
        return "refused at a line" if names_line else "refused without a line"
    except Exception:  # noqa: BLE001 - a crash is a result here
        return "crashed"
    if source["shape"] == "hlog":
        return "exact"
    return "exact" if not differences(path.read_text(encoding="utf-8"), runs[0]) else "wrong"


def main() -> None:
    sources = json.loads((ROOT / "sources.json").read_text())
    outcome = {s["file"]: judge(s) for s in sources}
    accepted = [s for s in sources if s["verdict"] == "accept"]
    refused = [s for s in sources if s["verdict"] == "refuse"]
    exact = sum(outcome[s["file"]] == "exact" for s in accepted)
    wrong = sum(outcome[s["file"]] == "wrong" for s in sources)
    fair = sum(outcome[s["file"]] == "refused at a line" for s in refused)
    best = min(_timed(sources) for _ in range(3))
    print(f"published corpus: {len(sources)} outputs ({len(accepted)} a person accepts)")
    print(f"  read exactly: {exact}/{len(accepted)} ({exact / len(accepted):.1%}); "
          f"wrong values: {wrong}; refused fairly: {fair}/{len(refused)}")
    print(f"  time per output: {best / len(sources) * 1000:.2f} ms CPU (best of 3)")


def _timed(sources: list[dict]) -> float:
    start = time.process_time()
    for s in sources:
        try:
            perfkit.load(ROOT / s["file"], cache=False)
        except Exception:  # noqa: BLE001
            pass
    return time.process_time() - start


if __name__ == "__main__":
    main()
