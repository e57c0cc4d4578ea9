"""The overview notebook: design, manifests, data quality, Locust series, drift.

Data quality is :mod:`perfkit.analysis.context._quality` (the run statuses, error and generator-busy
thresholds every page uses); this module shapes it for the page.

Drift: each run's residual is the log of its metric minus the mean log of the runs in its cell
(same factor levels and load), plotted against the order the runs were executed in, with the
runs the run-status rule calls failed or saturated left out (and counted). A trend says the
system changed during the experiment; :mod:`perfkit.analysis.context._drift` estimates it robustly
(Theil-Sen slope with Sen's interval, Kendall's test), so a few wild runs cannot make it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from perfkit.analysis.context import (
    HOST_BUSY_PERCENT,
    KNOWN,
    QualityTable,
    describe_drift,
    experiment_residuals,
    residual_trend,
)
from perfkit.analysis.context import quality as _quality
from perfkit.analysis.core import GENERATOR_BUSY, LOAD_COLUMNS
from perfkit.formatting import fmt_ci, plain
from perfkit.frames import timeseries_frame
from perfkit.model import ERROR_RATIO_WARN
from perfkit.report.answers import Answer, ratio_text
from perfkit.report.sections.common import Experiment, config_labels, load_experiment
from perfkit.wording import verdict_words

#: seconds over which the per-second Locust throughput is averaged for display (with several
#: processes the master's totals move only when a worker reports, every ~3 s)
SMOOTH_S = 3
SYSCTL_KEYS = ("net.core.somaxconn", "net.ipv4.ip_local_port_range", "fs.file-max", "ulimit -n")


def _aggregate_rows(exp: Experiment) -> pd.DataFrame:
    return exp.rows().frame


def design_table(experiments: Sequence[Experiment]) -> pd.DataFrame:
    """One row per experiment: tool, runs, repetitions, duration range and seed (tidy: the
    levels of its factors and loads are in :func:`levels_table`)."""
    rows = []
    for exp in experiments:
        f = _aggregate_rows(exp)
        design = exp.design or {}
        duration = pd.to_numeric(f["duration_s"], errors="coerce").dropna()
        rows.append({
            "experiment": exp.name, "tool": ", ".join(exp.tools), "runs": len(f),
            "repetitions": plain(f["repetition"].max()) if "repetition" in f
            and f["repetition"].notna().any() else None,
            "duration_min_s": float(duration.min()) if len(duration) else math.nan,
            "duration_max_s": float(duration.max()) if len(duration) else math.nan,
            "seed": design.get("seed"),
        })
    return pd.DataFrame(rows)


def levels_table(experiments: Sequence[Experiment]) -> pd.DataFrame:
    """One row per experiment, factor or load column, and level (tidy: no lists in cells)."""
    rows = []
    for exp in experiments:
        f = _aggregate_rows(exp)
        for kind, cols in (("factor", exp.factors), ("load", LOAD_COLUMNS)):
            for c in cols:
                if c in f and f[c].notna().any():
                    for v in sorted({plain(x) for x in f[c].dropna()}, key=lambda x: (str(
                            type(x)), x)):
                        rows.append({"experiment": exp.name, "kind": kind, "column": c,
                                     "level": v})
    return pd.DataFrame(rows, columns=["experiment", "kind", "column", "level"])


def _flatten(value: Any, prefix: str = "") -> dict[str, Any]:
    if isinstance(value, Mapping):
        out: dict[str, Any] = {}
        for k, v in value.items():
            out.update(_flatten(v, f"{prefix}{k}."))
        return out
    return {prefix.rstrip("."): value}


#: the server settings of a manifest listed in the manifests table (the listen backlog nginx
#: asked for, the namespace's or host's somaxconn, the accept queue in effect)
SERVER_ITEMS = ("profile", "nginx_version", "backlog", "somaxconn", "effective_backlog",
                "accept_queue_max", "netns")


def manifest_table(experiments: Sequence[Experiment]) -> pd.DataFrame:
    """Per experiment and recorded setting (host, sysctl, server profile and version, listen
    backlog and accept queue, warm-up, tool version): each distinct value, with the number of
    runs that recorded it (one value per row). Two per-run conditions are counted the same way
    as ``yes``/``no``: the host's CPU at or above
    :data:`perfkit.analysis.context._conditions.HOST_BUSY_PERCENT` (client and server together), and
    a run that was the first after a server start (a cold cache)."""
    from perfkit.report.methods import relative

    rows = []
    for exp in experiments:
        seen: dict[tuple[str, str], int] = {}
        runs = exp.rows().runs
        first = _first_after_start(runs)
        for run, fresh in zip(runs, first, strict=True):
            m = run.manifest or {}
            items = {**_flatten(m.get("host"), "host."), **_flatten(m.get("sysctls"), "sysctl.")}
            server = m.get("server")
            if isinstance(server, Mapping):
                items.update({f"server.{k}": server.get(k) for k in SERVER_ITEMS})
            items["warmup"] = _warmup_text(m.get("warmup"))
            host_cpu = (m.get("cpu") or {}).get("host_cpu_mean_percent")
            if host_cpu is not None:
                items[f"host CPU >= {HOST_BUSY_PERCENT:g}% (client and server)"] = (
                    "yes" if float(host_cpu) >= HOST_BUSY_PERCENT else "no")
            if fresh is not None:
                items["first run after a server start"] = "yes" if fresh else "no"
            items["tool_version"] = run.tool_version
            for key, value in items.items():
                if value not in (None, "") and "config" not in key:
                    # no path of the recording machine ('locust 2.47.0 from /home/me/.venv/
                    # lib/python3.11/site-packages/locust'), as in the Methods
                    text = relative(str(value))
                    seen[(key, text)] = seen.get((key, text), 0) + 1
        for (key, value), n in sorted(seen.items()):
            rows.append({"experiment": exp.name, "item": key, "value": value, "runs": n})
    return pd.DataFrame(rows, columns=["experiment", "item", "value", "runs"])


def _warmup_text(warmup: Any) -> str | None:
    if not isinstance(warmup, Mapping) or not warmup.get("kind"):
        return None
    if warmup.get("kind") == "time" and warmup.get("seconds") is not None:
        return f"{float(warmup['seconds']):g} s"
    return str(warmup["kind"])


def _first_after_start(runs: Sequence[Any]) -> list[bool | None]:
    """Per run: whether it was the first (by start time) on its server's start
    (``server.started_utc``); None where not recorded."""
    starts = [((r.manifest or {}).get("server") or {}).get("started_utc") for r in runs]
    first: dict[str, str] = {}
    for start, run in zip(starts, runs, strict=True):
        if start and run.start_utc and (start not in first or run.start_utc < first[start]):
            first[start] = run.start_utc
    return [None if not s or not r.start_utc else first[s] == r.start_utc
            for s, r in zip(starts, runs, strict=True)]


def quality(experiments: Sequence[Experiment]) -> QualityTable:
    """Every run's quality checks (:func:`perfkit.analysis.context._quality.quality`)."""
    return _quality(experiments)


