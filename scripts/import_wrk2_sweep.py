"""Import recorded wrk2 runs (shared fixtures) as a perfkit experiment directory.

Run: ``.venv/bin/python scripts/import_wrk2_sweep.py [--source DIR] [--out DIR]``
(defaults: ``tests/fixtures/wrk2/sweep``, a verbatim copy of the shared fixtures'
``wrk2/sweep``, and ``data/demo-wrk2-sweep``).

``--single RUN [RUN ...]`` imports chosen runs of ``tests/fixtures/wrk2/single`` instead (as
``data/demo-wrk2-uncorrected`` holds the ``-U`` run): ``--source tests/fixtures/wrk2/single
--single uncorrected_U_default_R20000_c50 --out data/demo-wrk2-uncorrected``.

For each of the 48 runs ``PROFILE_R<rate>_c<conns>_rep<n>/`` it writes ``runs/<same name>/``:

- ``stdout.txt`` and ``stderr.txt``: ``run.stdout`` and ``run.stderr``, byte for byte;
- ``meta.json``: the original, byte for byte;
- ``manifest.json``: perfkit's manifest generated from ``meta.json`` (argv, tool version,
  factor ``profile``, load levels, repetition, sweep order, start/end UTC, exit code), with the
  host and kernel settings the fixtures README records, the nginx config of the profile
  (``nginx/<profile>.conf`` of the fixtures) and the sha256 of every file.

``experiment.yaml`` documents the design with an ``imported:`` section (perfkit will not
sweep it again), and ``sweep_order.csv`` and ``sweep.json`` are copied byte for byte.
Nothing is re-run, re-formatted or re-computed.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import sys
from pathlib import Path

from perfkit.store.manifest import parse_wrk_argv

REPO = Path(__file__).resolve().parent.parent
SOURCE = REPO / "tests" / "fixtures" / "wrk2" / "sweep"
NGINX = REPO / "tests" / "fixtures" / "nginx"
OUT = REPO / "data" / "demo-wrk2-sweep"
#: from the fixtures README ("Test host", kernel settings "as found")
HOST = {"cpus": 2, "kernel": "Linux 6.x", "os": "Debian GNU/Linux 12 (bookworm)",
        "memory_bytes": 24 * 1024 ** 3,
        "note": "client and server on the same host, all traffic over loopback"}
SYSCTLS = {"net.core.somaxconn": "4096", "net.ipv4.tcp_max_syn_backlog": "2048",
           "net.ipv4.ip_local_port_range": "32768 60999", "fs.file-max": None,
           "ulimit -n": "20000"}

EXPERIMENT_YAML = """\
# Imported, not swept by perfkit: the real wrk2 sweep of the shared fixtures (wrk2/sweep/),
# converted by scripts/import_wrk2_sweep.py. Raw outputs are byte for byte; manifest.json is
# generated from each run's meta.json (kept beside it).
name: demo-wrk2-sweep
description: >
  nginx profile default (port 8080, unbuffered access log) vs tuned (port 8081), offered rates
  5000-45000 req/s, 16 and 64 connections, 3 repetitions = 48 wrk2 runs of 15 s each.
imported:
  from: shared fixtures wrk2/sweep (see its sweep.json and sweep_order.csv)
  randomization: >
    completely randomized: one random.Random(20241121).shuffle over all 48 runs (not blocked;
    the block field of every manifest is null); 1 s pause between runs
  targets: {default: "http://127.0.0.1:8080/", tuned: "http://127.0.0.1:8081/"}
  nginx_configs: {default: nginx/default.conf, tuned: nginx/tuned.conf}
tool: wrk2
factors:
  profile: [default, tuned]
load:
  connections: [16, 64]
  threads: 2
  rate: [5000, 15000, 30000, 45000]
