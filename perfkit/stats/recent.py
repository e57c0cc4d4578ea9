"""A step in the newest labels of a history: the test the change points cannot make there.

E-divisive means (:mod:`perfkit.stats.changepoint`) tests a split by permuting whole labels, so
a split with k labels after it can give no p below 2 / C(L, k): with the newest 2 labels of 8
that is 2 / 28 = 0.071, above alpha 0.05, and even at 10 labels (0.044) the search's maximum
over every split finds a step at the end hardly ever (a x3 step in the last 2 labels of 8-10
was never reported: ``benchmarks/calibration_recent.py``). The newest labels are the ones CI
asks about.

:func:`recent_step` tests them as the history's gates frame them, the newest labels against
the segment before them, with the label as the unit (the runs of one job share its occasion,
:mod:`perfkit.stats.changepoint` says why): for each window of the newest k = 1, 2, 3 labels, a
two-sample t test of the labels' log medians of runs (each label's median run, the value its
series shows: one slow run, a 271 ms p99 among 30 ms ones in the demo history's v01, does not
move it as it moves a mean of logs), the newest k against the labels of the segment before
them, from the last change point found before the window; a pooled variance: under "no
change" the labels of both groups are exchangeable and share their spread. The ratio is that
of the groups' geometric means of label medians.

The statistic is the two-sample t's (Student 1908), but its p is not Student's. Student's t
distribution assumes the labels' values normal, and a test of 1-3 new labels leans on that
assumption with nothing to average it out: the new labels' own deviation is the numerator. With
label effects from a Student t3 (scaled to the same spread) Student's p called a step on
4.9-6.5% of flat histories of 8-40 labels at alpha 0.05 (±0.011). No test free of the labels'
distribution can help at 8-12 labels: permuting (or ranking) the k + m labels gives no p below
1 / C(k + m, k) (0.036 for the newest 2 of 8 before any adjustment), the floor that makes the
change points blind there. So the statistic is referred to its distribution when the labels'
values are iid Student t with :data:`TAIL_DF` = 4 degrees of freedom (the statistic does not
depend on their scale), simulated once per (k, m) with :data:`REFERENCE_DRAWS` draws (seeded,
so the same data give the same p): p is the share of simulated |t| at least the one seen, (1 +
count) / (draws + 1) (Phipson and Smyth 2010). Why 4: a label's value is its effect plus the
median of its runs' noise, lighter-tailed than the effect alone; with t3 label effects and run
noise of the same spread, t4 keeps the false alarms within alpha (3.1-4.9%, ±0.010) and still
finds the demo history's +48% step at v08 against v01..v07 (p 0.042), which a t3 reference
misses (p 0.058). Under normal labels it is conservative (lighter tails), and labels
heavier-tailed than that would make it liberal again. The reference's own Monte Carlo error:
about ±5% on its quantile at alpha / 6 (±0.002 on a p of 0.01). Beyond
:data:`MAX_REFERENCE_BEFORE` labels before the window the reference of that many serves (at
200, 400 and 800 its quantiles differ from it by no more than that error); a reference costs up
to 0.1 s, once per (k, m) in a process (a series of 1,000 labels: about 0.3 s the first time,
against 0.03 s with Student's p). ``tail_df=None`` takes Student's p (normal labels), as
before. Measured by ``benchmarks/calibration_recent.py --series 2000`` (also in the README and
docs/ci.md): false alarms 2.5-3.5% with normal label effects (3.7-4.8% with Student's p); a x3
step in the newest 2 labels of 8-12 found in every history; a 3-sigma step in the newest label
alone in 27-36% (41-52% with Student's p: the price of not mistaking one heavy-tailed label for
a step), in the newest 2-3 as before.

The windows tried form one family: each p is Bonferroni-adjusted over them, and the ratio's
interval is Bonferroni's too (Dunn 1961), its half-width the reference's quantile times the
standard error, so that an interval excluding 1 comes with a significant p and the reverse. A
window that holds a change point already found (or leaves fewer than :data:`MIN_BEFORE` labels
before it) is not tried.

A page tests the newest labels of several metrics at once (p99 and throughput of one load
level): :func:`holm_over_metrics` makes their tests one Holm family (Holm 1979, valid whatever
the metrics' dependence), as the change points' first tests are
(:mod:`perfkit.analysis.history._metrics` says why the two stay separate families). Each
test's p is then Holm-adjusted over the metrics (``p_holm``), its verdict read from it, and
its interval widened to Bonferroni over the windows and the metrics (Holm's first step), so
that an interval excluding 1 still comes with a significant verdict.

Its false-alarm rate on flat histories of 8-40 labels, its detection of late steps at 8-12
labels, and the page-level rate with two metrics are measured by
``benchmarks/calibration_recent.py``.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Sequence

import numpy as np

from perfkit.stats._dist import t_ppf, t_sf
from perfkit.stats.multiple import adjust_pvalues
from perfkit.warning import Code, Warn

#: the windows of newest labels tried: the newest 1, 2 and 3
MAX_RECENT = 3
#: the fewest labels before a window: 2 df for the spread of label means at one new label
MIN_BEFORE = 3
#: the Student t df of the labels' values under which the statistic's p is taken
TAIL_DF = 4
#: simulated draws of the statistic's reference distribution (p in steps of 1 / 10,001)
REFERENCE_DRAWS = 10_000
#: labels before a window beyond which the reference of this many serves
MAX_REFERENCE_BEFORE = 100


@dataclasses.dataclass(frozen=True)
class RecentStep:
    """The test of a step in the newest labels (:func:`recent_step`).

    ``tested``: whether any window could be tried (else ``reason``, a :class:`Warn`, says why and
    ``labels_needed`` how many labels in all would allow the newest one); for the window
    with the smallest p: its ``k`` newest labels (``first_label``..``last_label``) against
    ``before`` (first, last) labels, the ratio of their geometric means with its interval at
    ``level``, the Bonferroni-adjusted ``p_value`` over the ``windows`` tried, its ``df``, and
    ``significant`` (p < alpha). Tested with other metrics (:func:`holm_over_metrics`):
    ``family`` the metrics in the Holm family, ``p_holm`` the p adjusted over them (the
    verdict's p, :attr:`p_verdict`), the interval at Bonferroni's level over windows x
    metrics."""

    tested: bool
    alpha: float
    windows: int = 0
    k: int = 0
    first_label: str = ""
    last_label: str = ""
    before: tuple[str, str] = ("", "")
    n_before: int = 0
    ratio: float = math.nan
    ratio_ci_low: float = math.nan
    ratio_ci_high: float = math.nan
    level: float = math.nan
    p_value: float = math.nan
    df: float = math.nan
    reason: Warn | None = None
    labels_needed: int | None = None
    family: int = 1
    p_holm: float = math.nan
    tail_df: int | None = TAIL_DF

    @property
    def p_verdict(self) -> float:
        """The p the verdict reads: Holm's over the metrics when tested with others."""
        return self.p_value if self.family == 1 else self.p_holm

    @property
    def significant(self) -> bool:
        return self.tested and self.p_verdict < self.alpha

    def holm_note(self) -> Warn | None:
        """The adjustment over the metrics, as a row says it (None for a metric alone);
        ``interval_holds``: significant at a later step of Holm's step-down while the
        interval, at Holm's first step, holds no change."""
        if self.family == 1 or not self.tested:
            return None
        holds = self.significant and self.ratio_ci_low <= 1 <= self.ratio_ci_high
        return Warn(Code.HOLM_OVER_METRICS, family=self.family, p_value=self.p_value,
                    p_adjusted=self.p_holm, level=self.level, interval_holds=holds)


def holm_over_metrics(steps: Sequence[RecentStep | None],
                      alpha: float = 0.05) -> list[RecentStep | None]:
    """The recent-step tests of several metrics at one load level as one Holm family (module
    docstring): each tested one gets ``family`` (the tested ones), ``p_holm`` and its interval
    at 1 - alpha / (windows x family); the untested and None are returned as they are."""
    tested = [i for i, r in enumerate(steps) if r is not None and r.tested]
    m = len(tested)
    if m < 2:
        return list(steps)
    held = [steps[i] for i in tested]
    adjusted = adjust_pvalues([r.p_value for r in held if r is not None], "holm")
    out = list(steps)
    for i, p in zip(tested, adjusted, strict=True):
        r = steps[i]
        assert r is not None
        out[i] = _widened(dataclasses.replace(r, alpha=alpha, family=m, p_holm=float(p)),
                          1 - alpha / (r.windows * m))
    return out


def _widened(r: RecentStep, level: float) -> RecentStep:
    """``r`` with its ratio's interval at ``level`` (same df and standard error)."""
    finite = math.isfinite(r.ratio) and math.isfinite(r.ratio_ci_high)
    if not finite or r.ratio_ci_high == r.ratio:
        return dataclasses.replace(r, level=level)  # no spread: a point, at any level
    se = math.log(r.ratio_ci_high / r.ratio) / reference_quantile(r.level, r.k, r.n_before,
                                                                    r.tail_df)
    half = reference_quantile(level, r.k, r.n_before, r.tail_df) * se
    return dataclasses.replace(r, level=level, ratio_ci_low=r.ratio * math.exp(-half),
                               ratio_ci_high=r.ratio * math.exp(half))


def recent_step(values: Sequence[Sequence[float]], labels: Sequence[str],
                change_indices: Sequence[int], *, alpha: float = 0.05,
                tail_df: int | None = TAIL_DF) -> RecentStep:
    """Test the newest labels of a history for a step (module docstring).

    Parameters
    ----------
    values : sequence of sequences of float
        Per label, in time order, its runs' positive values (as for
        :func:`perfkit.stats.changepoint.change_points`; a label without a value is skipped).
    labels : sequence of str
        The labels' names.
    change_indices : sequence of int
        The change points already found (a segment starts at each index).
    alpha : float
        The family-wise level over the windows tried.
    tail_df : int or None
        The Student t df of the labels' values under which p is taken (module docstring);
        None: normal values, Student's t distribution with k + m - 2 df (perfkit before issue
        34's calibration, liberal when the labels' tails are heavy).

    Returns
    -------
    RecentStep
    """
    means, names = [], []
    for name, v in zip(labels, values, strict=True):
        arr = np.asarray(v, dtype=float)
        arr = arr[np.isfinite(arr) & (arr > 0)]
        if len(arr):
            means.append(float(np.median(np.log(arr))))
            names.append(str(name))
    n = len(means)
    cuts = sorted(int(c) for c in change_indices)
    windows = []
    for k in range(1, MAX_RECENT + 1):
        if any(n - k <= c < n for c in cuts):
            break  # a change point already splits these labels
        start = max((c for c in cuts if c < n - k), default=0)
        if n - k - start >= MIN_BEFORE:
            windows.append((k, start))
    if not windows:
        need = MIN_BEFORE + 1 + max((c for c in cuts if c < n - 1), default=0)
        at_newest = any(n - 1 <= c for c in cuts)
        return RecentStep(False, alpha, reason=(
            Warn(Code.RECENT_CHANGE_POINT_AT_NEWEST) if at_newest else
            Warn(Code.RECENT_FEW_LABELS, labels=n, before=MIN_BEFORE, need=need)),
            labels_needed=None if at_newest else need)
    m = len(windows)
    level = 1 - alpha / m
    found = [_window(np.array(means), names, k, start, level, tail_df)
             for k, start in windows]
    best = min(found, key=lambda r: r.p_value)
    return dataclasses.replace(best, alpha=alpha, windows=m,
                               p_value=min(1.0, best.p_value * m))


def _window(means: np.ndarray, names: list[str], k: int, start: int,
            level: float, tail_df: int | None) -> RecentStep:
    """The pooled two-sample t of the newest ``k`` labels' log medians against those from
    ``start``, its p and interval from the heavy-tailed reference (module docstring)."""
    n = len(means)
    new, old = means[n - k:], means[start:n - k]
    df = len(new) + len(old) - 2
    ss = float(((new - new.mean()) ** 2).sum() + ((old - old.mean()) ** 2).sum())
    diff = float(new.mean() - old.mean())
    se = math.sqrt(ss / df * (1 / len(new) + 1 / len(old)))
    if se == 0:
        p = 1.0 if diff == 0 else 0.0
        half = 0.0
    else:
        p = reference_p(abs(diff) / se, k, len(old), tail_df)
        half = reference_quantile(level, k, len(old), tail_df) * se
    return RecentStep(True, math.nan, 0, k, names[n - k], names[n - 1],
                      (names[start], names[n - k - 1]), len(old), math.exp(diff),
                      math.exp(diff - half), math.exp(diff + half), level, p, float(df),
                      tail_df=tail_df)


@functools.lru_cache(maxsize=64)
def _reference(k: int, m: int, tail_df: int) -> np.ndarray:
    """The sorted |t| of :data:`REFERENCE_DRAWS` draws of ``k`` new and ``m`` labels before,
    iid Student t with ``tail_df`` df."""
    rng = np.random.default_rng([tail_df, k, m])
    x = rng.standard_t(tail_df, (REFERENCE_DRAWS, k + m))
    new, old = x[:, :k], x[:, k:]
    ss = (((new - new.mean(axis=1, keepdims=True)) ** 2).sum(axis=1)
          + ((old - old.mean(axis=1, keepdims=True)) ** 2).sum(axis=1))
    se = np.sqrt(ss / (k + m - 2) * (1 / k + 1 / m))
    return np.sort(np.abs(new.mean(axis=1) - old.mean(axis=1)) / se)


def reference_p(t: float, k: int, m: int, tail_df: int | None = TAIL_DF) -> float:
    """Two-sided p of the statistic ``t`` of ``k`` new labels against ``m`` before under the
    heavy-tailed reference: (1 + draws with |t| at least this) / (draws + 1); Student's when
    ``tail_df`` is None."""
    if tail_df is None:
        return float(2 * t_sf(abs(t), k + m - 2))
    ref = _reference(k, min(m, MAX_REFERENCE_BEFORE), tail_df)
    at_least = len(ref) - int(np.searchsorted(ref, abs(t), side="left"))
    return (1 + at_least) / (len(ref) + 1)


def reference_quantile(level: float, k: int, m: int, tail_df: int | None = TAIL_DF) -> float:
    """The smallest |t| the reference needs for p below ``1 - level`` (exclusive): an interval
    of half-width this times the standard error excludes 0 exactly when p < 1 - level
    (infinite when no draw count allows it); Student's quantile when ``tail_df`` is None."""
    if tail_df is None:
        return float(t_ppf(0.5 + level / 2, k + m - 2))
    ref = _reference(k, min(m, MAX_REFERENCE_BEFORE), tail_df)
    draws = len(ref)
    need = math.floor(draws + 1 - (1 - level) * (draws + 1)) + 1  # draws below |t|
    return math.inf if need > draws else float(ref[max(need, 1) - 1])
