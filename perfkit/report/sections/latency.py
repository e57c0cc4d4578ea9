"""The latency notebook's analysis: spectra with across-run CIs, within-run CIs, CO audit.

Percentiles are never averaged across runs. The spectrum line and its band at each percentile
come from one call of :func:`perfkit.stats.percentile_ci_across_runs`, so they always describe
the same estimand: the median of the per-run percentiles (:data:`perfkit.stats.ESTIMAND`),
with an order-statistic interval from 5 runs and, with 2-4 runs, a t interval on their logs
and a warning.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from perfkit.audit import coordinated_omission
from perfkit.formatting import fmt_ci, level_text
from perfkit.model import Run
from perfkit.report.nb import Answer
from perfkit.report.sections.common import Experiment, config_labels
from perfkit.stats import percentile_ci_across_runs, quantile_ci
from perfkit.stats.acrossruns import FEW_RUNS, FEW_RUNS_METHOD

#: percentiles drawn for a spectrum: dense enough for a smooth line on the tail axis
SPECTRUM_GRID = (10.0, 25.0, 50.0, 68.4, 80.0, 90.0, 95.0, 96.8, 98.0, 99.0, 99.5, 99.68, 99.8,
                 99.9, 99.95, 99.968, 99.98, 99.99, 99.995, 99.998, 99.999)
#: requests per tail position (1 / (1 - p)) required before a percentile is drawn
MIN_TAIL_SAMPLES = 10


def grouped_runs(exp: Experiment, by: Sequence[str] | str,
                 where: Mapping[str, Any] | None = None) -> dict[str, list[Run]]:
    """The analysis rows of ``exp`` matching ``where``, grouped by their ``by`` label (in run
    order)."""
    by = [by] if isinstance(by, str) else list(by)
    rows = exp.rows(where)
    labels = config_labels(rows.frame, by)
    groups: dict[str, list[Run]] = {}
    for label, run in zip(labels, rows.runs, strict=True):
        groups.setdefault(str(label), []).append(run)
    return dict(sorted(groups.items()))


def _has_histograms(runs: Sequence[Run]) -> bool:
    return all(r.histogram is not None and r.histogram.total_count for r in runs)


def spectrum_grid(runs: Sequence[Run]) -> list[float]:
    """Percentiles of :data:`SPECTRUM_GRID` that every run holds enough requests to resolve."""
    counts = [r.histogram.total_count for r in runs if r.histogram is not None]
    if not counts:
        return sorted({q for r in runs for q in r.percentiles_ms if q < 100})
    top = min(counts) / MIN_TAIL_SAMPLES
    return [q for q in SPECTRUM_GRID if 1.0 / (1.0 - q / 100.0) <= top]


def spectrum_frame(groups: Mapping[str, Sequence[Run]], confidence: float = 0.95,
                   seed: int = 0, n_resamples: int = 2000) -> pd.DataFrame:
    """Long form ``config, percentile, latency_ms, ci_low_ms, ci_high_ms, method, n_runs``."""
    rows = []
    for config, runs in groups.items():
        grid = spectrum_grid(runs) if _has_histograms(runs) else sorted(
            {q for r in runs for q in r.percentiles_ms if q < 100})
        for q in grid:
            ci = percentile_ci_across_runs(list(runs), q, confidence, seed,
                                           n_resamples=n_resamples)
            rows.append({"config": config, "percentile": q, "latency_ms": ci.estimate_ms,
                         "ci_low_ms": ci.low_ms, "ci_high_ms": ci.high_ms,
                         "method": ci.method, "estimand": ci.estimand, "n_runs": ci.n_runs})
    return pd.DataFrame(rows)


def percentile_table(groups: Mapping[str, Sequence[Run]], qs: Sequence[float] = (50, 99, 99.9),
                     confidence: float = 0.95, seed: int = 0,
                     n_resamples: int = 2000) -> pd.DataFrame:
    """Across-run CI of each percentile per configuration, with its method and estimand."""
    rows = []
    for config, runs in groups.items():
        for q in qs:
            ci = percentile_ci_across_runs(list(runs), q, confidence, seed,
                                           n_resamples=n_resamples)
            rows.append({"config": config, "percentile": float(q), "n_runs": ci.n_runs,
                         "latency_ms": ci.estimate_ms, "ci_low_ms": ci.low_ms,
                         "ci_high_ms": ci.high_ms, "method": ci.method,
                         "estimand": ci.estimand})
    return pd.DataFrame(rows)


def within_run_table(groups: Mapping[str, Sequence[Run]], q: float = 99.0,
                     confidence: float = 0.95) -> pd.DataFrame:
    """Each run's percentile with its within-run binomial CI (assumes independent requests)."""
    rows = []
    for config, runs in groups.items():
        for run in runs:
            row = {"config": config, "run_id": run.run_id, "requests_in_histogram": np.nan,
                   "latency_ms": run.percentiles_ms.get(float(q), np.nan),
                   "ci_low_ms": np.nan, "ci_high_ms": np.nan}
            if run.histogram is not None and run.histogram.total_count:
                ci = quantile_ci(run.histogram, q, confidence)
                row.update(requests_in_histogram=float(ci.n_requests),
                           latency_ms=ci.estimate_ms, ci_low_ms=ci.low_ms,
                           ci_high_ms=ci.high_ms)
            rows.append(row)
    return pd.DataFrame(rows)