def quality_points(quality: pd.DataFrame) -> pd.DataFrame:
    """The quality frame in plotting units: error and generator CPU share in percent."""
    out = quality.copy()
    out["error_percent"] = 100.0 * out["error_ratio"].astype(float)
    out["generator_cpu_share_percent"] = 100.0 * out["generator_cpu_share"].astype(float)
    return out


def locust_series(exp: Experiment | None, one_per_config: bool = True) -> pd.DataFrame:
    """Locust's per-second Aggregated history, throughput derived from the request counts (the
    analysis rows of ``exp``: one per Locust run; none without an experiment).

    With ``one_per_config``, only the first repetition of each configuration is kept (a
    readable plot), labelled by its configuration (factors and users).
    """
    if exp is None:
        return pd.DataFrame()
    rows = exp.rows()
    rows = rows.subset(rows.frame["tool"].eq("locust").to_numpy())
    meta = runs_meta(exp, rows.frame)
    if one_per_config and len(meta):
        first = meta.sort_values(["config", "repetition"], na_position="last")
        meta = meta[meta["run_id"].isin(set(first.drop_duplicates("config")["run_id"]))]
    series = timeseries_frame([r for r in rows.runs if r.run_id in set(meta["run_id"])])
    if len(series):
        order = meta.sort_values(meta.attrs["sort"])["run_id"].tolist()
        series = series.sort_values(
            "run_id", key=lambda c: c.map({r: i for i, r in enumerate(order)}), kind="stable")
        # a moving mean only where a rate was counted: the first history row (0 users, nothing
        # counted yet) has none, and a centred window must not borrow its neighbour's there
        series["throughput_smoothed_rps"] = series.groupby("run_id")["throughput_rps"].transform(
            lambda v: v.rolling(SMOOTH_S, center=True, min_periods=1).mean().where(v.notna()))
        labels = dict(zip(meta["run_id"], meta["config"], strict=True))
        series["config"] = series["run_id"].map(labels)
        series.attrs["columns"] = meta.attrs["columns"]
    return series


