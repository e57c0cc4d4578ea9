"""Child processes that never outlive perfkit: process groups, parent-death signal, watchdog.

Every load generator runs in its own session (so its own process group, ``pgid == pid``). Three
layers make sure nothing keeps loading the server after perfkit is gone, even after ``kill -9``:

1. ``PR_SET_PDEATHSIG`` (Linux ``prctl(2)``, via ctypes): the kernel sends SIGKILL to the group
   leader the moment its parent dies. The setting is not inherited across ``fork``, so it does
   not reach Locust's forked workers (``--processes``).
2. A watchdog process per child: it sleeps on a pidfd of its parent (perfkit) and kills the
   whole group the moment perfkit disappears, which takes care of forked grandchildren.
3. A state file listing every live group (pgid, pid, create time, command line). The next
   ``perfkit sweep`` reads it and kills any group still running, after checking that the
   process really is the one recorded (same start time and command line), so a recycled pid
   is never killed by mistake.
"""

from __future__ import annotations

import contextlib
import ctypes
import dataclasses
import json
import os
import select
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import IO

import psutil

from perfkit._fsutil import write_json_atomic

PR_SET_PDEATHSIG = 1
#: seconds between a polite SIGTERM and SIGKILL when a group is stopped
TERM_GRACE_S = 2.0

# The watchdog starts (and says "ready") before the load does, so its interpreter's start-up
# does not compete with the load; it then reads the group id on stdin. It sleeps on a pidfd
# of its parent (readable when the parent exits), waking every few seconds only to leave once
# the group is gone; Child.close() also stops it. Without pidfd_open (Linux < 5.3) it polls.
# Either way it costs the measured box no CPU to speak of.
_WATCHDOG = r"""
import os, select, signal, sys, time
parent = int(sys.argv[1])
sys.stdout.write("ready\n")
sys.stdout.flush()
line = sys.stdin.readline()  # the group to guard, once it exists; EOF: nothing to guard
if not line.strip():
    sys.exit(0)
pgid = int(line)
try:
    fd = os.pidfd_open(parent)
except (AttributeError, OSError):
    fd = None
while True:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        sys.exit(0)
    except PermissionError:
        pass
    if os.getppid() != parent:
        try:
            os.killpg(pgid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        sys.exit(0)
    if fd is None:
        time.sleep(0.2)
    else:
        select.select([fd], [], [], 5.0)
"""


def _libc_prctl():
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl
    except (OSError, AttributeError):  # pragma: no cover - not Linux
        return None


_PRCTL = _libc_prctl()


def _make_preexec(parent_pid: int):
    """A ``preexec_fn`` that asks for SIGKILL when the parent dies (race-free)."""
    prctl = _PRCTL

    def preexec() -> None:  # runs in the child between fork and exec
        if prctl is not None:
            prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        if os.getppid() != parent_pid:  # the parent died before prctl took effect
            os._exit(137)

    return preexec


@dataclasses.dataclass(frozen=True)
class GroupRecord:
    """What identifies a running process group safely: pid, pgid, start time and argv."""

    pid: int
    pgid: int
    create_time: float
    cmdline: tuple[str, ...]

    def to_json(self) -> dict:
        return {"pid": self.pid, "pgid": self.pgid, "create_time": self.create_time,
                "cmdline": list(self.cmdline)}

    @classmethod
    def from_json(cls, data: dict) -> GroupRecord:
        return cls(int(data["pid"]), int(data["pgid"]), float(data["create_time"]),
                   tuple(data["cmdline"]))


