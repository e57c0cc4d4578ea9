"""The mechanism beside an effect: what the server and the kernel counted on each side.

A tuning claim names a mechanism (keepalive saves handshakes, a larger backlog stops dropped
connection attempts, a cache saves upstream trips); the runs' counters
(:mod:`perfkit.ingest.counters`) measure it. For the two sides of an effect or a comparison
(low and high, base and new), :func:`mechanism` gives, per quantity of :data:`QUANTITIES`, the
median over the side's runs of the per-run value, with the runs it comes from:

- ``server_connections_per_request``: connections nginx accepted per request it counted
  (1 without keepalive, near 0 with it);
- ``tcp_opens_per_request``: connections the kernel saw opened (``ActiveOpens``: the
  generator's and nginx's own to its upstream) per request nginx counted: a proxy without
  upstream keepalive opens one per request, which nginx's own counts do not show;
- ``tcp_listen_overflows`` and ``tcp_syn_retransmits``: per run, the connection attempts the
  kernel dropped from a full accept queue, and the SYN (and SYN-ACK) retransmissions that
  retried them after 1 s;
- ``server_cache_hit_ratio``: hits over hits, misses and expiries (cache profiles only);
- ``server_error_log_lines``: per run.

A quantity no run of a side recorded is missing on that side, never 0. Kernel counters read in
the host's network namespace include other traffic on the host: the result says so
(:attr:`Mechanism.warnings`), as it says that wrk2's calibration is inside the counters' window
but outside its latency histogram. :func:`stall_evidence` is what the cap and run-status rules
cite for a 1 s stall.
"""

from __future__ import annotations

import dataclasses
import math
import statistics
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from perfkit.analysis.core._grouping import rows_at
from perfkit.formatting import fmt_sig, level_text
from perfkit.model import Run
from perfkit.warning import Code, Warn
from perfkit.wording import stall_words


def _hit_ratio(run: Run) -> float | None:
    hits, misses, expired = (run.counters.server_cache_hits, run.counters.server_cache_misses,
                             run.counters.server_cache_expired)
    if hits is None or misses is None or expired is None or hits + misses + expired <= 0:
        return None
    return hits / (hits + misses + expired)


@dataclasses.dataclass(frozen=True)
class Quantity:
    """One mechanism quantity: its column-like name, its words and its per-run value."""

    name: str
    label: str
    value: Callable[[Run], float | int | None]
    kernel: bool = False
    count: bool = False
    #: in the mechanism's text (a quantity kept for its columns alone is not)
    shown: bool = True


def _opens_per_request(run: Run) -> float | None:
    if run.counters.tcp_active_opens is None or not run.counters.server_requests:
        return None
    return run.counters.tcp_active_opens / run.counters.server_requests


def _per_client_connection(run: Run) -> float | None:
    """Connections the server accepted per connection the generator held open (wrk's ``-c``,
    Locust's users): 1 where each stayed open, more where the server closed them (without
    keepalive, about the requests each sent); its test connection aside, wrk's is a count."""
    accepted, asked = run.counters.server_connections_accepted, run.connections or run.users
    if accepted is None or not asked:
        return None
    return accepted / asked


QUANTITIES: tuple[Quantity, ...] = (
    Quantity("server_connections_per_client_connection",
             "accepted connections per client connection", _per_client_connection),
    # per request it falls whenever throughput rises (a fixed count over more requests): it
    # shows no mechanism, and is kept as columns only
    Quantity("server_connections_per_request", "accepted connections per request",
             lambda r: r.counters.server_connections_per_request, shown=False),
    Quantity("tcp_opens_per_request", "TCP connections opened per request",
             _opens_per_request, kernel=True),
    Quantity("tcp_listen_overflows", "listen overflows", lambda r: r.counters.tcp_listen_overflows,
             kernel=True, count=True),
    Quantity("tcp_syn_retransmits", "SYN retransmissions", lambda r: r.counters.tcp_syn_retransmits,
             kernel=True, count=True),
    Quantity("server_cache_hit_ratio", "cache hit ratio", _hit_ratio),
    Quantity("server_error_log_lines", "error-log lines",
             lambda r: r.counters.server_error_log_lines, count=True),
)
#: the text of a side with no run recording a quantity
NOT_RECORDED = "(not recorded)"
#: the words of the two sides of a comparison (a factor's effect names its levels instead)
SIDES = ("on the base side", "on the new side")


