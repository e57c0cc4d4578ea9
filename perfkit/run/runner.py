"""One run of wrk, wrk2 or Locust: verbatim output, CPU samples and a manifest.

:func:`execute` writes everything into ``OUT/.tmp-<run_id>/`` and renames it to
``OUT/<run_id>/`` when the run has ended, whatever its status (``complete``, ``failed`` or
``killed``): a run that failed is kept, never silently dropped, and a directory without the
``.tmp-`` prefix is always whole. A run cut short by ``kill -9`` of perfkit itself stays under
its hidden ``.tmp-`` name, which no reader counts (``perfkit sweep`` moves it to
``runs/.aborted/`` when it resumes).
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import os
import re
import sys
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, TextIO, cast

import psutil

from perfkit import __version__, formatting
from perfkit._fsutil import write_json_atomic
from perfkit.ingest.counters import KERNEL_COLUMNS, STUB_STATUS_COLUMNS
from perfkit.run import failure, hostinfo
from perfkit.run.counters import Counters
from perfkit.run.procs import Child, CpuSampler, StateFile, process_tree
from perfkit.run.server import ServerContext
from perfkit.run.spec import (
    RunError,
    RunSpec,
    build_argv,
    check_url,
    cpu_list,
    find_tool,
    generator_cores,
    new_run_id,
    parse_taskset,
    utc_now,
)
from perfkit.store.manifest import MANIFEST_NAME, SCHEMA_VERSION, RunManifest, write_manifest
from perfkit.vocabulary import ManifestStatus
from perfkit.warning import Code, Warn

#: a generator using more than this share of the cores it can use is the bottleneck
GENERATOR_BOTTLENECK_SHARE = 0.9
SAMPLE_INTERVAL_S = 0.5
TMP_PREFIX = ".tmp-"

__all__ = ["SCHEMA_VERSION", "RunError", "RunOutcome", "RunSpec", "execute", "tool_version"]


@dataclasses.dataclass(frozen=True)
class RunOutcome:
    """Where a run landed and how it ended (``status``: complete, failed or killed)."""

    run_id: str
    path: Path
    status: str
    exit_code: int | None
    manifest: Mapping[str, Any]


_VERSIONS: dict[tuple[str, ...], str | None] = {}


def tool_version(tool: str, prefix: Sequence[str]) -> str | None:
    """``wrk -v`` / ``locust --version`` first line, cached per executable."""
    key = (tool, *prefix)
    if key not in _VERSIONS:
        _VERSIONS[key] = (hostinfo.locust_version(prefix) if tool == "locust"
                          else hostinfo.wrk_version(prefix[0]))
    return _VERSIONS[key]


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def file_digests(directory: Path) -> dict[str, dict[str, Any]]:
    """sha256 and size of every file under ``directory`` except the manifest itself."""
    out = {}
    for path in sorted(p for p in directory.rglob("*") if p.is_file()):
        rel = path.relative_to(directory).as_posix()
        if rel != MANIFEST_NAME and not rel.endswith(".part"):
            out[rel] = {"sha256": sha256_file(path), "bytes": path.stat().st_size}
    return out


def write_json(path: Path, data: Mapping[str, Any]) -> None:
    """Write JSON atomically (a reader never sees half a file)."""
    write_json_atomic(path, data)


def _isatty(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


def _in_notebook() -> bool:
    return "ipykernel" in sys.modules


def progress_disabled(err: TextIO | None) -> bool:
    """No bar when ``PERFKIT_NO_PROGRESS=1``, or when ``err`` is neither a terminal nor the
    output of a Jupyter kernel (where ``tqdm.auto`` draws its notebook widget)."""
    if formatting.progress_disabled() or err is None:
        return True
    return not (_isatty(err) or (_in_notebook() and err is sys.stderr))


def make_bar(err: TextIO | None, show: bool, **kwargs: Any):
    from tqdm.auto import tqdm

    tqdm.monitor_interval = 0  # no monitor thread: children are forked from this process
    return tqdm(file=err, disable=not show or progress_disabled(err), **kwargs)


@contextlib.contextmanager
def _pinned(pids: Sequence[int], cpus: str | None) -> Iterator[dict | None]:
    """Pin the server's processes (and their threads' future children) to ``cpus``."""
    if not cpus or not pids:
        yield None
        return
    wanted = cpu_list(cpus)
    before: dict[int, list[int]] = {}
    for p in process_tree(pids):
        with contextlib.suppress(psutil.Error):
            before[p.pid] = p.cpu_affinity()
            p.cpu_affinity(wanted)
    try:
        yield {"server_cpus": cpus, "pinned_pids": sorted(before)}
    finally:
        for pid, cpus_before in before.items():
            with contextlib.suppress(psutil.Error):
                psutil.Process(pid).cpu_affinity(cpus_before)


def execute(spec: RunSpec, out_dir: str | os.PathLike, *, server: ServerContext | None = None,
            state: StateFile | None = None, err: TextIO | None = None, progress: bool = True,
            on_event: Callable[[str, Path], None] | None = None,
            report_status: bool = True) -> RunOutcome:
    """Run ``spec`` once and keep everything it printed, with a manifest.

    Parameters
    ----------
    spec : RunSpec
        The run. Its ``url`` must be loopback unless ``spec.allow_remote``.
    out_dir : path
        The run lands in ``out_dir/<run_id>/``.
    server : ServerContext, optional
        The server under load (testbed profile, config, pids); found from the URL when None.
    state : StateFile, optional
        Where the process group is recorded while it runs (for cleanup after ``kill -9``).
    err : text stream, optional
        Progress bar and warnings.
    on_event : callable, optional
        Called as ``on_event(name, tmp_dir)`` at ``spawned``, ``exited`` and ``written``.
    report_status : bool
        Print a run that did not complete as a warning on ``err`` (False: the caller reports
        ``outcome.status`` itself; the other warnings are still printed).

    Returns
    -------
    RunOutcome
    """
    check_url(spec.url, spec.allow_remote)
    gen_cpus, server_cpus = parse_taskset(spec.taskset)
    prefix = find_tool(spec)
    argv = build_argv(spec, prefix)
    if server is None:
        server = ServerContext.for_url(spec.url)
    command = list(argv)
    if gen_cpus:
        command = ["taskset", "-c", gen_cpus, *command]
    command = server.wrap(command)
    version = tool_version(spec.tool, prefix)

    run_id = spec.run_id or new_run_id(spec.tool)
    out = Path(out_dir)
    final = out / run_id
    if final.exists():
        raise RunError(f"{final} already exists: each run needs a new run id")
    tmp = out / f"{TMP_PREFIX}{run_id}"
    tmp.mkdir(parents=True, exist_ok=False)
    manifest = _base_manifest(spec, run_id, argv, command, version, server)
    manifest["taskset"] = ({"generator_cpus": gen_cpus, "server_cpus": server_cpus}
                           if spec.taskset else None)
    write_manifest(tmp / MANIFEST_NAME, manifest)

    cores = generator_cores(spec, gen_cpus)
    total_s = spec.duration_s + spec.ramp_s
    deadline_s = total_s + spec.grace_s
    interrupted = False
    # everything that costs CPU (the bar imports tqdm) happens before the load starts
    bar = make_bar(err, progress, total=round(total_s), desc=f"{spec.tool} {run_id}",
                   unit="s", leave=False, bar_format="{desc}: {bar} {n:.0f}/{total} s")
    counters = Counters(server, spec.url, spec.tool, spec.stub_status_url,
                        disabled=server.no_counters)
    with open(tmp / "stdout.txt", "wb") as so, open(tmp / "stderr.txt", "wb") as se:
        counters.before(tmp)
        manifest["start_utc"] = utc_now()
        t0 = time.monotonic()
        try:
            child = Child(command, so, se, cwd=tmp, state=state)
        except OSError as exc:  # e.g. taskset or ip missing: keep the attempt, say why
            bar.close()
            manifest["counters"] = counters.after(tmp)
            manifest.update({"end_utc": utc_now(), "exit_code": None,
                             "status": ManifestStatus.FAILED,
                             "status_reason": f"could not start {command[0]}: {exc.strerror}"})
            manifest["files"] = {}
            write_manifest(tmp / MANIFEST_NAME, manifest)
            os.rename(tmp, final)
            raise RunError(f"{run_id}: could not start {command[0]}: {exc.strerror}") from exc
        if on_event:
            on_event("spawned", tmp)
        sampler = CpuSampler([child.pid], server.pids())
        dist = None
        try:
            with server.disturbance() as dist, _pinned(server.pids(), server_cpus) as pin:
                manifest["taskset"] = (None if not spec.taskset
                                       else {**cast(dict, manifest["taskset"]), **(pin or {})})
                rc = _wait(child, sampler, bar, t0, deadline_s)
        except KeyboardInterrupt:
            interrupted = True
            child.kill_group()
            rc = child.proc.returncode
        finally:
            bar.close()
            child.close()
            manifest["counters"] = counters.after(tmp)  # the generator's group has exited
        wall_s = time.monotonic() - t0
        manifest["end_utc"] = utc_now()
    status, reason = _status(spec, child, rc, tmp, interrupted)
    manifest["disturbance"] = _disturbance(dist)
    if spec.tool == "locust":
        cast(dict, manifest["locust"])["all_users_spawned_at"] = _spawned_at(tmp / "stderr.txt")
    manifest.update({"exit_code": rc, "status": status, "status_reason": reason,
                     "wall_s": round(wall_s, 3)})
    manifest["cpu"] = sampler.summary(cores)
    (tmp / "cpu.csv").write_text(sampler.csv_text(), encoding="utf-8")
    manifest["warnings"] = _warnings(manifest, status, reason)
    manifest["files"] = file_digests(tmp)
    write_manifest(tmp / MANIFEST_NAME, manifest)
    if on_event:
        on_event("written", tmp)
    os.rename(tmp, final)
    # the status warning comes first; a caller that reports the status itself leaves it out
    shown = manifest["warnings"][0 if report_status or status == ManifestStatus.COMPLETE else 1:]
    for warning in shown:
        if err is not None:
            print(f"perfkit: warning: {run_id}: {warning['text']}", file=err)
    if interrupted:
        raise KeyboardInterrupt
    return RunOutcome(run_id, final, status, rc, manifest)


_SPAWNED = re.compile(rb"^\[([^\]]+?)\] [^:]*: All users spawned", re.MULTILINE)


def _spawned_at(stderr: Path) -> str | None:
    """Locust's log time (host local time, as printed) of "All users spawned": the end of
    the ramp-up, where --reset-stats starts the steady-state statistics."""
    try:
        match = _SPAWNED.search(stderr.read_bytes())
    except OSError:
        return None
    return None if match is None else match.group(1).decode("ascii", "replace")


def _disturbance(record: Any) -> dict | None:
    if record is None:
        return None
    return {"kind": "reload (SIGHUP to the nginx master)", "interval_s": record.interval_s,
            "count": record.count, "sent_at_s": list(record.sent_at_s),
            "errors": list(record.errors)}


def _wait(child: Child, sampler: CpuSampler, bar, t0: float, deadline_s: float) -> int | None:
    """Sample CPU and move the bar until the child exits or the hard deadline passes."""
    next_tick = SAMPLE_INTERVAL_S
    while True:
        elapsed = time.monotonic() - t0
        if elapsed >= deadline_s:
            child.kill_group()
            return child.proc.returncode
        rc = child.wait(min(next_tick, deadline_s) - elapsed if next_tick > elapsed else 0.0)
        if rc is not None:
            return rc
        sampler.sample()
        bar.n = min(round(time.monotonic() - t0), bar.total or 0)
        bar.refresh()
        next_tick += SAMPLE_INTERVAL_S


def _status(spec: RunSpec, child: Child, rc: int | None, tmp: Path,
            interrupted: bool) -> tuple[ManifestStatus, str | None]:
    if interrupted:
        return ManifestStatus.KILLED, "interrupted (Ctrl-C)"
    if child.killed_by_us:
        return ManifestStatus.KILLED, (f"hard timeout: still running {spec.grace_s:g} s after its "
                          f"{spec.duration_s + spec.ramp_s:g} s; process group killed")
    if rc is not None and rc < 0:
        return ManifestStatus.KILLED, f"killed by signal {-rc}"
    if rc == 0:
        return ManifestStatus.COMPLETE, None
    assert rc is not None  # None only when interrupted or killed by us (above)
    # Locust: exit 1, a request failed
    return ManifestStatus.FAILED, failure.reason(spec.tool, rc, tmp)


def _warnings(manifest: Mapping[str, Any], status: str, reason: str | None
              ) -> list[dict[str, Any]]:
    """The manifest's ``warnings``: coded, each :meth:`perfkit.warning.Warn.to_dict`."""
    out = []
    if status != ManifestStatus.COMPLETE:
        out.append(Warn(Code.RUN_ENDED, status=status, reason=reason))
    share = manifest["cpu"].get("generator_cpu_share")
    if share is not None and share > GENERATOR_BOTTLENECK_SHARE:
        out.append(Warn(Code.GENERATOR_BOTTLENECK, share=share,
                        cores=manifest["cpu"]["generator_cores"]))
    counted = _counters_warning(manifest)
    if counted:
        out.append(counted)
    return [w.to_dict() for w in out]