class StateFile:
    """A JSON file holding the process groups a sweep currently runs (written atomically)."""

    def __init__(self, path: Path):
        self.path = Path(path)

    def read(self) -> list[GroupRecord]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (FileNotFoundError, json.JSONDecodeError):
            return []
        return [GroupRecord.from_json(d) for d in data.get("groups", [])]

    def write(self, groups: Sequence[GroupRecord]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        write_json_atomic(self.path, {"groups": [g.to_json() for g in groups]}, indent=1)

    def add(self, record: GroupRecord) -> None:
        self.write([g for g in self.read() if g.pgid != record.pgid] + [record])

    def remove(self, pgid: int) -> None:
        self.write([g for g in self.read() if g.pgid != pgid])


class Child:
    """A load generator running in its own process group, bounded in time.

    Parameters
    ----------
    argv : sequence of str
        The command; never a shell string.
    stdout, stderr : binary file objects
        Where the bytes go, verbatim.
    cwd : path, optional
        Working directory of the child.
    state : StateFile, optional
        Records the group while it runs (for cleanup after ``kill -9``).
    watchdog : bool
        Start the watchdog process that kills the group when perfkit dies.
    """

    def __init__(self, argv: Sequence[str], stdout: IO[bytes], stderr: IO[bytes],
                 cwd: str | os.PathLike | None = None, env: dict | None = None,
                 state: StateFile | None = None, watchdog: bool = True):
        self.argv = [str(a) for a in argv]
        self.state = state
        self.killed_by_us = False
        self._watchdog = _start_watchdog() if watchdog else None
        try:
            self.proc = subprocess.Popen(
                self.argv, stdin=subprocess.DEVNULL, stdout=stdout, stderr=stderr, cwd=cwd,
                env=env, start_new_session=True, preexec_fn=_make_preexec(os.getpid()),
                close_fds=True)
        except BaseException:
            if self._watchdog is not None:
                _release_watchdog(self._watchdog, None)
                self._watchdog.wait()
            raise
        self.pgid = self.proc.pid
        if self._watchdog is not None:
            _release_watchdog(self._watchdog, self.pgid)
        self.record = _record_of(self.proc.pid, self.argv)
        if state is not None:
            state.add(self.record)
        self._pidfd = _pidfd(self.proc.pid)

    @property
    def pid(self) -> int:
        return self.proc.pid

    def poll(self) -> int | None:
        return self.proc.poll()

    def wait(self, timeout_s: float | None = None) -> int | None:
        """Wait up to ``timeout_s`` seconds; the exit status, or None if still running.

        With a pidfd this sleeps in the kernel until the child exits or the time is up (no
        polling: :meth:`subprocess.Popen.wait` would wake every 50 ms while the load runs).
        """
        if timeout_s is None or self._pidfd is None:
            try:
                return self.proc.wait(timeout=timeout_s)
            except subprocess.TimeoutExpired:
                return None
        rc = self.proc.poll()
        if rc is None:
            select.select([self._pidfd], [], [], max(timeout_s, 0.0))
            rc = self.proc.poll()
        return rc

    def kill_group(self, grace_s: float = TERM_GRACE_S) -> None:
        """SIGTERM the whole group, then SIGKILL what is left after ``grace_s`` seconds."""
        self.killed_by_us = True
        kill_group(self.pgid, grace_s)
        self.proc.wait()

    def close(self) -> None:
        """Reap the child and its watchdog; remove the group from the state file."""
        if self.proc.poll() is None:
            self.kill_group()
        # whatever the leader forked (Locust workers) must not survive it
        if group_alive(self.pgid):
            kill_group(self.pgid, grace_s=1.0)
        if self._watchdog is not None:
            if self._watchdog.poll() is None:  # its group is gone: it has nothing left to do
                self._watchdog.terminate()
            try:
                self._watchdog.wait(timeout=2)
            except subprocess.TimeoutExpired:
                self._watchdog.kill()
                self._watchdog.wait()
        if self._pidfd is not None:
            os.close(self._pidfd)
            self._pidfd = None
        if self.state is not None:
            self.state.remove(self.pgid)

    def __enter__(self) -> Child:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _record_of(pid: int, argv: Sequence[str]) -> GroupRecord:
    try:
        p = psutil.Process(pid)
        create = p.create_time()
    except psutil.Error:
        create = time.time()
    return GroupRecord(pid=pid, pgid=pid, create_time=create, cmdline=tuple(argv))


def _pidfd(pid: int) -> int | None:
    """A pidfd of ``pid`` (readable once it exits), or None where Linux or Python lack it."""
    try:
        return os.pidfd_open(pid)
    except (AttributeError, OSError):
        return None


def _start_watchdog() -> subprocess.Popen:
    """Start a watchdog and wait until its interpreter is up (it then waits for a group)."""
    proc = subprocess.Popen(
        [sys.executable, "-S", "-c", _WATCHDOG, str(os.getpid())],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
        start_new_session=True, close_fds=True)
    assert proc.stdout is not None and proc.stdin is not None  # both are pipes
    proc.stdout.readline()  # "ready" (or EOF if it could not start: it then guards nothing)
    proc.stdout.close()
    return proc


def _release_watchdog(proc: subprocess.Popen, pgid: int | None) -> None:
    """Tell the watchdog which group to guard (None: none, it exits)."""
    assert proc.stdin is not None  # _start_watchdog's pipe
    with contextlib.suppress(OSError):
        if pgid is not None:
            proc.stdin.write(f"{pgid}\n".encode())
        proc.stdin.close()


@contextlib.contextmanager
def sigterm_as_interrupt() -> Iterator[None]:
    """Treat SIGTERM like Ctrl-C while the block runs, so runs are stopped and kept cleanly
    (only in the main thread; elsewhere a no-op)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum, frame):
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def group_alive(pgid: int) -> bool:
    """True while any process of group ``pgid`` exists (zombies excluded)."""
    for p in psutil.process_iter(["pid"]):
        try:
            if os.getpgid(p.info["pid"]) == pgid and p.status() != psutil.STATUS_ZOMBIE:
                return True
        except (ProcessLookupError, psutil.Error, OSError):
            continue
    return False


def kill_group(pgid: int, grace_s: float = TERM_GRACE_S) -> None:
    """SIGTERM then SIGKILL every process of group ``pgid`` (a missing group is fine)."""
    try:
        os.killpg(pgid, signal.SIGTERM)
    except ProcessLookupError:
        return
    deadline = time.monotonic() + grace_s
    while time.monotonic() < deadline:
        if not group_alive(pgid):
            return
        time.sleep(0.05)
    try:
        os.killpg(pgid, signal.SIGKILL)
    except ProcessLookupError:
        return


def _same_process(record: GroupRecord) -> bool:
    try:
        p = psutil.Process(record.pid)
        return (abs(p.create_time() - record.create_time) < 0.05
                and tuple(p.cmdline()) == record.cmdline)
    except psutil.Error:
        return False


def _members_matching(record: GroupRecord) -> list[psutil.Process]:
    """Processes still in the recorded group, started after its leader, with its command line
    (forked Locust workers keep their master's argv)."""
    out = []
    for p in psutil.process_iter(["pid", "cmdline", "create_time"]):
        try:
            if os.getpgid(p.info["pid"]) != record.pgid:
                continue
        except OSError:
            continue
        if (tuple(p.info["cmdline"] or ()) == record.cmdline
                and (p.info["create_time"] or 0) >= record.create_time - 0.05):
            out.append(p)
    return out


def kill_stale(state: StateFile) -> list[GroupRecord]:
    """Kill the groups recorded in ``state`` that still run (after checking they are ours).

    A group counts as ours when its leader has the recorded start time and command line, or,
    once the leader is gone, when a member of the recorded group has the same command line and
    started after the leader (a forked Locust worker). Returns the groups that were killed;
    the state file is emptied.
    """
    killed = []
    for record in state.read():
        if _same_process(record) or _members_matching(record):
            kill_group(record.pgid, grace_s=1.0)
            killed.append(record)
    state.write([])
    return killed


# -- CPU use of the generator and the server ---------------------------------------------------
_HAS_CHILDREN_FILES = os.path.exists(f"/proc/self/task/{os.getpid()}/children")


def _tree_pids(root: int) -> list[int] | None:
    """``root`` and its descendants from ``/proc/<pid>/task/<tid>/children`` (a few small reads,
    where psutil's ``children(recursive=True)`` reads the stat file of every process on the
    host); None where the kernel lacks those files."""
    if not _HAS_CHILDREN_FILES:
        return None
    out, todo = [], [root]
    while todo:
        pid = todo.pop()
        try:
            tids = os.listdir(f"/proc/{pid}/task")
        except OSError:  # gone
            continue
        out.append(pid)
        for tid in tids:
            try:
                with open(f"/proc/{pid}/task/{tid}/children", encoding="ascii") as f:
                    todo += [int(c) for c in f.read().split()]
            except OSError:  # the thread ended meanwhile
                continue
    return out


def process_tree(pids: Iterable[int],
                 known: Mapping[int, psutil.Process] | None = None) -> list[psutil.Process]:
    """Each of ``pids`` still running, followed by all its descendants.

    ``known``: Process objects to reuse by pid (they keep their CPU-time baselines)."""
    known = known or {}
    out: list[psutil.Process] = []
    for pid in pids:
        tree = _tree_pids(pid)
        try:
            if tree is None:  # no /proc/<pid>/task/<tid>/children: psutil's full scan
                root = psutil.Process(pid)
                out += [root, *root.children(recursive=True)]
                continue
            out += [known.get(p) or psutil.Process(p) for p in tree]
        except psutil.Error:
            continue
    return out


class CpuSampler:
    """CPU use of process trees, sampled from their CPU times (100% = one core busy).

    Call :meth:`sample` every tick while the run goes. Each tree is its roots plus all their
    descendants, looked up on the first ticks and then every ``REFRESH``-th tick (a scan of
    /proc costs more than the sampling itself), so forked Locust workers and nginx workers
    started by a reload are counted. Time spent by processes that exited between two lookups
    is lost, a small undercount.
    """

    def __init__(self, generator_pids: Sequence[int], server_pids: Sequence[int] = ()):
        self.roots = {"generator": list(generator_pids), "server": list(server_pids)}
        self._last: dict[str, dict[int, float]] = {k: {} for k in self.roots}
        self._last_t: float | None = None
        self.rows: list[tuple[float, float | None, float | None, float | None]] = []
        self._t0 = time.monotonic()
        self.max_processes: dict[str, int] = {}
        self._cache: dict[str, list[psutil.Process]] = {}
        self._ticks = 0
        psutil.cpu_percent(interval=None)  # prime the host counter

    #: descendants are looked up (a scan of /proc) on the first ticks, then every REFRESH-th
    REFRESH = 4

    def _members(self, key: str) -> list[psutil.Process]:
        ticks = self._ticks
        if key not in self._cache or ticks < self.REFRESH or ticks % self.REFRESH == 0:
            known = {p.pid: p for p in self._cache.get(key, ())}
            self._cache[key] = process_tree(self.roots[key], known)
        return self._cache[key]

    def _tree_times(self, key: str) -> dict[int, float]:
        out: dict[int, float] = {}
        for p in self._members(key):
            try:
                t = p.cpu_times()
            except psutil.Error:
                continue
            out[p.pid] = t.user + t.system
        return out

    def sample(self) -> None:
        now = time.monotonic()
        current = {k: self._tree_times(k) for k in self.roots}
        self._ticks += 1
        self.max_processes = {k: max(self.max_processes.get(k, 0), len(v))
                              for k, v in current.items()}
        host = psutil.cpu_percent(interval=None)
        if self._last_t is not None and now > self._last_t:
            wall = now - self._last_t
            pct: dict[str, float | None] = {}
            for key, times in current.items():
                if not self.roots[key] or not times:
                    pct[key] = None
                    continue
                used = sum(t - self._last[key].get(pid, 0.0) for pid, t in times.items())
                pct[key] = 100.0 * max(used, 0.0) / wall
            self.rows.append((round(now - self._t0, 3), pct["generator"], pct["server"], host))
        self._last, self._last_t = current, now

    def csv_text(self) -> str:
        """The samples as CSV: ``t_s,generator_cpu_percent,server_cpu_percent,host_cpu_percent``."""
        lines = ["t_s,generator_cpu_percent,server_cpu_percent,host_cpu_percent"]
        for row in self.rows:
            lines.append(",".join("" if v is None else f"{v:.1f}" if i else f"{v:.3f}"
                                  for i, v in enumerate(row)))
        return "\n".join(lines) + "\n"

    def summary(self, generator_cores: float | None) -> dict:
        """Mean/max per tree, and the generator's share of the cores it can use."""
        out: dict = {"samples": len(self.rows),
                     "generator_processes_max": self.max_processes.get("generator"),
                     "server_processes_max": self.max_processes.get("server")}
        for i, key in ((1, "generator"), (2, "server"), (3, "host")):
            values = [v for r in self.rows if (v := r[i]) is not None]
            out[f"{key}_cpu_mean_percent"] = round(sum(values) / len(values), 1) if values else None
            out[f"{key}_cpu_max_percent"] = round(max(values), 1) if values else None
        mean = out["generator_cpu_mean_percent"]
        out["generator_cores"] = generator_cores
        out["generator_cpu_share"] = (None if mean is None or not generator_cores
                                      else round(mean / (100.0 * generator_cores), 3))
        return out
