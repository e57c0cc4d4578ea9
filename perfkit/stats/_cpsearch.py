"""The search of :func:`perfkit.stats.changepoint.change_points`: hierarchical E-divisive with
permutation tests, then pruning; a history longer than one window is searched in windows.

A history of up to ``window`` labels (100 by default) is searched whole (:func:`whole`): every
permutation costs O(L^2) in its L labels, and each accepted change point one more round of
permutations, so the search is quadratic in L. A longer history is searched in half-overlapping
windows of ``window`` labels (:func:`windowed`), as Hunter / Apache Otava do (Fleming et al.,
ICPE 2023: windows of 50 points), so its cost is linear in L and its memory that of one window.

The bound on false alarms is kept over the whole history: each of the n windows is tested at
alpha / n (Bonferroni), so a flat history shows a change point with probability at most alpha,
whatever its length. The p-values reported are Bonferroni-adjusted (min(1, n p)), comparable
with alpha. A window's permutation test needs (P + 1) alpha / n >= 1, so it draws up to
P = ceil(h n / alpha) - 1 permutations and rejects when fewer than h of them reach the observed
statistic; it stops at the h-th that does (Besag and Clifford, "Sequential Monte Carlo
p-values", Biometrika 78, 1991), whose p, h / l after l permutations, is valid. The decision is
the one all P permutations would give, and a flat window (most of a long history) costs a few
permutations, not P.
"""

from __future__ import annotations

import math

import numpy as np

from perfkit.stats import edivisive

#: labels of one window; a history of up to this many labels is searched whole
WINDOW_LABELS = 100
#: the first batch of permutations of a sequential test (then doubled, up to the chunk)
FIRST_BATCH = 8

Found = dict[int, tuple[float, float, float]]


def whole(z: np.ndarray, counts: np.ndarray, alpha: float, permutations: int,
          min_labels: int, exponent: float, limit: int | None, rng: np.random.Generator,
          exceedances: int | None = None) -> tuple[Found, float]:
    """Hierarchical E-divisive, then pruning: {tau: (p, p_adjacent, Q)} and the stopping p.

    With ``exceedances`` h, each test of the search is sequential (module docstring): it
    rejects when fewer than h permutations reach the observed Q, at level
    h / (permutations + 1); else at ``alpha`` with every permutation drawn.
    """
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    blocks = edivisive.block_sums(z, starts, exponent)
    p_all, c_all = edivisive.prefix(blocks, counts)
    memo: dict[tuple[int, int], tuple[float, int]] = {}
    found: dict[int, tuple[float, float]] = {}
    stop_p = math.nan
    while limit is None or len(found) < limit:
        bounds = [0, *sorted(found), len(counts)]
        clusters = list(zip(bounds[:-1], bounds[1:], strict=True))
        for cl in clusters:
            if cl not in memo:
                q_cl, tau_cl = edivisive.best_split(p_all, c_all, cl[0], cl[1], min_labels)
                memo[cl] = (float(q_cl), int(tau_cl))
        q_obs, tau = max(memo[cl] for cl in clusters)
        if not math.isfinite(q_obs):
            break
        if exceedances is None:
            null = edivisive.permuted_maxima(blocks, counts, clusters, min_labels, permutations,
                                             rng)
            p = (1 + int(np.count_nonzero(null >= q_obs - 1e-12 * abs(q_obs)))) / (
                permutations + 1)
            accept = p <= alpha
        else:
            p, accept = _sequential(blocks, counts, clusters, min_labels, permutations,
                                    exceedances, q_obs, rng)
        if not accept:
            stop_p = p
            break
        found[tau] = (p, q_obs)
    taus = list(found)  # in the order found
    placed = dict(zip(sorted(taus), edivisive.refine(p_all, c_all, taus, min_labels),
                      strict=True))
    adjacent = prune(blocks, counts, sorted(placed.values()), alpha, permutations, rng)
    return {placed[tau]: (found[tau][0], adjacent[placed[tau]], found[tau][1])
            for tau in taus if placed[tau] in adjacent}, stop_p


def _sequential(blocks: np.ndarray, counts: np.ndarray, clusters: list[tuple[int, int]],
                min_labels: int, permutations: int, exceedances: int, q_obs: float,
                rng: np.random.Generator) -> tuple[float, bool]:
    """Besag and Clifford's sequential test: (p, rejected) after at most ``permutations``."""
    done = above = 0
    batch = FIRST_BATCH
    while done < permutations:
        b = min(batch, permutations - done)
        null = edivisive.permuted_maxima(blocks, counts, clusters, min_labels, b, rng)
        hits = np.flatnonzero(null >= q_obs - 1e-12 * abs(q_obs))
        if above + len(hits) >= exceedances:  # the h-th exceedance: stop there
            at = done + int(hits[exceedances - above - 1]) + 1
            return exceedances / at, False
        above += len(hits)
        done += b
        batch *= 2
    return (1 + above) / (permutations + 1), True


