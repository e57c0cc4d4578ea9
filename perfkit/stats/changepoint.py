"""Change points in a performance history: E-divisive means with a permutation test.

The method of MongoDB's performance CI (Daly, Brown, Ingo, O'Leary and Bradford, "The use of
change point detection to identify software performance regressions in a continuous
integration system", ICPE 2020) and of Hunter / Apache Otava (Fleming et al., "Hunter: using
change point detection to hunt for performance regressions", ICPE 2023), on the algorithm of
Matteson and James (JASA 109, 2014); see :mod:`perfkit.stats.edivisive` for the statistic.

The unit. A history is a sequence of labels (commits or versions, in time order), each with one
or more runs. Runs of one label are replicates of one build on one occasion: they share
whatever that occasion brings (machine state, build, neighbours), so they are not
independent draws from the label's level. Under "no change" the labels, not the runs, are
exchangeable. Hence:

- splits fall between labels only;
- the permutation test shuffles whole labels (with all their runs) inside each cluster, the
  scheme that stays valid when runs of a label are correlated. Shuffling single runs is valid
  only when they are not; with a between-label spread it calls flat series changed far more
  often than alpha (benchmarks/calibration_changepoint.py), so perfkit does not offer it;
- the ratio of levels across a change compares the per-label geometric means of the segments
  either side (``ci_unit="label"``) with :func:`perfkit.stats.compare`: the
  Hodges-Lehmann ratio with its Moses interval. The interval is conditional on the detected
  position, which the data chose; its coverage is measured in the benchmark.

The permutation p-value is (1 + #{permuted max Q >= observed}) / (permutations + 1), which keeps
the level exactly (Phipson and Smyth, Stat. Appl. Genet. Mol. Biol. 9, 2010); the hierarchical
search stops at the first candidate whose p exceeds alpha, so a flat series shows a change
point with probability at most alpha.

Measured on synthetic histories (benchmarks/calibration_changepoint.py, 400 histories a row,
twice the Monte Carlo error about 0.02; sigma_label is the noise of a label's mean): flat
histories of 20-40 labels with 1 or 3 runs, log sd 0.05-0.1, normal or t3 noise, show a change
point 3.5-6.2% of the time at alpha 0.05; with a between-label spread as large as the run
noise, 3.7% shuffling labels against 50% shuffling runs. A step of 3 sigma_label mid-series
is found within one label 95-98% of the time (2 sigma: 69-71%, 4 sigma: 99-100%), 88% when only
4 labels follow it; two steps of 3 sigma (a regression and its fix, or a staircase) 94-97%.
The 95% ratio intervals of exactly placed change points covered the true ratio 92-98%.

Binary segmentation places each split before the later ones are known, and can leave a
spurious one, e.g. in the middle of a staircase, found before the two real steps either side.
So each split is first re-placed at the best position between its final neighbours; then, as
Hunter does (with a t-test), the change points are pruned bottom-up: each is re-tested
against its two adjacent segments by the energy two-sample test with label permutations, and
the weakest one above alpha is removed until all pass. Pruning only removes points, so the
bound on flat series still holds. On histories with real steps, detections more than one
label from any true step still average 0.04-0.17 per history (most often in staircases).

Cost. Each permutation of a search over L labels costs O(L^2), so a history of more than
``window_labels`` (100) labels is searched in half-overlapping windows of 100 labels
(:mod:`perfkit.stats._cpsearch`), each tested at alpha over the number of windows with
sequential permutation tests: cost linear in L (1,000 labels of 5 runs: 0.5 s, against 25 s
searched whole), memory one window's, the bound on flat series kept (measured: 0.020 false
alarms over 200 flat histories of 300 labels in 9 windows), p-values Bonferroni-adjusted.
Histories of up to 100 labels are searched whole, as before.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from perfkit.stats import _cpsearch
from perfkit.stats.comparison import compare
from perfkit.units import to_float
from perfkit.vocabulary import ChangeSupport
from perfkit.warning import Code, Warn

CI_UNITS = ("label", "run")
#: a change point's support: its ratio's interval excludes 1 (``supported``), or it has no
#: interval (too few labels a side) or one that holds 1 (``weak``: the permutation test moved
#: the level, but nothing bounds the size, or even the direction, of the change)
SUPPORTED, WEAK = ChangeSupport.SUPPORTED, ChangeSupport.WEAK


@dataclasses.dataclass(frozen=True)
class Segment:
    """Labels ``[start, end)`` between change points; ``median`` of their per-run values."""

    start: int
    end: int
    first_label: str
    last_label: str
    n_labels: int
    n_runs: int
    median: float


@dataclasses.dataclass(frozen=True)
class ChangePoint:
    """A change of level that starts at label ``index`` (``label``; ``label_before`` precedes).

    ``ratio`` (after over before, with its ``confidence`` interval) compares the segments
    adjacent to the change. ``p_value`` is the permutation p of the hierarchical step that
    found it (``order`` 1 first; ``statistic`` its Q): the test of "one more change point
    somewhere". ``p_value_adjacent`` is the energy test of the two adjacent segments that kept
    it through pruning; the data chose the split, so it is not a test on its own. Medians are
    in the unit of the input values.
    """

    index: int
    label: str
    label_before: str
    p_value: float
    p_value_adjacent: float
    statistic: float
    order: int
    ratio: float
    ratio_ci_low: float
    ratio_ci_high: float
    median_before: float
    median_after: float
    n_labels_before: int
    n_labels_after: int
    n_runs_before: int
    n_runs_after: int
    warnings: tuple[Warn, ...]
    support: ChangeSupport = SUPPORTED

    @property
    def supported(self) -> bool:
        """The ratio's interval exists and excludes no change (1)."""
        return self.support == SUPPORTED


