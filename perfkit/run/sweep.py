"""``perfkit sweep``: run a designed experiment, and resume it after any interruption.

Layout of an experiment directory::

    OUT/experiment.yaml      the design (copied byte for byte when given from elsewhere)
    OUT/plan.json            every run in order, with the sha256 of experiment.yaml
    OUT/runs/<run_id>/       complete (or failed/killed, kept with its status) runs
    OUT/runs/.tmp-<run_id>/  the run in progress (hidden: never read)
    OUT/runs/.aborted/       runs cut short by an interruption, kept for inspection
    OUT/runs/.warmup/        warm-up runs (discarded, kept for inspection)
    OUT/.perfkit/            lock, process-group state file and an event log

Resuming (the same command again) refuses when experiment.yaml changed, kills stale process
groups recorded in the state file (after checking their start time and command line), moves a
half-written ``.tmp-*`` run to ``runs/.aborted/``, skips the runs already in ``runs/`` and redoes
the rest, in plan order. A run id names one cell x repetition, so the experiment never holds
two copies of one.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import shutil
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO, cast

from perfkit._fsutil import flock
from perfkit.errors import PerfkitError
from perfkit.formatting import Progress
from perfkit.run import plan as ex
from perfkit.run.procs import StateFile, kill_stale
from perfkit.run.runner import TMP_PREFIX, execute, progress_disabled, utc_now, write_json
from perfkit.run.server import ServerContext
from perfkit.run.spec import RunSpec
from perfkit.store.design import DESIGN_NAME, write_design
from perfkit.store.manifest import MANIFEST_NAME, read_run_manifest
from perfkit.store.plan import PLAN_NAME, Plan, read_plan, write_plan
from perfkit.vocabulary import ManifestStatus

if TYPE_CHECKING:
    from perfkit.run.testbed import Testbed

_RUN_OVERHEAD_S = {"wrk": 0.3, "wrk2": 0.3, "locust": 4.0}
_RESTART_S = 1.0


class SweepError(PerfkitError):
    """The experiment directory cannot be swept (changed design, locked, ...)."""


#: in OUT/.perfkit/: the testbed this sweep started (state folder, start time)
OWNED_TESTBED = "testbed.json"


@dataclasses.dataclass(frozen=True)
class TestbedPlace:
    """Where the sweep's testbed runs, when not where the design says: its port (default the
    design's target.testbed.port), its upstream's port (default port + 1000) and its state
    folder (default $PERFKIT_TESTBED_DIR or /tmp/perfkit-testbed-<uid>)."""

    port: int | None = None
    upstream_port: int | None = None
    state_dir: str | None = None


def read_json_file(path: Path) -> dict:
    try:
        found = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return found if isinstance(found, dict) else {}


@dataclasses.dataclass
class SweepResult:
    """What one invocation did."""

    path: Path
    total: int
    done_before: int
    ran: int
    statuses: dict[str, int]
    restarts: int
    aborted_moved: list[str]
    stale_killed: int
    wall_s: float


def experiment_dir(yaml_path: Path, out: str | None) -> Path:
    """``--out``, else the YAML's directory when it is named experiment.yaml, else ./STEM."""
    if out:
        return Path(out)
    if yaml_path.name == "experiment.yaml":
        return yaml_path.parent
    return Path.cwd() / yaml_path.stem


