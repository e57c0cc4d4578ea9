"""``perfkit scaling``: USL fit and Little's-law check over concurrency, or the SLO bracket over
offered rates, one terse table per configuration with numbered warning footnotes.

Formatting only: the analysis is :func:`perfkit.analysis.scaling.scaling_fits` and
:func:`~perfkit.analysis.scaling.slo_brackets`.
"""

from __future__ import annotations

import argparse
from typing import TextIO

from perfkit.analysis import metric
from perfkit.analysis.scaling import (
    ScalingResult,
    ScalingTable,
    SloTable,
    scaling_fits,
    slo_brackets,
)
from perfkit.commands._common import (
    Loader,
    add_format_argument,
    check_alpha,
    check_confidence,
    render_table,
    write_frame,
    write_json,
    write_notes,
)
from perfkit.errors import UsageError
from perfkit.formatting import Footnotes, fmt_num, level_text, pct
from perfkit.model import percentile_label
from perfkit.scaling.littles import FLAGS

HELP = """\
Over concurrency (--x connections for wrk, --x users for Locust): fit the Universal
Scalability Law to every run (not to means), with bootstrap CIs, when there are four or more
concurrency levels (Amdahl's law with three); claim a peak N* only when an F-test rejects
Amdahl's law; check Little's law N = X (R + Z) per concurrency level.

Over offered rates (--x target_rate_rps, wrk2 -R): judge each rate against --slo-ms on the
across-runs CI of the percentile, and print the bracket [last pass, first fail]. Runs at
different connection counts are different configurations, so connections is always a group.

Configurations: --by auto (default) groups by every design factor that varies; --by none
pools all runs; or name the columns. --format csv prints the models table (or with --table
littles the Little's-law table; over rates: brackets, or --table verdicts), exactly as the
report writes it; json carries both.

examples:
  perfkit scaling data/demo-wrk-connections --x connections
  perfkit scaling data/demo-wrk2-sweep --x target_rate_rps --slo-ms 5 --percentile 99
  perfkit scaling data/demo-wrk2-sweep --x target_rate_rps --slo-ms 5 --format csv --table verdicts
"""

