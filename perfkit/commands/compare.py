"""``perfkit compare BASE NEW``: run-vs-run comparison, one benchstat-like row per group.

Also home of the helpers ``perfkit effects`` shares: the selection syntax, grouping and the
numbered footnotes.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Iterable
from typing import TextIO

import numpy as np
import pandas as pd

from perfkit.commands._common import fmt_num, load_paths, render_table
from perfkit.errors import PerfkitError
from perfkit.frames import runs_frame
from perfkit.model import CLOSED_LOOP_TOOLS
from perfkit.stats import adjust_pvalues, compare

HELP = """\
Compare two sets of runs metric-wise, as benchstat does: the run is the unit. Each row holds
the median of the runs with an order-statistic CI on both sides, the change new/base with its
CI (Hodges-Lehmann on logs), and the Mann-Whitney U p-value, Holm-adjusted across rows. `~`
means no significant change; a footnote says why (too few runs to ever reach alpha, ...).

BASE and NEW are selections: PATH, or PATH::column=value[,column=value...] to keep the runs
whose column (a factor from the manifest, or a runs-frame column such as connections) has
that value; `value1|value2` accepts either. Rows are grouped by whatever else varies (load
levels such as connections or target_rate_rps, other factors, the Locust endpoint); --by
names them instead, and --by none pools every run into one row.

Failed runs (non-zero exit, every response failed, no value; for latency metrics also
saturated wrk2 runs) rank worse than every finished run unless --exclude-failed gives a reason.

examples:
  perfkit compare data/sweep::profile=default data/sweep::profile=tuned
  perfkit compare data/sweep::profile=default data/sweep::profile=tuned --metric throughput_rps
  perfkit compare runs/before runs/after --metric latency_p99_9_ms --alpha 0.01
  perfkit compare data/sweep::profile=default,connections=50 \\
                  data/sweep::profile=tuned,connections=50
"""

#: columns that are a load level or an identity, candidates for grouping rows
LOAD_COLUMNS = ("endpoint", "connections", "users", "threads", "target_rate_rps")
#: factor names that number replicates, never a group
REPLICATE_NAMES = frozenset({"rep", "repetition", "replicate", "block", "order", "seed", "run"})


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("compare", help="compare two sets of runs (benchstat-like)",
                       description=HELP, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("base", metavar="BASE", help="PATH or PATH::column=value,... (the baseline)")
    p.add_argument("new", metavar="NEW", help="PATH or PATH::column=value,... (the candidate)")
    p.add_argument("--metric", default="latency_p99_ms",
                   help="per-run column to compare (default latency_p99_ms)")
    p.add_argument("--alpha", type=float, default=0.05, help="significance level (default 0.05)")
    p.add_argument("--confidence", type=float, default=0.95,
                   help="level of the median CIs (default 0.95)")
    p.add_argument("--higher-is-better", action="store_true",
                   help="failed runs rank lowest (default: inferred, *_rps and *_per_s metrics)")
    p.add_argument("--exclude-failed", metavar="REASON",
                   help="drop failed runs instead of ranking them, for this stated reason")
    add_by_argument(p)
    p.set_defaults(func=run)


def add_by_argument(p: argparse.ArgumentParser) -> None:
    p.add_argument("--by", default="auto", metavar="COLS",
                   help="comma-separated columns that make rows; 'auto' (default): every load "
                        "column and factor that varies; 'none': pool all runs into one row")


class Footnotes:
    """Numbered, de-duplicated warnings printed after the table."""

    def __init__(self) -> None:
        self.texts: list[str] = []

    def mark(self, texts: Iterable[str]) -> str:
        out = []
        for text in texts:
            if text not in self.texts:
                self.texts.append(text)
            out.append(f"[{self.texts.index(text) + 1}]")
        return "".join(out)

    def render(self) -> str:
        return "".join(f"[{i}] {t}\n" for i, t in enumerate(self.texts, 1))


# -- selections ---------------------------------------------------------------------------------
def parse_selection(text: str) -> tuple[str, dict[str, list[str]]]:
    """``PATH::a=1,b=x|y`` -> (``PATH``, {"a": ["1"], "b": ["x", "y"]})."""
    path, sep, spec = text.partition("::")
    filters: dict[str, list[str]] = {}
    if sep:
        for part in filter(None, (p.strip() for p in spec.split(","))):
            key, eq, value = part.partition("=")
            if not eq or not key.strip():
                raise PerfkitError(f"selection {text!r}: expected column=value, found {part!r}")
            filters[key.strip()] = [v.strip() for v in value.split("|")]
    return path, filters


def load_selection(text: str, err: TextIO, cache: dict) -> tuple[pd.DataFrame, dict, list]:
    """Runs frame of a selection (paths loaded once), with its filters and its runs' warnings."""
    path, filters = parse_selection(text)
    if path not in cache:
        result = load_paths([path], err)
        if not result.runs:
            raise PerfkitError(f"no runs found under {path}")
        cache[path] = (runs_frame(result.runs), result.runs)
    frame, runs = cache[path]
    mask = np.ones(len(frame), dtype=bool)
    for key, values in filters.items():
        if key not in frame:
            raise PerfkitError(f"selection {text!r}: no column {key!r}")
        mask &= _matches(frame[key], values)
    if not mask.any():
        raise PerfkitError(f"selection {text!r} matches no run")
    picked = [r for r, keep in zip(runs, mask, strict=True) if keep]
    return frame[mask].reset_index(drop=True), filters, picked


