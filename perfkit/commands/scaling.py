"""``perfkit scaling``: USL fit and Little's-law check over concurrency, or the SLO bracket over
offered rates, one terse table per group with numbered warning footnotes."""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from typing import TextIO

import numpy as np
import pandas as pd

from perfkit.commands._common import fmt_num, load_paths, render_table
from perfkit.errors import PerfkitError
from perfkit.frames import runs_frame
from perfkit.model import percentile_label
from perfkit.scaling import fit_usl, littles_law, slo_bracket
from perfkit.scaling.littles import FLAGS

HELP = """\
Over concurrency (--x connections for wrk, --x users for Locust): fit the Universal
Scalability Law to every run (not to means), with bootstrap CIs; claim a peak N* only when an
F-test rejects Amdahl's law; check Little's law N = X (R + Z) per connection level.

Over offered rates (--x target_rate_rps, wrk2 -R): judge each rate against --slo-ms on the
across-runs CI of the percentile, and print the bracket [last pass, first fail]. Runs at
different connection counts are different configurations, so connections is always a group.

examples:
  perfkit scaling data/wrk-sweep --x connections --by profile
  perfkit scaling data/wrk2-sweep --x target_rate_rps --slo-ms 10 --percentile 99 --by profile
"""

_CONCURRENCY = ("connections", "users")


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("scaling", help="USL fit over concurrency, or SLO bracket over rates",
                       description=HELP, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("paths", nargs="+", metavar="EXPERIMENT",
                   help="experiment or run directories (or tool output files)")
    p.add_argument("--x", required=True, choices=(*_CONCURRENCY, "target_rate_rps"),
                   help="the load axis: a concurrency, or the offered rate (wrk2 -R)")
    p.add_argument("--metric", default="throughput_rps",
                   help="throughput column for the USL fit (default throughput_rps)")
    p.add_argument("--slo-ms", type=float, help="latency objective in ms (needed for rates)")
    p.add_argument("--percentile", type=float, default=99.0,
                   help="percentile judged against the SLO, 0-100 (default 99)")
    p.add_argument("--think-time-ms", type=float,
                   help="Locust: configured mean wait between tasks, to check Little's law")
    p.add_argument("--by", default="", help="comma-separated factor columns to group by")
    p.add_argument("--confidence", type=float, default=0.95, help="CI level (default 0.95)")
    p.add_argument("--alpha", type=float, default=0.05,
                   help="level of the F-test USL vs Amdahl that gates N* (default 0.05)")
    p.add_argument("--resamples", type=int, default=1000, help="bootstrap resamples")
    p.add_argument("--seed", type=int, default=0, help="bootstrap seed (default 0)")
    p.set_defaults(func=run)


class Footnotes:
    """Numbered, de-duplicated warnings printed after the tables."""

    def __init__(self) -> None:
        self.texts: list[str] = []

    def mark(self, text: str) -> str:
        if text not in self.texts:
            self.texts.append(text)
        return f"[{self.texts.index(text) + 1}]"

    def render(self) -> str:
        return "".join(f"[{i}] {t}\n" for i, t in enumerate(self.texts, 1))


def run(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    result = load_paths(args.paths, err)
    if not result.runs:
        raise PerfkitError("no runs found under " + ", ".join(args.paths))
    frame = runs_frame(result.runs)
    by = [c.strip() for c in args.by.split(",") if c.strip()]
    missing = [c for c in by if c not in frame]
    if missing:
        raise PerfkitError(f"no column {missing[0]!r} to group by (columns: "
                           f"{', '.join(c for c in frame.columns if frame[c].dtype == object)})")
    if not 1 < args.percentile <= 100:
        raise PerfkitError(f"--percentile is on the 0-100 scale (99 for p99), got "
                           f"{args.percentile:g}")
    notes = Footnotes()
    if args.x == "target_rate_rps":
        text = _rates_report(frame, result.runs, by, args, notes)
    else:
        text = _concurrency_report(frame, by, args, notes)
    out.write(text)
    if notes.texts:
        out.write("\n" + notes.render())
    return 1 if result.errors else 0


def _groups(frame: pd.DataFrame, by: list[str]) -> Iterator[tuple[str, pd.DataFrame]]:
    if not by:
        yield "all runs", frame
        return
    for key, sub in frame.groupby(by, sort=True, dropna=False):
        key = key if isinstance(key, tuple) else (key,)
        yield "  ".join(f"{k}={v}" for k, v in zip(by, key, strict=True)), sub


# -- concurrency: USL + Little's law --------------------------------------------------------
def _closed_loop_rows(frame: pd.DataFrame, x: str, notes: Footnotes) -> pd.DataFrame:
    if (frame["tool"] == "wrk2").any():
        raise PerfkitError("wrk2 runs are open loop: their throughput follows the offered rate, "
                           "not the connections; use --x target_rate_rps with --slo-ms")
    keep = frame["tool"].ne("locust") | frame["is_aggregate"].fillna(False).astype(bool)
    rows = frame[keep]
    lacking = rows[x].isna()
    hint = "Locust runs use --x users, wrk runs --x connections"
    if lacking.all():
        raise PerfkitError(f"no run has {x} ({hint})")
    if lacking.any():
        notes.mark(f"{int(lacking.sum())} run(s) without {x} left out ({hint})")
    return rows[~lacking]


def _concurrency_report(frame: pd.DataFrame, by: list[str], args, notes: Footnotes) -> str:
    if args.metric not in frame:
        raise PerfkitError(f"no metric column {args.metric!r}")
    rows = _closed_loop_rows(frame, args.x, notes)
    pct = f"{args.confidence:.0%}"
    parts = [f"perfkit scaling: {args.metric} vs {args.x}, USL fit on every run "
             f"({pct} CIs: wild bootstrap-t, {args.resamples} resamples, seed {args.seed})\n"]
    for label, g in _groups(rows, by):
        tools = ",".join(sorted(g["tool"].unique()))
        levels = sorted(g[args.x].dropna().unique())
        parts.append(f"\n{label}  ({tools}, {len(g)} runs, {args.x} "
                     f"{', '.join(fmt_num(int(v)) for v in levels)})\n")
        parts.append(_usl_table(g, args, notes))
        parts.append(_littles_table(g, args.x, args.think_time_ms, notes))
    return "".join(parts)


def _usl_table(g: pd.DataFrame, args, notes: Footnotes) -> str:
    try:
        fit = fit_usl(g[args.x].astype(float), g[args.metric].astype(float),
                      confidence=args.confidence, alpha=args.alpha,
                      n_resamples=args.resamples, seed=args.seed, n_column=args.x)
    except PerfkitError as exc:
        return f"  USL: not fitted {notes.mark(str(exc))}\n"
    unit = args.metric.rsplit("_", 1)[-1] if "_" in args.metric else ""
    ci = f"{args.confidence:.0%} CI"
    body = []
    for row in fit.parameters():
        name = {"gamma": f"gamma [{unit}/N]" if unit else "gamma", "n_star": "N*"}.get(
            row["parameter"], row["parameter"])
        interval = f"[{fmt_num(row['ci_low'])}, {fmt_num(row['ci_high'])}]"
        if row["parameter"] == "n_star":  # claimed: the F-test that allowed it is footnoted
            interval += " " + notes.mark(fit.n_star_reason)
        body.append([name, fmt_num(row["estimate"]), interval])
    if fit.n_star is None:
        body.append(["N*", "-", "no peak claimed " + notes.mark(fit.n_star_reason)])
    body.append([f"residual SE{f' [{unit}]' if unit else ''}", fmt_num(fit.residual_se),
                 f"({fit.n_obs} runs, {fit.dof} df)"])
    text = _indent(render_table(["USL", "estimate", ci], body, [False, True, False]))
    marks = " ".join(notes.mark(w) for w in fit.warnings)
    return text + (f"  warnings {marks}\n" if marks else "")


def _littles_table(g: pd.DataFrame, x: str, think_time_ms: float | None,
                   notes: Footnotes) -> str:
    checked = littles_law(g, think_time_ms=think_time_ms)
    checked[x] = g.loc[checked.index, x]
    locust = bool((checked["tool"] == "locust").any())
    body = []
    for level, sub in checked.groupby(x, sort=True):
        counts = sub["flag"].value_counts()
        flags = " ".join(f"{f} x{n} {notes.mark(f'{f}: {FLAGS[f]}')}"
                         for f, n in counts.items() if f != "ok")
        row = [fmt_num(int(level)), str(len(sub)),
               fmt_num(_median(sub["throughput_rps"])),
               fmt_num(_median(sub["latency_mean_ms"])),
               fmt_num(_median(sub["ratio"]), 3)]
        if locust:
            row.append(fmt_num(_median(sub["implied_think_time_ms"])))
        body.append(row + [flags or "ok"])
    header = ["Little's law", "runs", "X [rps]", "R [ms]", "X(R+Z)/N" if locust else "X*R/N"]
    header += ["Z = N/X-R [ms]"] if locust else []
    header += ["flags"]
    right = [True] * (len(header) - 1) + [False]
    return _indent(render_table(header, body, right))


# -- rates: SLO bracket ---------------------------------------------------------------------
def _rates_report(frame: pd.DataFrame, runs: list, by: list[str], args,
                  notes: Footnotes) -> str:
    if args.slo_ms is None:
        raise PerfkitError("--x target_rate_rps needs --slo-ms (the latency objective)")
    rated = frame["target_rate_rps"].notna()
    if not rated.any():
        raise PerfkitError("no run has a target rate: the SLO bracket needs wrk2 runs with -R")
    if (~rated).any():
        notes.mark(f"{int((~rated).sum())} run(s) without a target rate (closed loop) "
                   "left out")
    groups = list(by) + ([] if "connections" in by else ["connections"])
    table = frame[rated]
    q = args.percentile
    label_q = f"p{percentile_label(q).replace('_', '.')}"
    parts = [f"perfkit scaling: SLO {label_q} < {fmt_num(args.slo_ms)} ms over target_rate_rps "
             f"({args.confidence:.0%} across-runs CIs)\n"]
    for label, g in _groups(table, groups):
        items = [runs[i] for i in g.index]
        b = slo_bracket(items, args.slo_ms, q, args.confidence, seed=args.seed,
                        n_resamples=args.resamples)
        lo, hi = (fmt_num(v) if v is not None else "-" for v in b.bracket)
        common = set.intersection(*(set(v.warnings) for v in b.rates))
        marks = " ".join(notes.mark(w) for w in [*b.warnings, *sorted(common)])
        parts.append(f"\n{label}  ({len(g)} runs)  bracket [{lo}, {hi}] req/s {marks}".rstrip()
                     + "\n")
        parts.append(_slo_table(b, label_q, args.confidence, notes, common))
    return "".join(parts)


def _slo_table(b, label_q: str, confidence: float, notes: Footnotes, common: set) -> str:
    body = []
    for v in b.rates:
        extra = [notes.mark(w) for w in v.warnings if w not in common]
        if v.verdict != "pass":
            extra.insert(0, notes.mark(f"{fmt_num(v.rate_rps)} req/s: {v.reason}"))
        body.append([fmt_num(v.rate_rps), f"{v.n_kept_up}/{v.n_runs}",
                     fmt_num(v.estimate_ms), f"[{fmt_num(v.ci_low_ms)}, {fmt_num(v.ci_high_ms)}]",
                     " ".join([v.verdict] + extra)])
    header = ["rate [rps]", "kept up", f"{label_q} [ms]", f"{confidence:.0%} CI [ms]",
              "verdict"]
    return _indent(render_table(header, body, [True, True, True, False, False]))


def _median(values: pd.Series) -> float:
    """Median of the values present (NaN when none is)."""
    v = values.to_numpy(dtype=float)
    v = v[~np.isnan(v)]
    return float(np.median(v)) if len(v) else float("nan")


def _indent(text: str) -> str:
    return "".join(f"  {line}\n" for line in text.splitlines())
