"""An experiment's design (``experiment.yaml``) and its plan of runs in randomized blocks.

The YAML (every key but ``tool``, ``target``, ``duration`` and ``repetitions`` is optional)::

    name: demo-wrk-factorial
    tool: wrk                       # wrk | wrk2 | locust
    target:
      testbed: {port: 8080, profile: default}   # or  url: http://127.0.0.1:8080/
      path: /                       # with url: stub_status: http://127.0.0.1:8080/status
                                    # records the server's counts (the testbed's are read)
    factors:                        # each factor: a list of levels, or level -> profile part
      keepalive: {none: null, keepalive: keepalive}
      cache: {none: null, cache-ram: cache-ram}
      # profile: [default, buffered-log]   # a factor named 'profile' gives whole profiles
      # arm: [A, B]                        # any other list is a label (A/A designs)
    load:                           # scalars, or lists forming a grid
      connections: [16, 64, 256]
      threads: 2
    duration: 5s
    repetitions: 5                  # = blocks
    warmup: 2s                      # or {runs: 1}: a discarded first run per block; or none
    seed: 20261121
    pause: 1s                       # between runs
    restart: on-change              # testbed restart: on-change (default) or per-run
    options: {latency: true}        # tool options: latency, timeout, headers, script, args,
                                    # locustfile, user_classes, reset_stats, wrk2, uncorrected
    taskset: "0:1"
    grace: 20s

An experiment imported from runs recorded elsewhere (``scripts/import_wrk2_sweep.py``) has an
``imported:`` section; its YAML documents the design but cannot be swept again.

Cells are every combination of factor levels and load levels. Block ``b`` (one per repetition)
runs every cell once, in an order drawn by ``random.Random(seed)`` (Python's Mersenne Twister)
for blocks 1, 2, ... in turn, so the plan is the same on every machine for one seed.
"""

from __future__ import annotations

import dataclasses
import hashlib
import itertools
import random
import re
import typing
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from perfkit.errors import PerfkitError
from perfkit.run.spec import TOOLS
from perfkit.store.design import YAML_KEYS, Design, ExperimentError, read_design
from perfkit.store.plan import PLAN_SCHEMA_VERSION, Plan, PlanCell, PlanRun
from perfkit.units import UnitError, parse_duration_arg

_LOAD_KEYS = {"wrk": ("connections", "threads"), "wrk2": ("connections", "threads", "rate"),
              "locust": ("users", "spawn_rate", "processes")}
_REQUIRED_LOAD = {"wrk": ("connections", "threads"), "wrk2": ("connections", "threads", "rate"),
                  "locust": ("users",)}
_TOP_KEYS = YAML_KEYS
_OPTION_KEYS = {"latency", "timeout", "headers", "script", "args", "locustfile", "user_classes",
                "reset_stats", "wrk2", "uncorrected"}


@dataclasses.dataclass(frozen=True)
class Cell:
    """One combination of factor levels and load levels, and the testbed profile it needs."""

    index: int
    factors: Mapping[str, Any]
    load: Mapping[str, Any]
    profile: str | None
    slug: str


class _Checker:
    def __init__(self, path: str):
        self.path = path
        self.problems: list[str] = []

    def bad(self, key: str, expected: str, found: Any) -> None:
        self.problems.append(f"{self.path}: {key}: expected {expected}, found {found!r}")

    def seconds(self, key: str, value: Any, allow_zero: bool = False) -> float | None:
        try:
            s = parse_duration_arg(str(value))
        except UnitError:
            s = None
        if s is None or s < 0 or (s == 0 and not allow_zero):
            self.bad(key, "a duration such as 5s or 2m", value)
            return None
        return s


def _is_level(value: Any) -> bool:
    return isinstance(value, (str, int, float, bool))


def _positive_ints(chk: _Checker, key: str, value: Any, number: type = int) -> list | None:
    values = value if isinstance(value, list) else [value]
    ok = values and all(isinstance(v, (int, float)) and not isinstance(v, bool) and v > 0
                        and (number is float or float(v).is_integer()) for v in values)
    if not ok:
        what = "a positive integer" if number is int else "a positive number"
        chk.bad(key, f"{what} or a non-empty list of them", value)
        return None
    return [number(v) for v in values]


