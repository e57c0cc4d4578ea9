"""What each factor level changed, and what the server stood in front of, read from the run
manifests: a factor is named by its configuration difference, not by its label.

- :func:`level_changes`: per factor of a design, every nginx directive and recorded setting
  whose value differs between its low and high level (the other factors held fixed), as a
  tidy frame (one row per setting): ``keepalive`` is ``keepalive_timeout 65 -> 300``,
  ``keepalive_requests`` not set (nginx's default 1000) -> ``100000``, ``keepalive``
  (upstream) not set -> ``32``, ``proxy_http_version`` not set (1.0) -> ``1.1``... The
  directives come from each run's recorded ``config_text`` (:mod:`perfkit.analysis.context._configs`
  reads them the same way), paired by directive name; a setting outside nginx.conf from the
  recorded template variables (the upstream's delay).
- :func:`backend`: the upstream the proxy and cache profiles forward to (its answer delay from
  the manifests' ``upstream_delay_ms``) and the bytes per response the runs transferred, in
  one sentence a page depending on it can state.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from perfkit.analysis.context._conditions import HOST_BUSY_PERCENT, HostCpu, host_cpu
from perfkit.analysis.context._configs import config_text, directive_lines, outside_settings
from perfkit.analysis.core import Experiment, RunSet
from perfkit.formatting import level_text
from perfkit.stats.coding import code_factor

#: nginx's own default of a directive the testbed may leave unset (nginx.org documentation of
#: ngx_http_core_module and ngx_http_proxy_module, nginx 1.22: ``keepalive_requests 1000``
#: since 1.19.10, ``keepalive_timeout 75s``, ``proxy_http_version 1.0``)
NGINX_DEFAULTS = {"keepalive_requests": "1000", "keepalive_timeout": "75s",
                  "proxy_http_version": "1.0"}
#: directives whose first argument is part of the name (``proxy_set_header Connection``,
#: ``location = /status500``)
_KEYED = ("proxy_set_header", "add_header", "set", "map", "location")
#: nginx's location modifiers (``=``, the regexes ``~`` and ``~*``, the prefix ``^~``)
_LOCATION_MODIFIERS = ("=", "~", "~*", "^~")
COLUMNS = ["factor", "low", "high", "setting", "low_value", "high_value", "locations", "where"]


def level_changes(exp: Experiment | RunSet, factors: Sequence[str] | None = None,
                  order: Mapping[str, tuple[str, str]] | None = None) -> pd.DataFrame:
    """One row per factor and setting that differs between the factor's low and high level
    (module docstring): ``factor, low, high, setting, low_value, high_value, locations`` (how
    many times the directive appears in the configuration) and ``where`` (the other factors'
    levels at which the difference was read: ``every level of cache`` when it is the same at
    each). Empty for a factor whose runs recorded no server configuration. ``exp``: an
    experiment, or some of its runs (the two arms of a comparison); ``order``: ``{factor:
    (from, to)}`` where the change is read the other way than the coding rule's low -> high
    (a comparison's base -> new)."""
    factors = list(factors if factors is not None else exp.factors)
    configs = _configs(exp, factors)
    rows = []
    for factor in factors:
        levels = sorted({dict(k)[factor] for k in configs}, key=str)
        if len(levels) != 2:
            continue
        if order and factor in order:
            low, high = (level_text(v) for v in order[factor])
        else:
            coding = code_factor(pd.Series(levels), factor)[1]
            low, high = level_text(coding["low"]), level_text(coding["high"])
        found: dict[tuple, list[str]] = {}
        pairs = 0
        for key, conf in configs.items():
            if dict(key)[factor] != low:
                continue
            other = configs.get(tuple((f, high if f == factor else v) for f, v in key))
            if other is None:
                continue
            pairs += 1
            held = ", ".join(f"{f}={v}" for f, v in key if f != factor) or "all runs"
            for change in _changes(conf, other):
                found.setdefault(change, []).append(held)
        others = [f for f in factors if f != factor]
        every = f"every level of {' and '.join(others)}" if others else "all runs"
        for (setting, a, b, count), where in found.items():
            rows.append({"factor": factor, "low": low, "high": high, "setting": setting,
                         "low_value": a, "high_value": b, "locations": count,
                         "where": every if len(where) == pairs else "; ".join(where)})
    return pd.DataFrame(rows, columns=COLUMNS)


def changes_text(frame: pd.DataFrame, factor: str) -> str:
    """One factor's changes in words: ``keepalive (none -> keepalive): keepalive_timeout 65 ->
    300; keepalive_requests not set (1000) -> 100000; ...``."""
    rows = frame[frame["factor"] == factor]
    if not len(rows):
        return f"{factor}: no recorded configuration difference"
    head = f"{factor} ({rows['low'].iloc[0]} -> {rows['high'].iloc[0]})"
    parts = []
    for setting, low, high, locations, where in zip(
            rows["setting"], rows["low_value"], rows["high_value"], rows["locations"],
            rows["where"], strict=True):
        parts.append(f"{setting} {low} -> {high}"
                     + (f" (in {locations} places)" if int(locations) > 1 else "")
                     + ("" if str(where).startswith("every") or where == "all runs"
                        else f" (at {where})"))
    return f"{head}: " + "; ".join(parts)


#: the upstream's ceiling modes in words (perfkit.run.upstream_ceiling)
CEILING_WORDS = {"keepalive": "kept alive", "new_connection": "with a connection per request"}


@dataclasses.dataclass(frozen=True)
class Backend:
    """What the server answered from: ``upstream_delay_ms`` (each distinct delay recorded by
    runs proxying to the upstream; empty when no run did), the runs that proxied, and the
    median bytes per response (transfer rate over request rate; NaN without them)."""

    upstream_delay_ms: tuple[float, ...]
    proxied_runs: int
    n_runs: int
    bytes_per_response: float
    #: the upstream's own ceiling per mode (``keepalive``, ``new_connection``): the median
    #: req/s over the testbed's starts that measured it (``server.upstream_ceiling``)
    ceiling_rps: Mapping[str, float] = dataclasses.field(default_factory=dict)
    ceiling_starts: int = 0
    host: HostCpu | None = None

    def conditions(self) -> str:
        """What the runs shared, for an answer's heading: ``upstream 10 ms per request, its
        own ceiling 22k req/s kept alive, 11k with a connection per request (median of 12
        starts); host CPU >= 90% in 45 of 72 runs``."""
        parts = []
        if self.upstream_delay_ms:
            delays = " or ".join(f"{d:g} ms" for d in self.upstream_delay_ms)
            ceiling = ", ".join(f"{rps / 1000:.3g}k req/s {CEILING_WORDS.get(mode, mode)}"
                                for mode, rps in self.ceiling_rps.items())
            parts.append(f"upstream {delays} per request" + (
                f", its own ceiling {ceiling} (median of {self.ceiling_starts} "
                f"start{'s' if self.ceiling_starts != 1 else ''})" if ceiling else
                ", its ceiling not recorded"))
        else:
            parts.append("nginx serves / itself")
        h = self.host
        if h is not None and h.known:
            parts.append(f"host CPU >= {HOST_BUSY_PERCENT:g}% in {h.busy} of {h.known} runs")
        return "; ".join(parts)

    def text(self) -> str:
        """``nginx proxies / to perfkit's synthetic upstream, which answers every request after
        10 ms (48 of 60 runs; a cache hit is served without it); about 1180 bytes per
        response``."""
        size = (f"; about {self.bytes_per_response:.0f} bytes per response (headers "
                "included)" if self.bytes_per_response == self.bytes_per_response else "")
        if not self.upstream_delay_ms:
            return f"nginx serves / itself (no upstream){size}"
        delays = " or ".join(f"{d:g} ms" for d in self.upstream_delay_ms)
        return (f"nginx proxies / to perfkit's synthetic upstream (perfkit.run.upstream), which "
                f"answers every request after {delays} ({self.proxied_runs} of {self.n_runs} "
                f"runs; a proxy-cache hit is served without it){size}")


def backend(exp: Experiment) -> Backend:
    """:class:`Backend` of ``exp`` (module docstring)."""
    rows = exp.rows()
    delays, proxied = set(), 0
    for run in rows.runs:
        variables = ((run.manifest or {}).get("server") or {}).get("variables") or {}
        if variables.get("upstream_enabled") and variables.get("upstream_delay_ms") is not None:
            delays.add(float(variables["upstream_delay_ms"]))
            proxied += 1
    f = rows.frame
    size = math.nan
    if {"transfer_bytes_per_s", "throughput_rps"} <= set(f.columns):
        per = (pd.to_numeric(f["transfer_bytes_per_s"], errors="coerce")
               / pd.to_numeric(f["throughput_rps"], errors="coerce")).replace(np.inf, np.nan)
        size = float(per.median()) if per.notna().any() else math.nan
    ceilings: dict[str, dict[str, float]] = {}  # mode -> measured_utc -> req/s
    for run in rows.runs:
        c = ((run.manifest or {}).get("server") or {}).get("upstream_ceiling") or {}
        for mode, m in (c.get("modes") or {}).items():
            if isinstance(m, Mapping) and isinstance(m.get("throughput_rps"), int | float):
                ceilings.setdefault(mode, {})[str(c.get("measured_utc"))] = m["throughput_rps"]
    return Backend(tuple(sorted(delays)), proxied, len(rows), size,
                   {mode: float(np.median(list(v.values()))) for mode, v in ceilings.items()},
                   max((len(v) for v in ceilings.values()), default=0), host_cpu(rows.runs))


def _configs(exp: Experiment | RunSet, factors: Sequence[str]) -> dict[tuple, dict[str, Any]]:
    """Per combination of ``factors`` levels (``((factor, level), ...)``), the first run's
    directives (name -> (value, count)) and outside settings."""
    out: dict[tuple, dict[str, Any]] = {}
    runs = exp.rows().runs if isinstance(exp, Experiment) else exp.runs
    for run in runs:
        server = (run.manifest or {}).get("server") or {}
        text = config_text(server)
        if not text or not all(f in run.factors for f in factors):
            continue
        key = tuple((f, level_text(run.factors[f])) for f in factors)
        if key not in out:
            out[key] = {"directives": _directives(directive_lines(text)),
                        "outside": outside_settings(server)}
    return out


def _directives(lines: Sequence[str]) -> dict[str, tuple[str, int]]:
    """Directive name -> (its values, ``|``-joined when they differ, and how many times)."""
    seen: dict[str, list[str]] = {}
    for line in lines:
        words = line.rstrip(";").split(None, 1)
        if not words or line.endswith("{"):
            continue
        name, value = words[0], (words[1] if len(words) > 1 else "")
        if name in _KEYED and value:
            sub, _, value = value.partition(" ")
            if name == "location" and sub in _LOCATION_MODIFIERS:
                path, _, value = value.partition(" ")
                sub = f"{sub} {path}"
            name = f"{name} {sub}"
        seen.setdefault(name, []).append(value)
    return {k: (" | ".join(dict.fromkeys(v)), len(v)) for k, v in seen.items()}


def _changes(low: Mapping[str, Any], high: Mapping[str, Any] | None) -> list[tuple]:
    if high is None:
        return []
    out = []
    a, b = low["directives"], high["directives"]
    for name in dict.fromkeys([*a, *b]):
        va, vb = a.get(name), b.get(name)
        if va == vb or (va and vb and va[0] == vb[0]):
            continue
        out.append((name, _value(name, va), _value(name, vb),
                    max(v[1] for v in (va, vb) if v)))
    for name in dict.fromkeys([*low["outside"], *high["outside"]]):
        va, vb = low["outside"].get(name), high["outside"].get(name)
        if va != vb:
            out.append((name, va or "not set", vb or "not set", 1))
    return out


def _value(name: str, found: tuple[str, int] | None) -> str:
    if found is not None:
        return found[0]
    default = NGINX_DEFAULTS.get(name)
    return f"not set (nginx's default {default})" if default else "not set"