def ratio_estimator(ci_unit: str) -> str:
    """The estimator of a change point's ratio after/before: the Hodges-Lehmann ratio (the
    median of every pairwise ratio after/before) of the per-label geometric means of the
    adjacent segments (``ci_unit="label"``) or of their runs (``"run"``). It is not the ratio
    of the segments' medians of runs (:attr:`ChangePoint.median_before`, ``median_after``),
    which pool every run and weigh a label by its run count."""
    of = "per-label geometric means" if ci_unit == "label" else "runs"
    return f"Hodges-Lehmann ratio of the adjacent segments' {of}"


@dataclasses.dataclass(frozen=True)
class ChangePoints:
    """Result of :func:`change_points`: the change points in series order and the segments.

    ``labels`` and ``runs_per_label`` describe the series analysed (labels without a usable
    value left out, with a warning); indices refer to ``labels``. ``stop_p_value`` is the p of
    the first candidate not accepted (NaN when no split was possible).
    """

    labels: tuple[str, ...]
    runs_per_label: tuple[int, ...]
    change_points: tuple[ChangePoint, ...]
    segments: tuple[Segment, ...]
    alpha: float
    permutations: int
    min_labels: int
    exponent: float
    confidence: float
    ci_unit: str
    seed: int
    stop_p_value: float
    method: str
    warnings: tuple[Warn, ...]

    @property
    def ratio_estimator(self) -> str:
        """What a change point's ``ratio`` is, in words for a header or caption
        (:func:`ratio_estimator`)."""
        return ratio_estimator(self.ci_unit)

    def to_dict(self) -> dict:
        """Every field (the warnings as :meth:`perfkit.warning.Warn.to_dict`)."""
        def plain(obj: Any) -> dict:
            out = {f.name: getattr(obj, f.name) for f in dataclasses.fields(obj)}
            out["warnings"] = [w.to_dict() for w in obj.warnings]
            return out

        out = plain(self)
        out["change_points"] = [plain(cp) for cp in self.change_points]
        out["segments"] = [dataclasses.asdict(s) for s in self.segments]
        return out


