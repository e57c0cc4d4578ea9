"""The seeds notebook: each published claim of the five nginx-tuning write-ups, what a sound
repeat on our testbed finds, and the verdict.

The analysis and its rule are :mod:`perfkit.analysis.seeds` (the repeated comparisons are the
same calls as ``perfkit compare``); this module shapes the results for the page: the verdict
table, the first-pass assessment, one figure per repeated claim, the ratio overview, and the
headline answers (one per claim).
"""

from __future__ import annotations

import functools
import math

import numpy as np
import pandas as pd

from perfkit.analysis.seeds import ClaimResult, Replication, SeedsAnalysis, reanalyse
from perfkit.formatting import fmt_ci, fmt_num
from perfkit.report.nb import Answer
from perfkit.report.sections import common

#: columns of the verdict table shown on the page (the CSV keeps every column)
SHOWN = ("claim_id", "setting", "metric", "published_ratio", "published_runs_per_configuration",
         "at", "n_base", "n_new", "ratio", "ratio_ci_low", "ratio_ci_high", "p_value_holm",
         "verdict", "runs_per_arm_needed")
#: ratios further from 1 than this factor are listed in the overview's caption, not drawn
OFF_SCALE = 100.0


def analyse(data_root: str = "", threshold: float = 0.1, alpha: float = 0.05,
            confidence: float = 0.95, seed: int = 1) -> SeedsAnalysis:
    """Every claim with its verdict; experiments are loaded once each from ``data_root``."""
    load = functools.lru_cache(maxsize=None)(
        lambda name: common.load_experiment(name, data_root or None))
    return reanalyse(load, _seeds_root(data_root), threshold=threshold, alpha=alpha,
                     confidence=confidence, seed=seed)


def _seeds_root(data_root: str):
    from perfkit.report import paths

    return paths.data_dir("seeds", data_root or None)


def verdict_table(analysis: SeedsAnalysis) -> pd.DataFrame:
    """One row per claim (every column; the page shows :data:`SHOWN`)."""
    return analysis.to_frame()


def shown(frame: pd.DataFrame) -> pd.DataFrame:
    return frame[list(SHOWN)]


def assessment_table(analysis: SeedsAnalysis) -> pd.DataFrame:
    """The first-pass assessment of every claim from the write-ups alone."""
    return analysis.to_frame()[["claim_id", "setting", "published_values",
                                "published_runs_per_configuration", "assessment"]]


def counts(analysis: SeedsAnalysis) -> list[str]:
    """How many claims got each verdict, one line each."""
    found = pd.Series([r.verdict for r in analysis.results]).value_counts()
    return [f"{v}: {n} of {len(analysis.results)} claims" for v, n in found.items()]


def check_lines(analysis: SeedsAnalysis) -> str:
    """Stable text of every claim's verdict and numbers (for the output-checked cell)."""
    lines = []
    for r in analysis.results:
        rep = r.replication
        found = ""
        if rep is not None:
            c = rep.row.comparison
            found = (f" repeat x{fmt_ci(c.ratio, c.ratio_ci_low, c.ratio_ci_high)} "
                     f"p {fmt_num(rep.row.p_adjusted, 3)} {c.n_base} vs {c.n_new}")
        pub = "" if math.isnan(r.published_ratio) else f" published x{fmt_num(r.published_ratio)}"
        need = "" if r.runs_needed is None else f" need {r.runs_needed}"
        lines.append(f"{r.claim['claim_id']}:{pub}{found}{need} -> {r.verdict}")
    return "\n".join(lines)


# -- the headline answers: one per claim --------------------------------------------------------
def answers(analysis: SeedsAnalysis) -> list[Answer]:
    return [_answer(r) for r in analysis.results]


def _answer(r: ClaimResult) -> Answer:
    question = f"{r.claim['claim_id']} ({r.claim['seed']}): {r.claim['setting']}"
    published = r.claim["published_values"] or "no value published"
    if not math.isnan(r.published_ratio):
        published += f" (ratio x{fmt_num(r.published_ratio, 3)})"
    rep = r.replication
    caveats = [r.reason] + ([r.runs_needed_note] if r.runs_needed_note else [])
    if rep is None:
        n_pub = r.assessment["n_per_configuration"]
        n = ("not stated" if pd.isna(n_pub) else "no measurement" if n_pub == 0
             else f"{n_pub} per configuration (published)")
        need = (f"; a repeat would need >= {r.runs_needed} runs per arm" if r.runs_needed
                else "")
        return Answer(question, f"published: {published}; no repeat here{need}", r.verdict, n,
                      (r.assessment["assessment"], *caveats))
    c = rep.row.comparison
    found = (f"repeat at {r.link.at}: {rep.metric.name} x"
             f"{fmt_ci(c.ratio, c.ratio_ci_low, c.ratio_ci_high)} (new/base), "
             f"p {fmt_num(rep.row.p_adjusted, 3)} (Holm), {rep.row.verdict}")
    return Answer(question, f"published: {published}; {found}", r.verdict,
                  f"{c.n_base} vs {c.n_new} runs", tuple(caveats))


