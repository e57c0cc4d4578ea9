"""The seeds' claims on our testbed: what was published, what a sound repeat finds, a verdict.

Inputs, all data (nothing published is typed into code):

- the transcribed claims and their first-pass assessment
  (:mod:`perfkit.analysis.seeds._published`: :func:`~perfkit.analysis.seeds._published.claims`,
  :func:`~perfkit.analysis.seeds._published.assess`,
  :func:`~perfkit.analysis.seeds._published.raw_runs`);
- ``data/seeds/replications.csv`` (:mod:`perfkit.analysis.seeds._links`), one row per linked
  claim: a ``repeat`` in a ``data/seeds-*`` experiment (two arms, the claim's load level and
  direction), the runs whose ``spread`` sizes a repeat, or ``published`` only (nothing here is
  comparable); the configurations whose printed outputs give the **published ratio** r; and
  the configuration the write-up's own quoted figure is relative to, when it is another one.

The repeated comparison is :func:`perfkit.analysis.compare_runs` on the two arms, exactly as
``perfkit compare EXP::BASE EXP::NEW --metric METRIC`` runs it: one row per load level,
Mann-Whitney U on per-run values, the Hodges-Lehmann ratio new/base with its Moses interval,
Holm over the load levels, the verdict ``better``/``worse``/``~``/``not testable``. The claim's
row is the one at ``at``. With [lo, hi] its interval (level 1 - alpha), v its verdict, r the
published ratio (when there is one) and the equivalence band B = [1 - t, 1 + t] for the
practical threshold t, the **verdict rule** (:func:`judge`) is:

The published ratio r is **comparable** with the repeat only when it is the setting's alone:
a write-up that certainly changed more than the setting between its two runs (the claim's
``also_changed``, unless it says "possibly") publishes the size of its whole change, while a
repeat changes one setting (:func:`confounded`). The repeat's interval is **a size** only
when both its ends are finite and positive: runs the comparison ranks worst (failed, or
saturated: a wrk2 run that did not keep its rate) make an end 0 or infinity, and the finite
end is then driven by runs that served next to nothing (a failed arm's other runs), a bound
on the direction, no size.

claim of a change (direction ``better`` or ``worse``):

0. the repeat did not reach the regime the claim is about (:func:`perfkit.analysis.
   seeds_notes.regime_gap`: no run kept its offered rate, or the published values sit on a
   known timeout the base arm never showed): **inconclusive** whatever else, unless the claimed
   change was seen (the reason says which part of the regime is missing);
1. v is ``not testable`` or ``no data``: **inconclusive** (the repeat cannot test anything);
2. v is the opposite direction: **contradicted** (significant change the other way);
3. r is given and comparable, the interval is a size, and r lies outside [lo, hi]:
   **contradicted** (the published size is excluded), whether or not the direction was
   reproduced;
4. v is the claimed direction and r is given but not comparable, or the interval is no size:
   **supported in direction; size not comparable** (the direction holds; the size cannot be
   tested);
5. v is the claimed direction: **supported**;
6. v is ``~`` and [lo, hi] lies inside B: **contradicted** (no change of practical size where
   one was claimed);
7. otherwise **inconclusive** (no significant change, but one of practical size is not
   excluded).

claim of no difference (direction ``same``):

1. [lo, hi] lies inside B: **supported** (an equivalence statement: the 1 - alpha interval,
   two one-sided tests at alpha / 2 each, Schuirmann 1987);
2. v is ``better`` or ``worse`` and [lo, hi] lies wholly outside B: **contradicted**;
3. otherwise **inconclusive**.

Where runs were ranked worst, the reason says what they were
(:func:`perfkit.analysis.seeds._notes.ranked_worst`) instead of a ratio.

A claim without a repeat is **not testable (n = 1)** when it rests on one run per
configuration, **not testable (runs not stated)** when the write-up does not say, and
**not testable (no measurement)** for a recommendation. Beside every verdict, the runs per arm
a decisive repeat would need to detect r, or the threshold when none is published or r is not
the repeated setting's alone
(:mod:`perfkit.analysis.seeds._power`: 80% power, Holm over the experiment's load levels, at
the spread of comparable runs, or no number when nothing here is comparable); a claim the
repeat already decided carries only the runs to detect a change of the threshold's size, said
to be for that finer question, and none when the repeat decided that too
(:func:`perfkit.analysis.seeds._power.for_decided`). Every claim
carries the warnings its numbers need (:attr:`ClaimResult.warnings`): published values on a
known timeout, runs kept in doubt, a confounded write-up, the repeat's drift or blocks.
"""

