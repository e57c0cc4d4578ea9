"""What each level of a factor changes in the server, as the run manifests record it.

:func:`perfkit.analysis.configs.config_diffs` compares the recorded configurations two by two;
the pairs that differ in exactly one factor say what that factor's high level changes against
its low one. :func:`level_diffs` gathers them per factor: when every such pair shows the same
lines (the factor changes the same thing whatever the other factors' levels), one
:class:`LevelDiff` says so; otherwise each distinct difference is kept with the pairs that
show it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from perfkit.analysis.configs import ConfigDiff, config_diffs, server_configs
from perfkit.analysis.experiment import Experiment


@dataclasses.dataclass(frozen=True)
class LevelDiff:
    """One factor's change from its ``low`` to its ``high`` level: the directive lines only
    the low level's configuration has (``removed``) and only the high level's (``added``),
    each ``(line, count)``, the outside settings that differ, and the profile pairs showing
    it (``pairs``: ``(low profile, high profile)``)."""

    factor: str
    low: str
    high: str
    removed: tuple[tuple[str, int], ...]
    added: tuple[tuple[str, int], ...]
    outside: tuple[tuple[str, str, str], ...]
    pairs: tuple[tuple[str, str], ...]

    def text(self) -> str:
        """``"keepalive none -> keepalive: removes `x;`; adds `y;`, `z;` (x3)"``."""
        def lines(items):
            return ", ".join(f"`{line}`" + (f" (x{n})" if n > 1 else "") for line, n in items)

        parts = ([f"removes {lines(self.removed)}"] if self.removed else []) + (
            [f"adds {lines(self.added)}"] if self.added else []) + [
            f"{name} {a} -> {b}" for name, a, b in self.outside]
        return (f"{self.factor} {self.low} -> {self.high}: "
                + ("; ".join(parts) or "the same recorded configuration"))


def _oriented(d: ConfigDiff, factor: str, levels: dict[str, dict[str, str]], low: str
              ) -> tuple[tuple, tuple, tuple, tuple[str, str]]:
    """The diff from the low level's profile to the high level's."""
    if levels[d.first].get(factor) == low:
        return d.only_first, d.only_second, d.outside, (d.first, d.second)
    return (d.only_second, d.only_first, tuple((n, b, a) for n, a, b in d.outside),
            (d.second, d.first))


def level_diffs(exp: Experiment, factors: Sequence[str],
                coding: dict[str, dict] | None = None) -> list[LevelDiff]:
    """Per factor (in the order given), what its high level changes against its low one,
    from the pairs of recorded configurations that differ in that factor alone; ``coding``:
    each factor's ``{"low": ..., "high": ...}`` (as the factorial analysis coded them), else
    the design's level order. Empty when the configurations are not recorded."""
    from perfkit.formatting import level_text

    configs = server_configs(exp)
    levels = {c.profile: dict(c.levels) for c in configs}
    out = []
    for factor in factors:
        values = list(dict.fromkeys(v[factor] for v in levels.values() if factor in v))
        if coding and factor in coding:
            low, high = level_text(coding[factor]["low"]), level_text(coding[factor]["high"])
        elif len(values) == 2:
            low, high = values
        else:
            continue
        found: dict[tuple, list[tuple[str, str]]] = {}
        for d in config_diffs(exp):
            a, b = levels.get(d.first, {}), levels.get(d.second, {})
            if factor not in a or factor not in b or a[factor] == b[factor]:
                continue
            if any(a.get(f) != b.get(f) for f in a if f != factor):
                continue
            removed, added, outside, pair = _oriented(d, factor, levels, low)
            found.setdefault((removed, added, outside), []).append(pair)
        out += [LevelDiff(factor, low, high, r, a, o, tuple(p))
                for (r, a, o), p in found.items()]
    return out
