"""Compare two configurations run by run, as benchstat does: one tidy row out.

The observations are per-run summaries (a run's p99, its throughput, ...), never requests.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pandas as pd

from perfkit.stats.mannwhitney import (
    hodges_lehmann_moses,
    mann_whitney,
    min_attainable_p,
    runs_needed,
)
from perfkit.stats.orderstats import median_ci

COLUMNS = (
    "n_base", "n_new",
    "median_base", "median_base_ci_low", "median_base_ci_high",
    "median_new", "median_new_ci_low", "median_new_ci_high",
    "ratio", "ratio_ci_low", "ratio_ci_high",
    "p_value", "p_method", "min_attainable_p", "alpha", "significant",
    "n_failed_base", "n_failed_new", "warnings",
)


def compare(base: Sequence[float] | np.ndarray, new: Sequence[float] | np.ndarray,
            alpha: float = 0.05, *, confidence: float = 0.95, lower_is_better: bool = True,
            failed_base: Sequence[bool] | np.ndarray | None = None,
            failed_new: Sequence[bool] | np.ndarray | None = None,
            exclude_failed: str | None = None) -> pd.DataFrame:
    """Compare per-run values of a base and a new configuration.

    Parameters
    ----------
    base, new : array-like of float
        One value per run (e.g. each run's p99 in ms). None/NaN marks a failed run.
    alpha : float
        Significance level of the two-sided Mann-Whitney U test; the ratio interval has
        coverage 1 - alpha, so it excludes 1 exactly when p < alpha.
    confidence : float
        Coverage of the order-statistic intervals of the two medians.
    lower_is_better : bool
        True for latencies (the default): a failed run ranks worse, i.e. above every finished
        run. False for throughput-like metrics: a failed run ranks below every finished run.
    failed_base, failed_new : array-like of bool, optional
        Runs to treat as failed although they have a value (e.g. saturated runs).
    exclude_failed : str, optional
        Drop failed runs instead of ranking them, for this stated reason (echoed in warnings).

    Returns
    -------
    pandas.DataFrame
        One row: ``n_base, n_new``, the medians with their CIs, ``ratio`` (new over base: the
        Hodges-Lehmann shift of log values, exponentiated) with its Moses interval,
        ``p_value`` and ``p_method`` ("exact" when both n <= 25, midranks with ties, else
        "normal" with tie and continuity correction), ``min_attainable_p``, ``alpha``,
        ``significant`` (True/False, None when ``min_attainable_p > alpha``), the failed-run
        counts and ``warnings`` (a list of strings, each naming the next step).

    Notes
    -----
    Mann and Whitney (1947); exact distribution with ties after Klotz (1966); Hodges and
    Lehmann (1963); Moses interval as in Hollander, Wolfe and Chicken (2014), section 4.3.
    The rules (exact limit, p = 2 P(U <= min(U1, U2)) capped at 1, warnings) follow benchstat.
    """
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must be in (0, 1), got {alpha!r}")
    warnings: list[str] = []
    b, b_failed = _values(base, failed_base, "base")
    n, n_failed = _values(new, failed_new, "new")
    n_failed_base, n_failed_new = int(b_failed.sum()), int(n_failed.sum())
    if exclude_failed is not None:
        b, n = b[~b_failed], n[~n_failed]
        b_failed, n_failed = b_failed[~b_failed], n_failed[~n_failed]
        if n_failed_base or n_failed_new:
            warnings.append(f"excluded {n_failed_base} failed base and {n_failed_new} failed new "
                            f"runs (reason: {exclude_failed})")
    else:
        worst = math.inf if lower_is_better else -math.inf
        side = "slower" if lower_is_better else "lower"
        for label, values, failed in (("base", b, b_failed), ("new", n, n_failed)):
            values[failed] = worst
            if failed.any():
                warnings.append(f"{label}: {int(failed.sum())} failed run(s) ranked {side} than "
                                "every finished run")
    row = _empty_row(len(b), len(n), alpha, n_failed_base, n_failed_new)
    if len(b) == 0 or len(n) == 0:
        warnings.append("nothing to compare: a side has no runs")
        row["warnings"] = warnings
        return _frame(row)
    median_notes = {}
    for label, values in (("base", b), ("new", n)):
        m = median_ci(values, confidence)
        row.update({f"median_{label}": m.estimate, f"median_{label}_ci_low": m.low,
                    f"median_{label}_ci_high": m.high})
        median_notes[label] = m.warnings
    if median_notes["base"] and median_notes["base"] == median_notes["new"]:
        warnings.extend(f"base and new: {w}" for w in median_notes["base"])
    else:
        warnings.extend(f"{k}: {w}" for k, ws in median_notes.items() for w in ws)
    test, null = mann_whitney(n, b)
    min_p = min_attainable_p(len(n), len(b))
    row.update({"p_value": test.p_value, "p_method": test.method, "min_attainable_p": min_p})
    row["significant"] = None if min_p > alpha else bool(test.p_value < alpha)
    if min_p > alpha:
        warnings.append(_too_few(len(b), len(n), alpha, min_p))
    row.update(_ratio(b, n, null, alpha, min_p, warnings))
    row["warnings"] = warnings
    return _frame(row)


def _values(values, failed, label: str) -> tuple[np.ndarray, np.ndarray]:
    raw = np.ravel(np.asarray(values, dtype=object))
    v = np.array([math.nan if pd.isna(x) else x for x in raw], dtype=np.float64)
    mask = np.isnan(v)
    if failed is not None:
        extra = np.asarray(failed, dtype=bool).ravel()
        if extra.shape != v.shape:
            raise ValueError(f"failed_{label} must have one flag per {label} run")
        mask |= extra
    return v, mask


def _ratio(b: np.ndarray, n: np.ndarray, null, alpha: float, min_p: float,
           warnings: list[str]) -> dict:
    finished = np.concatenate([b[np.isfinite(b)], n[np.isfinite(n)]])
    if (finished <= 0).any():
        warnings.append("values <= 0: no ratio (it needs positive values)")
        return {}
    shift, low, high = hodges_lehmann_moses(_log(n), _log(b), null, alpha)
    out = {"ratio": _exp(shift), "ratio_ci_low": _exp(low), "ratio_ci_high": _exp(high)}
    if min_p > alpha:
        out["ratio_ci_low"] = out["ratio_ci_high"] = math.nan
        warnings.append(f"no {_pct(1 - alpha)} ratio CI from {len(b)} vs {len(n)} runs")
    return out


def _log(values: np.ndarray) -> np.ndarray:
    """log of positive values; failed runs keep their rank at +-inf."""
    out = values.copy()
    finite = np.isfinite(values)
    out[finite] = np.log(values[finite])
    return out


def _too_few(n_b: int, n_n: int, alpha: float, min_p: float) -> str:
    need = runs_needed(alpha)
    hint = f" (>= {need} vs {need})" if need is not None else ""
    return (f"{n_b} vs {n_n} runs cannot reach p < {alpha:g} (smallest p {_fmt_p(min_p)}): "
            f"run more{hint}")


def _fmt_p(p: float) -> str:
    return f"{p:.2f}" if p >= 0.01 else f"{p:.2g}"


def _pct(c: float) -> str:
    return f"{c * 100:g}%"


def _exp(x: float) -> float:
    return math.nan if math.isnan(x) else math.exp(x)


def _empty_row(n_b: int, n_n: int, alpha: float, f_b: int, f_n: int) -> dict:
    row: dict = {c: math.nan for c in COLUMNS}
    row.update({"n_base": n_b, "n_new": n_n, "alpha": alpha, "p_method": None,
                "significant": None, "n_failed_base": f_b, "n_failed_new": f_n})
    return row


def _frame(row: dict) -> pd.DataFrame:
    frame = pd.DataFrame([row], columns=list(COLUMNS))
    frame["significant"] = pd.Series([row["significant"]], dtype=object)
    return frame