def load_yaml(path: str | Path) -> tuple[dict, bytes]:
    """The parsed YAML and its exact bytes (hashed into the plan): :func:`read_design`."""
    data, raw = read_design(path)
    return dict(data), raw


def validate(data: dict, path: str, base_dir: Path, profile_check=None) -> Design:
    """Check the design and return it normalised (durations in s, lists everywhere).

    ``profile_check(name)`` raises PerfkitError for an unknown testbed profile.
    """
    chk = _Checker(path)
    if "imported" in data:
        source = (data["imported"] or {}).get("from") if isinstance(data["imported"], dict) \
            else data["imported"]
        raise ExperimentError(f"{path}: imported: expected a design perfkit can run; this "
                              f"experiment was imported from recorded runs ({source}), so it "
                              "documents them but cannot be swept again")
    for key in sorted(set(data) - _TOP_KEYS):
        chk.bad(key, f"one of {', '.join(sorted(_TOP_KEYS))}", key)
    tool = data.get("tool")
    if tool not in TOOLS:
        chk.bad("tool", f"one of {', '.join(TOOLS)}", tool)
        tool = None
    spec: dict[str, Any] = {"tool": tool, "name": str(data.get("name") or Path(path).parent.name)}
    spec["description"] = data.get("description")
    spec["target"] = _target(chk, data.get("target"))
    spec["factors"] = _factors(chk, data.get("factors") or {})
    spec["load"] = _load(chk, tool, data.get("load"))
    spec["duration_s"] = (chk.seconds("duration", data["duration"]) if "duration" in data
                          else None)
    if "duration" not in data:
        chk.bad("duration", "a duration such as 5s", None)
    reps = data.get("repetitions")
    if not isinstance(reps, int) or isinstance(reps, bool) or reps < 1:
        chk.bad("repetitions", "a positive integer (the number of blocks)", reps)
    spec["repetitions"] = reps
    spec["warmup"] = _warmup(chk, data.get("warmup"))
    seed = data.get("seed", 0)
    if not isinstance(seed, int) or isinstance(seed, bool):
        chk.bad("seed", "an integer", seed)
    spec["seed"] = seed
    spec["pause_s"] = chk.seconds("pause", data.get("pause", 0), allow_zero=True)
    spec["grace_s"] = chk.seconds("grace", data.get("grace", "20s"))
    restart = data.get("restart", "on-change")
    if restart not in ("on-change", "per-run"):
        chk.bad("restart", "on-change or per-run", restart)
    spec["restart"] = restart
    taskset = data.get("taskset")
    if taskset is not None and not re.fullmatch(r"[0-9,-]+(:[0-9,-]+)?", str(taskset)):
        chk.bad("taskset", "GEN_CPUS[:SERVER_CPUS] such as 0:1", taskset)
    spec["taskset"] = None if taskset is None else str(taskset)
    spec["options"] = _options(chk, tool, data.get("options") or {}, base_dir)
    if spec["target"].get("url") and _profile_factors(spec["factors"]):
        chk.bad("factors", "no testbed profile factors with target.url (the server is not "
                "perfkit's to reconfigure)", sorted(_profile_factors(spec["factors"])))
    if not chk.problems and profile_check and spec["target"].get("testbed") is not None:
        for cell in cells(typing.cast(Design, spec)):
            try:
                profile_check(cell.profile)
            except PerfkitError as exc:
                chk.bad("factors", "levels that make a known testbed profile", str(exc))
                break
    if chk.problems:
        raise ExperimentError("\n".join(chk.problems))
    return Design(**spec)  # type: ignore[typeddict-item]


