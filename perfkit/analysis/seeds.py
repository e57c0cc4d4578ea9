"""The seeds' claims on our testbed: what was published, what a sound repeat finds, a verdict.

Inputs, all data (nothing published is typed into code):

- the transcribed claims and their first-pass assessment (:func:`perfkit.seeds.claims`,
  :func:`perfkit.seeds.assess`, :func:`perfkit.seeds.raw_runs`);
- ``data/seeds/replications.csv`` (:func:`read_links`), one row per linked claim. ``kind``
  ``repeat``: a ``data/seeds-*`` experiment re-does the claim; ``base``/``new`` select its two
  arms (``column=value,...``, the CLI's selection syntax after ``PATH::``), ``at`` the load
  level of the claim, ``direction`` what the claim says of NEW against BASE in ``metric``
  (``better``, ``worse`` or ``same``). ``kind`` ``spread``: nothing here re-does the claim; the
  runs ``base`` + ``at`` select give the run-to-run spread a repeat would meet.
  ``published_base``/``published_new`` name the claim's configurations whose printed outputs
  give the **published ratio** new/base of ``metric``; ``published_ratio`` is filled only
  where no printed output gives it.

The repeated comparison is :func:`perfkit.analysis.compare_runs` on the two arms, exactly as
``perfkit compare EXP::BASE EXP::NEW --metric METRIC`` runs it: one row per load level,
Mann-Whitney U on per-run values, the Hodges-Lehmann ratio new/base with its Moses interval,
Holm over the load levels, the verdict ``better``/``worse``/``~``/``not testable``. The claim's
row is the one at ``at``. With R its ratio, [lo, hi] its interval (level 1 - alpha), v its
verdict, r the published ratio (when there is one) and the equivalence band
B = [1 - t, 1 + t] for the practical threshold t, the **verdict rule** (:func:`judge`) is:

claim of a change (direction ``better`` or ``worse``):

1. v is ``not testable`` or ``no data``: **inconclusive** (the repeat cannot test anything);
2. v is the opposite direction: **contradicted** (significant change the other way);
3. r is given and lies outside [lo, hi]: **contradicted** (the published size is excluded),
   whether or not the direction was reproduced;
4. v is the claimed direction: **supported**;
5. v is ``~`` and [lo, hi] lies inside B: **contradicted** (no change of practical size where
   one was claimed);
6. otherwise **inconclusive** (no significant change, but one of practical size is not
   excluded).

claim of no difference (direction ``same``):

1. [lo, hi] lies inside B: **supported** (an equivalence statement: the 1 - alpha interval,
   two one-sided tests at alpha / 2 each, Schuirmann 1987);
2. v is ``better`` or ``worse`` and [lo, hi] lies wholly outside B: **contradicted**;
3. otherwise **inconclusive**.

A claim without a repeat is **not testable (n = 1)** when it rests on one run per
configuration, **not testable (runs not stated)** when the write-up does not say, and
**not testable (no measurement)** for a recommendation. Beside every verdict, the runs per arm
a decisive repeat would need (:func:`perfkit.stats.runs_needed`, 80% power at alpha) to detect
the published ratio, or the threshold when none is published, at the spread of the linked runs.
"""

from __future__ import annotations

import csv
import dataclasses
import math
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from perfkit import seeds as seedfiles
from perfkit.analysis.compare import NO_CHANGE, ComparisonRow, ComparisonTable, compare_runs
from perfkit.analysis.experiment import Experiment, RunSet, Selection
from perfkit.analysis.metrics import Metric, metric
from perfkit.errors import DataError
from perfkit.stats.power import runs_needed

SUPPORTED = "supported"
CONTRADICTED = "contradicted by a repeated experiment"
INCONCLUSIVE = "inconclusive"
NOT_TESTABLE_N1 = "not testable (n = 1)"
NOT_TESTABLE_UNSTATED = "not testable (runs not stated)"
NOT_TESTABLE_NONE = "not testable (no measurement)"
KINDS = ("repeat", "spread")
DIRECTIONS = ("better", "worse", "same")
COLUMNS = ("claim_id", "kind", "experiment", "base", "new", "at", "metric", "direction",
           "published_base", "published_new", "published_ratio", "note")
#: power at which the runs a repeat needs are stated
POWER = 0.8


@dataclasses.dataclass(frozen=True)
class Link:
    """One row of ``replications.csv`` (see the module docstring); ``line`` is its line."""

    claim_id: str
    kind: str
    experiment: str
    base: str
    new: str
    at: str
    metric: str
    direction: str
    published_base: str
    published_new: str
    published_ratio: float
    note: str
    line: int


