"""The notes a comparison row carries: about its runs' statuses
(:mod:`perfkit.analysis.core._runstatus`: which runs it ranks worst, the saturated and the doubtful
ones, each run named once, a saturated run ranked worst never also called failed), and about
what its run counts can test: a ``not testable`` result always says how many runs per arm
would make it testable (:func:`need_text`, the rule of
:func:`perfkit.stats.mannwhitney.runs_to_reach_alpha` with Holm over the table), the result without
the doubtful runs included (:func:`sensitivity_note`).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence

import numpy as np

from perfkit.analysis.context import ArmDriftOnce, interleaving
from perfkit.analysis.core import Metric, RunJudgement, RunSet
from perfkit.formatting import change_ci, fmt_p
from perfkit.stats.comparison import Comparison
from perfkit.stats.mannwhitney import runs_to_reach_alpha
from perfkit.vocabulary import RunStatus
from perfkit.warning import Code, Warn
from perfkit.wording import need_words

#: the most runs per arm :func:`need_text` looks for
MAX_RUNS_PER_ARM = 100


def ranked_worst(statuses: Sequence[RunJudgement], metric: Metric) -> np.ndarray:
    """Which runs a comparison of ``metric`` ranks worst whatever their value: the failed and
    saturated ones, on a metric where failing is worst (:attr:`Metric.failed_is_worst`). A
    run without a value ranks worst in any case (:func:`perfkit.stats.compare` takes NaN as
    failed)."""
    return np.array([s.counts_as_failed and metric.failed_is_worst for s in statuses],
                    dtype=bool)


def status_notes(label: str, statuses: list[RunJudgement]) -> list[Warn]:
    """The side's saturated runs (ranked with the failed ones) and its runs in doubt (kept
    with their values), each with the reasons of its runs."""
    out = []
    for kind, code in ((RunStatus.SATURATED, Code.RUNS_SATURATED),
                       (RunStatus.SHORT, Code.RUNS_SHORT),
                       (RunStatus.PARTIAL, Code.RUNS_PARTIAL)):
        reasons = [s.reason for s in statuses if s.status == kind]
        if reasons:
            out.append(Warn(code, side=label, reasons=reasons))
    return out


def one_note_per_run(c: Comparison, statuses: Sequence[list[RunJudgement]],
                      failed: Sequence[np.ndarray], metric: Metric) -> Comparison:
    """``c`` with the test's note on the runs it ranked worst counting only the failed ones: a
    saturated run ranked worst has its own note (:func:`status_notes`), so the same run is
    never described as both saturated and failed."""
    notes: list[Warn | None] = list(c.warnings)
    for label, st, worst in zip(("base", "new"), statuses, failed, strict=True):
        saturated = sum(1 for s, w in zip(st, worst, strict=True)
                        if w and s.status == RunStatus.SATURATED)
        if not saturated:
            continue
        for i, note in enumerate(notes):
            if note is not None and note.code is Code.FAILED_RANKED_WORST \
                    and note["side"] == label:
                left = note["runs"] - saturated
                notes[i] = Warn(Code.FAILED_RANKED_WORST, side=label, runs=left,
                                lower_is_better=note["lower_is_better"]) if left > 0 else None
    return dataclasses.replace(c, warnings=tuple(n for n in notes if n is not None))


def need_text(alpha: float, family: int = 1) -> str:
    """What would make a comparison testable at ``alpha`` with Holm over ``family``
    comparisons: ``"needs >= 5 runs per arm"`` (the fewest equal runs per arm whose smallest
    attainable p, times ``family``, is below ``alpha``)."""
    return need_words(runs_to_reach_alpha(alpha, MAX_RUNS_PER_ARM, family), family,
                      MAX_RUNS_PER_ARM)


def untestable_text(n_base: int, n_new: int, alpha: float, family: int = 1) -> str:
    """Why ``n_base`` vs ``n_new`` runs are not testable and what would make them:
    ``"4 vs 1 runs cannot reach p < 0.05 (Holm over 6): needs >= 6 runs per arm ..."``."""
    holm = f" (Holm over {family})" if family > 1 else ""
    return (f"{n_base} vs {n_new} runs cannot reach p < {alpha:g}{holm}: "
            f"{need_text(alpha, family)}")


def sensitivity_note(key: str, s: Comparison, verdict: str, untestable: bool,
                     family: int = 1) -> str:
    """The result of a row without its doubtful (``short``) runs, as one note: ``"100
    without its short runs (4 vs 1 runs): -8.0% [no CI], p 0.800: not testable: 4 vs 1 runs
    cannot reach p < 0.05: needs >= 4 runs per arm"``; ``untestable``: ``verdict`` is ``not
    testable``."""
    change = change_ci(s.ratio, s.ratio_ci_low, s.ratio_ci_high) if s.ratio == s.ratio \
        else "no ratio"
    p = fmt_p(s.p_value) if s.p_value == s.p_value else "-"
    why = f": {untestable_text(s.n_base, s.n_new, s.alpha, family)}" if untestable else ""
    return (f"{key or 'the row'} without its short runs ({s.n_base} vs {s.n_new} runs): "
            f"{change}, p {p}: {verdict or '-'}{why}")


def untestable_note(c: Comparison, untestable: bool, family: int) -> tuple[Warn, ...]:
    """The note of a row (``untestable``: its verdict is ``not testable``) that only the
    family's adjustment makes untestable (a row that cannot reach alpha on its own already
    says so, :func:`perfkit.stats.compare`'s warning)."""
    alpha = c.alpha
    if not untestable or family < 2 or not c.min_attainable_p < alpha:
        return ()
    return (Warn(Code.UNTESTABLE_DESIGN, family=family,
                 need=runs_to_reach_alpha(alpha, MAX_RUNS_PER_ARM, family),
                 most=MAX_RUNS_PER_ARM),)


def holm_step_note(p_adjusted: float, family: int, level: float) -> Warn:
    """The note of a row that Holm's step-down calls significant while its interval, at the
    family's Bonferroni ``level`` (the intervals' adjustment: 1 - alpha / ``family``), holds no
    change. Both are right: Holm rejects at later steps with a larger level than Bonferroni's
    (Holm, Scand. J. Statist. 6, 1979), and the compatible intervals of the step-down only bound
    such an effect by "no change" (Strassburger & Bretz, Stat. Med. 27, 2008)."""
    return Warn(Code.HOLM_STEP_INTERVAL_HOLDS, p_adjusted=p_adjusted, family=family,
                level=level)


def order_check(base: RunSet, new: RunSet, found: ArmDriftOnce) -> list[Warn]:
    """When the arms were not interleaved in time: say so, and report the drift over the run
    order measured within each arm and row (``found``: :func:`perfkit.analysis.context._confounding.
    arm_drift`, pairs of runs of one arm only, which the arms' levels do not touch) beside the
    comparison. Whether it could have made a row's change is said per row
    (:func:`perfkit.analysis.context._confounding.confounding_notes`)."""
    warning = interleaving(base, new)
    if warning is None:
        return []
    d = arm.trend if (arm := found.get()) is not None else None
    if d is None:
        return [warning]
    bounded = -100 < d.ci_low_pct and d.ci_high_pct < math.inf
    return [warning, Warn(Code.ARM_DRIFT_CHECK, runs=d.runs, change_pct=d.change_pct,
                          ci_low_pct=d.ci_low_pct if bounded else None,
                          ci_high_pct=d.ci_high_pct if bounded else None, verdict=d.verdict)]