def _target(chk: _Checker, value: Any) -> dict:
    if not isinstance(value, dict) or ("testbed" in value) == ("url" in value):
        chk.bad("target", "a mapping with either testbed: {port, profile} or url: URL", value)
        return {}
    out: dict[str, Any] = {"path": str(value.get("path", "/"))}
    if "url" in value:
        if not isinstance(value["url"], str):
            chk.bad("target.url", "a URL string", value["url"])
        out["url"] = value["url"]
        stub = value.get("stub_status")
        if stub is not None and not (isinstance(stub, str) and stub.startswith("http")):
            chk.bad("target.stub_status", "the http:// URL of nginx's stub_status page", stub)
        if stub is not None:
            out["stub_status"] = stub
        return out
    tb = value["testbed"] if value["testbed"] is not None else {}
    if not isinstance(tb, dict) or set(tb) - {"port", "profile"}:
        chk.bad("target.testbed", "a mapping with port and profile", tb)
        tb = {}
    port = tb.get("port", 8080)
    if not isinstance(port, int) or not 1 <= port <= 65535:
        chk.bad("target.testbed.port", "a TCP port number", port)
    out["testbed"] = {"port": port, "profile": str(tb.get("profile", "default"))}
    return out


def _factors(chk: _Checker, value: Any) -> dict[str, dict[str, Any]]:
    """name -> {"levels": [...], "profile_parts": {level: part or None} or None}."""
    if not isinstance(value, dict):
        chk.bad("factors", "a mapping of factor name to levels", value)
        return {}
    out = {}
    for name, levels in value.items():
        key = f"factors.{name}"
        if isinstance(levels, list) and levels and all(_is_level(v) for v in levels):
            if len(set(map(str, levels))) != len(levels):
                chk.bad(key, "distinct levels", levels)
            parts = {lv: lv for lv in levels} if name == "profile" else None
            out[str(name)] = {"levels": list(levels), "profile_parts": parts}
        elif isinstance(levels, dict) and levels and all(
                _is_level(k) and (v is None or isinstance(v, str)) for k, v in levels.items()):
            out[str(name)] = {"levels": list(levels), "profile_parts": dict(levels)}
        else:
            chk.bad(key, "a non-empty list of levels, or a mapping level -> testbed profile "
                    "part (or null)", levels)
    return out


def _profile_factors(factors: dict) -> list[str]:
    return [n for n, f in factors.items() if f["profile_parts"] is not None]


def _load(chk: _Checker, tool: str | None, value: Any) -> dict[str, list]:
    if not isinstance(value, dict):
        chk.bad("load", "a mapping such as {connections: [16, 64], threads: 2}", value)
        return {}
    if tool is None:
        return {}
    allowed = _LOAD_KEYS[tool]
    out = {}
    for key, levels in value.items():
        if key not in allowed:
            chk.bad(f"load.{key}", f"one of {', '.join(allowed)} for {tool}", key)
            continue
        number = float if key in ("rate", "spawn_rate") else int
        parsed = _positive_ints(chk, f"load.{key}", levels, number)
        if parsed is not None:
            out[key] = parsed
    for key in _REQUIRED_LOAD[tool]:
        if key not in value:
            chk.bad(f"load.{key}", f"a value (required for {tool})", None)
    if "threads" in out and "connections" in out and max(out["threads"]) > min(
            out["connections"]):
        chk.bad("load.threads", "no more threads than the fewest connections",
                {"threads": out["threads"], "connections": out["connections"]})
    return out


def _warmup(chk: _Checker, value: Any) -> dict:
    if value in (None, 0, "none", "0", "0s"):
        return {"kind": "none"}
    if isinstance(value, dict):
        if set(value) == {"runs"} and isinstance(value["runs"], int) and value["runs"] >= 1:
            return {"kind": "runs", "runs": value["runs"]}
        if set(value) == {"time"}:
            value = value["time"]
        else:
            chk.bad("warmup", "a duration (before every run), {runs: N} (discarded runs at the "
                    "start of each block) or none", value)
            return {"kind": "none"}
    seconds = chk.seconds("warmup", value)
    return {"kind": "time", "seconds": seconds}


