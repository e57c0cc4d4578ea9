"""A plan (the runs per arm a change needs, :class:`perfkit.analysis.compare._plan.PowerPlan`) as a
paper-ready table (:class:`perfkit.present.tables.Table`) for ``perfkit plan``.

Formatting only: every number comes from :mod:`perfkit.analysis.compare._plan`.
"""

from __future__ import annotations

from typing import cast

from perfkit.analysis.compare import PowerPlan, RunsNeeded
from perfkit.formatting import Footnotes, level_text, pct_change
from perfkit.present.tables import Column, Table


# -- plan -------------------------------------------------------------------------------------
def plan(p: PowerPlan) -> Table:
    """Runs per arm needed for the stated change, and what the current design detects."""
    notes = Footnotes()
    marks = notes.mark(p.warnings)
    holm = f", Holm over {p.family} rows" if p.family > 1 else ""
    title = (f"plan for {p.metric.name}: runs per arm to detect {pct_change(p.ratio)} with "
             f"{p.power:.0%} power at alpha {p.alpha:g}{holm}, at the run-to-run spread of "
             f"{' and '.join(p.sources)}{marks}")
    seen = len(p.sources) == 2
    cols = [*(Column(k) for k in p.keys), Column("runs now"), Column("spread (log sd)",
                                                                      right=True),
            Column(f"runs per arm for {pct_change(p.ratio)}", right=True),
            *([Column("change seen"), Column("planned for (80% bound)"),
               Column("runs per arm for it", right=True), Column("holds from")]
              if seen else []),
            Column("power now", right=True), Column(f"now detects ({p.power:.0%} power)")]
    rows = []
    for r in p.rows:
        now = "-" if r.power_now.power is None else f"{r.power_now.power:.2f}"
        cur = r.current
        detects = ("any change" if cur.any_change else
                   f">= {pct_change(cast(float, cur.ratio_high))} or "
                   f"<= {pct_change(cast(float, cur.ratio_low))}"  # testable: both known
                   if cur.testable else f"nothing {notes.mark(cast(str, cur.reason))}")
        observed = ((pct_change(r.observed_ratio), pct_change(r.observed_ratio_planned),
                     _need_text(r.needed_observed) if r.needed_observed else "-",
                     pct_change(r.observed_decides_from))
                    if seen else ())
        rows.append((*(level_text(v) for v in r.key),
                     f"{r.n_base} vs {r.n_new} {notes.mark(r.warnings)}".rstrip(),
                     f"{r.needed.log_sd:.3f}", _need_text(r.needed), *observed, now, detects))
    return Table(tuple(cols), tuple(rows), title, tuple(notes.items))


def _need_text(needed: RunsNeeded) -> str:
    """``"36 (power 0.80)"``, or more than the most runs searched."""
    need = needed.runs_per_arm
    return (f"{need} (power {needed.power_stated:.2f})" if need is not None
            else f"> {needed.max_runs}")