def prune(blocks: np.ndarray, counts: np.ndarray, cuts: list[int], alpha: float,
          permutations: int, rng: np.random.Generator) -> dict[int, float]:
    """Drop the weakest change point while its adjacent-segment test has p > alpha."""
    memo: dict[tuple[int, int, int], float] = {}
    while True:
        bounds = [0, *cuts, len(counts)]
        triples = list(zip(bounds[:-2], bounds[1:-1], bounds[2:], strict=True))
        for tri in triples:
            if tri not in memo:
                memo[tri] = edivisive.split_pvalue(blocks, counts, *tri, permutations, rng)
        ps = [memo[tri] for tri in triples]
        if not ps or max(ps) <= alpha:
            return {tri[1]: memo[tri] for tri in triples}
        cuts = [c for c in cuts if c != triples[int(np.argmax(ps))][1]]


# -- long histories: windows ------------------------------------------------------------------
def window_starts(n_labels: int, window: int) -> list[int]:
    """First labels of the windows of ``window`` labels over ``n_labels``, half overlapping
    (the last one ends at the newest label); one window [0, n) when the history fits."""
    if n_labels <= window:
        return [0]
    step = window // 2
    out = list(range(0, n_labels - window, step))
    return [*out, n_labels - window]


def sequential_plan(alpha: float, permutations: int, n_windows: int) -> tuple[int, int]:
    """(h, P) of each window's sequential test at level alpha / n_windows: h exceedances stop
    it, P permutations at most, h / (P + 1) <= alpha / n_windows; h is the count
    ``permutations`` would allow at that level (at least 1)."""
    h = max(1, math.floor((permutations + 1) * alpha / n_windows + 1e-9))
    return h, max(permutations, math.ceil(h * n_windows / alpha - 1e-9) - 1)


def windowed(z: np.ndarray, counts: np.ndarray, alpha: float, permutations: int,
             min_labels: int, exponent: float, limit: int | None, rng: np.random.Generator,
             window: int) -> tuple[Found, float]:
    """:func:`whole` over half-overlapping windows (module docstring); p-values adjusted.

    Each window keeps the change points in its core, the labels nearer its centre than any
    other window's. Then the change points of all windows are pruned together, each tested
    against its adjacent segments cut to ``window // 2`` labels a side.
    """
    n = len(counts)
    offsets = np.concatenate([[0], np.cumsum(counts)])
    starts = window_starts(n, window)
    h, perms = sequential_plan(alpha, permutations, len(starts))
    centres = [s + window / 2 for s in starts]
    mids = [(a + b) / 2 for a, b in zip(centres[:-1], centres[1:], strict=True)]
    edges = [-math.inf, *mids, math.inf]
    found: Found = {}
    stops = []
    for j, lo in enumerate(starts):
        hi = lo + window
        got, stop = whole(z[offsets[lo]:offsets[hi]], counts[lo:hi], alpha, perms,
                          min_labels, exponent, None, rng, exceedances=h)
        stops.append(stop)
        for tau, detail in sorted(got.items()):
            at = lo + tau
            if edges[j] <= at < edges[j + 1] and all(abs(at - t) >= min_labels for t in found):
                found[at] = detail
    adjust = len(starts)
    order = sorted(found, key=lambda t: (found[t][0], -found[t][2]))[:limit]
    reach = window // 2
    adjacent = _prune_near(z, offsets, counts, sorted(order), alpha, permutations,
                           exponent, rng, reach)
    out = {t: (min(1.0, adjust * found[t][0]), adjacent[t], found[t][2])
           for t in order if t in adjacent}
    seen = [s for s in stops if math.isfinite(s)]
    return out, min(1.0, adjust * min(seen)) if seen else math.nan


def _prune_near(z: np.ndarray, offsets: np.ndarray, counts: np.ndarray, cuts: list[int],
                alpha: float, permutations: int, exponent: float, rng: np.random.Generator,
                reach: int) -> dict[int, float]:
    """:func:`prune` with each adjacent segment cut to ``reach`` labels beside its change."""
    memo: dict[tuple[int, int, int], float] = {}
    while True:
        bounds = [0, *cuts, len(counts)]
        triples = [(max(a, t - reach), t, min(b, t + reach))
                   for a, t, b in zip(bounds[:-2], bounds[1:-1], bounds[2:], strict=True)]
        for lo, tau, hi in triples:
            if (lo, tau, hi) not in memo:
                sub = counts[lo:hi]
                starts = offsets[lo:hi] - offsets[lo]
                blocks = edivisive.block_sums(z[offsets[lo]:offsets[hi]], starts, exponent)
                memo[lo, tau, hi] = edivisive.split_pvalue(blocks, sub, 0, tau - lo, hi - lo,
                                                           permutations, rng)
        ps = [memo[tri] for tri in triples]
        if not ps or max(ps) <= alpha:
            return {tri[1]: memo[tri] for tri in triples}
        cuts = [c for c in cuts if c != triples[int(np.argmax(ps))][1]]