def _counters_warning(manifest: Mapping[str, Any]) -> Warn | None:
    """A run against the testbed whose counters (stub_status, the kernel's) could not be read
    says so; so does one against a server that looks like a testbed whose state perfkit could
    not read. (Another server's counters are recorded only when asked: --stub-status.)"""
    server = manifest.get("server") or {}
    if server.get("testbed_unread"):
        return Warn(Code.TESTBED_UNREAD, reason=server["testbed_unread"])
    if not server.get("testbed"):
        return None
    missing = (manifest.get("counters") or {}).get("missing") or {}
    why = {}
    for group, columns in (("stub_status", STUB_STATUS_COLUMNS), ("kernel", KERNEL_COLUMNS)):
        reasons = [missing[c] for c in columns if c in missing]
        if reasons:
            why[group] = reasons[0]
    if not why:
        return None
    return Warn(Code.COUNTERS_UNREAD, why=tuple(why.items()))


def _base_manifest(spec: RunSpec, run_id: str, argv: Sequence[str], command: Sequence[str],
                   version: str | None, server: ServerContext) -> RunManifest:
    load: dict[str, Any] = {"duration_s": spec.duration_s}
    if spec.tool in ("wrk", "wrk2"):
        load.update(connections=spec.connections, threads=spec.threads)
        if spec.tool == "wrk2":
            load["rate_rps"] = spec.rate_rps
    else:
        load.update(users=spec.users, spawn_rate=spec.effective_spawn_rate,
                    processes=spec.processes, ramp_s=spec.ramp_s,
                    run_time_s=spec.duration_s + spec.ramp_s)
    book = dict(spec.bookkeeping)
    return {
        "schema_version": SCHEMA_VERSION,
        "perfkit_version": __version__,
        "run_id": run_id,
        "tool": spec.tool,
        "tool_version": version,
        "tool_path": argv[0],
        "argv": list(argv),
        "command": list(command),
        "url": spec.url,
        "factors": dict(spec.factors),
        "load": load,
        "experiment": book.pop("experiment", None),
        "repetition": book.pop("repetition", None),
        "block": book.pop("block", None),
        "order": book.pop("order", None),
        **book,  # type: ignore[typeddict-item]  # spec.bookkeeping's keys are RunManifest's
        "status": "running",
        "host": hostinfo.host(),
        "sysctls": hostinfo.sysctls(),
        "server": server.describe(),
        "locust": ({"reset_stats": spec.reset_stats, "ramp_s": spec.ramp_s,
                    "steady_state": "statistics reset when every user has spawned "
                                    "(--reset-stats); -t covers ramp + duration"}
                   if spec.tool == "locust" else None),
    }