@dataclasses.dataclass(frozen=True)
class Side:
    """A quantity on one side: the median over the runs that recorded it, its range, and
    those runs."""

    median: float
    runs: tuple[str, ...]
    low: float = math.nan
    high: float = math.nan

    @property
    def n(self) -> int:
        return len(self.runs)


@dataclasses.dataclass(frozen=True)
class MechanismRow:
    """One quantity on both sides (``low``/``base`` first, ``high``/``new`` second)."""

    quantity: Quantity
    low: Side
    high: Side

    def text(self, sides: tuple[str, str] = SIDES) -> str:
        """``listen overflows 1,234 (980-1,502) -> 0``; a quantity one side alone recorded
        (a cache's hit ratio, where the other side has no cache) as ``cache hit ratio 1 at
        ram only`` (``sides``: the words of the two sides)."""
        if bool(self.low.n) != bool(self.high.n):
            side, where = (self.high, sides[1]) if self.high.n else (self.low, sides[0])
            return f"{self.quantity.label} {_fmt(side, self.quantity)} {where} only"
        return f"{self.quantity.label} {_fmt(self.low, self.quantity)} -> " \
               f"{_fmt(self.high, self.quantity)}"

    @property
    def moved(self) -> bool:
        """Whether the two sides read differently (as printed), or one side recorded it."""
        return _fmt(self.low, self.quantity) != _fmt(self.high, self.quantity)


def _fmt(side: Side, q: Quantity) -> str:
    """The median; a count also with its range over the runs when they differ (``0 (0-307)``:
    an event a few runs saw, which the median alone would hide)."""
    if not side.n:
        return NOT_RECORDED
    if not q.count:
        return fmt_sig(side.median)
    text = _count(side.median)
    return text if side.low == side.high else f"{text} ({_count(side.low)}-{_count(side.high)})"


def _count(value: float) -> str:
    return f"{int(value):,}" if float(value).is_integer() else fmt_sig(value)


@dataclasses.dataclass(frozen=True)
class Mechanism:
    """What the counters show on the two sides of one effect (:func:`mechanism`)."""

    rows: tuple[MechanismRow, ...] = ()
    scopes: tuple[str, ...] = ()
    warnings: tuple[Warn, ...] = ()
    #: the words of the two sides, for a quantity one side alone recorded (``at ram``)
    sides: tuple[str, str] = SIDES

    def __bool__(self) -> bool:
        """Whether any run of either side recorded any quantity."""
        return any(r.low.n or r.high.n for r in self.rows)

    def text(self) -> str:
        """The quantities that moved, ``"; "``-joined (``accepted connections per request
        1.00 -> 0.000318; listen overflows 1,234 (980-1,502) -> 0``: medians over the runs of
        each side, a count with its range where its runs differ); when none did,
        ``"unchanged: "`` and the first two recorded; ``""`` when nothing was recorded."""
        recorded = [r for r in self.rows if (r.low.n or r.high.n) and r.quantity.shown]
        moved = [r for r in recorded if r.moved]
        if moved:
            return "; ".join(r.text(self.sides) for r in moved)
        if recorded:
            return "unchanged: " + "; ".join(
                f"{r.quantity.label} {_fmt(r.low, r.quantity)}" for r in recorded[:2])
        return ""

    def to_dict(self) -> dict[str, Any]:
        return {"text": self.text(), "scopes": list(self.scopes),
                "warnings": [w.to_dict() for w in self.warnings],
                "quantities": {r.quantity.name: {
                    "label": r.quantity.label,
                    "low": None if not r.low.n else r.low.median, "runs_low": list(r.low.runs),
                    "high": None if not r.high.n else r.high.median,
                    "runs_high": list(r.high.runs)} for r in self.rows}}


def _runs(side: Any) -> Sequence[Run]:
    runs = getattr(side, "runs", side)
    return [r for r in runs if r is not None]


