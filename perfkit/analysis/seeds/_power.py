"""The runs per arm a decisive repeat of a seeds claim would need, from a comparable spread.

The spread is the run-to-run spread of the claim's metric in the runs its link selects (a
``repeat``'s two arms, or a ``spread`` link's runs), at the claim's load level. Runs that do
not measure a working server are left out of it: those the comparison ranks worst (failed, or
a wrk2 run that did not keep its rate: :mod:`perfkit.analysis.core._runstatus`) and, on a metric
where failing is worst, runs with more than :data:`perfkit.model.ERROR_RATIO_WARN` of their
requests failed (the model warns that they "describe a failing server"). A ``published`` link
has no comparable runs, and then no number is given: none is borrowed from an unrelated
experiment. A ``spread`` link's runs must be of one of the claim's configurations: their
recorded server profile is its ``published_base`` or ``published_new``; runs of another
configuration (a cache set-up for a claim about an uncached server) give no number either.

The repeat is tested as ``perfkit compare`` tests it: Holm over the load levels of its
experiment, so a run count is found for ``alpha / family`` (Holm's first step; the family
is the number of load levels of the link's ``at`` column in the experiment).

A claim the repeat already **decided** (supported, supported in direction, contradicted)
needs no run count for itself (:func:`for_decided`): one sized for the published ratio, or
for the threshold when the repeat's interval already lies within it, is left out; one sized
for the threshold is kept only as the answer to a finer question, and its note says so (the
runs to detect a change as small as the threshold at this spread, if one mattered).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import numpy as np

from perfkit.analysis.compare import POWER
from perfkit.analysis.core import Experiment, RunSet, metric, run_statuses
from perfkit.analysis.seeds._links import Link
from perfkit.model import ERROR_RATIO_WARN
from perfkit.stats.power import runs_needed

Loader = Callable[[str], Experiment]


@dataclasses.dataclass(frozen=True)
class Needed:
    """Runs per arm (None: not found, or nothing to size it from), the ratio to detect, the
    Holm family it is sized for, and the sentence that says from which runs."""

    runs_per_arm: int | None
    ratio: float
    family: int
    note: str
    #: whether it is sized for the published ratio (else for the threshold)
    published: bool = False


def spread_runs(link: Link, load: Loader, which: str) -> tuple[RunSet, np.ndarray, int]:
    """The runs of ``link``'s ``which`` arm at its load level, the mask of those that measure
    a working server, and how many were left out."""
    exp = load(link.experiment)
    rows = exp.rows({**link.where(which), **link.where("at")})
    m = metric(link.metric, exp.frame.columns)
    values = rows.values(m.name)
    keep = np.isfinite(values) & (values > 0)
    keep &= np.array([not s.counts_as_failed for s in run_statuses(rows, m)], dtype=bool)
    if m.failed_is_worst and "error_ratio" in rows.frame:
        keep &= ~(rows.values("error_ratio") > ERROR_RATIO_WARN)
    return rows, keep, int((~keep).sum())


def _not_comparable(link: Link, rows: RunSet) -> str:
    """Why a ``spread`` link's runs are not of the claim's configurations ("" when they are):
    their recorded server profiles must be its published base or new configuration."""
    wanted = {c for c in (link.published_base, link.published_new) if c}
    profiles = {str(p) for r in rows.runs
                if (p := ((r.manifest or {}).get("server") or {}).get("profile"))}
    if not wanted or not profiles or profiles & wanted:
        return ""
    return (f"the runs {link.experiment}::{link.base} (profile {', '.join(sorted(profiles))}) "
            f"are of none of the claim's configurations ({', '.join(sorted(wanted))}): not "
            "comparable")


def family_of(link: Link, load: Loader) -> int:
    """The load levels a repeat in ``link``'s experiment is Holm-adjusted over."""
    at = link.where("at")
    if not at:
        return 1
    exp = load(link.experiment)
    (column,) = at
    return max(1, int(exp.rows().frame[column].nunique()))


def needed(link: Link | None, ratio: float, load: Loader, alpha: float, threshold: float,
           seed: int) -> Needed:
    """Runs per arm to detect ``ratio`` (else the threshold) at the spread of the link's
    comparable runs, for Holm over the experiment's load levels."""
    detect = ratio if np.isfinite(ratio) and ratio > 0 and ratio != 1 else 1 + threshold
    published = detect == ratio
    what = "the published ratio" if published else f"a {threshold:.0%} change"
    if link is None or link.kind == "published":
        why = link.note if link is not None and link.note else \
            "no runs on our testbed are linked to this claim as comparable"
        return Needed(None, detect, 1, f"no run count for a repeat: {why} (none is borrowed "
                                       "from an unrelated experiment)")
    sides = ["base", "new"] if link.kind == "repeat" else ["base"]
    found = [spread_runs(link, load, w) for w in sides]
    alien = _not_comparable(link, found[0][0]) if link.kind == "spread" else ""
    if alien:
        return Needed(None, detect, 1, f"no run count for a repeat: {alien} (none is borrowed "
                                       "from an unrelated experiment)")
    values = [rows.values(link.metric)[keep] for rows, keep, _ in found]
    if len(values) == 1:
        values.append(np.array([], dtype=float))
    left_out = sum(n for *_, n in found)
    where = " and ".join(f"{link.experiment}::{getattr(link, w)}" for w in sides) + (
        f" at {link.at}" if link.at else "")
    family = family_of(link, load)
    if len(values[0]) + len(values[1]) < 3:
        return Needed(None, detect, family, f"too few runs of a working server for a spread "
                                            f"of {link.metric} in {where}")
    answer = runs_needed(detect, values[0], values[1], alpha=alpha, power=POWER,
                         family_size=family, seed=seed)
    runs = (f">= {answer.runs_per_arm}" if answer.runs_per_arm is not None
            else f"more than {answer.max_runs}")
    holm = f", Holm over {family} load levels (alpha {alpha / family:.3g})" if family > 1 \
        else ""
    out = f"; {left_out} run(s) left out (failed, saturated or over " \
          f"{ERROR_RATIO_WARN:.0%} errors)" if left_out else ""
    return Needed(answer.runs_per_arm, detect, family, (
        f"a repeat would need {runs} runs per arm to detect {what} (x{detect:.3g}) with "
        f"{POWER:.0%} power at alpha {alpha:g}{holm}, at the spread of {link.metric} in "
        f"{where} on our testbed ({sum(map(len, values))} runs, log sd "
        f"{answer.log_sd:.3g}{out})"), published)


def for_decided(need: Needed, comparison, threshold: float) -> Needed:
    """The run count of a claim its repeat (``comparison``: its row's
    :class:`perfkit.stats.compare.Comparison`) already decided: left out when it is sized for
    the published ratio, when there is none, or when the repeat's interval already lies
    within ±``threshold``; else kept, its note saying what it is for (module docstring)."""
    c = comparison
    within = 1 - threshold <= c.ratio_ci_low and c.ratio_ci_high <= 1 + threshold
    if need.published or need.runs_per_arm is None or within:
        return Needed(None, need.ratio, need.family, "", need.published)
    return dataclasses.replace(need, note=(
        f"the repeat decided this claim with {c.n_base} vs {c.n_new} runs; the run count is "
        f"for a finer question, if a change as small as {threshold:.0%} mattered: {need.note}"))
