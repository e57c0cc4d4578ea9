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

#: columns of the verdict table shown on the page, the verdict early (the CSV keeps every one;
#: ``repeat`` is the ratio new/base with its interval in words, :func:`ratio_text`)
SHOWN = ("claim_id", "verdict", "metric", "published_ratio", "published_runs_per_configuration",
         "factor", "at_column", "at_value", "n_base", "n_new", "repeat", "p_value_holm",
         "runs_per_arm_needed", "setting")
#: the verdict table's caption (shown once: as the table's title)
VERDICTS_CAPTION = "Each published claim, its repeat and its verdict"
#: ratios further from 1 than this factor are drawn at the overview's axis edge, with an arrow
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


def shown(analysis: SeedsAnalysis) -> pd.DataFrame:
    """The verdict table's columns for the page (:data:`SHOWN`): the repeat's ratio as text,
    the load level only where there is a repeat."""
    frame = analysis.to_frame()
    frame["repeat"] = [ratio_text(r.replication) if r.replication else ""
                       for r in analysis.results]
    untested = frame["repeat_verdict"] == ""
    frame.loc[untested, ["factor", "at_column"]] = ""
    frame.loc[untested, "at_value"] = np.nan
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
            found = (f" repeat {ratio_text(rep)} p {fmt_num(rep.row.p_adjusted, 3)} {c.n_base} "
                     f"vs {c.n_new}")
        pub = "" if math.isnan(r.published_ratio) else f" published x{fmt_num(r.published_ratio)}"
        need = "" if r.runs_needed is None else f" need {r.runs_needed}"
        lines.append(f"{r.claim['claim_id']}:{pub}{found}{need} -> {r.verdict}")
    return "\n".join(lines)


# -- the headline answers: one per claim --------------------------------------------------------
def answers(analysis: SeedsAnalysis) -> list[Answer]:
    return [_answer(r) for r in analysis.results]


def _answer(r: ClaimResult) -> Answer:
    question = f"{r.claim['claim_id']} ({r.claim['seed']}): {r.claim['setting']}"
    published = f"published: {published_text(r)}"
    rep = r.replication
    caveats = (r.reason, *r.worst, *r.warnings,
               *([r.runs_needed_note] if r.runs_needed_note else []))
    if rep is None:
        n_pub = r.assessment["n_per_configuration"]
        n = ("not stated" if pd.isna(n_pub) else "no measurement" if n_pub == 0
             else f"{n_pub} per configuration (published)")
        need = (f"; a repeat would need >= {r.runs_needed} runs per arm" if r.runs_needed
                else "")
        return Answer(question, f"{published}; no repeat here{need}", r.verdict, n,
                      (r.assessment["assessment"], *caveats))
    c = rep.row.comparison
    found = (f"repeat at {r.link.at}: {rep.metric.name} {ratio_text(rep)} (new/base), "
             f"p {fmt_num(rep.row.p_adjusted, 3)} (Holm over {rep.table.family}), "
             f"{rep.row.verdict}")
    return Answer(question, f"{published}; {found}", r.verdict,
                  f"{c.n_base} vs {c.n_new} runs", caveats)


def published_text(r: ClaimResult) -> str:
    """The published values, each ratio labelled with what it divides: the ratio tested (new
    over base of the printed outputs, or as published) and, when the write-up's quoted figure
    is relative to another configuration, that ratio as well."""
    text = r.claim["published_values"] or "no value published"
    link = r.link
    if not math.isnan(r.published_ratio):
        what = (f"{link.published_new}/{link.published_base} of the printed outputs"
                if r.published_values else "as published")
        text += f" (ratio tested, {what}: x{fmt_num(r.published_ratio, 3)})"
    if not math.isnan(r.quote_ratio):
        text += (f"; the quoted figure is {link.published_new} against {link.quote_base}: "
                 f"x{fmt_num(r.quote_ratio, 3)} from the printed outputs, not the ratio tested")
    return text


