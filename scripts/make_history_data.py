"""Make ``data/demo-history``: a performance history as a nightly CI job would record it.

Run: ``.venv/bin/python scripts/make_history_data.py [--out DIR] [--only LABEL ...]``
(on a quiet machine; about 12 minutes; ``PERFKIT_TESTBED_DIR`` and the port of the job
designs, 8200, must be free).

Sixteen "commits" v01..v16, in time order. Each is measured by its own small sweep, one
after the other, exactly as a CI job would: ``perfkit sweep jobs/<NN>-<label>/experiment.yaml``
(wrk, 16 connections, 2 threads, 5 runs of 5 s, 1 s warm-up before each run, 0.5 s pause),
nginx in front of the testbed's upstream app (profile ``proxy``). Two commits change a real
setting:

- v08 makes the upstream answer after 20 ms instead of 10 ms (profile part
  ``slow-upstream``): the server is really slower from v08 on;
- v13 turns on keepalive to the upstream (``keepalive 32``, profile part
  ``keepalive-upstream``): a smaller speed-up from v13 on.

``labels.csv`` is the experimenter's record, the ground truth of the change points: label,
the UTC time the job started (its first run), the profile and what the commit changed.
Jobs already complete are skipped (``perfkit sweep`` resumes), so the script can be re-run
after an interruption; ``experiment.yaml`` of a job is written only when missing.
"""

from __future__ import annotations

import argparse
import csv
import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
OUT = REPO / "data" / "demo-history"
PORT = 8200
SEED0 = 20261122


@dataclass(frozen=True)
class Commit:
    """One label of the history: the testbed profile it runs and what it changed."""

    label: str
    profile: str
    description: str


def commits() -> list[Commit]:
    """The sixteen labels in time order, with the two real changes at v08 and v13."""
    base = "proxy"
    slow = "proxy+slow-upstream"
    slow_ka = "keepalive-upstream+proxy+slow-upstream"
    out = []
    for n in range(1, 17):
        label = f"v{n:02d}"
        if n < 8:
            profile, text = base, "no server change (upstream 10 ms, no upstream keepalive)"
        elif n == 8:
            profile, text = slow, ("CHANGE: upstream answers after 20 ms instead of 10 ms "
                                   "(upstream_delay_ms 10 -> 20); slower from here on")
        elif n < 13:
            profile, text = slow, "no server change (upstream 20 ms, no upstream keepalive)"
        elif n == 13:
            profile, text = slow_ka, ("CHANGE: keepalive to the upstream on (upstream "
                                      "keepalive 32, HTTP/1.1); faster from here on")
        else:
            profile, text = slow_ka, "no server change (upstream 20 ms, upstream keepalive 32)"
        out.append(Commit(label, profile, text))
    return out


def job_yaml(n: int, commit: Commit) -> str:
    """The design of one CI job (one label)."""
    return f"""# One nightly CI job of the demo history: commit {commit.label}.
# {commit.description}
name: demo-history-{commit.label}
description: "CI job for {commit.label}: {commit.description}"
tool: wrk
target:
  testbed: {{port: {PORT}, profile: {commit.profile}}}
  path: /
load:
  connections: 16
  threads: 2
duration: 5s
repetitions: 5
warmup: 1s
seed: {SEED0 + n}
pause: 0.5s
options: {{latency: true}}
"""


def job_dir(out: Path, n: int, commit: Commit) -> Path:
    return out / "jobs" / f"{n:02d}-{commit.label}"


def first_start_utc(job: Path) -> str:
    """The start time of the job's first run, from its manifests ('' when none ran)."""
    starts = [json.loads(m.read_text())["start_utc"]
              for m in job.glob("runs/*/manifest.json")]
    return min(starts) if starts else ""


def write_labels(out: Path, all_commits: list[Commit]) -> None:
    with open(out / "labels.csv", "w", newline="") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(["label", "time_utc", "job_dir", "profile", "description"])
        for n, c in enumerate(all_commits, start=1):
            job = job_dir(out, n, c)
            w.writerow([c.label, first_start_utc(job), str(job.relative_to(out)), c.profile,
                        c.description])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=OUT)
    ap.add_argument("--only", nargs="*", help="labels to run (default: all, in order)")
    args = ap.parse_args(argv)
    all_commits = commits()
    for n, commit in enumerate(all_commits, start=1):
        job = job_dir(args.out, n, commit)
        job.mkdir(parents=True, exist_ok=True)
        design = job / "experiment.yaml"
        if not design.exists():
            design.write_text(job_yaml(n, commit))
        if args.only and commit.label not in args.only:
            continue
        print(f"== {commit.label}: {commit.profile}", flush=True)
        subprocess.run([sys.executable, "-m", "perfkit", "sweep", str(design)], check=True)
        for name in ("lock", "procs.json"):
            (job / ".perfkit" / name).unlink(missing_ok=True)
    write_labels(args.out, all_commits)
    return 0


if __name__ == "__main__":
    sys.exit(main())
