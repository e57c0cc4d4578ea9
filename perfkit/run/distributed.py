"""Load from several generators at once, and their runs combined into one honest Run.

- Several wrk2 clients against one target: their HdrHistograms are merged by summing counts
  (:meth:`perfkit.histogram.LatencyHistogram.merge`), and the percentiles are read from the
  merged histogram. Percentiles are never averaged: the mean of two p99s is not a p99.
- Several wrk clients: throughput, requests, transfer and errors are summed; the latency mean
  is the request-weighted mean and the maximum the largest. wrk prints four percentiles and no
  histogram, so no combined percentile exists and none is invented.
- Locust scales with its own engine (``--processes N``, or ``--master``/``--worker`` across
  machines; see docs/distributed.md), which merges its workers' statistics itself.

:func:`run_clients` starts N identical wrk/wrk2 clients together; each lands in
``OUT/<group>/<group>-cK/`` with its own manifest (``client: {group, index, of}``).
:func:`combine_runs` and :func:`combine_groups` combine their parsed Runs.
"""

from __future__ import annotations

import dataclasses
import os
import threading
from pathlib import Path
from typing import TextIO

from perfkit.run.runner import TMP_PREFIX, RunOutcome, execute, utc_now, write_json
from perfkit.run.server import ServerContext
from perfkit.run.spec import RunError, RunSpec, new_run_id
from perfkit.vocabulary import ManifestStatus


@dataclasses.dataclass(frozen=True)
class ClientGroup:
    """The runs of concurrent clients: ``path`` holds ``<group>-c1/`` ... and ``group.json``."""

    group_id: str
    path: Path
    outcomes: tuple[RunOutcome, ...]

    @property
    def status(self) -> ManifestStatus:
        statuses = {o.status for o in self.outcomes}
        complete = statuses == {ManifestStatus.COMPLETE}
        return ManifestStatus.COMPLETE if complete else ManifestStatus.FAILED


def run_clients(spec: RunSpec, clients: int, out_dir: str | os.PathLike,
                err: TextIO | None = None, server: ServerContext | None = None) -> ClientGroup:
    """Start ``clients`` copies of a wrk/wrk2 run at the same time and keep each one.

    Each client gets ``spec.connections`` connections and ``spec.threads`` threads (and for
    wrk2 ``spec.rate_rps``): the total offered load is ``clients`` times the spec's. A reload
    disturbance of the testbed, when its profile asks for one, runs once (with client 1).
    """
    if spec.tool not in ("wrk", "wrk2"):
        raise RunError("--clients is for wrk and wrk2; Locust distributes itself "
                       "(--processes N, or --master/--worker: see docs/distributed.md)")
    if clients < 1:
        raise RunError(f"--clients: expected a positive number, found {clients}")
    group_id = spec.run_id or new_run_id(f"{spec.tool}x{clients}")
    out = Path(out_dir)
    final = out / group_id
    if final.exists():
        raise RunError(f"{final} already exists")
    tmp = out / f"{TMP_PREFIX}{group_id}"
    tmp.mkdir(parents=True)
    server = server or ServerContext.for_url(spec.url)
    server = dataclasses.replace(server, no_counters=(
        f"{clients} concurrent clients: the server's counters over one client's window "
        "include the others' load, so none is recorded per client"))
    quiet = dataclasses.replace(server, disturb=False)
    results: dict[int, RunOutcome | BaseException] = {}

    def one(k: int) -> None:
        book = {**spec.bookkeeping, "client": {"group": group_id, "index": k, "of": clients}}
        s = dataclasses.replace(spec, run_id=f"{group_id}-c{k}", bookkeeping=book)
        try:
            results[k] = execute(s, tmp, server=server if k == 1 else quiet, err=err,
                                 progress=False)
        except BaseException as exc:  # reported below, after every client ended
            results[k] = exc

    start = utc_now()
    threads = [threading.Thread(target=one, args=(k,), name=f"client-{k}")
               for k in range(1, clients + 1)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    failures = [r for r in results.values() if isinstance(r, BaseException)]
    outcomes = tuple(r for _, r in sorted(results.items()) if isinstance(r, RunOutcome))
    write_json(tmp / "group.json", {
        "group_id": group_id, "tool": spec.tool, "clients": clients, "start_utc": start,
        "end_utc": utc_now(), "runs": [{"run_id": o.run_id, "status": o.status}
                                       for o in outcomes]})
    os.rename(tmp, final)
    if failures:
        raise failures[0]
    return ClientGroup(group_id, final, tuple(dataclasses.replace(o, path=final / o.run_id)
                                              for o in outcomes))