duration: 15s
repetitions: 3
seed: 20241121
options: {latency: true}
"""


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


SINGLE_YAML = """\
# Imported, not swept by perfkit: single wrk2 runs of the shared fixtures (wrk2/single/),
# converted by scripts/import_wrk2_sweep.py --single. Raw outputs are byte for byte;
# manifest.json is generated from each run's meta.json (kept beside it).
name: {name}
description: >
  {runs} recorded wrk2 run(s), kept for what they show (e.g. -U: corrected and uncorrected
  latency of the same requests); see the fixtures README for how each was made.
imported:
  from: shared fixtures wrk2/single ({names})
tool: wrk2
"""


def manifest_for(meta: dict, run_id: str, run_dir: Path, source_dir: Path,
                 experiment: str = "demo-wrk2-sweep") -> dict:
    params = meta["params"]
    profile = meta["profile"]
    opts = parse_wrk_argv(meta["argv"])
    conf = NGINX / f"{profile}.conf"
    files = {name: {"sha256": sha256(run_dir / name), "bytes": (run_dir / name).stat().st_size}
             for name in ("stdout.txt", "stderr.txt", "meta.json")}
    return {
        "schema_version": 1,
        "perfkit_version": None,
        "imported_by": "scripts/import_wrk2_sweep.py",
        "imported_from": {"run_dir": f"wrk2/{source_dir.parent.name}/{source_dir.name}",
                          "meta_sha256": sha256(source_dir / "meta.json")},
        "run_id": run_id,
        "tool": meta["tool"],
        "tool_version": meta["version"],
        "argv": meta["argv"],
        "url": meta["argv"][-1],
        "factors": {"profile": profile},
        "load": {"duration_s": opts["duration_s"], "connections": opts["connections"],
                 "threads": opts["threads"], "rate_rps": opts["rate"]},
        "experiment": experiment,
        "repetition": params.get("rep", 1),
        "block": None,
        "order": params.get("order"),
        "start_utc": meta["start_utc"],
        "end_utc": meta["end_utc"],
        "wall_s": meta["wall_seconds"],
        "exit_code": meta["exit_code"],
        "status": "complete" if meta["exit_code"] == 0 else "failed",
        "host": HOST,
        "sysctls": SYSCTLS,
        "server": {"testbed": False, "profile": profile, "nginx_version": "1.22.1",
                   "config_file": f"nginx/{conf.name}", "config_text": conf.read_text()},
        "cpu": None,
        "warnings": [],
        "files": files,
    }


def convert(source: Path, out: Path, single: list[str] | None = None) -> int:
    if out.exists():
        raise SystemExit(f"{out} exists: remove it first (the import never overwrites)")
    if single:
        sources = [source / name for name in single]
        missing = [str(p) for p in sources if not (p / "meta.json").is_file()]
        if missing:
            raise SystemExit(f"no recorded run (meta.json) in: {', '.join(missing)}")
    else:
        sources = sorted(p for p in source.iterdir() if (p / "meta.json").is_file())
    runs = out / "runs"
    runs.mkdir(parents=True)
    if single:
        (out / "experiment.yaml").write_text(SINGLE_YAML.format(
            name=out.name, runs=len(single), names=", ".join(single)))
    else:
        (out / "experiment.yaml").write_text(EXPERIMENT_YAML)
        for name in ("sweep_order.csv", "sweep.json"):
            shutil.copyfile(source / name, out / name)
    for src in sources:
        dest = runs / src.name
        dest.mkdir()
        shutil.copyfile(src / "run.stdout", dest / "stdout.txt")
        shutil.copyfile(src / "run.stderr", dest / "stderr.txt")
        shutil.copyfile(src / "meta.json", dest / "meta.json")
        meta = json.loads((src / "meta.json").read_text())
        manifest = manifest_for(meta, src.name, dest, src, experiment=out.name)
        (dest / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
    return len(sources)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--source", type=Path, default=SOURCE)
    p.add_argument("--out", type=Path, default=OUT)
    p.add_argument("--single", nargs="+", metavar="RUN",
                   help="import only these run directories of --source (no sweep files)")
    args = p.parse_args(argv)
    n = convert(args.source, args.out, args.single)
    print(f"{n} runs imported into {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