def change_points(values: Sequence[Sequence[float] | float], labels: Sequence[str] | None = None,
                  *, alpha: float = 0.05, permutations: int = 199, min_labels: int = 2,
                  exponent: float = 1.0, confidence: float = 0.95,
                  ci_unit: str = "label", lower_is_better: bool = True,
                  max_change_points: int | None = None, seed: int = 0,
                  window_labels: int = _cpsearch.WINDOW_LABELS) -> ChangePoints:
    """Find the change points of a history by E-divisive means on log values.

    Parameters
    ----------
    values : sequence
        One item per label in time order: that label's per-run values (a sequence, or one
        number), positive, in the metric's unit (e.g. p99 in ms). NaN/None runs are dropped.
    labels : sequence of str, optional
        Label names (commits, versions); default "0", "1", ...
    alpha : float
        Level of each permutation test of the hierarchical search.
    permutations : int
        Permutations per test; (permutations + 1) * alpha should be an integer (199 for 0.05).
    min_labels : int
        Fewest labels on either side of a split; 2 keeps one odd label from being a segment.
    exponent : float
        The distance exponent a in (0, 2) of the energy statistic (Matteson and James use 1).
    confidence, ci_unit :
        Coverage of the ratio interval and its unit: per-label geometric means ("label") or
        single runs ("run", valid only without a between-label spread).
    lower_is_better : bool
        Passed to :func:`perfkit.stats.compare` (it only affects failed runs).
    max_change_points : int, optional
        Stop after this many.
    seed : int
        Seed of the permutations: the same input and seed give the same answer.
    window_labels : int
        A history of up to this many labels is searched whole; a longer one in windows of this
        many labels, half overlapping, each tested at alpha over the number of windows
        (:mod:`perfkit.stats._cpsearch`): cost linear in the labels, the bound on false alarms
        kept, p-values adjusted.

    Returns
    -------
    ChangePoints
    """
    _check(alpha, permutations, min_labels, exponent, confidence, ci_unit)
    if window_labels < 4 * min_labels:
        raise ValueError(f"window_labels must be >= 4 * min_labels, got {window_labels!r}")
    names, runs, warnings = _clean(values, labels)
    counts = np.array([len(r) for r in runs], dtype=np.int64)
    found: dict[int, tuple[float, float, float]] = {}
    stop_p = math.nan
    short = too_few_labels(len(runs), alpha, min_labels)
    if short is not None:
        warnings.append(short)
    else:
        z = np.log(np.concatenate(runs))
        search = _cpsearch.whole if len(runs) <= window_labels else functools.partial(
            _cpsearch.windowed, window=window_labels)
        found, stop_p = search(z, counts, alpha, permutations, min_labels, exponent,
                               max_change_points, np.random.default_rng(seed))
    cuts = sorted(found)
    segments = _segments(names, runs, cuts)
    details = {tau: (*found[tau], k + 1) for k, tau in enumerate(found)}
    points = tuple(_change_point(names, runs, cuts, j, details[tau], 1 - confidence, ci_unit,
                                 lower_is_better) for j, tau in enumerate(cuts))
    method = (f"E-divisive means (Matteson and James 2014) on log values, exponent "
              f"{exponent:g}, splits between labels, min {min_labels} labels a side; "
              f"permutation tests shuffling whole labels ({permutations} permutations, alpha "
              f"{alpha:g}), pruned by adjacent-segment energy tests; ratio: Hodges-Lehmann "
              f"with Moses interval between adjacent segments, per {ci_unit}; a change point "
              f"whose ratio has no interval, or one holding 1, is reported as weakly "
              f"supported")
    windows = len(_cpsearch.window_starts(len(runs), window_labels))
    if windows > 1:
        h, most = _cpsearch.sequential_plan(alpha, permutations, windows)
        method += (f"; {len(runs)} labels searched in {windows} half-overlapping windows of "
                   f"{window_labels} labels, each at alpha / {windows} (sequential permutation "
                   f"tests, stopped at {h} exceedance(s), at most {most} permutations), "
                   f"p-values Bonferroni-adjusted; adjacent segments cut to "
                   f"{window_labels // 2} labels a side")
    return ChangePoints(tuple(names), tuple(int(c) for c in counts), points, segments, alpha,
                        permutations, min_labels, exponent, confidence, ci_unit, seed, stop_p,
                        method, tuple(warnings))