def links_path(root: str | os.PathLike | None = None) -> Path:
    return seedfiles.seeds_root(root) / "replications.csv"


def read_links(path: str | os.PathLike) -> list[Link]:
    """The rows of a replications file (``#`` lines are comments); a bad row raises
    :class:`DataError` as ``path:line: expected ..., found ...``."""
    path = Path(path)
    lines = path.read_text(encoding="utf-8").splitlines()
    numbered = [(i, ln) for i, ln in enumerate(lines, start=1) if not ln.startswith("#")]
    reader = csv.reader([ln for _, ln in numbered])
    header = next(reader, None)
    if header is None or tuple(header) != COLUMNS:
        where = numbered[0][0] if numbered else 1
        raise DataError(f"{path}:{where}: expected header {','.join(COLUMNS)}, found "
                        f"{','.join(header or [])!r}")
    out = []
    for (lineno, _), cells in zip(numbered[1:], reader, strict=True):
        out.append(_link(path, lineno, cells))
    return out


def _link(path: Path, line: int, cells: list[str]) -> Link:
    def bad(expected: str, found: Any) -> DataError:
        return DataError(f"{path}:{line}: expected {expected}, found {found!r}")

    if len(cells) != len(COLUMNS):
        raise bad(f"{len(COLUMNS)} fields", len(cells))
    row = dict(zip(COLUMNS, cells, strict=True))
    if row["kind"] not in KINDS:
        raise bad(f"kind {' or '.join(KINDS)}", row["kind"])
    if row["direction"] not in DIRECTIONS:
        raise bad(f"direction {', '.join(DIRECTIONS)}", row["direction"])
    if row["kind"] == "repeat" and not row["new"]:
        raise bad("a NEW selection for a repeat", row["new"])
    try:
        ratio = float(row["published_ratio"]) if row["published_ratio"] else math.nan
    except ValueError:
        raise bad("a number or nothing in published_ratio", row["published_ratio"]) from None
    return Link(**{**row, "published_ratio": ratio}, line=line)


# -- the rule ------------------------------------------------------------------------------------
def judge(direction: str, row_verdict: str, ci_low: float, ci_high: float,
          published_ratio: float = math.nan, threshold: float = 0.1) -> tuple[str, str]:
    """The verdict of one claim from its repeated comparison (the rule of the module
    docstring), and the reason in words."""
    band = (1 - threshold, 1 + threshold)
    has_ci = not (math.isnan(ci_low) or math.isnan(ci_high))
    inside = has_ci and band[0] <= ci_low and ci_high <= band[1]
    if direction == "same":
        if inside:
            return SUPPORTED, f"the interval lies within ±{threshold:.0%}"
        outside = has_ci and (ci_high < band[0] or ci_low > band[1])
        if row_verdict in ("better", "worse") and outside:
            return CONTRADICTED, f"a significant change beyond ±{threshold:.0%}"
        return INCONCLUSIVE, f"the interval is not within ±{threshold:.0%}"
    if row_verdict not in ("better", "worse", NO_CHANGE):
        return INCONCLUSIVE, f"the repeat is {row_verdict}"
    if row_verdict in ("better", "worse") and row_verdict != direction:
        return CONTRADICTED, f"a significant change the other way ({row_verdict})"
    if not math.isnan(published_ratio) and has_ci and not ci_low <= published_ratio <= ci_high:
        kept = "the direction is reproduced, " if row_verdict == direction else ""
        return CONTRADICTED, f"{kept}the published size x{published_ratio:.3g} lies outside " \
                             "the interval"
    if row_verdict == direction:
        return SUPPORTED, f"a significant change in the claimed direction ({direction})"
    if inside:
        return CONTRADICTED, f"no change beyond ±{threshold:.0%} where one was claimed"
    return INCONCLUSIVE, "no significant change, but a change of practical size is not excluded"


# -- the claims, one by one ----------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class Replication:
    """A repeated comparison of one claim: the table over the load levels and the claim's row."""

    link: Link
    metric: Metric
    base: RunSet
    new: RunSet
    table: ComparisonTable
    row: ComparisonRow

    @property
    def base_text(self) -> str:
        return f"data/{self.link.experiment}::{self.link.base}"

    @property
    def new_text(self) -> str:
        return f"data/{self.link.experiment}::{self.link.new}"