def _options(chk: _Checker, tool: str | None, value: Any, base_dir: Path) -> dict:
    if not isinstance(value, dict):
        chk.bad("options", "a mapping of tool options", value)
        return {}
    out = dict(value)
    for key in sorted(set(value) - _OPTION_KEYS):
        chk.bad(f"options.{key}", f"one of {', '.join(sorted(_OPTION_KEYS))}", key)
    for key in ("locustfile", "script", "wrk2"):
        if key in out and out[key] is not None:
            p = Path(str(out[key]))
            p = p if p.is_absolute() else (base_dir / p)
            if not p.is_file():
                chk.bad(f"options.{key}", "an existing file (relative paths are relative to "
                        "the experiment.yaml)", str(out[key]))
            out[key] = str(p.resolve())
    if tool == "locust" and not out.get("locustfile"):
        chk.bad("options.locustfile", "a locustfile (required for locust)", None)
    if "timeout" in out:
        out["timeout_s"] = chk.seconds("options.timeout", out.pop("timeout"))
    for key in ("headers", "args", "user_classes"):
        if key in out and not (isinstance(out[key], list)
                               and all(isinstance(v, str) for v in out[key])):
            chk.bad(f"options.{key}", "a list of strings", out[key])
    return out


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9.+=-]+", "_", text).strip("_") or "x"


_LOAD_ABBREV = {"connections": "c", "threads": "t", "rate": "R", "users": "u",
                "spawn_rate": "r", "processes": "p"}


def cells(spec: Design) -> list[Cell]:
    """Every factor x load combination, in YAML order (the last factor varies fastest)."""
    factors = spec["factors"]
    base = (spec["target"].get("testbed") or {}).get("profile")
    f_names = list(factors)
    l_names = list(spec["load"])
    out: list[Cell] = []
    f_combos = itertools.product(*(factors[n]["levels"] for n in f_names))
    for f_levels in f_combos:
        parts = [] if base in (None, "default") else [base]
        for name, level in zip(f_names, f_levels, strict=True):
            mapping = factors[name]["profile_parts"]
            if mapping is not None and mapping[level] not in (None, "", "default"):
                parts.append(str(mapping[level]))
        profile = "+".join(dict.fromkeys(parts)) or "default" if base is not None else None
        for l_levels in itertools.product(*(spec["load"][n] for n in l_names)):
            load = dict(zip(l_names, l_levels, strict=True))
            words = [f"{n}={v}" for n, v in zip(f_names, f_levels, strict=True)]
            words += [f"{_LOAD_ABBREV[n]}{v:g}" for n, v in load.items()
                      if len(spec["load"][n]) > 1]
            out.append(Cell(len(out), dict(zip(f_names, f_levels, strict=True)), load,
                            profile, _slug("_".join(words)) if words else "run"))
    return out


def make_plan(spec: Design, yaml_bytes: bytes) -> Plan:
    """The runs in randomized complete blocks: block b holds every cell once, shuffled."""
    all_cells = cells(spec)
    rng = random.Random(spec["seed"])
    runs = []
    seq = 0
    for block in range(1, spec["repetitions"] + 1):
        order = list(range(len(all_cells)))
        rng.shuffle(order)
        for position, index in enumerate(order, start=1):
            seq += 1
            cell = all_cells[index]
            runs.append(PlanRun(seq=seq, run_id=f"{seq:04d}-b{block:02d}-{cell.slug}",
                                block=block, repetition=block, position_in_block=position,
                                cell=index, factors=dict(cell.factors), load=dict(cell.load),
                                profile=cell.profile))
    return Plan(
        schema_version=PLAN_SCHEMA_VERSION,
        experiment=spec["name"],
        experiment_sha256=hashlib.sha256(yaml_bytes).hexdigest(),
        randomization="randomized complete blocks: random.Random(seed).shuffle of the cells "
                      "for each block in turn",
        design=dict(spec),
        cells=[PlanCell(**dataclasses.asdict(c)) for c in all_cells],  # type: ignore[typeddict-item]
        runs=runs,
    )


def restarts_in(plan: Plan, restart: str) -> int:
    """Testbed (re)starts the plan needs when run from the start."""
    profiles = [r["profile"] for r in plan["runs"]]
    if not profiles or profiles[0] is None:
        return 0
    if restart == "per-run":
        return len(profiles)
    return 1 + sum(a != b for a, b in itertools.pairwise(profiles))