from __future__ import annotations

import dataclasses
import math
import os
from collections.abc import Callable
from typing import Any, cast

import pandas as pd

from perfkit.analysis.compare import (
    BETTER,
    NO_CHANGE,
    WORSE,
    ComparisonRow,
    ComparisonTable,
    compare_runs,
    status_notes,
)
from perfkit.analysis.context import threats
from perfkit.analysis.core import (
    NOT_FINITE_RATIO,
    Experiment,
    Metric,
    RunSet,
    Selection,
    affected,
    mechanism_columns,
    metric,
    not_finite,
)
from perfkit.analysis.seeds import _notes as notes
from perfkit.analysis.seeds import _power as seeds_power
from perfkit.analysis.seeds import _published as seedfiles
from perfkit.analysis.seeds._links import (
    COLUMNS,
    DIRECTIONS,
    KINDS,
    SAME,
    Link,
    links_path,
    printed_values,
    published_ratio,
    read_links,
)
from perfkit.errors import DataError
from perfkit.vocabulary import ClaimVerdict
from perfkit.warning import Warn, texts

#: the columns of a claim's record that are its repeat's ratio (:func:`not_finite`), and the
#: ratios among them where a 0 is no finite size
SEED_REASONS = dict.fromkeys(("ratio", "ratio_ci_low", "ratio_ci_high"), NOT_FINITE_RATIO)
SEED_RATIOS = ("published_ratio", "quote_ratio", "ratio", "ratio_ci_low", "ratio_ci_high",
               "runs_needed_ratio")

__all__ = ["COLUMNS", "CONTRADICTED", "DIRECTIONS", "INCONCLUSIVE", "KINDS",
           "NOT_TESTABLE_N1", "NOT_TESTABLE_NONE", "NOT_TESTABLE_UNSTATED", "SUPPORTED",
           "SUPPORTED_DIRECTION", "ClaimResult", "Link", "Replication", "SeedsAnalysis",
           "confounded", "judge", "links_path", "published_ratio", "printed_values",
           "read_links", "reanalyse", "replicate"]

SUPPORTED = ClaimVerdict.SUPPORTED
SUPPORTED_DIRECTION = ClaimVerdict.SUPPORTED_DIRECTION
CONTRADICTED = ClaimVerdict.CONTRADICTED
INCONCLUSIVE = ClaimVerdict.INCONCLUSIVE
NOT_TESTABLE_N1 = ClaimVerdict.NOT_TESTABLE_N1
NOT_TESTABLE_UNSTATED = ClaimVerdict.NOT_TESTABLE_UNSTATED
NOT_TESTABLE_NONE = ClaimVerdict.NOT_TESTABLE_NONE
#: power at which the runs a repeat needs are stated
POWER = seeds_power.POWER
#: the verdicts a repeat decides: the claim needs no run count of its own
DECIDED = (SUPPORTED, SUPPORTED_DIRECTION, CONTRADICTED)