# -- figures ---------------------------------------------------------------------------------------
def _axis_label(rep: Replication) -> str:
    from perfkit import plots

    return plots.label(rep.metric.label, rep.metric.unit or "share")


def runs_figure(result: ClaimResult, palette=None):
    """Per-run values of both arms of a repeated claim (points), their medians with the
    order-statistic intervals, and the published values (stars) where printed."""
    from perfkit import plots

    rep = result.replication
    fig, ax = plots.figure(height_in=2.6)
    column, levels = arm_levels(rep)
    arms = [(levels[0], rep.base, "base"), (levels[1], rep.new, "new")]
    labels = [a[0] for a in arms]
    colours = palette(labels) if palette is not None else None
    c = rep.row.comparison
    key_runs = [_at(rs, rep, side) for _, rs, side in arms]
    all_values = []
    for x, ((label, _, side), (values, worst)) in enumerate(zip(arms, key_runs, strict=True)):
        st = colours.style(label) if colours is not None else plots.style.series_style(x)
        keep = np.isfinite(values) & (values > 0)
        all_values.extend(values[keep])
        jitter = np.linspace(-0.12, 0.12, len(values)) if len(values) > 1 else np.zeros(1)
        for hollow in (False, True):
            pick = keep & (worst == hollow)
            if pick.any():
                ax.plot(x + jitter[pick], values[pick], linestyle="none", marker=st["marker"],
                        color=st["color"], alpha=0.8, markerfacecolor="white" if hollow
                        else st["color"], label=f"{label}: runs" + (
                            " ranked worst (failed)" if hollow else ""))
        med = getattr(c, f"median_{side}")
        lo, hi = getattr(c, f"median_{side}_ci_low"), getattr(c, f"median_{side}_ci_high")
        if np.isfinite(med) and med > 0:
            ax.plot([x + 0.3], [med], marker="_", markersize=14, color=st["color"])
            if np.isfinite(lo) and np.isfinite(hi):
                ax.plot([x + 0.3, x + 0.3], [max(lo, 1e-12), hi], color=st["color"])
    published = _published_points(result)
    for x, value in published:
        ax.plot([x - 0.3], [value], marker="*", markersize=9, color="black", linestyle="none",
                label="published (1 run)" if x == published[0][0] else None)
        all_values.append(value)
    ax.set_xticks([0, 1], labels)
    ax.set_xlim(-0.6, 1.6)
    ax.set_xlabel(f"{column} (level)")
    ax.set_ylabel(_axis_label(rep))
    vals = np.array(all_values, dtype=float)
    if rep.metric.is_latency and len(vals) and vals.max() / vals.min() > 10 or (
            len(vals) and vals.min() > 0 and vals.max() / vals.min() > 50):
        ax.set_yscale("log")
    ax.legend(loc="best", fontsize="small")
    return fig


def arm_levels(rep: Replication) -> tuple[str, tuple[str, str]]:
    """The columns in which the two arms differ, and each arm's values of them:
    ``("cache", ("disk", "ram"))``."""
    from perfkit.analysis.experiment import Selection

    sides = [Selection.parse(f"x::{spec}").where for spec in (rep.link.base, rep.link.new)]
    cols = [k for k in sides[0] if sides[0][k] != sides[1].get(k)] or list(sides[0])
    return ", ".join(cols), tuple(", ".join("|".join(side[k]) for k in cols)
                                  for side in sides)


def _at(rows, rep: Replication, side: str) -> tuple[np.ndarray, np.ndarray]:
    """The arm's per-run values at the claim's load level, and which runs the test ranked
    worst (the comparison row's flags: failed, or a wrk2 run that did not keep up)."""
    from perfkit.analysis.compare import cell_runs

    cell = cell_runs(rows, rep.table.keys, rep.row.key)
    return cell.values(rep.metric.name), np.array(getattr(rep.row, f"worst_{side}"), dtype=bool)


def _published_points(result: ClaimResult) -> list[tuple[int, float]]:
    values = result.published_values
    if not values:
        return []
    return [(x, v) for x, v in enumerate(values) if np.isfinite(v) and v > 0]


def runs_caption(result: ClaimResult) -> str:
    rep = result.replication
    c = rep.row.comparison
    pub = ("stars: the published values (one run per configuration, the authors' testbed); "
           if _published_points(result) else "no published value of this metric to draw; ")
    failed = c.n_failed_base + c.n_failed_new
    gone = (f"; {failed} run(s) ranked worst in the test (failed or not keeping up): open "
            "markers at their printed value, not drawn without one" if failed else "")
    few = " (none with fewer than 6 runs)" if min(c.n_base, c.n_new) < 6 else ""
    return (f"Claim {result.claim['claim_id']}: {rep.metric.name} per run at {result.link.at}, "
            f"{rep.base_text} ({c.n_base} runs) vs {rep.new_text} ({c.n_new} runs); bars: "
            f"medians with {rep.table.confidence:.0%} order-statistic intervals{few}; "
            f"{pub}repeat x"
            f"{fmt_ci(c.ratio, c.ratio_ci_low, c.ratio_ci_high)} new/base, Mann-Whitney U p "
            f"{fmt_num(rep.row.p_adjusted, 3)} (Holm over {rep.table.family} load levels): "
            f"{result.verdict}{gone}")


