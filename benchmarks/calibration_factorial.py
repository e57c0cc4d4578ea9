"""Do the factorial's 95% intervals cover, and do its tests keep alpha 0.05, when the cells'
spreads differ? By simulation: the pooled t (perfkit before issue 21) against HC2 with
Satterthwaite df (:mod:`perfkit.stats.sandwich`, used by :func:`perfkit.stats.factorial`).

Run: ``nice -n 19 .venv/bin/python benchmarks/calibration_factorial.py [--sims 4000]``

Design: 2x2 on log values, r = 3, 5, 10 runs per cell, without blocks and in r randomized
complete blocks (block effects N(0, 0.1) in logs, blocks in the model). Per-run log sds per
cell (low,low), (high,low), (low,high), (high,high):

- equal: all 0.02, all 0.3, all 1.3;
- spread: 0.02, 0.1, 0.5, 1.3 (the range seen in one design);
- demo 256: 0.016, 1.314, 0.113, 0.144 (demo-wrk-factorial at 256 connections: one cell wide);
- demo 16: 0.061, 0.041, 0.249, 0.518 (the same at 16 connections);
- random: each cell's sd drawn log-uniform in [0.02, 1.3], per data set.

Coverage: the true effects are log ratios A = -0.3, B = -1.5, AB = 0.2 (q = half of them);
the share of the 95% intervals of the three effects holding the truth. Size: every effect 0;
the share of the tests of the three effects with p < 0.05. Each printed with its Monte Carlo
standard error (about 0.002 for coverage, 0.002 for size at 4000 data sets x 3 effects,
though the three effects of one data set are not independent). A third column, HC2 with the
Bell-McCaffrey df at Omega = I (the df of the design alone), shows why the df follow the
cells' variances.

The vectorized formulas are checked against :func:`perfkit.stats.factorial` on the first data
sets of every configuration before anything is printed (exit status 2 on a mismatch). Exit
status 1 if the new method's coverage falls below 0.93 or its size exceeds 0.07 anywhere.
"""

from __future__ import annotations

import argparse
import itertools
import sys

import numpy as np
import pandas as pd
from scipy import stats as sps

from perfkit.stats.factorial_design import factorial

CELLS = ((-1, -1), (1, -1), (-1, 1), (1, 1))
PATTERNS = {
    "equal 0.02": (0.02, 0.02, 0.02, 0.02),
    "equal 0.3": (0.3, 0.3, 0.3, 0.3),
    "equal 1.3": (1.3, 1.3, 1.3, 1.3),
    "spread 0.02-1.3": (0.02, 0.1, 0.5, 1.3),
    "demo 256 (one wide)": (0.016, 1.314, 0.113, 0.144),
    "demo 16": (0.061, 0.041, 0.249, 0.518),
    "random 0.02-1.3": None,
}
TRUE_Q = np.array([-0.15, -0.75, 0.1])  # half the log ratios A, B, AB
BLOCK_SD = 0.1
ALPHA = 0.05