class Sweep:
    """One experiment directory: prepare (plan, resume checks), then run what is left."""

    def __init__(self, yaml_path: str | os.PathLike, out: str | None = None,
                 err: TextIO | None = None, progress: bool = True,
                 testbed: TestbedPlace | None = None):
        self.place = testbed or TestbedPlace()
        self.yaml_path = Path(yaml_path)
        data, self.yaml_bytes = ex.load_yaml(self.yaml_path)
        self.spec = ex.validate(data, str(self.yaml_path), self.yaml_path.resolve().parent,
                                profile_check=_profile_check())
        self.dir = experiment_dir(self.yaml_path, out)
        self.runs_dir = self.dir / "runs"
        self.meta = self.dir / ".perfkit"
        self.err = err
        self.progress = progress
        self.plan = ex.make_plan(self.spec, self.yaml_bytes)
        if "url" in self.spec["target"] and self.place != TestbedPlace():
            raise SweepError(f"{self.yaml_path}: target is a url, so perfkit starts no testbed: "
                             "--port, --upstream-port and --state-dir do not apply")
        self._testbed: Testbed | None = None
        self._server: ServerContext | None = None
        self._profile_up: str | None = None
        self._warm_blocks: set[int] = set()
        self.restarts = 0

    # -- preparation ----------------------------------------------------------------------
    def check_plan(self) -> None:
        """Refuse to resume when experiment.yaml (or the plan derived from it) changed."""
        plan_path = self.dir / PLAN_NAME
        if plan_path.exists():
            old = read_plan(plan_path)
            if old.get("experiment_sha256") != self.plan["experiment_sha256"]:
                raise SweepError(
                    f"{self.yaml_path} changed since {plan_path} was made (sha256 "
                    f"{old.get('experiment_sha256', '?')[:12]} -> "
                    f"{self.plan['experiment_sha256'][:12]}): restore it, or sweep the new "
                    "design into a new --out directory")
            if [r["run_id"] for r in old["runs"]] != [r["run_id"] for r in self.plan["runs"]]:
                raise SweepError(f"{plan_path} does not match the plan of {self.yaml_path}")
        copy = self.dir / DESIGN_NAME
        if copy.exists() and copy.resolve() != self.yaml_path.resolve():
            if copy.read_bytes() != self.yaml_bytes:
                raise SweepError(f"{copy} differs from {self.yaml_path}: this directory holds "
                                 "another experiment; use a new --out")

    def write_plan(self) -> None:
        self.dir.mkdir(parents=True, exist_ok=True)
        copy = self.dir / DESIGN_NAME
        if not copy.exists():
            write_design(copy, self.yaml_bytes)
        plan_path = self.dir / PLAN_NAME
        if not plan_path.exists():
            write_plan(plan_path, Plan(**self.plan, created_utc=utc_now()))

    @contextlib.contextmanager
    def locked(self) -> Iterator[None]:
        """One sweep per directory at a time (the lock dies with its process, even kill -9)."""
        self.meta.mkdir(parents=True, exist_ok=True)
        with contextlib.ExitStack() as stack:
            try:
                stack.enter_context(flock(self.meta / "lock", blocking=False))
            except BlockingIOError as exc:
                raise SweepError(f"another perfkit sweep is running in {self.dir}") from exc
            yield

    def recover(self) -> tuple[int, list[str]]:
        """Kill stale groups and move half-written runs aside; returns (killed, moved)."""
        killed = kill_stale(StateFile(self.meta / "procs.json"))
        moved = []
        if self.runs_dir.is_dir():
            for tmp in sorted(self.runs_dir.glob(f"{TMP_PREFIX}*")):
                moved.append(self._move_aside(tmp, ManifestStatus.ABORTED,
                                                "interrupted before it ended"))
        self.event("recovered", 0, killed=len(killed), moved=moved)
        return len(killed), moved

    def _move_aside(self, path: Path, where: str, reason: str) -> str:
        name = path.name.removeprefix(TMP_PREFIX)
        dest_dir = self.runs_dir / f".{where}"
        dest_dir.mkdir(parents=True, exist_ok=True)
        dest = dest_dir / f"{name}@{time.strftime('%Y%m%dT%H%M%S')}"
        while dest.exists():
            dest = dest.with_name(dest.name + "+")
        os.rename(path, dest)
        write_json(dest / f"{where}.json", {"run_id": name, "reason": reason,
                                            "moved_utc": utc_now()})
        return dest.name

    def _abort(self, run_id: str) -> None:
        for path in (self.runs_dir / run_id, self.runs_dir / f"{TMP_PREFIX}{run_id}"):
            if path.exists():
                self._move_aside(path, ManifestStatus.ABORTED, "interrupted (Ctrl-C)")

    def completed(self) -> dict[str, str]:
        """run_id -> status of the runs already in runs/ (each has its final manifest)."""
        out: dict[str, str] = {}
        if not self.runs_dir.is_dir():
            return out
        planned = {r["run_id"] for r in self.plan["runs"]}
        for d in self.runs_dir.iterdir():
            if d.name.startswith(".") or not d.is_dir():
                continue
            if d.name not in planned:
                self._warn(f"{d} is not in the plan; it is left alone")
                continue
            try:
                out[d.name] = read_run_manifest(d / MANIFEST_NAME).get("status") or "unknown"
            except (OSError, PerfkitError):
                out[d.name] = "unknown"
        return out

    def retry_failed(self, done: dict[str, str]) -> dict[str, str]:
        """Move failed/killed runs to runs/.failed/ so they run again."""
        for run_id, status in list(done.items()):
            if status != ManifestStatus.COMPLETE:
                self._move_aside(self.runs_dir / run_id, ManifestStatus.FAILED,
                                 f"retried ({status})")
                del done[run_id]
        return done

    # -- running --------------------------------------------------------------------------
    def run(self, retry_failed: bool = False) -> SweepResult:
        t0 = time.monotonic()
        self.check_plan()
        with self.locked():
            self.write_plan()
            killed, moved = self.recover()
            done = self.completed()
            if retry_failed:
                done = self.retry_failed(done)
            pending = [r for r in self.plan["runs"] if r["run_id"] not in done]
            statuses: dict[str, int] = {}
            total = len(self.plan["runs"])
            progress = Progress(self.err if self.progress else None,
                                f"sweep {self.spec['name']}", total, done=len(done),
                                bar=not progress_disabled(self.err))
            state = StateFile(self.meta / "procs.json")
            try:
                for i, entry in enumerate(pending):
                    started = time.monotonic()
                    try:
                        outcome = self._run_one(cast(dict, entry), state)
                    except KeyboardInterrupt:
                        self._abort(entry["run_id"])
                        raise
                    statuses[outcome.status] = statuses.get(outcome.status, 0) + 1
                    self.event("after-run", entry["seq"], status=outcome.status)
                    progress.step(entry["run_id"], outcome.status, time.monotonic() - started)
                    if self.spec["pause_s"] and i + 1 < len(pending):
                        time.sleep(self.spec["pause_s"])
            finally:
                progress.close()
                self._stop_testbed()
        return SweepResult(self.dir, total, len(done), sum(statuses.values()), statuses,
                           self.restarts, moved, killed, time.monotonic() - t0)

    def _run_one(self, entry: dict, state: StateFile):
        server = self._server_for(entry)
        if self.spec["warmup"]["kind"] == "runs" and entry["block"] not in self._warm_blocks:
            for k in range(self.spec["warmup"]["runs"]):
                self._warmup(entry, server, state, f"b{entry['block']:02d}-{k + 1}",
                             self.spec["duration_s"])
            self._warm_blocks.add(entry["block"])
        elif self.spec["warmup"]["kind"] == "time":
            self._warmup(entry, server, state, entry["run_id"], self.spec["warmup"]["seconds"])
        self.event("before-run", entry["seq"], run_id=entry["run_id"])
        spec = self._spec(entry, server, entry["run_id"], self.spec["duration_s"])

        def on_event(name: str, _tmp: Path) -> None:
            self.event(name, entry["seq"], run_id=entry["run_id"])

        return execute(spec, self.runs_dir, server=server, state=state, err=self.err,
                       progress=False, on_event=on_event)

    def _warmup(self, entry: dict, server: ServerContext, state: StateFile, name: str,
                seconds: float) -> None:
        wdir = self.runs_dir / ".warmup"
        old = wdir / name
        if old.exists():
            shutil.rmtree(old)
        spec = self._spec(entry, server, name, seconds)
        spec = dataclasses.replace(spec, bookkeeping={**spec.bookkeeping, "warmup_run": True})
        self.event("warmup", entry["seq"], run_id=name)
        execute(spec, wdir, server=server, state=state, err=None, progress=False)

    def _spec(self, entry: dict, server: ServerContext, run_id: str, seconds: float) -> RunSpec:
        s, opt, load = self.spec, self.spec["options"], entry["load"]
        url = server.info.url_for(s["target"]["path"]) if server.info is not None \
            else s["target"]["url"]
        book = {"experiment": s["name"], "repetition": entry["repetition"],
                "block": entry["block"], "order": entry["seq"],
                "position_in_block": entry["position_in_block"], "cell": entry["cell"],
                "plan_sha256": self.plan["experiment_sha256"],
                "server_runs_since_start": self._runs_since_start,
                "warmup": s["warmup"]}
        self._runs_since_start += 1
        return RunSpec(
            tool=s["tool"], url=url, duration_s=seconds, connections=load.get("connections"),
            threads=load.get("threads"), rate_rps=load.get("rate"), users=load.get("users"),
            spawn_rate=load.get("spawn_rate"), processes=load.get("processes"),
            latency=opt.get("latency", True), uncorrected=opt.get("uncorrected", False),
            request_timeout_s=opt.get("timeout_s"), headers=tuple(opt.get("headers", ())),
            script=opt.get("script"), locustfile=opt.get("locustfile"),
            user_classes=tuple(opt.get("user_classes", ())),
            reset_stats=opt.get("reset_stats", True), extra_args=tuple(opt.get("args", ())),
            wrk2_path=opt.get("wrk2"), taskset=s["taskset"], grace_s=s["grace_s"],
            run_id=run_id, stub_status_url=s["target"].get("stub_status"),
            factors=entry["factors"], bookkeeping=book)

    _runs_since_start = 0

    def _server_for(self, entry: dict) -> ServerContext:
        target = self.spec["target"]
        if "url" in target:
            if self._server is None:
                self._server = ServerContext.for_url(target["url"])
            return self._server
        profile = entry["profile"]
        if (self._server is None or profile != self._profile_up
                or self.spec["restart"] == "per-run"
                or cast("Testbed", self._testbed).status() is None):  # up, with the server
            self._start_testbed(profile, self.place.port or target["testbed"]["port"],
                                entry["seq"])
        assert self._server is not None  # _start_testbed set it
        return self._server

    def _start_testbed(self, profile: str, port: int, seq: int) -> None:
        from perfkit.run.testbed import Testbed

        if self._testbed is None:
            self._testbed = Testbed(self.place.state_dir)
            self._refuse_foreign_testbed()
        self.event("testbed-up", seq, profile=profile)
        variables = ({"upstream_port": self.place.upstream_port}
                     if self.place.upstream_port else None)
        info = self._testbed.up(profile=profile, port=port, variables=variables)
        write_json(self.meta / OWNED_TESTBED, {"state_dir": self._testbed.state_dir,
                                               "started_utc": info.started_utc})
        self._server = ServerContext(info.base_url, self._testbed, info)
        self._profile_up = profile
        self._runs_since_start = 0
        self.restarts += 1

    def _refuse_foreign_testbed(self) -> None:
        """A testbed this sweep did not start (``perfkit testbed up``, another sweep) is never
        restarted or stopped by it; one its own earlier, killed invocation started is."""
        assert self._testbed is not None  # _start_testbed's, just made
        running = self._testbed.status()
        if running is None:
            return
        owned = read_json_file(self.meta / OWNED_TESTBED)
        if owned.get("started_utc") == running.started_utc \
                and owned.get("state_dir") == self._testbed.state_dir:
            return
        self._testbed = None
        raise SweepError(f"a testbed this sweep did not start is running in "
                         f"{running.state_dir} ({running.base_url}, profile {running.profile}, "
                         f"started {running.started_utc}); the sweep restarts and stops its own: "
                         "stop that one (perfkit testbed down), or give the sweep another "
                         "--state-dir and --port")

    def _stop_testbed(self) -> None:
        if self._testbed is not None:
            self._testbed.down()
            (self.meta / OWNED_TESTBED).unlink(missing_ok=True)
            self.event("testbed-down", 0)
            self._testbed = None

    # -- log ------------------------------------------------------------------------------
    def event(self, event: str, seq: int, **fields: Any) -> None:
        """Append to .perfkit/events.log (fsynced: the log outlives a kill -9)."""
        self.meta.mkdir(parents=True, exist_ok=True)
        line = json.dumps({"utc": utc_now(), "pid": os.getpid(), "event": event, "seq": seq,
                           **fields})
        with open(self.meta / "events.log", "a", encoding="utf-8") as fh:
            fh.write(line + "\n")
            fh.flush()
            os.fsync(fh.fileno())

    def _warn(self, text: str) -> None:
        if self.err is not None:
            print(f"perfkit: warning: {text}", file=self.err)


def _profile_check():
    try:
        from perfkit.run.profiles import parse_profile
    except ImportError:  # pragma: no cover - the testbed ships with perfkit
        return None
    return parse_profile


def estimate_s(sweep: Sweep) -> float:
    """Rough wall time of the whole plan: runs, warm-ups, pauses and testbed restarts."""
    s = sweep.spec
    overhead = _RUN_OVERHEAD_S[s["tool"]]

    def ramp(load: dict) -> float:
        users = load.get("users")
        return 0.0 if not users else -(-users // (load.get("spawn_rate") or users))

    total = 0.0
    for run in sweep.plan["runs"]:
        total += s["duration_s"] + ramp(run["load"]) + overhead + (s["pause_s"] or 0)
        if s["warmup"]["kind"] == "time":
            total += s["warmup"]["seconds"] + ramp(run["load"]) + overhead
    if s["warmup"]["kind"] == "runs":
        total += s["repetitions"] * s["warmup"]["runs"] * (s["duration_s"] + overhead)
    return total + ex.restarts_in(sweep.plan, s["restart"]) * _RESTART_S
