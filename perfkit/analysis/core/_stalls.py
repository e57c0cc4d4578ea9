"""Runs whose requests stalled on a known timeout, counted and compared: the result behind an
artefact.

Where a latency's values sit on a known cap (:mod:`perfkit.analysis.core._caps`: requests that
waited for the 1 s SYN retransmission), its ratio is no size of the setting. What the runs do
show is how many of them stalled: ``5 of 5 -> 0 of 5`` runs with requests on the 1000 ms cap
is a result in its own right. The run is the unit, so the two sides' counts are compared with
Fisher's exact test on the 2x2 table of runs (Fisher, *Statistical Methods for Research
Workers*, 1934, sec. 21.02; two-sided, scipy's ``fisher_exact``), Holm-adjusted over the rows
of a table that have such counts.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence

import numpy as np

from perfkit.analysis.core._caps import CapHit, cap_hits
from perfkit.analysis.core._experiment import RunSet
from perfkit.stats import adjust_pvalues
from perfkit.vocabulary import Verdict

FEWER, MORE, SAME = "fewer stalled runs", "more stalled runs", Verdict.NO_CHANGE


@dataclasses.dataclass(frozen=True)
class StallChange:
    """Runs with a value on the ``cap_ms`` cap (stalled) on each side, and Fisher's exact
    test of the two proportions (``p_value`` raw, ``p_adjusted`` Holm over the table)."""

    cap_ms: float
    n_base: int
    stalled_base: int
    n_new: int
    stalled_new: int
    p_value: float
    p_adjusted: float = math.nan
    alpha: float = 0.05

    @property
    def verdict(self) -> str:
        p = self.p_adjusted if self.p_adjusted == self.p_adjusted else self.p_value
        if not p < self.alpha:
            return SAME
        return FEWER if self.stalled_new / self.n_new < self.stalled_base / self.n_base \
            else MORE

    def text(self) -> str:
        """``runs stalled on the 1000 ms cap: 5 of 5 -> 0 of 5 (Fisher's exact test on runs,
        Holm p 0.016): fewer stalled runs``."""
        p = self.p_adjusted if self.p_adjusted == self.p_adjusted else self.p_value
        holm = "Holm p" if self.p_adjusted == self.p_adjusted else "p"
        return (f"runs stalled on the {self.cap_ms:g} ms cap: {self.stalled_base} of "
                f"{self.n_base} -> {self.stalled_new} of {self.n_new} (Fisher's exact test on "
                f"runs, {holm} {p:.2g}): {self.verdict}")


def stalled(rows: RunSet, cap_ms: float, hits: Sequence[CapHit] | None = None) -> np.ndarray:
    """Per run of ``rows``: a latency value of it sits on ``cap_ms`` (``hits``: the
    :func:`caps.cap_hits` of ``rows``, found here if not given)."""
    ids = [r.run_id or r.source for r in rows.runs]
    hit = {h.run_id for h in (cap_hits(rows) if hits is None else hits) if h.cap_ms == cap_ms}
    return np.array([i in hit for i in ids], dtype=bool)


def stall_change(base: RunSet, new: RunSet, alpha: float = 0.05) -> tuple[StallChange, ...]:
    """One :class:`StallChange` per known cap some run of either side stalled on."""
    hits = (cap_hits(base), cap_hits(new))
    caps = sorted({h.cap_ms for side in hits for h in side})
    out = []
    if caps:
        from scipy import stats as sps  # only when a run stalled on a cap (issue 33)
    for cap in caps:
        b, n = stalled(base, cap, hits[0]), stalled(new, cap, hits[1])
        table = [[int(b.sum()), int(len(b) - b.sum())], [int(n.sum()), int(len(n) - n.sum())]]
        p = float(sps.fisher_exact(np.array(table)).pvalue) if len(b) and len(n) else math.nan
        out.append(StallChange(cap, len(b), int(b.sum()), len(n), int(n.sum()), p,
                               alpha=alpha))
    return tuple(out)


def holm(changes: Sequence[tuple[StallChange, ...]]) -> list[tuple[StallChange, ...]]:
    """``changes`` (per row of a table) with ``p_adjusted``: Holm over every test of them."""
    flat = [c.p_value for row in changes for c in row]
    if not flat:
        return list(changes)
    adjusted = iter(adjust_pvalues(np.array(flat, dtype=float), "holm"))
    return [tuple(dataclasses.replace(c, p_adjusted=float(next(adjusted))) for c in row)
            for row in changes]