def _side(runs: Sequence[Run], q: Quantity) -> Side:
    values, ids = [], []
    for run in runs:
        v = q.value(run)
        if v is not None and math.isfinite(v):
            values.append(float(v))
            ids.append(str(run.run_id or run.source))
    if not values:
        return Side(math.nan, ())
    # float(np.median(values)) without numpy's per-call cost (about 700 calls per ``effects``
    # run, issue 33): the same middle value or mean of the two; + 0.0 turns -0.0 into 0.0, as
    # numpy's sum does
    return Side(statistics.median(values) + 0.0, tuple(ids), min(values), max(values))


def kernel_scope(run: Run) -> str | None:
    """The scope of ``run``'s kernel counters as recorded (``netns NAME``, or system-wide),
    None when they were not recorded."""
    section = run.manifest.get("counters") if run.manifest else None
    kernel = ((section or {}).get("sources") or {}).get("kernel") \
        if isinstance(section, Mapping) else None
    return kernel.get("scope") if isinstance(kernel, Mapping) else None


def recorded(runs: Sequence[Run]) -> bool:
    """Whether any of ``runs`` recorded counters (its manifest has a ``counters`` section)."""
    return any(r is not None and r.counters_recorded for r in runs)


def mechanism(low: Any, high: Any) -> Mechanism:
    """The mechanism quantities on two sides (RunSets or sequences of Runs): see the module
    docstring. An empty :class:`Mechanism` when no run of either recorded counters."""
    sides = [_runs(low), _runs(high)]
    if not recorded([*sides[0], *sides[1]]):
        return Mechanism()
    rows = tuple(MechanismRow(q, _side(sides[0], q), _side(sides[1], q)) for q in QUANTITIES)
    every = [r for s in sides for r in s]
    scopes = tuple(dict.fromkeys(s for r in every if (s := kernel_scope(r))))
    return Mechanism(rows, scopes, tuple(_warnings(every, rows)))


def main_mechanisms(rows: Any, per: Sequence[str], levels: Iterable[Any],
                    coding: Mapping[str, Mapping[str, Any]], key: Callable[[Any], str],
                    at_level: Callable[[Any], Any] | None = None
                    ) -> dict[tuple[str, str], Mechanism]:
    """Beside each main effect of a factorial (factors: ``coding``'s keys) at each of
    ``levels`` of ``per``: the factor's low and high level over the same runs as the effect,
    averaged as it is (:func:`averaged_mechanism`); keyed by (factor, ``key(level)``). {}
    when no run recorded counters. ``at_level``: the runs of ``rows`` at a level, when the
    caller has them already (default :func:`rows_at`)."""
    if not recorded(rows.runs):
        return {}
    out = {}
    for level in levels:  # once per level, not once per factor
        at = rows_at(rows, per, level) if at_level is None else at_level(level)
        for f in coding:
            out[(f, key(level))] = averaged_mechanism(at, f, coding[f],
                                                      [o for o in coding if o != f])
    return out


def averaged_mechanism(rows: Any, factor: str, coding: Mapping[str, Any],
                       others: Sequence[str]) -> Mechanism:
    """:func:`mechanism` of ``factor``'s low level against its high level over every run of
    ``rows`` (one load level), as a main effect averages them: each side the mean, over the
    cells of the ``others`` factors' levels, of the cell's median (the median of runs pooled
    over another factor's levels would sit between its clusters and describe no run; the
    other factors held at one level, as before, summarised 12 of the 24 runs a main effect
    of a 2^3 design rests on). A cell that did not record a quantity is left out of its mean;
    the runs named are all the side's that recorded it."""
    if not recorded(rows.runs):
        return Mechanism()
    frame = rows.frame
    text = frame[factor].map(level_text).to_numpy()
    # column by column, as itertuples reads them (a multi-column frame[...] takes every block)
    cells = np.array([" | ".join(level_text(v) for v in r)
                      for r in zip(*(frame[c] for c in others), strict=True)] if others
                     else [""] * len(rows), dtype=object)

    def runs_of(side: str, cell: str) -> list[Run]:  # the runs alone: no frame to subset
        keep = (text == level_text(coding[side])) & (cells == cell)
        return [r for r, k in zip(rows.runs, keep, strict=True) if k]

    sides = [[runs_of(side, cell) for cell in dict.fromkeys(cells.tolist())]
             for side in ("low", "high")]
    out = tuple(MechanismRow(q, _averaged(sides[0], q), _averaged(sides[1], q))
                for q in QUANTITIES)
    every = [r for side in sides for cell in side for r in cell]
    scopes = tuple(dict.fromkeys(s for r in every if (s := kernel_scope(r))))
    return Mechanism(out, scopes, tuple(_warnings(every, out)),
                     (f"at {level_text(coding['low'])}", f"at {level_text(coding['high'])}"))