def _matches(column: pd.Series, values: list[str]) -> np.ndarray:
    text = column.astype(str).to_numpy()
    hit = np.isin(text, values)
    numbers = [_float(v) for v in values]
    if pd.api.types.is_numeric_dtype(column) and not any(v is None for v in numbers):
        hit |= column.astype("Float64").isin(numbers).fillna(False).to_numpy(dtype=bool)
    return hit


def _float(value: str) -> float | None:
    try:
        return float(value)
    except ValueError:
        return None


def pinned(filters: dict[str, list[str]]) -> list[str]:
    """Columns a selection fixes to one value (they never make rows)."""
    return [key for key, values in filters.items() if len(values) == 1]


def group_columns(frames: list[pd.DataFrame], runs: list, exclude: Iterable[str],
                  by: str = "auto") -> list[str]:
    """Columns that make rows: ``by`` as given, or (auto) the load columns and manifest factors
    that vary across the frames, minus ``exclude``."""
    both = pd.concat(frames, ignore_index=True)
    if by.strip().lower() == "none":
        return []
    if by.strip().lower() != "auto":
        cols = [c.strip() for c in by.split(",") if c.strip()]
        missing = [c for c in cols if c not in both]
        if missing:
            raise PerfkitError(f"--by: no column {missing[0]!r}")
        return cols
    factors = sorted({k for r in runs for k in r.factors} - REPLICATE_NAMES)
    skip = set(exclude)
    out = []
    for col in [*LOAD_COLUMNS, *factors]:
        if col in both and col not in skip and col not in out:
            if both[col].astype(str).nunique(dropna=False) > 1:
                out.append(col)
    return out


def failed_mask(frame: pd.DataFrame, lower_is_better: bool) -> np.ndarray:
    """Non-zero exit, every response failed, and (latency) saturated wrk2 runs."""
    exit_code = pd.to_numeric(frame.get("exit_code"), errors="coerce")
    failed = (exit_code.notna() & (exit_code != 0)).to_numpy(dtype=bool)
    warnings = frame.get("warnings", pd.Series([[]] * len(frame)))
    failed |= np.array([any("every response failed" in w for w in (ws or []))
                        for ws in warnings], dtype=bool)
    if lower_is_better and "saturated" in frame:
        failed |= frame["saturated"].fillna(False).astype(bool).to_numpy()
    return failed