def permutation_floor(n_labels: int, min_labels: int = 2) -> float:
    """The smallest p the permutation test of a first split can give on ``n_labels`` labels
    (1 when no split fits): 2 / C(n, n // 2).

    Shuffling whole labels, every order that keeps the two sides of the observed split on
    their sides (k! (n - k)! orders), and every order that swaps them (as many), reaches the
    observed statistic, which depends on the sides' sets only: the exact p of a split after k
    labels is at least 2 k! (n - k)! / n! = 2 / C(n, k), least at k = n // 2 (reached by a
    clean step there; ``tests/test_stats_changepoint.py`` enumerates every order). A Monte
    Carlo p can fall below it by chance: a test whose exact p cannot reach alpha decides by the
    permutations drawn, so :func:`change_points` does not run it."""
    if n_labels < 2 * min_labels:
        return 1.0
    return min(1.0, 2.0 / math.comb(n_labels, n_labels // 2))


def labels_needed(alpha: float, min_labels: int = 2) -> int:
    """The fewest labels whose permutation test can give p <= ``alpha``
    (:func:`permutation_floor`): 8 at alpha 0.05, 10 at 0.01."""
    n = 2 * min_labels
    while permutation_floor(n, min_labels) > alpha:
        n += 1
    return n


def too_few_labels(n_labels: int, alpha: float, min_labels: int = 2) -> Warn | None:
    """Why ``n_labels`` labels cannot show a change point at ``alpha`` (None when they can):
    how many labels one needs (:attr:`Code.TOO_FEW_LABELS`)."""
    need = labels_needed(alpha, min_labels)
    if n_labels >= need:
        return None
    floor = permutation_floor(n_labels, min_labels) if n_labels >= 2 * min_labels else None
    return Warn(Code.TOO_FEW_LABELS, labels=n_labels, need=need, alpha=alpha,
                min_labels=min_labels, floor=floor)


def newest_unseen(n_labels: int, alpha: float, min_labels: int = 2) -> Warn | None:
    """Why a step in the newest ``min_labels`` labels of ``n_labels`` cannot show as a change
    point at ``alpha`` (None when it can): a split with k labels after it gives no p below
    2 / C(n, k) (:func:`permutation_floor`'s argument), and how many labels in all would let
    it (:attr:`Code.NEWEST_UNSEEN`): ``"a step in the newest 2 labels cannot show as a change
    point: permuting whole labels, a split there gives no p below 2 / C(8, 2) = 0.071 > 0.05
    (>= 10 labels needed)"``."""
    k = min_labels
    if n_labels < labels_needed(alpha, min_labels):
        return None  # nothing is tested at all: too_few_labels says so
    floor = 2.0 / math.comb(n_labels, k)
    if floor <= alpha:
        return None
    need = n_labels
    while 2.0 / math.comb(need, k) > alpha:
        need += 1
    return Warn(Code.NEWEST_UNSEEN, k=k, labels=n_labels, floor=floor, alpha=alpha, need=need)


def _change_point(names: list[str], runs: list[np.ndarray], cuts: list[int], j: int,
                  detail: tuple[float, float, float, int], ci_alpha: float, ci_unit: str,
                  lower_is_better: bool) -> ChangePoint:
    tau = cuts[j]
    lo = cuts[j - 1] if j > 0 else 0
    hi = cuts[j + 1] if j + 1 < len(cuts) else len(runs)
    before, after = runs[lo:tau], runs[tau:hi]
    base: list[float] | np.ndarray
    new: list[float] | np.ndarray
    if ci_unit == "label":
        base = [math.exp(float(np.mean(np.log(r)))) for r in before]
        new = [math.exp(float(np.mean(np.log(r)))) for r in after]
    else:
        base, new = np.concatenate(before), np.concatenate(after)
    c = compare(base, new, alpha=ci_alpha, lower_is_better=lower_is_better)
    p, p_adjacent, q, order = detail
    low, high = float(c.ratio_ci_low), float(c.ratio_ci_high)
    unit = "labels" if ci_unit == "label" else "runs"
    # the segments' medians' intervals are not the ratio's, and its own is said by _support
    notes = [Warn(Code.RATIO_PER_UNIT, unit=ci_unit, warning=w) for w in c.warnings
             if not _said_by_support(w)]
    support, why = _support(low, high, len(base), len(new), ci_alpha, unit)
    return ChangePoint(tau, names[tau], names[tau - 1], p, p_adjacent, q, order,
                       float(c.ratio), low, high,
                       float(np.median(np.concatenate(before))),
                       float(np.median(np.concatenate(after))), tau - lo, hi - tau,
                       sum(len(r) for r in before), sum(len(r) for r in after),
                       tuple([*([why] if why is not None else []), *notes]), support)


def _said_by_support(w: Warn) -> bool:
    """A warning of the comparison behind a change point's ratio that its support says
    (:func:`_support`), or that is about the segments' medians, not the ratio."""
    inner = w["warning"] if w.code is Code.ON_SIDE else w
    return inner.code in (Code.MEDIAN_CI_NEEDS_RUNS, Code.TOO_FEW_RUNS, Code.NO_RATIO_CI)


def _support(low: float, high: float, n_before: int, n_after: int, ci_alpha: float,
             unit: str) -> tuple[ChangeSupport, Warn | None]:
    """:data:`SUPPORTED` or :data:`WEAK` with the reason (see :class:`ChangePoint`)."""
    if not (math.isfinite(low) and math.isfinite(high)):
        floor = 2 / math.comb(n_before + n_after, n_before)
        return WEAK, Warn(Code.WEAK_NO_INTERVAL, confidence=1 - ci_alpha, n_before=n_before,
                          n_after=n_after, unit=unit, floor=floor, alpha=ci_alpha)
    if low <= 1 <= high:
        return WEAK, Warn(Code.WEAK_HOLDS_ONE, confidence=1 - ci_alpha, low=low, high=high)
    return SUPPORTED, None


def _segments(names: list[str], runs: list[np.ndarray], cuts: list[int]) -> tuple[Segment, ...]:
    bounds = [0, *cuts, len(runs)]
    out = []
    for start, end in zip(bounds[:-1], bounds[1:], strict=True):
        if end > start:
            vals = np.concatenate(runs[start:end])
            out.append(Segment(start, end, names[start], names[end - 1], end - start,
                               len(vals), float(np.median(vals))))
    return tuple(out)


def _clean(values, labels) -> tuple[list[str], list[np.ndarray], list[Warn]]:
    """Per-label arrays of finite positive values; labels without any are left out."""
    if labels is None:
        labels = [str(i) for i in range(len(values))]
    if len(labels) != len(values):
        raise ValueError(f"{len(labels)} labels for {len(values)} items of values")
    names, runs, dropped_runs, empty = [], [], 0, []
    for name, item in zip(labels, values, strict=True):
        raw = np.ravel(np.asarray([item] if np.isscalar(item) or item is None else item,
                                  dtype=object))
        v = np.array([to_float(x) for x in raw], dtype=np.float64)
        if (v[np.isfinite(v)] <= 0).any():
            raise ValueError(f"label {name!s}: per-run values must be > 0 (changes are ratios)")
        keep = v[np.isfinite(v)]
        dropped_runs += len(v) - len(keep)
        if len(keep) == 0:
            empty.append(str(name))
            continue
        names.append(str(name))
        runs.append(keep)
    warnings = []
    if dropped_runs:
        warnings.append(Warn(Code.FAILED_RUNS_LEFT_OUT, runs=dropped_runs))
    if empty:
        warnings.append(Warn(Code.LABELS_LEFT_OUT, labels=tuple(empty)))
    return names, runs, warnings


def _check(alpha, permutations, min_labels, exponent, confidence, ci_unit) -> None:
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must be in (0, 1), got {alpha!r}")
    if permutations < 1 or (permutations + 1) * alpha < 1 - 1e-9:
        raise ValueError(f"permutations must be >= 1 / alpha - 1 to reach alpha {alpha:g}, "
                         f"got {permutations!r}")
    if min_labels < 1:
        raise ValueError(f"min_labels must be >= 1, got {min_labels!r}")
    if not 0.0 < exponent < 2.0:
        raise ValueError(f"exponent must be in (0, 2), got {exponent!r}")
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence!r}")
    if ci_unit not in CI_UNITS:
        raise ValueError(f"ci_unit must be one of {CI_UNITS}, got {ci_unit!r}")
