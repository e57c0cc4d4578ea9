"""E-divisive means over a series of labels with repeated runs: the kernel of changepoint.py.

Matteson and James, "A nonparametric approach for multiple change point analysis of
multivariate data", JASA 109, 2014: for a cluster of the series, the split tau and end kappa
maximising

    Q(tau, kappa) = m n / (m + n) * E,
    E = 2 / (m n) sum |x_i - y_j|^a - C(m, 2)^-1 sum_{i<k} |x_i - x_k|^a
        - C(n, 2)^-1 sum_{j<k} |y_j - y_k|^a,

with X = Z[start:tau], Y = Z[tau:kappa] and a in (0, 2), is the candidate; its significance
is a permutation test of the largest Q over all clusters, permuting inside each cluster.

Here the series is a sequence of labels (commits), each with one or more runs. Splits fall
between labels only, and all sums are read in O(1) from 2-d prefix sums of the label-by-label
block sums of the run distance matrix, so a cluster of L labels costs O(L^2) whatever the
number of runs, and a batch of permutations is one array operation.
"""

from __future__ import annotations

import numpy as np

#: bound on the floats of one batch of permuted label matrices (32 MB)
CHUNK_FLOATS = 4_000_000


def block_sums(z: np.ndarray, starts: np.ndarray, exponent: float) -> np.ndarray:
    """Label-by-label sums of |z_i - z_j|^exponent; ``starts`` are each label's first run.

    The run distance matrix is built a band of labels at a time, each band's rows
    (``CHUNK_FLOATS`` floats, or one label's runs by all runs when more), never the whole
    R x R matrix of R runs; the sums are those of the whole matrix, bit for bit (each block is
    summed in the same order)."""
    size = len(z)
    bounds = np.append(np.asarray(starts, dtype=np.int64), size)
    out = np.empty((len(starts), len(starts)))
    first = 0
    while first < len(starts):
        last = first + 1
        while last < len(starts) and (bounds[last + 1] - bounds[first]) * size <= CHUNK_FLOATS:
            last += 1
        rows = z[bounds[first]:bounds[last]]
        d = np.subtract.outer(rows, z)
        np.power(np.abs(d, out=d), exponent, out=d)
        band = np.add.reduceat(d, bounds[first:last] - bounds[first], axis=0)
        out[first:last] = np.add.reduceat(band, starts, axis=1)
        first = last
    return out