def design(r: int, blocks: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The model matrix (intercept, A, B, AB, block effect columns), the cell of each run
    and its block."""
    rows, cells, block = [], [], []
    for b in range(r):
        for c, (a, bb) in enumerate(CELLS):
            rows.append([1.0, a, bb, a * bb])
            cells.append(c)
            block.append(b)
    x = np.array(rows)
    cells, block = np.array(cells), np.array(block)
    if blocks and r > 1:
        last = block == r - 1
        extra = [np.where(block == k, 1.0, 0.0) - last for k in range(r - 1)]
        x = np.column_stack([x, *extra])
    return x, cells, block


def simulate(r: int, blocks: bool, pattern, sims: int, q: np.ndarray, seed: int):
    """Per data set and effect (1..3): estimate, pooled se and df, HC2 se, Satterthwaite df
    (cells' variances) and Bell-McCaffrey df (Omega = I); and the data for the check."""
    rng = np.random.default_rng(seed)
    x, cells, block = design(r, blocks)
    n, p = x.shape
    sds = (np.exp(rng.uniform(np.log(0.02), np.log(1.3), (sims, 4))) if pattern is None
           else np.tile(np.array(pattern, float), (sims, 1)))
    mean = x[:, :4] @ np.r_[0.0, q]
    noise = rng.standard_normal((sims, n)) * sds[:, cells]
    shift = rng.normal(0, BLOCK_SD, (sims, r))[:, block] if blocks else 0.0
    y = mean + noise + shift                                   # sims x n
    w = np.linalg.inv(x.T @ x) @ x.T                           # p x n
    beta = y @ w.T
    e = y - beta @ x.T
    m = np.eye(n) - x @ w
    mdiag = np.diag(m)
    df_res = n - p
    s2 = (e ** 2).sum(axis=1) / df_res
    xtx_inv_diag = np.diag(np.linalg.inv(x.T @ x))
    se_pooled = np.sqrt(s2[:, None] * xtx_inv_diag[None, 1:4])
    a = w[1:4] ** 2 / mdiag                                    # 3 x n
    se_hc2 = np.sqrt((e ** 2) @ a.T)
    # Satterthwaite at the cells' variances: P = sum_c sigma_c^2 M_c
    mc = [m[:, cells == c] @ m[:, cells == c].T for c in range(4)]
    onehot = np.eye(4)[cells]
    qmat = onehot.T @ (m ** 2) @ onehot
    ss = (e ** 2) @ onehot
    sig2 = np.clip(ss @ np.linalg.inv(qmat).T, 0.0, None)
    t_c = np.array([[a[j] @ np.diag(mc[c]) for c in range(4)] for j in range(3)])
    t_cd = np.array([[[np.einsum("i,j,ij->", a[j], a[j], mc[c] * mc[d]) for d in range(4)]
                      for c in range(4)] for j in range(3)])
    df_ws = np.column_stack([(sig2 @ t_c[j]) ** 2 / np.einsum("sc,cd,sd->s", sig2, t_cd[j],
                                                               sig2) for j in range(3)])
    ones = np.ones(4)
    df_bm = np.array([(ones @ t_c[j]) ** 2 / (ones @ t_cd[j] @ ones) for j in range(3)])
    return dict(beta=beta[:, 1:4], se_pooled=se_pooled, df_pooled=df_res, se_hc2=se_hc2,
                df_ws=df_ws, df_bm=df_bm, y=y, cells=cells, block=block)


def rates(sim: dict, q: np.ndarray) -> dict[str, tuple[float, float]]:
    """Coverage (share of intervals holding q) and rejection rate of q as the null, per
    method, with their MC standard errors."""
    out = {}
    for name, se, df in (("pooled t", sim["se_pooled"], sim["df_pooled"]),
                         ("HC2, BM df", sim["se_hc2"], sim["df_bm"][None, :]),
                         ("HC2, WS df", sim["se_hc2"], sim["df_ws"])):
        t = np.abs(sim["beta"] - q) / se
        crit = sps.t.ppf(1 - ALPHA / 2, np.broadcast_to(df, t.shape))
        hit = (t <= crit).ravel()
        out[name] = (hit.mean(), float(np.sqrt(hit.mean() * (1 - hit.mean()) / hit.size)))
    return out


def check(sim: dict, r: int, blocks: bool, count: int = 5) -> None:
    """The vectorized new method equals perfkit.stats.factorial's, data set by data set."""
    for s in range(count):
        frame = pd.DataFrame({"A": [CELLS[c][0] for c in sim["cells"]],
                              "B": [CELLS[c][1] for c in sim["cells"]],
                              "blk": sim["block"], "y": sim["y"][s]})
        table = factorial(frame, ["A", "B"], "y", log=False,
                          block="blk" if blocks and r > 1 else None).set_index("term")
        for j, term in enumerate(("A", "B", "A:B")):
            crit = sps.t.ppf(1 - ALPHA / 2, sim["df_ws"][s, j])
            half = crit * sim["se_hc2"][s, j]
            got = table.loc[term, "ci_high"] - table.loc[term, "effect"]
            if not np.isclose(got, half, rtol=1e-8):
                print(f"mismatch r={r} blocks={blocks} set {s} {term}: {got} vs {half}")
                sys.exit(2)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sims", type=int, default=4000)
    args = ap.parse_args(argv)
    methods = ("pooled t", "HC2, BM df", "HC2, WS df")
    print(f"2x2 on logs, {args.sims} data sets per line; coverage of 95% intervals (effects "
          "A, B, AB pooled) | size of the test at alpha 0.05\n")
    head = " / ".join(methods)
    print(f"{'cell log sds':22} {'r':>3} {'blocks':>6} | coverage: {head:32} | size: {head}")
    worst = (1.0, 0.0)
    seed = 0
    for (name, pattern), blocks, r in itertools.product(PATTERNS.items(), (False, True),
                                                        (3, 5, 10)):
        seed += 1
        cover = simulate(r, blocks, pattern, args.sims, TRUE_Q, seed)
        check(cover, r, blocks)
        size = simulate(r, blocks, pattern, args.sims, np.zeros(3), 1000 + seed)
        c, z = rates(cover, TRUE_Q), rates(size, np.zeros(3))
        cov = " / ".join(f"{c[m][0]:.3f}" for m in methods)
        siz = " / ".join(f"{1 - z[m][0]:.3f}" for m in methods)
        print(f"{name:22} {r:>3} {'yes' if blocks else 'no':>6} | {cov:42} | {siz}")
        worst = (min(worst[0], c["HC2, WS df"][0]), max(worst[1], 1 - z["HC2, WS df"][0]))
    print(f"\nMC se: about {np.sqrt(0.95 * 0.05 / (3 * args.sims)):.4f} (coverage) and "
          f"{np.sqrt(0.05 * 0.95 / (3 * args.sims)):.4f} (size); HC2, WS df: lowest coverage "
          f"{worst[0]:.3f}, highest size {worst[1]:.3f}")
    return 1 if worst[0] < 0.93 or worst[1] > 0.07 else 0


if __name__ == "__main__":
    sys.exit(main())
