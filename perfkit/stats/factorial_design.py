"""2^k r factorial designs (Jain, *The Art of Computer Systems Performance Analysis*, 1991,
chapters 17-18): effects, their t-based CIs, and the allocation of variation.

The intervals and tests do not assume that every cell has the same spread (Jain's pooled
error variance does; on per-run log p99 one design's cells ranged from sd 0.016 to 1.3): each
effect's standard error is the HC2 sandwich and its t distribution has the Satterthwaite df
of that standard error (:mod:`perfkit.stats.sandwich`; in a design without blocks the
separate-variance, Welch, contrast of cell means). ``variance="pooled"`` gives Jain's pooled
t (his known answers). ``benchmarks/calibration_factorial.py`` prints the coverage and size
of both.

Factors are coded -1/+1 (see :mod:`perfkit.stats.coding`), every interaction is a product
column, and the model is fitted by least squares. For a balanced design the columns are
orthogonal, so each effect is Jain's q = (sign column . y) / N, half the high-minus-low
difference, and its sum of squares is N q^2. On log responses an effect is a ratio exp(2q):
the geometric mean at high over the geometric mean at low.

Sums of squares are Type II, from nested least-squares fits: a term's SS is the drop in the
residual SS when it is added to the model of every term that does not contain it (blocks
included); the block's SS is its drop after all factor terms (Fox, *Applied Regression
Analysis and Generalized Linear Models*, 3rd ed., 2016, section 8.2.5; Langsrud, "ANOVA for
unbalanced data: use Type II instead of Type III sums of squares", Statistics and Computing 13,
2003). In an orthogonal design (equal cells, blocks that are complete replicates) they equal
Jain's N q^2 and, with the error SS, add up to the total. When cells are unequal or blocks are
incomplete (6 runs in one block, 10 in the other) they do not add up: a warning says so, and
``variation_pct`` is each term's Type II share of the total, not an allocation.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from perfkit.stats._dist import f_sf, t_ppf, t_sf
from perfkit.stats.coding import code_factor
from perfkit.stats.multiple import adjust_pvalues
from perfkit.stats.sandwich import hc2
from perfkit.warning import Code, Warn

BASE_COLUMNS = ["term", "effect", "ci_low", "ci_high", "ss", "variation_pct", "p_value", "df"]
RATIO_COLUMNS = ["ratio", "ratio_ci_low", "ratio_ci_high"]
SS_TYPE = "II"
#: relative tolerance for "the sums of squares add up to the total"
_ADDS_UP = 1e-9
#: the effects' variance: ``hc2`` (per-cell spread, Satterthwaite df) or ``pooled`` (Jain)
VARIANCES = ("hc2", "pooled")
#: a residual sum of squares below (this x the largest |response|)^2 per run is rounding noise
#: of equal values, not a spread (equal logs leave residuals of about 1e-16)
ZERO_RESIDUAL = 1e-12


def factorial(frame: pd.DataFrame, factors: Sequence[str], response: str, log: bool = True,
              confidence: float = 0.95, block: str | None = None,
              by: str | Sequence[str] | None = None,
              levels: Mapping[str, Sequence[Any]] | None = None,
              variance: str = "hc2") -> pd.DataFrame:
    """Effects of a 2^k r design, one row per term, and a final ``error`` row.

    Parameters
    ----------
    frame : pandas.DataFrame
        One row per run, e.g. :func:`perfkit.frames.runs_frame`.
    factors : sequence of str
        Two-level factor columns (labels are mapped to low/high as in
        :mod:`perfkit.stats.coding`; -1/+1 coding works as is).
    response : str
        The per-run response column, e.g. ``latency_p99_ms``. Runs where it is NaN (failed)
        are left out with a warning, which makes the design unbalanced.
    log : bool
        Fit log(response): effects become ratios ``exp(2q)`` with their CI.
    confidence : float
        Coverage of the t intervals (df: each effect's ``df``).
    block : str, optional
        A nuisance blocking column: its variation is removed and reported in a ``block`` row.
        With complete blocks (each a full replicate) the error df are (2^k - 1)(r - 1); with
        incomplete blocks the effects are still right (least squares) and the sums of squares
        are Type II, with a warning.
    by : str or sequence of str, optional
        Load columns with more than two levels (e.g. ``connections``): the design is analysed
        per level, a ``by`` column is prepended and ``p_value_holm`` Holm-adjusts each term's
        p across levels; each term's intervals are then Bonferroni's over its ``m`` levels
        (coverage 1 - (1 - ``confidence``) / m each, ``ci_level``: they hold together at
        ``confidence``, Dunn 1961), so that an interval excludes no effect only where the
        Holm-adjusted p is significant (Holm's adjusted p is at most m x p). Factors with more
        than two levels are refused, pointing here.
    levels : mapping, optional
        ``{factor: (low, high)}`` to state the coding explicitly.
    variance : {"hc2", "pooled"}
        ``hc2`` (default): each effect's standard error is the HC2 sandwich and its df the
        Satterthwaite df at the cells' own variances (:mod:`perfkit.stats.sandwich`): no
        equal spread across cells is assumed. An effect resting on a cell of one run has no
        such error: NaN, with a warning. ``pooled``: Jain's t on the pooled error variance
        with the error df.

    Returns
    -------
    pandas.DataFrame
        Columns ``term, effect, ci_low, ci_high, ss, variation_pct, p_value, df`` (``df``:
        the degrees of freedom of the effect's t; with
        ``log`` also ``ratio, ratio_ci_low, ratio_ci_high``), ``se`` (the effect's standard
        error) and ``ci_level`` (the intervals' coverage). ``ss`` are Type II sums of
        squares (in squared log units with ``log``). ``attrs`` holds ``coding`` (factor ->
        low/high/rule), ``q0``, ``df_error`` (the residual df), ``orthogonal`` (the SS add up
        to the total), ``ss_type`` and ``variance`` (each per level when ``by``), and
        ``warnings``.

    Raises
    ------
    ValueError
        An unreplicated design (no error df), a missing cell, blocks confounded with the
        factors, or a factor without exactly two levels. An unbalanced design is fitted by OLS
        with a warning naming the short cells.
    """
    factors = list(factors)
    if not factors:
        raise ValueError("name at least one factor")
    if variance not in VARIANCES:
        raise ValueError(f"variance must be one of {VARIANCES}, not {variance!r}")
    missing = [c for c in [*factors, response, *(_as_list(by)), *([block] if block else [])]
               if c not in frame.columns]
    if missing:
        raise ValueError(f"no column(s) {missing} in the frame; columns: {list(frame.columns)}")
    # the columns the fit reads: each level's subset and each cell's mask then take 4-5
    # columns, not the runs frame's 70 (issue 33)
    frame = frame[list(dict.fromkeys([*factors, response, *_as_list(by),
                                      *([block] if block else [])]))]
    # text factors as Python strings (numpy object arrays): each cell's mask then compares
    # in numpy, not through pyarrow's string kernels (issue 33); the same values and order
    text = [c for c in factors if pd.api.types.is_string_dtype(frame[c].dtype)
            and frame[c].dtype != object]
    if text:
        frame = frame.assign(**{c: frame[c].astype(object) for c in text})
    coding = {}
    for name in factors:
        _, coding[name] = code_factor(frame[name], name, levels)
    fixed = {name: (coding[name]["low"], coding[name]["high"]) for name in factors}
    if by is None:
        table, info = _fit(frame, factors, response, log, confidence, block, fixed, variance)
        table.attrs.update(coding=coding, ss_type=SS_TYPE, variance=variance, **info)
        return table
    return _fit_by(frame, factors, response, log, confidence, block, fixed, _as_list(by), coding,
                   variance)


def _fit_by(frame, factors, response, log, confidence, block, fixed, by, coding,
            variance) -> pd.DataFrame:
    parts, q0, df_error, orthogonal = [], {}, {}, {}
    warnings: list[Warn] = []
    for key, sub in frame.groupby(by, sort=True, dropna=False):
        label = key[0] if len(by) == 1 else key
        table, info = _fit(sub, factors, response, log, confidence, block, fixed, variance)
        table.insert(0, "by", [label] * len(table))
        parts.append(table)
        q0[label], df_error[label] = info["q0"], info["df_error"]
        orthogonal[label] = info["orthogonal"]
        warnings.extend(Warn(Code.AT_LEVEL, columns=tuple(by), level=label, warning=w)
                        for w in info["warnings"])
    out = pd.concat(parts, ignore_index=True)
    _across_levels(out, confidence, log)
    out.attrs.update(coding=coding, q0=q0, df_error=df_error, warnings=warnings, by=by,
                     orthogonal=orthogonal, ss_type=SS_TYPE, variance=variance)
    return out


def _fit(frame, factors, response, log, confidence, block, fixed,
         variance="hc2") -> tuple[pd.DataFrame, dict]:
    warnings: list[Warn] = []
    y_raw = pd.to_numeric(frame[response], errors="coerce").to_numpy(dtype=np.float64)
    keep = np.isfinite(y_raw)
    if (~keep).any():
        warnings.append(Warn(Code.RUNS_WITHOUT_RESPONSE, runs=int((~keep).sum()),
                             response=response))
    frame, y = frame.loc[keep], y_raw[keep]
    if log:
        if (y <= 0).any():
            raise ValueError(f"log=True needs positive {response}; use log=False")
        y = np.log(y)
    codes = {n: code_factor(frame[n], n, fixed)[0] for n in factors}
    terms, columns = _terms(factors, codes)
    cells = _cell_counts(frame, factors, fixed)
    blocks = _block_columns(frame, block)
    x = np.column_stack([np.ones(len(y)), *columns, *blocks])
    beta, sse, rank = _ols(x, y)
    df_e = len(y) - rank
    if rank < x.shape[1]:
        raise ValueError("the design matrix is singular: blocks confounded with factors?")
    if df_e <= 0:
        raise ValueError(f"unreplicated 2^{len(factors)} design: no degrees of freedom left for "
                         "error; repeat every cell (r >= 2) to estimate effects with CIs")
    if cells.nunique() != 1:
        short = cells[cells < cells.max()]
        warnings.append(Warn(Code.UNBALANCED_DESIGN, most=int(cells.max()),
                             cells=tuple((str(k), int(v)) for k, v in short.items())))
    ss_terms, ss_block = type2_ss(y, terms, columns, blocks)
    scale = ZERO_RESIDUAL * max(1.0, float(np.abs(y).max()))
    if sse <= scale * scale * len(y):  # equal values in each cell: rounding noise, no spread
        sse, beta = 0.0, np.where(np.abs(beta) < scale, 0.0, beta)
        ss_terms = [0.0 if v <= scale * scale * len(y) else v for v in ss_terms]
        warnings.append(Warn(Code.NO_SPREAD_IN_CELLS))
    s2 = sse / df_e
    resid = y - x @ beta if sse > 0 else np.zeros(len(y))  # no spread: no residual either
    se, dfs, cov = _errors(x, resid, s2, df_e, _cell_labels(codes, factors), variance)
    dfs = np.where(se == 0, float(df_e), dfs)  # a zero-width interval needs no df of its own
    if variance == "hc2" and np.isnan(se[1:len(terms) + 1]).any():
        warnings.append(Warn(Code.ONE_RUN_CELL))
    sst = float(((y - y.mean()) ** 2).sum())
    total = sum(ss_terms) + sse + (ss_block if block else 0.0)
    orthogonal = bool(abs(total - sst) <= _ADDS_UP * max(sst, 1e-300))
    if not orthogonal:
        warnings.append(Warn(Code.NON_ORTHOGONAL, unequal_cells=cells.nunique() != 1,
                             block=block, share_pct=_pct(total, sst)))
    rows = []
    for i, term in enumerate(terms, start=1):
        q = float(beta[i])
        low, high = _interval(q, se[i], dfs[i], confidence)
        rows.append({"term": term, "effect": q, "ci_low": low, "ci_high": high,
                     "ss": ss_terms[i - 1], "variation_pct": _pct(ss_terms[i - 1], sst),
                     "p_value": _p_value(q, se[i], dfs[i]), "df": float(dfs[i]),
                     "se": float(se[i]), "ci_level": confidence})
    if block:
        first = len(terms) + 1
        rows.append(_block_row(len(blocks), ss_block, sst, s2, df_e, beta[first:],
                               cov[first:, first:] if variance == "hc2" else None))
    rows.append({"term": "error", "effect": math.nan, "ci_low": math.nan, "ci_high": math.nan,
                 "ss": sse, "variation_pct": _pct(sse, sst), "p_value": math.nan,
                 "df": float(df_e)})
    table = pd.DataFrame(rows, columns=[*BASE_COLUMNS, "se", "ci_level"])
    if log:
        for src, dst in zip(("effect", "ci_low", "ci_high"), RATIO_COLUMNS, strict=True):
            table[dst] = np.exp(2.0 * table[src])
    info = {"q0": float(beta[0]), "df_error": df_e, "warnings": warnings,
            "n_runs": len(y), "cells": cells.to_dict(), "orthogonal": orthogonal}
    return table, info


def _interval(q: float, se: float, df: float, level: float) -> tuple[float, float]:
    """The t interval of an effect at coverage ``level`` (NaN ends without df)."""
    tcrit = float(t_ppf(0.5 + level / 2.0, df)) if df > 0 else math.nan
    return q - tcrit * se, q + tcrit * se


def _across_levels(out: pd.DataFrame, confidence: float, log: bool) -> None:
    """Each term's p Holm-adjusted over the levels (``p_value_holm``) and, for a factor term at
    ``m`` > 1 levels, its intervals Bonferroni's (:func:`_bonferroni`), in place; on the
    columns' arrays, each column written once."""
    terms = out["term"].to_numpy()
    p = out["p_value"].to_numpy(dtype=float)
    holm = np.full(len(out), np.nan)
    cols = {c: out[c].to_numpy(dtype=float, copy=True)
            for c in ("ci_low", "ci_high", "ci_level", *(RATIO_COLUMNS[1:] if log else ()))}
    effect, se, df = (out[c].to_numpy(dtype=float) for c in ("effect", "se", "df"))
    for term in dict.fromkeys(terms):
        idx = np.flatnonzero(terms == term)
        holm[idx] = adjust_pvalues(p[idx], "holm")
        if term not in ("error", "block") and len(idx) > 1:
            _bonferroni(cols, idx, effect, se, df, confidence, log)
    out["p_value_holm"] = holm
    for name, values in cols.items():
        out[name] = values


def _bonferroni(cols: dict[str, np.ndarray], idx: np.ndarray, effect: np.ndarray,
                se: np.ndarray, df: np.ndarray, confidence: float, log: bool) -> None:
    """Each of the ``m`` rows ``idx`` (one term over the levels) with its interval at
    1 - (1 - ``confidence``) / m, in the arrays ``cols`` (Dunn, "Multiple comparisons among
    means", JASA 56, 1961)."""
    level = 1 - (1 - confidence) / len(idx)
    ends = np.array([_interval(effect[i], se[i], df[i], level) for i in idx], dtype=float)
    cols["ci_low"][idx], cols["ci_high"][idx] = ends[:, 0], ends[:, 1]
    cols["ci_level"][idx] = level
    if log:
        ratios = np.exp(2.0 * ends)
        cols["ratio_ci_low"][idx], cols["ratio_ci_high"][idx] = ratios[:, 0], ratios[:, 1]


def _p_value(effect: float, se: float, df: float) -> float:
    """Two-sided p of a t test of ``effect``; without a spread (se 0), 1 for no effect and
    0 for any other (the limit of a vanishing error variance); NaN without a standard error
    (a cell of one run under HC2)."""
    if se == 0:
        return 1.0 if effect == 0 else 0.0
    if not se == se:
        return math.nan
    return float(2 * t_sf(abs(effect / se), df))


def type2_ss(y: np.ndarray, terms: list[str], columns: list[np.ndarray],
             blocks: list[np.ndarray]) -> tuple[list[float], float]:
    """Type II sums of squares of each factor term and of the blocks, by nested OLS fits.

    A term's SS is RSS(every term not containing it) - RSS(the same plus the term), the
    intercept and blocks always in; the blocks' SS is RSS(all factor terms) - RSS(full model).
    """
    ones = np.ones(len(y))
    parts = [set(t.split(":")) for t in terms]
    out = []
    for i, part in enumerate(parts):
        kept = [c for j, c in enumerate(columns) if j != i and not part <= parts[j]]
        without = _ols(np.column_stack([ones, *kept, *blocks]), y)[1]
        with_term = _ols(np.column_stack([ones, *kept, columns[i], *blocks]), y)[1]
        out.append(max(without - with_term, 0.0))
    ss_block = math.nan
    if blocks:
        factors_only = _ols(np.column_stack([ones, *columns]), y)[1]
        full = _ols(np.column_stack([ones, *columns, *blocks]), y)[1]
        ss_block = max(factors_only - full, 0.0)
    return out, ss_block


def _terms(factors: list[str], codes: dict) -> tuple[list[str], list[np.ndarray]]:
    terms, columns = [], []
    for order in range(1, len(factors) + 1):
        for combo in itertools.combinations(factors, order):
            terms.append(":".join(combo))
            columns.append(np.prod([codes[f] for f in combo], axis=0))
    return terms, columns


def _cell_counts(frame: pd.DataFrame, factors: list[str], fixed: dict) -> pd.Series:
    counts = {}
    columns = {f: frame[f].to_numpy() for f in factors}
    for combo in itertools.product(*[fixed[f] for f in factors]):
        mask = np.ones(len(frame), dtype=bool)
        for f, level in zip(factors, combo, strict=True):
            mask &= np.asarray(columns[f] == level, dtype=bool)
        counts[",".join(f"{f}={lv}" for f, lv in zip(factors, combo, strict=True))] = mask.sum()
    cells = pd.Series(counts, dtype=int)
    empty = cells[cells == 0]
    if len(empty):
        raise ValueError(f"incomplete design: no runs in cell(s) {'; '.join(empty.index)}")
    return cells


def _block_columns(frame: pd.DataFrame, block: str | None) -> list[np.ndarray]:
    """Sum-to-zero (effect) coding of the block factor: b - 1 columns."""
    if not block:
        return []
    labels = frame[block].to_numpy()
    levels = list(pd.unique(labels))
    last = labels == levels[-1]
    return [np.where(labels == lv, 1.0, 0.0) - last for lv in levels[:-1]]


def _errors(x: np.ndarray, resid: np.ndarray, s2: float, df_e: int, cells: np.ndarray,
            variance: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Standard errors, df and covariance of the coefficients: HC2 with Satterthwaite df, or
    the pooled ``s2 (X'X)^-1`` with the error df."""
    if variance == "hc2":
        robust = hc2(x, resid, cells)  # no more df than the residuals have
        return robust.se, np.fmin(robust.df, float(df_e)), robust.cov
    cov = s2 * np.linalg.inv(x.T @ x)
    return np.sqrt(np.diag(cov)), np.full(x.shape[1], float(df_e)), cov


def _cell_labels(codes: dict, factors: list[str]) -> np.ndarray:
    """One integer per run naming its cell (its factors' codes)."""
    bits = [(codes[f] > 0).astype(int) << i for i, f in enumerate(factors)]
    return np.sum(bits, axis=0)


def _block_row(df_b: int, ss: float, sst: float, s2: float, df_e: int,
               coef: np.ndarray | None = None, cov: np.ndarray | None = None) -> dict:
    """The blocks' test: the F test on their Type II SS (pooled), or with ``cov`` (HC2) the
    Wald test of their coefficients, W / df_b against F(df_b, df_e)."""
    if cov is not None and coef is not None:
        try:
            wald = float(coef @ np.linalg.solve(cov, coef)) / df_b if df_b else math.nan
        except np.linalg.LinAlgError:
            wald = math.nan
        p = float(f_sf(wald, df_b, df_e)) if np.isfinite(wald) else math.nan
    else:
        p = float(f_sf((ss / df_b) / s2, df_b, df_e)) if df_b and s2 > 0 else math.nan
    return {"term": "block", "effect": math.nan, "ci_low": math.nan, "ci_high": math.nan,
            "ss": ss, "variation_pct": _pct(ss, sst), "p_value": p, "df": float(df_e)}


def _ols(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, float, int]:
    beta, _, rank, _ = np.linalg.lstsq(x, y, rcond=None)
    resid = y - x @ beta
    return beta, float(resid @ resid), int(rank)


def _pct(ss: float, sst: float) -> float:
    return 100.0 * ss / sst if sst > 0 and not math.isnan(ss) else math.nan


def _as_list(by: str | Sequence[str] | None) -> list[str]:
    if by is None:
        return []
    return [by] if isinstance(by, str) else list(by)
