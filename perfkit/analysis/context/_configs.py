"""How the server configurations of an experiment differ, read from the run manifests.

Each run manifest of the testbed records the server's ``profile``, the ``config_text`` of the
nginx configuration it rendered, its template ``variables`` and, for a server in a network
namespace of its own, the namespace's ``somaxconn`` (:mod:`perfkit.run.testbed`).
:func:`config_diffs` compares those records two by two: every directive line one profile has
and the other has not, **with the side it is on**, counted when it repeats (``proxy_http_version
1.1;`` in three locations), plus the recorded settings that live outside ``nginx.conf`` (the
namespace's ``net.core.somaxconn``, the upstream's delay, a reload disturbance).

Which pairs: when every profile stands for one combination of the design's factor levels, the
pairs that differ in exactly one factor (the comparisons a factorial makes); otherwise each
profile against the next in the order the runs first used them (a history: label order).
Comments and blank lines are left out; nothing else is (a ``listen`` line that differs in its
port or backlog is a difference).
"""

from __future__ import annotations

import dataclasses
import itertools
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from perfkit.analysis.core import Experiment
from perfkit.formatting import level_text

#: at most this many lines are shown per side of a pair (the rest counted); None: every line
#: (the default: a difference left out of a threat is a difference a reader cannot weigh)
LINES_SHOWN: int | None = None


@dataclasses.dataclass(frozen=True)
class ServerConfig:
    """One profile as its runs recorded it: the directive lines (in order, comments left out),
    the settings outside nginx.conf, and the factor levels its runs had."""

    profile: str
    lines: tuple[str, ...]
    outside: Mapping[str, str]
    levels: Mapping[str, str]


@dataclasses.dataclass(frozen=True)
class ConfigDiff:
    """Two profiles' configurations side by side: the lines only ``first`` has, the lines only
    ``second`` has (each ``(line, count)``), and the outside settings that differ
    (``(name, first's value, second's value)``)."""

    first: str
    second: str
    only_first: tuple[tuple[str, int], ...]
    only_second: tuple[tuple[str, int], ...]
    outside: tuple[tuple[str, str, str], ...] = ()

    @property
    def identical(self) -> bool:
        return not (self.only_first or self.only_second or self.outside)

    def text(self, limit: int | None = LINES_SHOWN) -> str:
        """``a vs b: only in a: `x;`; only in b: `y;` (x3)``; identical configs say so."""
        head = f"{self.first} vs {self.second}: "
        if self.identical:
            return head + "the same nginx configuration and settings"
        parts = []
        if self.only_first or self.only_second:
            parts += [f"only in {self.first}: {_lines(self.only_first, limit)}",
                      f"only in {self.second}: {_lines(self.only_second, limit)}"]
        else:
            parts.append("the same nginx configuration")
        parts += [f"{name} {a} in {self.first}, {b} in {self.second}"
                  for name, a, b in self.outside]
        return head + "; ".join(parts)


def diffs_text(diffs: Sequence[ConfigDiff], limit: int | None = LINES_SHOWN) -> str:
    """The pairs' differences in words, pairs that differ by the same lines said once
    (``a vs b, c vs d: only in a, c: `x;`; only in b, d: `y;` ``): a 2^3 design's twelve
    pairs differ in three ways, one per factor (before: each of the twelve in full, the
    cache's seven lines four times)."""
    groups: dict[tuple, list[ConfigDiff]] = {}
    for d in diffs:
        groups.setdefault((d.only_first, d.only_second, d.outside), []).append(d)
    out = []
    for (only_first, only_second, outside), ds in groups.items():
        if len(ds) == 1 or outside:
            out += [d.text(limit) for d in ds]
            continue
        pairs = ", ".join(f"{d.first} vs {d.second}" for d in ds)
        out.append(f"{pairs} (each pair alike): only in the first of each: "
                   f"{_lines(only_first, limit)}; only in the second: "
                   f"{_lines(only_second, limit)}")
    return " | ".join(out)


def _lines(items: tuple[tuple[str, int], ...], limit: int | None) -> str:
    if not items:
        return "nothing"
    limit = len(items) if limit is None else limit
    shown = [f"`{line}`" + (f" (x{n})" if n > 1 else "") for line, n in items[:limit]]
    more = len(items) - limit
    return ", ".join(shown) + (f", ... {more} more" if more > 0 else "")


def directive_lines(text: str) -> tuple[str, ...]:
    """The lines of an nginx configuration that say something: whitespace collapsed, comments,
    blank lines and lone braces left out."""
    out = []
    for raw in text.splitlines():
        line = " ".join(raw.split("#", 1)[0].split()) if not raw.strip().startswith("#") else ""
        if line and line not in ("{", "}"):
            out.append(line)
    return tuple(out)