# -- the rule ------------------------------------------------------------------------------------
def judge(direction: str, row_verdict: str, ci_low: float, ci_high: float,
          published_ratio: float = math.nan, threshold: float = 0.1, *,
          published_confounded: bool = False) -> tuple[ClaimVerdict, str]:
    """The verdict of one claim from its repeated comparison (the rule of the module
    docstring), and the reason in words. ``published_confounded``: the write-up changed more
    than the setting, so its ratio is no size of the setting (:func:`confounded`)."""
    band = (1 - threshold, 1 + threshold)
    has_ci = not (math.isnan(ci_low) or math.isnan(ci_high))
    inside = has_ci and band[0] <= ci_low and ci_high <= band[1]
    if direction == SAME:
        if inside:
            return SUPPORTED, f"the interval lies within ±{threshold:.0%}"
        outside = has_ci and (ci_high < band[0] or ci_low > band[1])
        if row_verdict in (BETTER, WORSE) and outside:
            return CONTRADICTED, f"a significant change beyond ±{threshold:.0%}"
        return INCONCLUSIVE, f"the interval is not within ±{threshold:.0%}"
    if row_verdict not in (BETTER, WORSE, NO_CHANGE):
        return INCONCLUSIVE, f"the repeat is {row_verdict}"
    if row_verdict in (BETTER, WORSE) and row_verdict != direction:
        return CONTRADICTED, f"a significant change the other way ({row_verdict})"
    published = not math.isnan(published_ratio)
    sized = has_ci and 0 < ci_low and ci_high < math.inf
    if published and sized and not published_confounded \
            and not ci_low <= published_ratio <= ci_high:
        kept = "the direction is reproduced but not the size: " if row_verdict == direction \
            else ""
        return CONTRADICTED, (f"{kept}the published x{published_ratio:.3g} lies outside the "
                              f"interval [{_end(ci_low)}, {_end(ci_high)}]")
    if row_verdict == direction:
        why = [f"the published x{published_ratio:.3g} is not the setting's alone (the write-up "
               "changed more between its runs)"] if published and published_confounded else []
        if published and not sized and _end(ci_low) == _end(ci_high):
            why.append(f"the repeat's interval has no finite end (both {_end(ci_low)}: every "
                       "run of one arm ranked worst): a direction, no size nor bound")
        elif published and not sized:
            why.append(f"the repeat's interval [{_end(ci_low)}, {_end(ci_high)}] has an end "
                       "at 0 or infinity (runs ranked worst): a bound, no size")
        if why:
            return SUPPORTED_DIRECTION, (f"a significant change in the claimed direction "
                                         f"({direction}); the size is not tested: "
                                         + "; ".join(why))
        return SUPPORTED, f"a significant change in the claimed direction ({direction})"
    if inside:
        return CONTRADICTED, f"no change beyond ±{threshold:.0%} where one was claimed"
    return INCONCLUSIVE, "no significant change, but a change of practical size is not excluded"


def confounded(claim: Any) -> bool:
    """Whether the write-up certainly changed more than the claim's setting between its runs
    (its ``also_changed`` is filled and does not start with "possibly"): its published ratio
    is then the size of the whole change, not of the one setting a repeat changes."""
    also = str(claim.get("also_changed") or "").strip()
    return bool(also) and not also.startswith("possibly")


def _end(value: float) -> str:
    return "unbounded" if math.isinf(value) else "x0" if value == 0 else f"x{value:.3g}"


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

    def block_treatment(self) -> tuple[str, str, bool]:
        """How this result treats an experiment's blocks: what it is, of what, and
        whether it models them (:func:`perfkit.analysis.context._validity.block_treatment`)."""
        return "the Mann-Whitney comparisons", f"claim {self.link.claim_id}", False

    @property
    def base_text(self) -> str:
        return f"data/{self.link.experiment}::{self.link.base}"

    @property
    def new_text(self) -> str:
        return f"data/{self.link.experiment}::{self.link.new}"

    @property
    def is_magnitude(self) -> bool:
        """Whether the claim row's ratio and both ends of its interval are finite positive
        numbers: a size. Runs ranked worst (failed, saturated) can make them 0 or infinity."""
        c = self.row.comparison
        return all(0 < v < math.inf for v in (c.ratio, c.ratio_ci_low, c.ratio_ci_high))


@dataclasses.dataclass(frozen=True)
class ClaimResult:
    """One claim: what was published, what the testbed finds, the verdict and why.

    ``worst`` says what the runs the repeat ranked worst were (failed, saturated), ``warnings``
    everything else a reader of the numbers must know (they travel to the report's index);
    ``quote_ratio`` is the printed outputs' ratio the write-up's quoted figure refers to, when
    it is relative to another configuration (``link.quote_base``) than ``published_ratio``.
    """

    claim: dict[str, Any]
    assessment: dict[str, Any]
    link: Link | None
    published_ratio: float
    replication: Replication | None
    verdict: ClaimVerdict
    reason: str
    runs_needed: int | None
    runs_needed_ratio: float
    runs_needed_note: str
    #: the printed values of ``published_base`` and ``published_new`` (empty when none)
    published_values: tuple[float, ...] = ()
    quote_ratio: float = math.nan
    runs_needed_family: int = 1
    worst: tuple[str, ...] = ()
    #: coded warnings, and the seeds' own sentences (not coded yet)
    warnings: tuple[Warn | str, ...] = ()

    @property
    def reported_verdict(self) -> str:
        """The verdict as answers read it: a decided claim whose repeat's metric was affected
        by a timeout cap (the generator's own timeout counted as errors, a throughput
        throttled: :func:`perfkit.analysis.core._caps.affected`) says so beside the verdict."""
        rep = self.replication
        return affected(self.verdict, rep.row.cap_affected_ms if rep is not None else (),
                        DECIDED)


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
        """One row per claim, one variable per column (the selections split into
        ``factor``/``base_level``/``new_level``/``held_*``/``at_*``); no +-inf: a ratio of 0 or
        infinity is missing and ``warnings`` says why."""
        return pd.DataFrame([_record(r) for r in self.results])