TABLES = {"concurrency": ("models", "littles"), "rates": ("brackets", "verdicts")}


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("scaling", help="USL fit over concurrency, or SLO bracket over rates",
                       description=HELP, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("paths", metavar="EXPERIMENT",
                   help="experiment or run directory (or PATH::column=value,...)")
    p.add_argument("--x", required=True, choices=("connections", "users", "target_rate_rps"),
                   help="the load axis: a concurrency, or the offered rate (wrk2 -R)")
    p.add_argument("--metric", default="throughput_rps",
                   help="throughput column for the USL fit (default throughput_rps)")
    p.add_argument("--slo-ms", type=float, help="latency objective in ms (needed for rates)")
    p.add_argument("--percentile", type=float, default=99.0,
                   help="percentile judged against the SLO, 0-100 (default 99)")
    p.add_argument("--think-time-ms", type=float,
                   help="Locust: configured mean wait between tasks, to check Little's law")
    p.add_argument("--by", default="auto", help="columns that make a configuration "
                                                "(default auto: the factors that vary)")
    p.add_argument("--confidence", type=float, default=0.95, help="CI level (default 0.95)")
    p.add_argument("--alpha", type=float, default=0.05,
                   help="level of the F-test USL vs Amdahl that gates N* (default 0.05)")
    p.add_argument("--resamples", type=int, default=1000, help="bootstrap resamples")
    p.add_argument("--seed", type=int, default=0, help="bootstrap seed (default 0)")
    p.add_argument("--table", choices=("models", "littles", "brackets", "verdicts"),
                   help="which table --format csv prints (default models / brackets)")
    add_format_argument(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    check_confidence(args.confidence)
    check_alpha(args.alpha)
    if args.resamples < 1:
        raise UsageError(f"--resamples must be >= 1, got {args.resamples}")
    loader = Loader(err)
    rows, _ = loader.select(args.paths)
    kind = "rates" if args.x == "target_rate_rps" else "concurrency"
    if args.table and args.table not in TABLES[kind]:
        raise UsageError(f"--table {args.table} is for the other axis; over {kind}: "
                         f"{' or '.join(TABLES[kind])}")
    if kind == "rates":
        if args.slo_ms is None:
            raise UsageError("--x target_rate_rps needs --slo-ms (the latency objective)")
        result = slo_brackets(rows, args.slo_ms, percentile=args.percentile, by=args.by,
                              confidence=args.confidence, seed=args.seed,
                              n_resamples=args.resamples)
        frames = {"brackets": result.to_frame, "verdicts": result.verdicts_frame}
    else:
        result = scaling_fits(rows, metric(args.metric, rows.frame.columns), x=args.x,
                              by=args.by, confidence=args.confidence, alpha=args.alpha,
                              n_resamples=args.resamples, seed=args.seed,
                              think_time_ms=args.think_time_ms)
        frames = {"models": result.to_frame, "littles": result.littles_frame}
    if args.format == "csv":
        write_frame(frames[args.table or TABLES[kind][0]](), out)
    elif args.format == "json":
        write_json(result.to_dict(), out)
    else:
        notes = Footnotes()
        text = (_rates_text(result, notes) if kind == "rates"
                else _concurrency_text(result, args.think_time_ms, notes))
        out.write(text if args.format == "table" else _markdown_blocks(text))
        write_notes(notes, args.format, out)
    return loader.status


def _markdown_blocks(text: str) -> str:
    return "```\n" + text + "```\n"


# -- concurrency ------------------------------------------------------------------------------
def _concurrency_text(table: ScalingTable, think_time_ms, notes: Footnotes) -> str:
    parts = [f"perfkit scaling: {table.metric.name} vs {table.n_column}, model fit on every "
             f"run ({pct(table.confidence)} CIs: wild bootstrap-t, {table.n_resamples} "
             f"resamples, seed {table.seed}){notes.mark(table.warnings)}\n"]
    for r in table.results:
        tools = ",".join(sorted(r.rows.frame["tool"].unique()))
        levels = sorted(r.rows.frame[r.n_column].dropna().unique())
        parts.append(f"\n{_label(r)}  ({tools}, {len(r.rows)} runs, {r.n_column} "
                     f"{', '.join(level_text(v) for v in levels)})\n")
        parts.append(_model_table(r, notes))
        parts.append(_littles_table(r, think_time_ms, notes))
    return "".join(parts)


def _label(r: ScalingResult) -> str:
    return "  ".join(f"{k}={level_text(v)}" for k, v in zip(r.by, r.key, strict=True)) \
        or "all runs"


def _model_table(r: ScalingResult, notes: Footnotes) -> str:
    fit = r.fit
    if fit is None:
        return f"  model: none {notes.mark(r.reason)}\n"
    unit = r.metric.unit
    body = []
    for row in fit.parameters():
        name = {"gamma": f"gamma [{unit}/N]" if unit else "gamma", "n_star": "N*"}.get(
            row["parameter"], row["parameter"])
        interval = f"[{fmt_num(row['ci_low'])}, {fmt_num(row['ci_high'])}]"
        if row["parameter"] == "n_star":  # claimed: the F-test that allowed it is footnoted
            interval += " " + notes.mark(fit.n_star_reason)
        body.append([name, fmt_num(row["estimate"]), interval])
    if fit.n_star is None:
        body.append(["N*", "-", "no peak claimed " + notes.mark(r.reason or fit.n_star_reason)])
    body.append([f"residual SE{f' [{unit}]' if unit else ''}", fmt_num(fit.residual_se),
                 f"({fit.n_obs} runs, {fit.dof} df)"])
    name = {"usl": "USL", "amdahl": "Amdahl"}[fit.model]
    text = _indent(render_table([name, "estimate", f"{pct(fit.confidence)} CI"], body,
                                [False, True, False]))
    marks = notes.mark(fit.warnings)
    return text + (f"  warnings {marks}\n" if marks else "")


def _littles_table(r: ScalingResult, think_time_ms, notes: Footnotes) -> str:
    if not len(r.littles):
        return ""
    locust = bool((r.rows.frame["tool"] == "locust").any())
    body = []
    for _, row in r.littles.iterrows():
        flags = [f.split(" x") for f in row["flags"].split(", ") if f != "ok"]
        marks = " ".join(f"{f} x{n} {notes.mark(f'{f}: {FLAGS[f]}')}" for f, n in flags)
        cells = [fmt_num(row[r.n_column]), str(row["runs"]), fmt_num(row["throughput_rps"]),
                 fmt_num(row["latency_mean_ms"]), fmt_num(row["ratio"], 3)]
        if locust:
            cells.append(fmt_num(row["implied_think_time_ms"]))
        body.append(cells + [marks or "ok"])
    header = ["Little's law", "runs", "X [rps]", "R [ms]", "X(R+Z)/N" if locust else "X*R/N"]
    header += ["Z = N/X-R [ms]"] if locust else []
    header += ["flags"]
    return _indent(render_table(header, body, [True] * (len(header) - 1) + [False]))


# -- rates ----------------------------------------------------------------------------------
def _rates_text(table: SloTable, notes: Footnotes) -> str:
    label_q = f"p{percentile_label(table.percentile).replace('_', '.')}"
    parts = [f"perfkit scaling: SLO {label_q} < {fmt_num(table.slo_ms)} ms over "
             f"target_rate_rps ({pct(table.confidence)} across-runs CIs)"
             f"{notes.mark(table.warnings)}\n"]
    for b in table.brackets:
        lo, hi = (fmt_num(v) if v is not None else "-" for v in b.bracket.bracket)
        common = set.intersection(*(set(v.warnings) for v in b.bracket.rates))
        marks = " ".join(notes.mark(w) for w in [*b.bracket.warnings, *sorted(common)])
        label = "  ".join(f"{k}={level_text(v)}" for k, v in zip(b.by, b.key, strict=True))
        parts.append(f"\n{label or 'all runs'}  ({b.n_runs} runs)  bracket [{lo}, {hi}] "
                     f"req/s {marks}".rstrip() + "\n")
        body = []
        for v in b.bracket.rates:
            extra = [notes.mark(w) for w in v.warnings if w not in common]
            if v.verdict != "pass":
                extra.insert(0, notes.mark(f"{fmt_num(v.rate_rps)} req/s: {v.reason}"))
            body.append([fmt_num(v.rate_rps), f"{v.n_kept_up}/{v.n_runs}",
                         fmt_num(v.estimate_ms),
                         f"[{fmt_num(v.ci_low_ms)}, {fmt_num(v.ci_high_ms)}]",
                         " ".join([v.verdict] + extra)])
        header = ["rate [rps]", "kept up", f"{label_q} [ms]", f"{pct(table.confidence)} CI [ms]",
                  "verdict"]
        parts.append(_indent(render_table(header, body, [True, True, True, False, False])))
    return "".join(parts)


def _indent(text: str) -> str:
    return "".join(f"  {line}\n" for line in text.splitlines())