def ratio_rows(analysis: SeedsAnalysis) -> pd.DataFrame:
    """The repeated claims whose ratio is drawable, labelled for a forest plot."""
    frame = analysis.to_frame()
    frame = frame[frame["repeat_verdict"] != ""].copy()
    finite = np.isfinite(frame["ratio"]) & (frame["ratio"] > 0)
    near = finite & (frame["ratio"].abs().between(1 / OFF_SCALE, OFF_SCALE))
    frame["label"] = [f"{r.claim_id} {r.metric}" for r in frame.itertuples()]
    frame["significant"] = frame["repeat_verdict"].isin(["better", "worse"])
    return frame[near].reset_index(drop=True)


def ratio_figure(analysis: SeedsAnalysis):
    """Forest plot of the repeated ratios with their intervals; the published ratio of each
    claim as a diamond on its row; the equivalence band of the threshold shaded."""
    from perfkit import plots

    rows = ratio_rows(analysis)
    fig, ax = plots.figure(height_in=plots.forest_height_in(len(rows)) + 0.4)
    plots.forest(rows, ax, plots.label("repeat: change new/base", "ratio"), label="label",
                 significant="significant", threshold=analysis.threshold)
    n = len(rows)
    for i, r in rows.iterrows():
        if np.isfinite(r["published_ratio"]):
            ax.plot([r["published_ratio"]], [n - 1 - i], marker="D", color="black",
                    markerfacecolor="white", linestyle="none", zorder=5, clip_on=False)
    return fig


def ratio_caption(analysis: SeedsAnalysis) -> str:
    frame = analysis.to_frame()
    rep = frame[frame["repeat_verdict"] != ""]
    off = rep[~rep["claim_id"].isin(ratio_rows(analysis)["claim_id"])]
    gone = "; off the scale: " + ", ".join(
        f"{r.claim_id} x{fmt_ci(r.ratio, r.ratio_ci_low, r.ratio_ci_high)}"
        for r in off.itertuples()) if len(off) else ""
    return (f"Repeated claims: the change new/base on our testbed (Hodges-Lehmann ratio with "
            f"its {1 - analysis.alpha:.0%} Moses interval; filled: significant after Holm over "
            f"each experiment's load levels); diamonds: the published ratio (one run per "
            f"configuration); shaded: ±{analysis.threshold:.0%}; load levels: "
            + "; ".join(f"{r.claim_id} {r.at}" for r in ratio_rows(analysis).itertuples())
            + gone)


# -- text ------------------------------------------------------------------------------------------
def methods(analysis: SeedsAnalysis, data_root: str = "") -> dict:
    """The Methods record of each repeated experiment, with the description of each of its
    comparisons and the verdict rule."""
    out: dict = {}
    for exp in experiments(analysis, data_root):
        reps = [r for r in analysis.replications if r.link.experiment == exp.name]
        texts = dict.fromkeys([*(r.table.describe() for r in reps), rule_sentence(analysis)])
        out.update(common.methods([exp], list(texts)))
    return out


def rule_sentence(analysis: SeedsAnalysis) -> str:
    t = analysis.threshold
    return (f"A claimed change was called supported when the repeat found a significant change "
            f"in the claimed direction whose interval contains the published ratio (when one "
            f"was published); contradicted when the change was significant the other way, when "
            f"the interval excluded the published ratio, or when it lay within ±{t:.0%} where a "
            f"change was claimed; a claim of no difference was supported when the interval lay "
            f"within ±{t:.0%} (an equivalence statement) and contradicted by a significant "
            f"change wholly beyond it; anything else is inconclusive.")


def replications(analysis: SeedsAnalysis) -> list[Replication]:
    return analysis.replications


def repeated(analysis: SeedsAnalysis) -> list[ClaimResult]:
    return [r for r in analysis.results if r.replication is not None]


def present_table(rep: Replication):
    from perfkit import present

    return present.comparison(rep.table, [*rep.base.runs, *rep.new.runs])


def table_caption(rep: Replication) -> str:
    return (f"Claim {rep.link.claim_id}: {rep.base_text} vs {rep.new_text}, {rep.metric.name} "
            f"at every load level (as `perfkit compare`)")


def threats(analysis: SeedsAnalysis, data_root: str = "") -> list[str]:
    """Threats to validity of the repeated experiments."""
    return common.threats(experiments(analysis, data_root))


def present_verdicts(frame: pd.DataFrame, caption: str):
    """The verdict table for the page: the columns of :data:`SHOWN`."""
    from perfkit import present

    return present.frame(shown(frame), caption)


def experiments(analysis: SeedsAnalysis, data_root: str = "") -> list:
    """The repeated experiments, loaded (their per-run metrics go into the report's files)."""
    names = list(dict.fromkeys(r.link.experiment for r in analysis.replications))
    return [common.load_experiment(n, data_root or None) for n in names]