def _record(r: ClaimResult) -> dict[str, Any]:
    rep, link = r.replication, r.link
    c = rep.row.comparison if rep else None
    tested = link is not None and link.kind != "published"
    selection = link.columns() if link is not None and tested else dict.fromkeys(
        ("factor", "base_level", "new_level", "held_column", "held_value", "at_column"), "")
    rec: dict[str, Any] = {
        "claim_id": r.claim["claim_id"], "seed": r.claim["seed"], "setting": r.claim["setting"],
        "verdict": r.verdict, "cap_affected": bool(rep is not None and rep.row.cap_affected_ms),
        "metric": link.metric if link else "",
        "published_values": r.claim["published_values"], "published_ratio": r.published_ratio,
        "quote_base": link.quote_base if link else "", "quote_ratio": r.quote_ratio,
        "published_runs_per_configuration": r.assessment["n_per_configuration"],
        "link_kind": link.kind if link else "",
        "experiment": link.experiment if link and tested else "",
        **selection, "at_value": selection.get("at_value", math.nan),
        "direction": link.direction if rep and link else "",  # a repeat has its link
        "n_base": c.n_base if c else pd.NA, "n_new": c.n_new if c else pd.NA,
        "n_failed_base": c.n_failed_base if c else pd.NA,
        "n_failed_new": c.n_failed_new if c else pd.NA,
        "ratio": c.ratio if c else math.nan,
        "ratio_ci_low": c.ratio_ci_low if c else math.nan,
        "ratio_ci_high": c.ratio_ci_high if c else math.nan,
        "p_value_holm": rep.row.p_adjusted if rep else math.nan,
        "holm_family": rep.table.family if rep else pd.NA,
        "repeat_outcome": rep.row.verdict if rep else "", "reason": r.reason,
        "runs_per_arm_needed": r.runs_needed if r.runs_needed is not None else pd.NA,
        # the ratio and family a run count is for; none without a run count
        "runs_needed_ratio": r.runs_needed_ratio if r.runs_needed is not None else math.nan,
        "runs_needed_holm_family": r.runs_needed_family if r.runs_needed is not None else pd.NA,
        "runs_needed_note": r.runs_needed_note, "assessment": r.assessment["assessment"],
    }
    if rep is not None and rep.row.mechanism:  # what the server and the kernel counted
        rec.update(mechanism_columns(rep.row.mechanism))
    rec["warnings"] = "; ".join(texts([*r.worst, *r.warnings,
                                       *not_finite(rec, SEED_REASONS, SEED_RATIOS)]))
    return rec


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
    where = link.where("at")
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
        a = assessment.loc[claim["claim_id"]]
        results.append(_claim(claim, a, links.get(claim["claim_id"]), raw, load, threshold,
                              alpha, confidence, seed))
    return SeedsAnalysis(tuple(results), threshold, alpha)