def locust_experiment(name: str, data_root: str | None = None) -> Experiment | None:
    """The experiment whose Locust time series are drawn; None when none is named."""
    return load_experiment(name, data_root) if name else None


def runs_meta(exp: Experiment, frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` (analysis rows of ``exp``) with a ``config`` label of factors and users."""
    frame = frame.reset_index(drop=True)
    cols = [c for c in exp.factors if c in frame] + [c for c in ("users",) if c in frame]
    frame["config"] = config_labels(frame, cols) if cols else frame["run_id"]
    frame.attrs["sort"] = cols + ["run_id"]
    frame.attrs["columns"] = cols
    if len(frame) > 1 and frame["config"].nunique() == 1 and not cols:
        frame["config"] = frame["run_id"]
    return frame


def drift_frame(experiments: Sequence[Experiment], metric: str) -> pd.DataFrame:
    """Per run: ``experiment, order, cell, residual``
    (:func:`perfkit.analysis.context._drift.experiment_residuals`: log metric minus its cell's mean
    log, failed and saturated runs left out); ``attrs["experiments"]`` names every experiment given
    (so an experiment keeps its look in every figure, residuals or not) and ``attrs["left_out"]``
    the runs each left out."""
    parts, left_out = [], {}
    for exp in experiments:
        res = experiment_residuals(exp, metric)
        left_out[exp.name] = int(res.attrs.get("left_out", 0))
        if len(res):
            parts.append(res.assign(experiment=exp.name))
    cols = ["experiment", "order", "cell", "residual"]
    frame = pd.concat(parts, ignore_index=True)[cols] if parts else pd.DataFrame(columns=cols)
    frame.attrs["experiments"] = [e.name for e in experiments]
    frame.attrs["left_out"] = left_out
    return frame


def experiment_looks(names: Sequence[str] | pd.Series):
    """The look of each experiment in the overview's figures: black and greys
    (:class:`perfkit.plots.style.Neutral`; an experiment is not a configuration), from the
    names of every experiment on the page, so each keeps its look in every figure."""
    from perfkit.plots.style import Neutral

    return Neutral.for_labels(names)


#: columns of the drift table (one row per experiment)
TREND_COLUMNS = ["experiment", "runs", "change_first_to_last_pct", "ci_low_pct", "ci_high_pct",
                 "ratio_first_to_last", "ratio_ci_low", "ratio_ci_high",
                 "p_value", "verdict", "runs_left_out", "note"]


def drift_trend(residuals: pd.DataFrame, confidence: float = 0.95,
                alpha: float = 0.05) -> pd.DataFrame:
    """Per experiment: :func:`perfkit.analysis.context._drift.residual_trend` (the % change from the
    first run to the last with Sen's interval, Kendall's p-value, the verdict, the failed or
    saturated runs left out before, from ``residuals.attrs["left_out"]``, and why a verdict is
    inconclusive when the values are too coarse)."""
    left_out = residuals.attrs.get("left_out", {})
    rows = []
    for name, g in residuals.groupby("experiment", sort=False):
        d = residual_trend(g, confidence, alpha)
        if d is not None:
            rows.append({"experiment": name, "runs": d.runs,
                         "change_first_to_last_pct": d.change_pct, "ci_low_pct": d.ci_low_pct,
                         "ci_high_pct": d.ci_high_pct,
                         # the ratios the index prints (last / first), beside the changes
                         **{k: 1.0 + v / 100.0 for k, v in (
                             ("ratio_first_to_last", d.change_pct),
                             ("ratio_ci_low", d.ci_low_pct), ("ratio_ci_high", d.ci_high_pct))},
                         "p_value": d.p_value,
                         "verdict": d.verdict, "runs_left_out": int(left_out.get(name, 0)),
                         "note": d.note})
    return pd.DataFrame(rows, columns=TREND_COLUMNS)


def drift_caption(residuals: pd.DataFrame, metric: str) -> str:
    """The drift figure's caption: what is drawn, and the runs left out of it."""
    left = {k: n for k, n in residuals.attrs.get("left_out", {}).items() if n}
    gone = ("; left out (failed or saturated by the run-status rule): "
            + ", ".join(f"{k} {n}" for k, n in left.items())) if left else ""
    return (f"Residuals of log {metric} (run minus its cell mean) against run order, one "
            f"panel per experiment with a running median of 5 runs (black line); dashed: no "
            f"drift ({len(residuals)} runs){gone}")


def methods(experiments: Sequence[Experiment], confidence: float = 0.95,
            alpha: float = 0.05) -> dict:
    """The Methods record of each experiment, and the drift check described once for all
    (:func:`perfkit.report.methods.shared`)."""
    from perfkit.report.methods import shared
    from perfkit.report.sections.common import methods as _methods

    return {**_methods(experiments),
            "every experiment: drift check": shared([describe_drift(confidence, alpha)])}


#: the quality summary's row of totals (the counts the index's data-quality answer gives)
ALL_EXPERIMENTS = "all experiments"


def summary_with_total(summary: pd.DataFrame) -> pd.DataFrame:
    """The quality summary with a last row :data:`ALL_EXPERIMENTS` summing every count: the
    numbers the index prints ("generator busy: 7 of 176") are then in its CSV."""
    if len(summary) < 2:
        return summary
    total = {c: (ALL_EXPERIMENTS if c == "experiment" else int(summary[c].sum()))
             for c in summary.columns}
    return pd.concat([summary, pd.DataFrame([total])], ignore_index=True)


def answers(summary: pd.DataFrame, trend: pd.DataFrame, metric: str = "") -> list[Answer]:
    """The data-quality answer, then one drift answer per experiment (``metric``: the one the
    drift was checked on): its change from the first run to the last as a ratio and a
    percentage with Sen's interval, and the verdict."""
    total = int(summary["runs"].sum()) if len(summary) else 0
    known = set(KNOWN.values())
    bad = [c for c in summary.columns if c not in ("experiment", "runs", *known)]
    problems = {c: int(summary[c].sum()) for c in bad if int(summary[c].sum())}

    def count(c: str, n: int) -> str:  # of the runs it was judged on: some record no CPU
        of = KNOWN.get(c)
        return f"{n} of {int(summary[of].sum()) if of in summary else total}"

    out = [Answer("Runs with a problem",
                  ", ".join(f"{_problem_name(c)}: {count(c, n)}" for c, n in problems.items())
                  or "no problem found", "problems found" if problems else "no problem",
                  f"{total} runs in {len(summary)} experiments",
                  group="Data quality of " + (", ".join(map(str, summary["experiment"]))
                                              if "experiment" in summary else "the runs"),
                  topic="quality")]
    of = f" ({metric}, first run to last)" if metric else " (first run to last)"
    for _, r in trend.iterrows():
        out.append(_drift_answer(r, f"Drift over the run order{of}"))
    return out


def _problem_name(column: str) -> str:
    """A quality summary's column as the answer names it: ``host_cpu_busy`` -> ``host CPU
    busy``."""
    return " ".join("CPU" if w == "cpu" else w for w in column.split("_"))


def _drift_answer(r: pd.Series, group: str) -> Answer:
    """One experiment's drift check: the change from the first run to the last as a ratio
    and a percentage with its interval; an inconclusive one says why when the values are too
    coarse."""
    note = r.get("note") or ""
    return Answer(str(r["experiment"]),
                  ratio_text(float(r["ratio_first_to_last"]), float(r["ratio_ci_low"]),
                             float(r["ratio_ci_high"])),
                  r["verdict"], f"{int(r['runs'])} runs",
                  (note,) if isinstance(note, str) and note else (), group=group,
                  topic="drift")


# -- figures (a notebook cell is a call and a display) ------------------------------------------
def quality_figure(quality: QualityTable):
    """Failed requests and generator CPU per run in run order, with the flags' thresholds;
    experiments in black and greys (an experiment is not a configuration)."""
    from perfkit import plots

    points = quality_points(quality.to_frame())
    pal = experiment_looks(quality.experiments)
    fig, axes = plots.figure(nrows=2, height_in=3.6, sharex=True)
    plots.points(points, axes[0], "order", "error_percent", "",
                 plots.label("failed requests", "%"), by="experiment",
                 threshold=100 * ERROR_RATIO_WARN, threshold_label="flag", palette=pal)
    plots.points(points, axes[1], "order", "generator_cpu_share_percent",
                 plots.label("run order", "index"), plots.label("generator CPU", "% of its cores"),
                 threshold=100 * GENERATOR_BUSY, by="experiment", palette=pal)
    return fig


def quality_caption(quality: QualityTable) -> str:
    """What the quality figure draws, counted from what it draws: a run needs a run order (and
    a value) to be a point; the runs left out are named by experiment."""
    points = quality_points(quality.to_frame())
    ordered = points.dropna(subset=["order"])

    def drawn(column: str) -> str:
        shown = ordered.dropna(subset=[column])
        n, k = len(shown), shown["experiment"].nunique()
        return f"{n} run{'s' if n != 1 else ''} of {k} experiment{'s' if k != 1 else ''}"

    unordered = points[points["order"].isna()].groupby("experiment", sort=False).size()
    left = "; ".join(f"{name}: {n} run{'s' if n != 1 else ''} without a run order"
                     for name, n in unordered.items())
    return (f"Failed requests ({drawn('error_percent')}) and load-generator CPU "
            f"({drawn('generator_cpu_share_percent')} that recorded it) per run, in run order"
            + (f"; not drawn: {left}" if left else "") + f"; dashed lines: the flags "
            f"({ERROR_RATIO_WARN:.0%} failed, {GENERATOR_BUSY:.0%} of the generator's cores)")


def locust_figure(series: pd.DataFrame, palette=None):
    """Throughput, users and p95 per second of each configuration; None without a series."""
    from perfkit import plots

    if not len(series):
        return None
    columns = list(series.attrs.get("columns", []))
    pal = palette(series["config"], columns) if palette else None
    fig, axes = plots.figure(nrows=3, height_in=4.6, sharex=True)
    title = ", ".join(columns) or None
    plots.timeseries(series, axes[0], "elapsed_s", "throughput_smoothed_rps", "",
                     plots.label("throughput", "req/s"), by="config", legend="figure",
                     legend_title=title, palette=pal)
    plots.timeseries(series, axes[1], "elapsed_s", "user_count", "", plots.label("users", "count"),
                     by="config", step=True, legend=None, palette=pal)
    plots.timeseries(series, axes[2], "elapsed_s", "latency_p95_ms", plots.label("time", "s"),
                     plots.label("p95 response", "ms"), by="config", legend=None, palette=pal)
    return fig


def drift_figure(residuals: pd.DataFrame, trend: pd.DataFrame | None = None):
    """One panel per experiment (:func:`perfkit.plots.overview.drift_panels`), each titled by
    its experiment and, with ``trend`` (:func:`drift_trend`), its change from the first run to
    the last and its verdict; experiments in black (an experiment is not a configuration)."""
    from perfkit import plots

    names = [n for n in (residuals.attrs.get("experiments") or
                         list(dict.fromkeys(residuals["experiment"])))
             if (residuals["experiment"] == n).any()]
    found = {} if trend is None else {r["experiment"]: r for _, r in trend.iterrows()}
    titles = {n: n if n not in found else f"{n}\n" + fmt_ci(
        found[n]["change_first_to_last_pct"], found[n]["ci_low_pct"], found[n]["ci_high_pct"],
        "%", 2) + f": {verdict_words(found[n]['verdict'])}" for n in names}
    return plots.drift_panels(residuals, titles) if names else None
