"""``perfkit effects EXPERIMENT --factors a,b``: the 2^k r factorial table of a tuning sweep."""

from __future__ import annotations

import argparse
import math
from typing import TextIO

import pandas as pd

from perfkit.commands._common import fmt_num, render_table
from perfkit.commands.compare import (
    Footnotes,
    add_by_argument,
    group_columns,
    load_selection,
    pinned,
)
from perfkit.errors import PerfkitError
from perfkit.stats import factorial

HELP = """\
Effects of two-level factors on a per-run metric, as in Jain's 2^k r design: each effect with
its t-based CI and p-value, the share of the variation it explains, and the unexplained
(error) share. By default the metric is analysed on the log scale, so an effect is a ratio:
the geometric mean at the factor's high level over the one at its low level (--linear gives
Jain's additive q instead).

Low and high: numbers, smaller is low; False is low; labels such as off/no/default/disabled
are low; otherwise natural sort order (backlog8 < backlog4096). --levels states it explicitly.
The mapping is printed. Load levels and other factors that vary (connections 16/64/256, the
offered rate, ...) are analysed per level, with Holm's correction across levels.

EXPERIMENT is a path, or PATH::column=value,... as in `perfkit compare`.

examples:
  perfkit effects data/sweep --factors profile --metric latency_p99_ms
  perfkit effects data/tuning --factors backlog,keepalive,cache --block block \\
                  --metric throughput_rps
  perfkit effects data/sweep --factors profile,connections --by target_rate_rps --linear
"""


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("effects", help="factorial effects of a tuning sweep (Jain's 2^k r)",
                       description=HELP, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("experiment", metavar="EXPERIMENT", help="PATH or PATH::column=value,...")
    p.add_argument("--factors", required=True, help="comma-separated two-level factor columns")
    p.add_argument("--metric", default="latency_p99_ms",
                   help="per-run response column (default latency_p99_ms)")
    p.add_argument("--block", help="blocking column (randomized complete blocks), a nuisance")
    p.add_argument("--linear", action="store_true",
                   help="additive effects on the raw metric instead of ratios on the log scale")
    p.add_argument("--confidence", type=float, default=0.95, help="CI level (default 0.95)")
    p.add_argument("--levels", default="",
                   help="explicit coding, e.g. 'cache=off:on,backlog=8:4096' (low:high)")
    add_by_argument(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    frame, filters, runs = load_selection(args.experiment, err, {})
    factors = [f.strip() for f in args.factors.split(",") if f.strip()]
    missing = [c for c in [*factors, args.metric] if c not in frame]
    if missing:
        raise PerfkitError(f"no column {missing[0]!r}; factors are manifest factors or "
                           f"runs-frame columns")
    exclude = [*factors, *pinned(filters), *([args.block] if args.block else [])]
    by = group_columns([frame], runs, exclude, args.by)
    try:
        table = factorial(frame, factors, args.metric, log=not args.linear,
                          confidence=args.confidence, block=args.block, by=by or None,
                          levels=_levels(args.levels, frame))
    except ValueError as exc:
        raise PerfkitError(str(exc)) from exc
    notes = Footnotes()
    if "saturated" in frame and frame["saturated"].fillna(False).astype(bool).any():
        count = int(frame["saturated"].fillna(False).astype(bool).sum())
        table.attrs["warnings"] = [f"{count} saturated run(s) kept with their measured "
                                   f"{args.metric} (queueing in the generator included)",
                                   *table.attrs["warnings"]]
    out.write(_header(args, table, by, len(frame), notes) + "\n")
    out.write(_table(table, by, args) + "\n")
    if notes.texts:
        out.write("\n" + notes.render())
    return 0


def _levels(spec: str, frame: pd.DataFrame) -> dict:
    """'a=off:on,b=8:4096' -> {"a": ("off", "on"), "b": (8, 4096)} typed like the column."""
    out = {}
    for part in filter(None, (p.strip() for p in spec.split(","))):
        name, _, pair = part.partition("=")
        low, sep, high = pair.partition(":")
        if not sep or name not in frame:
            raise PerfkitError(f"--levels: expected factor=low:high with a known factor, "
                               f"found {part!r}")
        present = {str(v): v for v in frame[name].dropna().unique()}
        if low not in present or high not in present:
            raise PerfkitError(f"--levels: {name} has levels {sorted(present)}")
        out[name] = (present[low], present[high])
    return out


def _header(args, table: pd.DataFrame, by: list[str], n_runs: int, notes: Footnotes) -> str:
    scale = ("additive effects q (half of high minus low)" if args.linear else
             "log scale: effect = ratio of geometric means, high / low")
    df = table.attrs["df_error"]
    dfs = sorted(set(df.values())) if isinstance(df, dict) else [df]
    per = f"; per {', '.join(by)}, Holm across levels" if by else ""
    coding = "; ".join(f"{name}: {c['low']} -> {c['high']} ({c['rule']})"
                       for name, c in table.attrs["coding"].items())
    marks = notes.mark(table.attrs["warnings"])
    return (f"{args.metric}, {n_runs} runs: {scale}; {_pct(args.confidence)} t CIs "
            f"(error df {', '.join(map(str, dfs))}){per}{marks}\n"
            f"coding (low -> high): {coding}\n")


def _table(table: pd.DataFrame, by: list[str], args) -> str:
    ratio = not args.linear
    header = [*by, "term", "ratio" if ratio else "effect", f"{_pct(args.confidence)} CI",
              "variation", "p"] + (["p Holm"] if by else [])
    body = []
    for _, row in table.iterrows():
        labels = _labels(row["by"], by) if by else []
        est, low, high = ((row["ratio"], row["ratio_ci_low"], row["ratio_ci_high"]) if ratio
                          else (row["effect"], row["ci_low"], row["ci_high"]))
        error = row["term"] in ("error", "block")
        cells = [*labels, row["term"], "" if error else fmt_num(est, 3),
                 "" if error else f"[{fmt_num(low, 3)}, {fmt_num(high, 3)}]",
                 _share(row["variation_pct"]), _fmt_p(row["p_value"])]
        if by:
            cells.append(_fmt_p(row.get("p_value_holm")))
        body.append(cells)
    right = [False] * (len(by) + 1) + [True, False, True, True] + ([True] if by else [])
    return render_table(header, body, right)


def _labels(value, by: list[str]) -> list[str]:
    values = value if isinstance(value, tuple) else (value,)
    return [fmt_num(int(v) if isinstance(v, float) and v.is_integer() else v) for v in values]


def _share(pct: float) -> str:
    return "-" if pct is None or math.isnan(pct) else f"{pct:.1f}%"


def _fmt_p(p) -> str:
    if p is None or (isinstance(p, float) and math.isnan(p)):
        return ""
    return f"{p:.3f}" if p >= 0.001 else f"{p:.1e}"


def _pct(c: float) -> str:
    return f"{c * 100:g}%"