def ratio_text(rep: Replication) -> str:
    """The repeat's ratio new/base with its interval; a ratio of 0 or infinity (runs ranked
    worst: no size) as the bound its finite interval end gives."""
    c = rep.row.comparison
    if rep.is_magnitude or math.isnan(c.ratio):
        return f"x{fmt_ci(c.ratio, c.ratio_ci_low, c.ratio_ci_high)}"
    if math.isinf(c.ratio) and 0 < c.ratio_ci_low < math.inf:
        return f"x{fmt_num(c.ratio_ci_low, 3)} or more (no finite ratio: runs ranked worst)"
    if c.ratio == 0 and 0 < c.ratio_ci_high < math.inf:
        return f"x{fmt_num(c.ratio_ci_high, 3)} or less (no finite ratio: runs ranked worst)"
    return (f"x{fmt_ci(c.ratio, c.ratio_ci_low, c.ratio_ci_high)} (an end at 0 or inf: runs "
            "ranked worst, no size)")


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
    key_runs = [_at(rep, side) for *_, side in arms]
    all_values = []
    for x, ((label, _, side), (values, worst, kinds)) in enumerate(zip(arms, key_runs,
                                                                       strict=True)):
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
                            f" ranked worst ({kinds})" if hollow else ""))
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


def _at(rep: Replication, side: str) -> tuple[np.ndarray, np.ndarray, str]:
    """The arm's per-run values at the claim's load level, which runs the test ranked worst
    (the comparison row's flags) and their statuses in words (``failed``, ``saturated``)."""
    from perfkit.analysis.seeds_notes import cell_statuses

    cell, statuses = cell_statuses(rep, side)
    worst = np.array(getattr(rep.row, f"worst_{side}"), dtype=bool)
    kinds = ", ".join(dict.fromkeys(s.status for s, w in zip(statuses, worst, strict=True)
                                    if w))
    return cell.values(rep.metric.name), worst, kinds


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
    gone = (f"; {failed} run(s) ranked worst in the test (failed: no value; saturated: a wrk2 "
            "run that did not keep its rate): open markers at their printed value, not drawn "
            "without one: " + "; ".join(result.worst) if failed else "")
    few = " (none with fewer than 6 runs)" if min(c.n_base, c.n_new) < 6 else ""
    return (f"Claim {result.claim['claim_id']}: {rep.metric.name} per run at {result.link.at}, "
            f"{rep.base_text} ({c.n_base} runs) vs {rep.new_text} ({c.n_new} runs); bars: "
            f"medians with {rep.table.confidence:.0%} order-statistic intervals{few}; "
            f"{pub}repeat {ratio_text(rep)} new/base, Mann-Whitney U p "
            f"{fmt_num(rep.row.p_adjusted, 3)} (Holm over {rep.table.family} load levels): "
            f"{result.verdict}{gone}")


def ratio_rows(analysis: SeedsAnalysis) -> pd.DataFrame:
    """Every repeated claim, labelled for a forest plot: ``ratio``/``ratio_ci_*`` as analysed,
    ``*_drawn`` the same within the axis (:func:`ratio_limits`; an estimate beyond it at the
    edge, an interval end beyond it past the edge, so the plot draws an arrow), ``off_axis``
    for rows with any part beyond it and ``text`` the values printed beside each row."""
    results = {r.claim["claim_id"]: r for r in analysis.results}
    frame = analysis.to_frame()
    frame = frame[frame["repeat_verdict"] != ""].reset_index(drop=True)
    reps = [results[c].replication for c in frame["claim_id"]]
    c = [rep.row.comparison for rep in reps]
    frame["ratio"] = [x.ratio for x in c]
    frame["ratio_ci_low"] = [x.ratio_ci_low for x in c]
    frame["ratio_ci_high"] = [x.ratio_ci_high for x in c]
    frame["label"] = [f"{cid} {rep.metric.label}" for cid, rep in zip(frame["claim_id"], reps,
                                                                     strict=True)]
    frame["significant"] = frame["repeat_verdict"].isin(["better", "worse"])
    frame["text"] = [ratio_text(rep).split(" (")[0] for rep in reps]
    lo, hi = ratio_limits(frame, analysis.threshold)
    inside = 1.03
    frame["ratio_drawn"] = frame["ratio"].clip(lo * inside, hi / inside)
    frame["ratio_ci_low_drawn"] = frame["ratio_ci_low"].clip(lo / 2, hi * 2)
    frame["ratio_ci_high_drawn"] = frame["ratio_ci_high"].clip(lo / 2, hi * 2)
    ends = frame[["ratio", "ratio_ci_low", "ratio_ci_high"]].to_numpy(dtype=float)
    frame["off_axis"] = ((ends < lo) | (ends > hi)).any(axis=1)
    return frame