@dataclasses.dataclass(frozen=True)
class ClaimResult:
    """One claim: what was published, what the testbed finds, the verdict and why."""

    claim: dict[str, Any]
    assessment: dict[str, Any]
    link: Link | None
    published_ratio: float
    replication: Replication | None
    verdict: str
    reason: str
    runs_needed: int | None
    runs_needed_ratio: float
    runs_needed_note: str
    #: the printed values of ``published_base`` and ``published_new`` (empty when none)
    published_values: tuple[float, ...] = ()


@dataclasses.dataclass(frozen=True)
class SeedsAnalysis:
    """Every claim of the seeds with its verdict (:func:`reanalyse`)."""

    results: tuple[ClaimResult, ...]
    threshold: float
    alpha: float

    @property
    def replications(self) -> list[Replication]:
        return [r.replication for r in self.results if r.replication is not None]

    def to_frame(self) -> pd.DataFrame:
        """One row per claim, every number in its own column."""
        return pd.DataFrame([_record(r) for r in self.results])


def _record(r: ClaimResult) -> dict[str, Any]:
    rep, link = r.replication, r.link
    c = rep.row.comparison if rep else None
    return {
        "claim_id": r.claim["claim_id"], "seed": r.claim["seed"], "setting": r.claim["setting"],
        "metric": link.metric if link else "", "published_values": r.claim["published_values"],
        "published_ratio": r.published_ratio,
        "published_runs_per_configuration": r.assessment["n_per_configuration"],
        "experiment": link.experiment if rep else "",
        "base": link.base if rep else "", "new": link.new if rep else "",
        "at": link.at if rep else "", "direction": link.direction if rep else "",
        "n_base": c.n_base if c else pd.NA, "n_new": c.n_new if c else pd.NA,
        "ratio": c.ratio if c else math.nan,
        "ratio_ci_low": c.ratio_ci_low if c else math.nan,
        "ratio_ci_high": c.ratio_ci_high if c else math.nan,
        "p_value_holm": rep.row.p_adjusted if rep else math.nan,
        "repeat_verdict": rep.row.verdict if rep else "",
        "verdict": r.verdict, "reason": r.reason,
        "runs_per_arm_needed": r.runs_needed if r.runs_needed is not None else pd.NA,
        "runs_needed_ratio": r.runs_needed_ratio, "runs_needed_note": r.runs_needed_note,
        "assessment": r.assessment["assessment"],
    }


def published_values(link: Link, raw: pd.DataFrame, claim: pd.Series) -> tuple[float, ...]:
    """The printed ``link.metric`` of the claim's raw outputs of ``published_base`` and
    ``published_new`` (means when a configuration printed several); empty when not printed."""
    if not link.published_base or not link.published_new:
        return ()
    evidence = raw[(raw["seed"] == claim["seed"])
                   & raw["run_dir"].isin(seedfiles._items(claim["evidence_raw"]))]
    if link.metric not in evidence:
        return ()
    by = pd.to_numeric(evidence[link.metric], errors="coerce").groupby(
        evidence["configuration"]).mean()
    if not {link.published_base, link.published_new} <= set(by.index):
        raise DataError(f"replications.csv:{link.line}: expected configurations of "
                        f"{claim['claim_id']}'s raw outputs ({', '.join(map(str, by.index))}), "
                        f"found {link.published_base!r}, {link.published_new!r}")
    return float(by[link.published_base]), float(by[link.published_new])


def published_ratio(link: Link, values: tuple[float, ...]) -> float:
    """new/base of the printed values, else the link's ``published_ratio``, else NaN."""
    return values[1] / values[0] if len(values) == 2 else link.published_ratio


Loader = Callable[[str], Experiment]


def replicate(link: Link, load: Loader, alpha: float = 0.05,
              confidence: float = 0.95) -> Replication:
    """The repeated comparison of a ``repeat`` link: :func:`compare_runs` on its two arms, as
    ``perfkit compare`` runs it, and the row at the link's load level."""
    exp = load(link.experiment)
    sides = [Selection.parse(f"data/{link.experiment}::{spec}") for spec in (link.base, link.new)]
    base, new = (s.apply(exp) for s in sides)
    m = metric(link.metric, exp.frame.columns)
    table = compare_runs(base, new, m, exclude=[*sides[0].pinned, *sides[1].pinned],
                         alpha=alpha, confidence=confidence)
    return Replication(link, m, base, new, table, _row_at(table, link))


