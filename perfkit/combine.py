"""Several clients' runs as one Run: :func:`combine_runs` and :func:`combine_groups`.

When one target is loaded by several generator processes at once (``perfkit run --clients N``,
several wrk2 clients, docs/distributed.md), each writes its own run; these pure operations on
:class:`perfkit.model.Run` give the load they made together: counts and rates summed, wrk2's
histograms merged by summing counts (as HdrHistogram's ``add``) and every percentile read from
the merge. Public through ``perfkit.combine_runs`` and ``perfkit.combine_groups``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from perfkit.errors import PerfkitError
from perfkit.histogram import LatencyHistogram
from perfkit.model import Run
from perfkit.warning import Code, Warn

_SUMMED = ("requests", "throughput_rps", "transfer_bytes_per_s", "bytes_read", "errors_connect",
           "errors_read", "errors_write", "errors_timeout", "non_2xx_3xx", "failures",
           "connections", "threads", "users", "target_rate_rps")


def _sum(values: Iterable[float | int | None]) -> float | int | None:
    values = list(values)
    if any(v is None for v in values):
        return None
    return sum(values)  # type: ignore[arg-type]


def _merge_hist(runs: Sequence[Run], attr: str) -> LatencyHistogram | None:
    hists = [getattr(r, attr) for r in runs]
    if any(h is None for h in hists):
        return None
    return LatencyHistogram.merge(hists)


def _percentiles(hist: LatencyHistogram, runs: Sequence[Run], attr: str) -> dict[float, float]:
    common = set.intersection(*(set(getattr(r, attr)) for r in runs)) if runs else set()
    return {q: hist.percentile_ms(q) for q in sorted(common) if q > 1}


def combine_runs(runs: Sequence[Run], run_id: str | None = None) -> Run:
    """One Run for several clients that loaded the same target at the same time.

    Parameters
    ----------
    runs : sequence of Run
        One run per client, all of one tool (wrk or wrk2) and one endpoint.
    run_id : str, optional
        The combined run's id (default: the clients' group from their manifests).

    Returns
    -------
    Run
        Counts and rates summed; for wrk2 the histograms merged by summing counts (as
        HdrHistogram's ``add``) and every percentile read from the merged histogram; for wrk
        no percentiles (none can be derived from four printed ones per client).
    """
    runs = list(runs)
    if not runs:
        raise PerfkitError("combine_runs: no runs to combine")
    tools = {r.tool for r in runs}
    if len(tools) != 1 or not tools <= {"wrk", "wrk2"}:
        raise PerfkitError(f"combine_runs: expected runs of one tool, wrk or wrk2, found "
                           f"{sorted(tools)}")
    tool = tools.pop()
    fields: dict = {name: _sum(getattr(r, name) for r in runs) for name in _SUMMED}
    fields["duration_s"] = max((r.duration_s for r in runs if r.duration_s is not None),
                               default=None)
    weights = [r.requests or 0 for r in runs]
    means = [r.latency_mean_ms for r in runs if r.latency_mean_ms is not None]
    if sum(weights) and len(means) == len(runs):
        fields["latency_mean_ms"] = sum(w * m for w, m in zip(weights, means, strict=True)) / sum(
            weights)
    maxes = [r.latency_max_ms for r in runs if r.latency_max_ms is not None]
    fields["latency_max_ms"] = max(maxes) if len(maxes) == len(runs) else None
    notes = [Warn(Code.COMBINED_CLIENTS, clients=len(runs), tool=tool)]
    if tool == "wrk2":
        hist = _merge_hist(runs, "histogram")
        if hist is not None and hist.total_count:
            fields.update(histogram=hist, percentiles_ms=_percentiles(hist, runs,
                                                                      "percentiles_ms"),
                          latency_mean_ms=hist.mean_us / 1000, latency_stdev_ms=hist.stdev_us
                          / 1000, latency_max_ms=hist.max_us / 1000)
            notes.append(Warn(Code.COMBINED_HISTOGRAMS))
        else:
            notes.append(Warn(Code.COMBINED_NO_HISTOGRAM))
        unc = _merge_hist(runs, "uncorrected_histogram")
        if unc is not None and unc.total_count:
            fields.update(uncorrected_histogram=unc, uncorrected_percentiles_ms=_percentiles(
                unc, runs, "uncorrected_percentiles_ms"))
    else:
        notes.append(Warn(Code.COMBINED_WRK_PERCENTILES))
    group = run_id or _group_of(runs[0]) or "+".join(str(r.run_id) for r in runs)
    first = runs[0]
    return Run(tool=tool, source=" + ".join(r.source for r in runs),
               latency_source=first.latency_source, endpoint=first.endpoint, url=first.url,
               run_id=group, tool_version=first.tool_version, factors=dict(first.factors),
               repetition=first.repetition, block=first.block, order=first.order,
               start_utc=min((r.start_utc for r in runs if r.start_utc), default=None),
               end_utc=max((r.end_utc for r in runs if r.end_utc), default=None),
               exit_code=max((r.exit_code for r in runs if r.exit_code is not None),
                             default=None),
               notes=tuple(notes), extra={"clients": [r.run_id for r in runs]}, **fields)


def _group_of(run: Run) -> str | None:
    client = run.manifest.get("client") if run.manifest else None
    return None if not client else client.get("group")


def combine_groups(runs: Iterable[Run]) -> list[Run]:
    """Replace the runs of each client group (from ``run_clients``) by their combined Run;
    other runs pass through unchanged, in their original order."""
    runs = list(runs)
    groups: dict[str, list[Run]] = {}
    for r in runs:
        g = _group_of(r)
        if g is not None:
            groups.setdefault(g, []).append(r)
    out, seen = [], set()
    for r in runs:
        g = _group_of(r)
        if g is None:
            out.append(r)
        elif g not in seen:
            seen.add(g)
            out.append(combine_runs(groups[g], run_id=g))
    return out