def outside_settings(server: Mapping[str, Any]) -> dict[str, str]:
    """The recorded settings of a server that its nginx.conf does not show."""
    variables = server.get("variables") or {}
    out = {}
    if server.get("netns"):
        value = server.get("somaxconn", variables.get("somaxconn"))
        out["net.core.somaxconn in its network namespace"] = level_text(value)
    if variables.get("upstream_delay_ms") is not None and variables.get("root_target") == "proxy":
        out["upstream answer delay"] = f"{level_text(variables['upstream_delay_ms'])} ms"
    if variables.get("reload_interval_s") is not None:
        out["reload (SIGHUP) every"] = f"{level_text(variables['reload_interval_s'])} s"
    return out


#: how a path under the testbed's own folder (the manifest's ``state_dir``, a machine path of
#: the recording host) is shown: ``unix:<state dir>/logs/status.sock``
STATE_DIR = "<state dir>"
#: how the RAM cache's folder is shown (``variables.cache_path``, named after the recording
#: user and testbed: ``/dev/shm/perfkit-cache-0-2ef671bc``): its tmpfs folder kept
CACHE_DIR = "<cache dir>"


def config_text(server: Mapping[str, Any]) -> str:
    """The recorded nginx.conf of a run manifest's ``server``, its testbed folder shown as
    :data:`STATE_DIR` and a cache folder outside it as ``/dev/shm/<cache dir>``
    (:data:`CACHE_DIR`; "" when none was recorded)."""
    text = str(server.get("config_text") or "")
    state = str(server.get("state_dir") or "").rstrip("/")
    cache = str((server.get("variables") or {}).get("cache_path") or "").rstrip("/")
    if text and cache and "/" in cache and not (state and cache.startswith(state + "/")):
        text = text.replace(cache, f"{cache.rsplit('/', 1)[0]}/{CACHE_DIR}")
    if text and state:
        text = text.replace(state, STATE_DIR)
    return text


def server_configs(exp: Experiment) -> list[ServerConfig]:
    """Each server profile of ``exp`` as its first run recorded it, in the design's level order
    (else in the order the runs first used them)."""
    found: dict[str, ServerConfig] = {}
    levels: dict[str, set] = {}
    for run in exp.rows().runs:
        server = (run.manifest or {}).get("server") or {}
        profile, text = server.get("profile"), config_text(server)
        if not profile or not text:
            continue
        key = tuple((f, level_text(run.factors.get(f))) for f in exp.factors
                    if f in run.factors)
        levels.setdefault(profile, set()).add(key)
        if profile not in found:
            found[profile] = ServerConfig(profile, directive_lines(text), outside_settings(server),
                                          dict(key))
    for profile, keys in levels.items():  # a profile with several level combinations
        if len(keys) > 1:
            found[profile] = dataclasses.replace(found[profile], levels={})
    first = {p: i for i, p in enumerate(found)}
    return sorted(found.values(), key=lambda c: (*_ranks(exp, c), first[c.profile]))


def _ranks(exp: Experiment, config: ServerConfig) -> tuple:
    design = (exp.design or {}).get("factors") or {}
    ranks = []
    for factor, level in config.levels.items():
        listed = design.get(factor)
        names = [level_text(x) for x in listed] if isinstance(listed, Mapping | list) else []
        ranks.append(names.index(level) if level in names else len(names))
    return tuple(ranks)


def _pairs(configs: list[ServerConfig]) -> list[tuple[ServerConfig, ServerConfig]]:
    if all(c.levels for c in configs):
        one_apart = [(a, b) for a, b in itertools.combinations(configs, 2)
                     if a.levels.keys() == b.levels.keys()
                     and sum(a.levels[f] != b.levels[f] for f in a.levels) == 1]
        if one_apart:
            return one_apart
    return list(itertools.pairwise(configs))


def diff(a: ServerConfig, b: ServerConfig) -> ConfigDiff:
    """The two-sided difference of two recorded configurations (lines as multisets)."""
    ca, cb = Counter(a.lines), Counter(b.lines)
    only_a = tuple((line, n) for line, n in (ca - cb).items())
    only_b = tuple((line, n) for line, n in (cb - ca).items())
    names = list(dict.fromkeys([*a.outside, *b.outside]))
    outside = tuple((k, a.outside.get(k, "not set"), b.outside.get(k, "not set"))
                    for k in names if a.outside.get(k) != b.outside.get(k))
    return ConfigDiff(a.profile, b.profile, only_a, only_b, outside)


def config_diffs(exp: Experiment) -> list[ConfigDiff]:
    """The differences between the server profiles of ``exp``, pair by pair (see the module
    docstring); empty with fewer than two recorded configurations."""
    configs = server_configs(exp)
    return [diff(a, b) for a, b in _pairs(configs)] if len(configs) > 1 else []