def prefix(blocks: np.ndarray, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """2-d prefix sums P[.., i, j] = sum blocks[.., :i, :j] and cumulative run counts."""
    lead = blocks.shape[:-2]
    size = blocks.shape[-1] + 1
    p = np.zeros((*lead, size, size))
    p[..., 1:, 1:] = blocks.cumsum(axis=-1).cumsum(axis=-2)
    c = np.zeros((*lead, size))
    c[..., 1:] = counts.cumsum(axis=-1)
    return p, c


def best_split(p: np.ndarray, c: np.ndarray, start: int, end: int,
               min_labels: int) -> tuple[np.ndarray, np.ndarray]:
    """Largest Q over splits of labels [start, end) and the split label; batched over p's lead.

    Returns ``(q, tau)`` of shape ``p.shape[:-2]``; q is -inf when no split fits.
    """
    lead = p.shape[:-2]
    taus = np.arange(start + min_labels, end - min_labels + 1)
    if len(taus) == 0:
        return np.full(lead, -np.inf), np.full(lead, -1)
    kappas = np.arange(start + 2 * min_labels, end + 1)
    t, k = np.meshgrid(taus, kappas, indexing="ij")
    valid = k >= t + min_labels
    t, k = t[valid], k[valid]
    q = q_at(p, c, start, t, k)
    best = np.argmax(q, axis=-1)
    return np.take_along_axis(q, best[..., None], axis=-1)[..., 0], t[best]


def refine(p: np.ndarray, c: np.ndarray, cuts: list[int], min_labels: int,
           passes: int = 3) -> list[int]:
    """Move each split to the best position between its neighbours (Y ends at the next one).

    The search picks each split with the later ones not yet known, so a split found first in
    a staircase can sit off its step; re-placing each between its final neighbours, for a few
    passes until none moves, puts it back.
    """
    cuts = sorted(cuts)
    size = p.shape[-1] - 1
    for _ in range(passes):
        moved = False
        for j, tau in enumerate(cuts):
            lo = cuts[j - 1] if j else 0
            hi = cuts[j + 1] if j + 1 < len(cuts) else size
            t = np.arange(lo + min_labels, hi - min_labels + 1)
            if len(t) == 0:
                continue
            best = int(t[np.argmax(q_at(p, c, lo, t, np.full(len(t), hi)))])
            moved |= best != tau
            cuts[j] = best
        if not moved:
            break
    return cuts


def q_at(p: np.ndarray, c: np.ndarray, a: int, t: np.ndarray, k: np.ndarray) -> np.ndarray:
    """Q of X = labels [a, t), Y = labels [t, k) for index arrays t, k; batched over p's lead."""
    m = c[..., t] - c[..., [a]]
    n = c[..., k] - c[..., t]
    within_x = p[..., t, t] - p[..., [a], t] - p[..., t, [a]] + p[..., [a], [a]]
    within_y = p[..., k, k] - p[..., t, k] - p[..., k, t] + p[..., t, t]
    cross = p[..., t, k] - p[..., [a], k] - p[..., t, t] + p[..., [a], t]
    with np.errstate(divide="ignore", invalid="ignore"):
        e = (2.0 * cross / (m * n)
             - np.where(m > 1, within_x / (m * (m - 1)), 0.0)
             - np.where(n > 1, within_y / (n * (n - 1)), 0.0))
        return m * n / (m + n) * e


def _shuffled(blocks: np.ndarray, counts: np.ndarray, clusters: list[tuple[int, int]], b: int,
              rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Prefix sums of ``b`` copies with the labels of each cluster shuffled."""
    order = np.tile(np.arange(len(counts)), (b, 1))
    for start, end in clusters:
        order[:, start:end] = rng.permuted(order[:, start:end], axis=1)
    return prefix(blocks[order[:, :, None], order[:, None, :]], counts[order])


def split_pvalue(blocks: np.ndarray, counts: np.ndarray, lo: int, tau: int, hi: int,
                 permutations: int, rng: np.random.Generator) -> float:
    """Permutation p of the two-sample energy test of labels [lo, tau) against [tau, hi).

    The labels of [lo, hi) are shuffled as whole labels; Q is taken at the same split. This
    is Szekely and Rizzo's energy test ("Testing for equal distributions in high dimension",
    InterStat 2004) with labels as the exchangeable unit.
    """
    sub = blocks[lo:hi, lo:hi]
    sub_counts = counts[lo:hi]
    t, k = np.array([tau - lo]), np.array([hi - lo])
    p, c = prefix(sub, sub_counts)
    observed = float(q_at(p, c, 0, t, k)[0])
    size = hi - lo
    chunk = max(1, CHUNK_FLOATS // (size * size))
    above = 0
    for done in range(0, permutations, chunk):
        b = min(chunk, permutations - done)
        pp, cc = _shuffled(sub, sub_counts, [(0, size)], b, rng)
        q = q_at(pp, cc, 0, t, k)[..., 0]
        above += int(np.count_nonzero(q >= observed - 1e-12 * abs(observed)))
    return (1 + above) / (permutations + 1)


def permuted_maxima(blocks: np.ndarray, counts: np.ndarray, clusters: list[tuple[int, int]],
                    min_labels: int, permutations: int, rng: np.random.Generator) -> np.ndarray:
    """Largest Q over all clusters after shuffling the labels inside each cluster."""
    size = len(counts)
    chunk = max(1, CHUNK_FLOATS // (size * size))
    out = []
    for done in range(0, permutations, chunk):
        b = min(chunk, permutations - done)
        p, c = _shuffled(blocks, counts, clusters, b, rng)
        best = np.full(b, -np.inf)
        for start, end in clusters:
            best = np.maximum(best, best_split(p, c, start, end, min_labels)[0])
        out.append(best)
    return np.concatenate(out)


def permuted_run_maxima(z: np.ndarray, starts: np.ndarray, counts: np.ndarray,
                        clusters: list[tuple[int, int]], min_labels: int, exponent: float,
                        permutations: int, rng: np.random.Generator) -> np.ndarray:
    """As :func:`permuted_maxima`, shuffling single runs (labels keep their run counts).

    Not used by :func:`perfkit.stats.changepoint.change_points`: kept to show, in
    benchmarks/calibration_changepoint.py, that this scheme is not valid when runs of a label
    share a level of their own.
    """
    bounds = np.concatenate([starts, [len(z)]])
    chunk = max(1, CHUNK_FLOATS // (len(z) * len(z)))
    out = []
    for done in range(0, permutations, chunk):
        b = min(chunk, permutations - done)
        shuffled = np.tile(z, (b, 1))
        for start, end in clusters:
            lo, hi = bounds[start], bounds[end]
            shuffled[:, lo:hi] = rng.permuted(shuffled[:, lo:hi], axis=1)
        d = np.abs(shuffled[:, :, None] - shuffled[:, None, :]) ** exponent
        blocks = np.add.reduceat(np.add.reduceat(d, starts, axis=1), starts, axis=2)
        p, c = prefix(blocks, np.broadcast_to(counts, (b, len(counts))))
        best = np.full(b, -np.inf)
        for start, end in clusters:
            best = np.maximum(best, best_split(p, c, start, end, min_labels)[0])
        out.append(best)
    return np.concatenate(out)