def _row_at(table: ComparisonTable, link: Link) -> ComparisonRow:
    where = Selection.parse(f"x::{link.at}").where if link.at else {}
    for row in table.rows:
        frame = pd.DataFrame([dict(zip(table.keys, row.key, strict=True))])
        if all(k in frame for k in where) and all(
                str(frame[k].iloc[0]) in v or _same_number(frame[k].iloc[0], v)
                for k, v in where.items()):
            return row
    raise DataError(f"replications.csv:{link.line}: expected a row at {link.at!r} in the "
                    f"comparison of {link.experiment} (rows: {[r.key for r in table.rows]})")


def _same_number(value: Any, wanted: list[str]) -> bool:
    try:
        return any(math.isclose(float(value), float(w)) for w in wanted)
    except (TypeError, ValueError):
        return False


def _spread_values(link: Link, load: Loader, which: str) -> np.ndarray:
    exp = load(link.experiment)
    where = {**Selection.parse(f"x::{getattr(link, which)}").where,
             **(Selection.parse(f"x::{link.at}").where if link.at else {})}
    values = exp.rows(where).values(link.metric)
    return values[np.isfinite(values) & (values > 0)]


def _needed(link: Link | None, ratio: float, load: Loader, alpha: float, threshold: float,
            seed: int) -> tuple[int | None, float, str]:
    """Runs per arm to detect ``ratio`` (else the threshold) at the spread of the link's runs."""
    if link is None:
        return None, math.nan, "no comparable runs on our testbed"
    detect = ratio if np.isfinite(ratio) and ratio > 0 and ratio != 1 else 1 + threshold
    base = _spread_values(link, load, "base")
    new = (_spread_values(link, load, "new") if link.kind == "repeat"
           else np.array([], dtype=float))
    if len(base) + len(new) < 3:
        return None, detect, "too few runs with a positive value for a spread"
    answer = runs_needed(detect, base, new, alpha=alpha, power=POWER, seed=seed)
    what = "the published ratio" if detect == ratio else f"a {threshold:.0%} change"
    where = f"{link.experiment}::{link.base}" + (f" at {link.at}" if link.at else "")
    runs = (f">= {answer.runs_per_arm}" if answer.runs_per_arm is not None
            else f"more than {answer.max_runs}")
    return answer.runs_per_arm, detect, (f"a repeat would need {runs} runs per arm to detect "
                                         f"{what} (x{detect:.3g}) with {POWER:.0%} power at "
                                         f"alpha {alpha:g}, at the spread of {where} on our "
                                         f"testbed (log sd {answer.log_sd:.3g})")


def reanalyse(load: Loader, root: str | os.PathLike | None = None, *, threshold: float = 0.1,
              alpha: float = 0.05, confidence: float = 0.95, seed: int = 1) -> SeedsAnalysis:
    """Every claim of the seeds with its verdict (the rule of the module docstring)."""
    claims = seedfiles.claims(root)
    assessment = seedfiles.assess(root).set_index("claim_id")
    raw = seedfiles.raw_runs(root)
    links = {}
    for link in read_links(links_path(root)):
        if link.claim_id not in set(claims["claim_id"]):
            raise DataError(f"{links_path(root)}:{link.line}: expected a claim_id of claims.csv,"
                            f" found {link.claim_id!r}")
        links[link.claim_id] = link
    results = []
    for _, claim in claims.iterrows():
        link = links.get(claim["claim_id"])
        printed = published_values(link, raw, claim) if link else ()
        ratio = published_ratio(link, printed) if link else math.nan
        rep = replicate(link, load, alpha, confidence) if link and link.kind == "repeat" else None
        a = assessment.loc[claim["claim_id"]]
        if rep is not None:
            c = rep.row.comparison
            verdict, reason = judge(link.direction, rep.row.verdict, c.ratio_ci_low,
                                    c.ratio_ci_high, ratio, threshold)
        else:
            verdict, reason = _untested(a)
        measured = verdict != NOT_TESTABLE_NONE
        n, detect, note = (_needed(link, ratio, load, alpha, threshold, seed) if measured
                           else (None, math.nan, ""))
        results.append(ClaimResult(claim.to_dict(), {"claim_id": claim["claim_id"], **a},
                                   link, ratio, rep, verdict, reason, n, detect, note,
                                   printed))
    return SeedsAnalysis(tuple(results), threshold, alpha)


def _untested(assessment: pd.Series) -> tuple[str, str]:
    n = assessment["n_per_configuration"]
    if str(assessment["assessment"]).startswith("a recommendation"):
        return NOT_TESTABLE_NONE, "a recommendation without a measurement"
    if pd.isna(n):
        return NOT_TESTABLE_UNSTATED, "runs per configuration not stated; no repeat here"
    return NOT_TESTABLE_N1, f"{int(n)} run per configuration; no repeat here"