def _averaged(cells: Sequence[Sequence[Run]], q: Quantity) -> Side:
    per_cell = [s for s in (_side(cell, q) for cell in cells) if s.n]
    if not per_cell:
        return Side(math.nan, ())
    return Side(float(np.mean([s.median for s in per_cell])),
                tuple(i for s in per_cell for i in s.runs),
                min(s.low for s in per_cell), max(s.high for s in per_cell))


def _proxies(run: Run) -> bool:
    """Whether ``run``'s nginx passed requests to an upstream that listened beside it (its
    upstream's counters, or a ``proxy_pass`` in its recorded configuration)."""
    if run.counters.upstream_connections_accepted is not None:
        return True
    server = (run.manifest or {}).get("server") or {}
    return "proxy_pass" in str(server.get("config_text") or "")


def _warnings(runs: Sequence[Run], rows: Sequence[MechanismRow]) -> list[Warn]:
    out = []
    kernel_shown = any(r.quantity.kernel and (r.low.n or r.high.n) for r in rows)
    wide = [r for r in runs if (kernel_scope(r) or "").startswith("system-wide")]
    if kernel_shown and wide:
        out.append(Warn(Code.COUNTERS_SYSTEM_WIDE, runs=len(wide), of=len(runs)))
    # in a namespace of its own a run's counters are still the namespace's: nginx's and, where
    # it proxies, the upstream's listening socket share them (issue 29 item 2)
    netns = [r for r in runs if (kernel_scope(r) or "").startswith("netns")]
    overflows = any(r.quantity.name in ("tcp_listen_overflows", "tcp_syn_retransmits")
                    and (r.low.n or r.high.n) and r.moved for r in rows)  # as text() shows
    if overflows and netns:
        upstream = any(_proxies(r) for r in netns)
        out.append(Warn(Code.COUNTERS_NAMESPACE_TOTAL, runs=len(netns), of=len(runs),
                        sockets=("nginx's", "the upstream's") if upstream else ("nginx's",)))
    if any(r.tool == "wrk2" for r in runs):
        out.append(Warn(Code.COUNTERS_INCLUDE_CALIBRATION))
    return out


def mechanism_columns(mech: Mechanism, low: str = "base", high: str = "new"
                      ) -> dict[str, Any]:
    """A result frame's mechanism columns: ``mechanism`` (:meth:`Mechanism.text`), then the
    median of each quantity per side (``<quantity>_base``/``_new``, or the names given: NaN
    where not recorded) and the runs behind it, and the kernel counters' ``counter_scope``."""
    out: dict[str, Any] = {"mechanism": mech.text()}
    for q in QUANTITIES:
        row = next((r for r in mech.rows if r.quantity.name == q.name), None)
        out[f"{q.name}_{low}"] = row.low.median if row else math.nan
        out[f"{q.name}_{high}"] = row.high.median if row else math.nan
        out[f"{q.name}_runs_{low}"] = row.low.n if row else 0
        out[f"{q.name}_runs_{high}"] = row.high.n if row else 0
    out["counter_scope"] = "; ".join(mech.scopes)
    return out


# -- evidence of a 1 s stall -----------------------------------------------------------------
def stall_evidence(run: Run) -> str | None:
    """What ``run``'s kernel counters say about connection attempts retried after 1 s: ``"1,234
    listen overflows and 567 SYN retransmissions (netns X)"``; ``"no listen overflow and no
    SYN retransmission (...)"`` when both are 0; None when they were not recorded."""
    over, syn = run.counters.tcp_listen_overflows, run.counters.tcp_syn_retransmits
    if over is None and syn is None:
        return None
    return stall_words(over, syn, kernel_scope(run))