def spread_summary(within: pd.DataFrame, across: pd.DataFrame, q: float = 99.0) -> pd.DataFrame:
    """Per configuration: the median width of the within-run CIs vs the across-run CI width.

    Both as a ratio ``high / low`` (a multiplicative width); an across-run width far above the
    within-run one says runs differ by more than request-level noise explains.
    """
    rows = []
    for config, group in within.groupby("config", sort=True):
        inner = (group["ci_high_ms"] / group["ci_low_ms"]).median()
        outer_row = across[(across["config"] == config) & np.isclose(across["percentile"], q)]
        outer = (float(outer_row["ci_high_ms"].iloc[0] / outer_row["ci_low_ms"].iloc[0])
                 if len(outer_row) else np.nan)
        rows.append({"config": config, "percentile": float(q), "n_runs": len(group),
                     "within_run_width_ratio": float(inner), "across_run_width_ratio": outer})
    return pd.DataFrame(rows)


def corrected_vs_uncorrected(runs: Sequence[Run]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """wrk2 ``-U`` runs: the audit table and a long spectrum frame (``config`` = corrected or
    uncorrected, per run when there are several)."""
    with_u = [r for r in runs if r.tool == "wrk2" and (
        r.uncorrected_histogram is not None or r.uncorrected_percentiles_ms)]
    audit = coordinated_omission(with_u) if with_u else pd.DataFrame()
    rows = []
    for run in with_u:
        prefix = f"{run.run_id}: " if len(with_u) > 1 else ""
        for kind, hist, printed in (
                ("corrected", run.histogram, run.percentiles_ms),
                ("uncorrected", run.uncorrected_histogram, run.uncorrected_percentiles_ms)):
            if hist is not None and hist.total_count:
                top = hist.total_count / MIN_TAIL_SAMPLES
                qs = [q for q in SPECTRUM_GRID if 1.0 / (1.0 - q / 100.0) <= top]
                values = hist.percentiles_us(qs) / 1000.0
            else:
                qs = sorted(q for q in printed if q < 100)
                values = [printed[q] for q in qs]
            rows.extend({"config": prefix + kind, "percentile": q, "latency_ms": float(v)}
                        for q, v in zip(qs, values, strict=True))
    return audit, pd.DataFrame(rows)


def caveats(groups: Mapping[str, Sequence[Run]], across: pd.DataFrame) -> list[str]:
    """What a reader must know before trusting these latencies (one sentence each)."""
    runs = [r for rs in groups.values() for r in rs]
    out = []
    closed = sorted({r.tool for r in runs if r.closed_loop})
    if closed:
        out.append(f"{', '.join(closed)} measure(s) in a closed loop: the tail is understated "
                   "(coordinated omission); only wrk2's corrected percentiles describe it.")
    saturated = [r.run_id for r in runs if r.saturated]
    if saturated:
        out.append(f"{len(saturated)} run(s) did not keep up with their target rate "
                   f"(saturated): their latencies include queueing in the generator "
                   f"({', '.join(map(str, saturated[:4]))}{' ...' if len(saturated) > 4 else ''}).")
    partial = [r for r in runs if any("after wrk2's calibration" in n for n in r.notes)]
    if partial:
        out.append(f"{len(partial)} wrk2 run(s) have a histogram of the post-calibration part "
                   "only (wrk2 resets it after ~10 s): their percentiles describe the end of "
                   "each run.")
    few = across["method"] == FEW_RUNS_METHOD if len(across) else pd.Series(dtype=bool)
    if few.any():
        n = int(across.loc[few, "n_runs"].min())
        out.append(f"With {n} run(s) per configuration the estimate is the median run's "
                   "percentile, but no distribution-free interval exists: the interval is a "
                   "t interval on log per-run percentiles, which assumes a log-normal "
                   f"run-to-run spread. Run >= {FEW_RUNS} repetitions for an order-statistic "
                   "interval.")
    return out


def load_point(where: Mapping[str, Any] | None) -> str:
    """The load point a selection fixes, in words: ``"30000 req/s offered, 64 connections"``."""
    names = {"target_rate_rps": "req/s offered", "connections": "connections",
             "users": "users", "threads": "threads"}
    parts = [f"{level_text(v)} {names[k]}" for k, v in (where or {}).items() if k in names]
    return ", ".join(parts) or "all load levels together"


def answers(table: pd.DataFrame, q: float, where: Mapping[str, Any] | None) -> list[Answer]:
    """The headline percentile of each configuration at the load point shown."""
    out = []
    for _, row in table[np.isclose(table["percentile"], q)].iterrows():
        out.append(Answer(f"p{q:g} latency of {row['config']} at {load_point(where)}",
                          fmt_ci(row["latency_ms"], row["ci_low_ms"], row["ci_high_ms"], "ms"),
                          str(row["estimand"]), f"{row['n_runs']} runs"))
    return out


def selection_table(groups: Mapping[str, Sequence[Run]]) -> pd.DataFrame:
    """What is compared: per configuration, the runs, tools and histogram sizes."""
    rows = []
    for config, runs in groups.items():
        counts = [r.histogram.total_count for r in runs if r.histogram is not None]
        rows.append({
            "config": config, "runs": len(runs),
            "tool": ", ".join(sorted({r.tool for r in runs})),
            "requests_min": min((r.requests for r in runs if r.requests is not None),
                                default=None),
            "histogram_requests_min": min(counts) if counts else None,
            "saturated_runs": sum(1 for r in runs if r.saturated),
        })
    return pd.DataFrame(rows)


# -- text and figures around the results (a notebook cell is a call and a display) -------------
def describe(table: pd.DataFrame) -> str:
    """The across-runs interval's method, in a sentence a reader can paste into a paper."""
    methods = ", ".join(sorted(set(table["method"]))) if len(table) else "order_stats"
    estimands = "; ".join(sorted(set(table["estimand"]))) if len(table) else ""
    return (f"Latency percentiles were estimated across runs (method {methods}: {estimands}), "
            "never by averaging percentiles; each run's histogram is read at the percentile, "
            "and runs without a value are left out with a warning.")


def merged_histograms(groups: Mapping[str, Sequence[Run]]) -> dict:
    """Per configuration, its runs' histograms merged (counts added): what the spectrum of all
    its requests is read from."""
    from perfkit.histogram import LatencyHistogram

    out = {}
    for config, runs in groups.items():
        hists = [r.histogram for r in runs if r.histogram is not None and r.histogram.total_count]
        if hists:
            out[config] = LatencyHistogram.merge(hists)
    return out


def run_spectra(spectrum: pd.DataFrame, groups: Mapping[str, Sequence[Run]]) -> pd.DataFrame:
    """Each run's own percentiles at its configuration's spectrum grid (``config, run_id,
    percentile, latency_ms``): the per-run lines behind the across-run estimate."""
    rows = []
    for config, runs in groups.items():
        grid = sorted(spectrum.loc[spectrum["config"] == config, "percentile"])
        for run in runs:
            if run.histogram is not None and run.histogram.total_count and grid:
                for q, v in zip(grid, run.histogram.percentiles_us(grid) / 1000.0, strict=True):
                    rows.append({"config": config, "run_id": run.run_id, "percentile": q,
                                 "latency_ms": float(v)})
    return pd.DataFrame(rows, columns=["config", "run_id", "percentile", "latency_ms"])


def spectrum_figure(spectrum: pd.DataFrame, groups: Mapping[str, Sequence[Run]], by,
                    palette=None):
    """Spectra per configuration with their across-run bands, each run as a thin line."""
    from perfkit import plots

    fig, ax = plots.figure()
    plots.spectrum(spectrum, ax, by="config", legend_title=", ".join(by),
                   palette=palette(groups) if palette else None,
                   runs=run_spectra(spectrum, groups))
    return fig


def spectrum_caption(spectrum: pd.DataFrame, where, confidence: float) -> str:
    n = (spectrum.groupby("config")["n_runs"].max().astype(int).astype(str).str.cat(sep="/")
         if len(spectrum) else "0")
    estimands = "; ".join(sorted(set(spectrum["estimand"]))) if len(spectrum) else ""
    return (f"Percentile spectrum per configuration at {load_point(where)}: {n} runs per "
            f"configuration; bands are {confidence:.0%} across-run intervals ({estimands})")


def spectrum_alt(spectrum: pd.DataFrame, where) -> str:
    configs = ", ".join(dict.fromkeys(spectrum["config"])) if len(spectrum) else "none"
    return (f"Latency percentile spectra on a log 1/(1-p) axis at {load_point(where)} for "
            f"{configs}, each with its across-run interval band.")


def intervals_figure(within: pd.DataFrame, table: pd.DataFrame, q: float, by, palette=None,
                     confidence: float = 0.95):
    from perfkit import plots

    fig, ax = plots.figure()
    plots.run_intervals(within, table[np.isclose(table["percentile"], q)], ax,
                        quantity=f"p{q:g} latency", xlabel=plots.label(", ".join(by) or
                                                                       "configuration", "level"),
                        palette=palette(within["config"]) if palette else None,
                        confidence=confidence)
    return fig


def co_figure(co_spectrum: pd.DataFrame, palette=None):
    from perfkit import plots

    fig, ax = plots.figure()
    plots.spectrum(co_spectrum, ax, by="config", low=None, high=None,
                   palette=palette(co_spectrum["config"]) if palette else None)
    return fig