def ratio_limits(frame: pd.DataFrame, threshold: float) -> tuple[float, float]:
    """The overview's ratio axis: 1, the threshold band, the published ratios and every
    estimate and interval end within a factor :data:`OFF_SCALE` of 1, with a margin."""
    values = np.concatenate([[1.0, 1 - threshold, 1 + threshold],
                             *(frame[c].to_numpy(dtype=float) for c in (
                                 "ratio", "ratio_ci_low", "ratio_ci_high", "published_ratio"))])
    near = values[np.isfinite(values) & (values >= 1 / OFF_SCALE) & (values <= OFF_SCALE)]
    return float(near.min()) / 1.15, float(near.max()) * 1.15


def ratio_figure(analysis: SeedsAnalysis):
    """Forest plot of every repeated ratio with its interval (none left out: a row beyond the
    axis sits at its edge with an arrow); the published ratio of each claim as a diamond on
    its row; the equivalence band of the threshold shaded; the values printed at the right."""
    from perfkit import plots

    rows = ratio_rows(analysis)
    lim = ratio_limits(rows, analysis.threshold)
    fig, ax = plots.figure(height_in=plots.forest_height_in(len(rows)) + 0.4,
                           width_in=plots.style.WIDTH_IN * 1.6)
    plots.forest(rows, ax, plots.label("repeat: change new/base", "ratio"), label="label",
                 value="ratio_drawn", low="ratio_ci_low_drawn", high="ratio_ci_high_drawn",
                 significant="significant", threshold=analysis.threshold, xlim=lim,
                 values=False)
    n = len(rows)
    for i, r in rows.iterrows():
        if np.isfinite(r["published_ratio"]):
            ax.plot([r["published_ratio"]], [n - 1 - i], marker="D", color="black",
                    markerfacecolor="white", linestyle="none", zorder=5, clip_on=False)
    side = ax.secondary_yaxis("right")
    side.set_yticks([n - 1 - i for i in range(n)], list(rows["text"]))
    side.tick_params(length=0, pad=8)
    side.spines["right"].set_visible(False)
    return fig


def ratio_caption(analysis: SeedsAnalysis) -> str:
    rows = ratio_rows(analysis)
    off = rows[rows["off_axis"]]
    edge = ("; beyond the axis, drawn at its edge with an arrow (values at the right): "
            + "; ".join(f"{r.claim_id} {r.text}" for r in off.itertuples())) if len(off) else ""
    return (f"Every repeated claim ({len(rows)}): the change new/base on our testbed "
            f"(Hodges-Lehmann ratio with its {1 - analysis.alpha:.0%} Moses interval; filled: "
            f"significant after Holm over each experiment's load levels, "
            f"{int(rows['significant'].sum())} of {len(rows)}); diamonds: the published ratio; "
            f"shaded: ±{analysis.threshold:.0%}; load levels: "
            + "; ".join(f"{r.claim_id} {r.at_column}={fmt_num(r.at_value)}"
                        for r in rows.itertuples()) + edge)


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
            f"change wholly beyond it; anything else is inconclusive. Runs ranked worst (failed, "
            f"or saturated wrk2 runs) make a ratio of 0 or infinity, which is no size: such an "
            f"interval end is a bound, and the runs behind it are named instead.")


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
    """Threats to validity of the repeated experiments (the block threat names the claims
    whose comparisons pool an experiment's blocks)."""
    by_experiment: dict[str, list] = {}
    for r in analysis.replications:
        by_experiment.setdefault(r.link.experiment, []).append(r)
    return common.threats(experiments(analysis, data_root), by_experiment)


def present_verdicts(analysis: SeedsAnalysis, caption: str = VERDICTS_CAPTION):
    """The verdict table for the page: the columns of :data:`SHOWN`, titled ``caption`` (pass
    it here only, not to ``report.table`` as well, or the page shows it twice)."""
    from perfkit import present

    return present.frame(shown(analysis), caption)


def experiments(analysis: SeedsAnalysis, data_root: str = "") -> list:
    """The repeated experiments, loaded (their per-run metrics go into the report's files)."""
    names = list(dict.fromkeys(r.link.experiment for r in analysis.replications))
    return [common.load_experiment(n, data_root or None) for n in names]