def _claim(claim: pd.Series, a: pd.Series, link: Link | None, raw: pd.DataFrame, load: Loader,
           threshold: float, alpha: float, confidence: float, seed: int) -> ClaimResult:
    printed = printed_values(link, raw, claim) if link else ()
    ratio = published_ratio(link, printed) if link else math.nan
    quoted = printed_values(link, raw, claim, link.quote_base) \
        if link and link.quote_base else ()
    rep = replicate(link, load, alpha, confidence) if link and link.kind == "repeat" else None
    caps = notes.published_caps(claim["published_values"])
    worst: list[str] = []
    if rep is not None:
        assert link is not None  # a repeat has its link
        c = rep.row.comparison
        other = link.contrast == "differs"  # another change of the setting than published
        verdict, reason = judge(link.direction, rep.row.verdict, c.ratio_ci_low,
                                c.ratio_ci_high, ratio, threshold,
                                published_confounded=confounded(claim) or other)
        if other:
            reason = f"{contrast_text(rep, link)}; {reason}"
        gap = notes.regime_gap(rep, claim["published_values"])
        if gap and (verdict in (CONTRADICTED, INCONCLUSIVE)
                    or (verdict == SUPPORTED and link.direction == "same")):
            # no verdict on a claim about a regime the repeat never reached
            verdict, reason = INCONCLUSIVE, (f"the repeat did not reach the claim's regime "
                                             f"({gap}); its comparison: {reason}")
        worst = notes.ranked_worst(rep)
        if not rep.is_magnitude and worst and verdict != SUPPORTED_DIRECTION:
            ends = " and ".join(dict.fromkeys(
                "0" if v == 0 else "infinity" for v in (c.ratio, c.ratio_ci_low, c.ratio_ci_high)
                if v == 0 or v == math.inf))
            n = c.n_failed_base + c.n_failed_new
            reason += (f"; the ratio reaches {ends} because {n} run(s) were ranked worst "
                       "(what they were is stated with it): that end is no size")
    else:
        verdict, reason = _untested(a)
    if caps:
        reason += "; " + "; ".join(caps)
    # a repeat of one setting is not sized for a whole write-up's change
    sized = math.nan if rep is not None and confounded(claim) else ratio
    need = (seeds_power.needed(link, sized, load, alpha, threshold, seed)
            if verdict != NOT_TESTABLE_NONE else seeds_power.Needed(None, math.nan, 1, ""))
    if verdict in DECIDED:
        assert rep is not None  # decided: repeated
        need = seeds_power.for_decided(need, rep.row.comparison, threshold)
    return ClaimResult(cast(dict[str, Any], claim.to_dict()), {"claim_id": claim["claim_id"], **a},
                       link, ratio, rep,
                       verdict, reason, need.runs_per_arm, need.ratio, need.note, printed,
                       quoted[1] / quoted[0] if len(quoted) == 2 else math.nan, need.family,
                       tuple(worst), tuple(_warnings(claim, rep, load)))


def contrast_text(rep: Replication, link: Link) -> str:
    """Both changes, named: ``the write-up changed access_log off -> ... buffer=256k; the
    repeat changes access_log (unbuffered -> buffered): access_log ... -> ...`` (the repeat's
    from its manifests, :func:`perfkit.analysis.context._levels.level_changes`)."""
    from perfkit.analysis.context import changes_text, level_changes

    arms = RunSet(pd.concat([rep.base.frame, rep.new.frame], ignore_index=True),
                  (*rep.base.runs, *rep.new.runs), link.experiment, rep.base.factors)
    cols = link.columns()
    order = {link.factor: (cols["base_level"], cols["new_level"])}
    repeat = changes_text(level_changes(arms, [link.factor], order), link.factor)
    differs = " (another change of the setting)" if link.contrast == "differs" else ""
    return (f"the write-up changed {link.published_change or 'what its configurations name'}; "
            f"the repeat changes {repeat}{differs}")


def _warnings(claim: pd.Series, rep: Replication | None, load: Loader) -> list[Warn | str]:
    """What a reader of a repeated claim's numbers must know besides its verdict: runs kept in
    doubt, the comparison row's own warnings, a confounded write-up, the experiment's threats
    that bear on numbers (drift, blocks, timeouts, a busy generator)."""
    if rep is None:
        return []
    out: list[Warn | str] = list(notes.in_doubt(rep))
    stated = {w for side in ("base", "new")
              for w in status_notes(side, notes.cell_statuses(rep, side)[1])}
    out += [w for w in rep.row.warnings if w not in stated]
    if rep.link.published_change and rep.link.contrast != "differs":
        out.append(contrast_text(rep, rep.link))
    out += rep.row.mechanism.warnings
    also = str(claim.get("also_changed") or "")
    if also:
        may = "may have changed" if also.startswith("possibly") else "changed"
        out.append(f"the write-up {may} more than the setting ({also}); the repeat changes only "
                   f"{rep.link.factor}: it tests the setting, not the write-up's whole change")
    out += notes.experiment_warnings(threats(load(rep.link.experiment)))
    return list(dict.fromkeys(out))


def _untested(assessment: pd.Series) -> tuple[ClaimVerdict, str]:
    n = assessment["n_per_configuration"]
    if str(assessment["assessment"]).startswith("a recommendation"):
        return NOT_TESTABLE_NONE, "a recommendation without a measurement"
    if pd.isna(n):
        return NOT_TESTABLE_UNSTATED, "runs per configuration not stated; no repeat here"
    return NOT_TESTABLE_N1, f"{int(n)} run per configuration; no repeat here"