# -- the command ------------------------------------------------------------------------------
def run(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    cache: dict = {}
    base, base_filters, base_runs = load_selection(args.base, err, cache)
    new, new_filters, new_runs = load_selection(args.new, err, cache)
    for frame, label in ((base, "BASE"), (new, "NEW")):
        if args.metric not in frame:
            numeric = [c for c in frame.columns if c.endswith(("_ms", "_rps", "_s", "_ratio"))]
            raise PerfkitError(f"{label} has no column {args.metric!r}; try one of: "
                               f"{', '.join(numeric)}")
    lower = not (args.higher_is_better or args.metric.endswith(("_rps", "_per_s")))
    keys = group_columns([base, new], base_runs + new_runs,
                         [*pinned(base_filters), *pinned(new_filters)], args.by)
    rows = _compare_groups(base, new, keys, args, lower)
    notes = Footnotes()
    header = _header(args, lower, len(rows), base, new, notes, base_runs + new_runs)
    out.write(header + "\n" + _table(rows, keys, args, notes) + "\n")
    if notes.texts:
        out.write("\n" + notes.render())
    return 0


def _compare_groups(base: pd.DataFrame, new: pd.DataFrame, keys: list[str], args,
                    lower: bool) -> list[dict]:
    labels = _group_labels(base, new, keys)
    rows = []
    for label in labels:
        b = _in_group(base, keys, label)
        n = _in_group(new, keys, label)
        result = compare(b[args.metric].astype("Float64").to_numpy(dtype=float, na_value=np.nan),
                         n[args.metric].astype("Float64").to_numpy(dtype=float, na_value=np.nan),
                         alpha=args.alpha, confidence=args.confidence, lower_is_better=lower,
                         failed_base=failed_mask(b, lower), failed_new=failed_mask(n, lower),
                         exclude_failed=args.exclude_failed).iloc[0].to_dict()
        rows.append({"label": label, **result})
    p = np.array([r["p_value"] for r in rows], dtype=float)
    for row, adj in zip(rows, adjust_pvalues(p, "holm"), strict=True):
        row["p_holm"] = adj
        if row["significant"] is not None:
            row["significant"] = bool(adj < args.alpha)
    return rows


def _group_labels(base: pd.DataFrame, new: pd.DataFrame, keys: list[str]) -> list[tuple]:
    if not keys:
        return [()]
    both = pd.concat([base[keys], new[keys]], ignore_index=True).drop_duplicates()
    both = both.sort_values(keys, key=_sort_key, ignore_index=True)
    return [tuple(r) for r in both.itertuples(index=False)]


def _sort_key(column: pd.Series) -> pd.Series:
    numeric = pd.to_numeric(column, errors="coerce")
    return numeric if numeric.notna().all() else column.astype(str)


def _in_group(frame: pd.DataFrame, keys: list[str], label: tuple) -> pd.DataFrame:
    mask = np.ones(len(frame), dtype=bool)
    for key, value in zip(keys, label, strict=True):
        mask &= (frame[key].astype(str) == str(value)).to_numpy()
    return frame[mask]


def _header(args, lower: bool, n_rows: int, base: pd.DataFrame, new: pd.DataFrame,
            notes: Footnotes, runs: list) -> str:
    direction = "lower is better" if lower else "higher is better"
    holm = f", Holm over {n_rows} rows" if n_rows > 1 else ""
    closed = sorted({w for r in runs if r.tool in CLOSED_LOOP_TOOLS for w in r.warnings
                     if "closed-loop" in w}) if args.metric.startswith("latency_") else []
    mark = notes.mark(closed)
    return (f"{args.metric} ({direction}){mark}: medians of runs with {_pct(args.confidence)} "
            f"CIs; change new/base with its {_pct(1 - args.alpha)} CI; alpha {args.alpha:g}"
            f"{holm}\n"
            f"base: {args.base} ({len(base)} runs)\n"
            f"new:  {args.new} ({len(new)} runs)\n")


def _table(rows: list[dict], keys: list[str], args, notes: Footnotes) -> str:
    header = [*keys, "base", "new", "vs base", "p", "p Holm", "runs"]
    body = []
    for row in rows:
        cells = [fmt_num(_plain(v)) for v in row["label"]]
        cells += [_median(row, "base"), _median(row, "new"), _change(row),
                  _fmt_p(row["p_value"]), _fmt_p(row["p_holm"]),
                  f"{row['n_base']} vs {row['n_new']} {notes.mark(row['warnings'])}".rstrip()]
        body.append(cells)
    right = [False] * len(keys) + [True, True, False, True, True, False]
    return render_table(header, body, right)


def _median(row: dict, side: str) -> str:
    est = row[f"median_{side}"]
    low, high = row[f"median_{side}_ci_low"], row[f"median_{side}_ci_high"]
    if _missing(est):
        return "-"
    if math.isinf(low) or math.isinf(high):
        return f"{fmt_num(est, 3)} ± inf"
    return f"{fmt_num(est, 3)} [{fmt_num(low, 3)}, {fmt_num(high, 3)}]"


def _change(row: dict) -> str:
    if row["significant"] is not True or _missing(row["ratio"]):
        return "~"
    return (f"{_pct_change(row['ratio'])} [{_pct_change(row['ratio_ci_low'])}, "
            f"{_pct_change(row['ratio_ci_high'])}]")


def _pct_change(ratio: float) -> str:
    if math.isinf(ratio):
        return "+inf"
    return f"{(ratio - 1) * 100:+.1f}%"


def _fmt_p(p: float) -> str:
    if _missing(p):
        return "-"
    return f"{p:.3f}" if p >= 0.001 else f"{p:.1e}"


def _pct(c: float) -> str:
    return f"{c * 100:g}%"


def _missing(value) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def _plain(value):
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value
