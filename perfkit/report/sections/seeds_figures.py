"""The seeds page's figures: each repeated claim's runs (:func:`runs_figure`), the overview of
every repeated ratio (:func:`ratio_figure`), their captions, and the repeat's ratio in words
(:func:`ratio_text`, which figures and tables share).

Colours: one palette for the whole seeds report (the report's, :mod:`perfkit.plots.palette`),
keyed by configuration name: the testbed profile an arm's runs recorded (``cache-ram``), so a
configuration takes one look in every figure, whichever experiment repeats it (``cache-ram`` is
the new arm of 004-3's ``seeds-cache`` and the base of 004-4's ``seeds-buffered-log``), and two
experiments' levels that read alike (``default``, ``1024``) never share a look unless they are
the same server configuration. Runs without a recorded profile are named by their arm's
``factor=level`` instead (:func:`arm_keys`).
"""

from __future__ import annotations

import math
from typing import cast

import numpy as np
import pandas as pd

from perfkit.analysis.seeds import ClaimResult, Replication, SeedsAnalysis, confounded
from perfkit.formatting import fmt_ci, fmt_num
from perfkit.vocabulary import SIGNIFICANT
from perfkit.wording import verdict_words

#: ratios further from 1 than this factor are drawn at the overview's axis edge, with an arrow
OFF_SCALE = 100.0


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
    if c.ratio in (0, math.inf) and c.ratio_ci_low == c.ratio_ci_high == c.ratio:
        side = "lower" if c.ratio == 0 else "higher"
        return (f"unbounded, {side} (no finite ratio nor bound: every run of one arm ranked "
                "worst)")
    return (f"x{fmt_ci(c.ratio, c.ratio_ci_low, c.ratio_ci_high)} (an end at 0 or inf: runs "
            "ranked worst, no size)")


# -- figures ---------------------------------------------------------------------------------------
def _axis_label(rep: Replication) -> str:
    from perfkit import plots

    return plots.label(rep.metric.label, rep.metric.unit or "share")


def runs_figure(result: ClaimResult, palette=None):
    """Per-run values of both arms of a repeated claim (points), their medians with the
    order-statistic intervals, and the published values (stars) where printed; each arm in the
    look of its configuration (:func:`arm_keys`: its name, the same in every figure of the
    report), the legend titled by the experiment. ``palette``: the report's palette method
    (:meth:`perfkit.report.nb.Report.palette`), called with both arms' configurations."""
    from perfkit import plots

    rep = result.replication
    assert rep is not None  # drawn only for a repeated claim
    fig, ax = plots.figure(height_in=3.4)
    column, levels = arm_levels(rep)
    keys = arm_keys(rep)
    arms = [(keys[0], rep.base, "base"), (keys[1], rep.new, "new")]
    colours = palette(list(keys)) if palette is not None else None
    c = rep.row.comparison
    key_runs = [_at(rep, side) for *_, side in arms]
    all_values = []
    off: list[tuple[float, str, dict, int]] = []  # runs with no value the axis can show
    for x, ((label, _, side), (values, worst, kinds)) in enumerate(zip(arms, key_runs,
                                                                       strict=True)):
        st = colours.style(label) if colours is not None else plots.style.series_style(x)
        keep = np.isfinite(values) & (values > 0)
        all_values.extend(values[keep])
        jitter = np.linspace(-0.12, 0.12, len(values)) if len(values) > 1 else np.zeros(1)
        if (~keep).any():
            off.append((x, label, st, int((~keep).sum())))
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
    ax.set_xticks([0, 1], list(levels))
    ax.set_xlim(-0.6, 1.6)
    ax.set_xlabel(f"{column} (level)")
    ax.set_ylabel(_axis_label(rep))
    vals = np.array(all_values, dtype=float)
    if rep.metric.is_latency and len(vals) and vals.max() / vals.min() > 10 or (
            len(vals) and vals.min() > 0 and vals.max() / vals.min() > 50):
        ax.set_yscale("log")
    if off and len(vals):  # room at the edge below (above) every value for the runs without
        low, high = ax.get_ylim()
        log = ax.get_yscale() == "log"
        if rep.metric.lower_is_better:
            ax.set_ylim(low, vals.max() * 4 if log else high + 0.15 * (high - low))
        else:
            ax.set_ylim(vals.min() / 4 if log else low - 0.15 * (high - low), high)
    _edge_runs(ax, off, rep.metric.lower_is_better)
    fig.legend(*ax.get_legend_handles_labels(), loc="outside upper center", fontsize="small",
               title=rep.link.experiment, title_fontsize="small")
    return fig


def _edge_runs(ax, off: list[tuple[float, str, dict, int]], lower_is_better: bool) -> None:
    """Runs with no value the axis can show (a failed run: 0 req/s on a log axis, or no
    latency) drawn at the axis edge on their worse side, hollow, counted in the legend: every
    run of an arm is drawn."""
    y, marker = (0.97, "^") if lower_is_better else (0.03, "v")
    for x, label, st, n in off:
        xs = x + np.linspace(-0.08, 0.08, n) if n > 1 else np.array([x])
        ax.plot(xs, [y] * n, transform=ax.get_xaxis_transform(), linestyle="none",
                marker=marker, markersize=6, color=st["color"], markerfacecolor="white",
                clip_on=False,
                label=f"{label}: {n} run{'s' if n > 1 else ''} with no value here "
                      "(failed; at the edge)")


def arm_keys(rep: Replication) -> tuple[str, str]:
    """Each arm's configuration as the report's palette names it: the testbed profile its runs
    recorded (``cache-ram``, the manifest's ``server.profile``), so that one configuration
    repeated by two experiments is one configuration, and levels of different experiments
    that read alike (``default``, ``1024``) are different ones. An arm whose runs recorded no
    profile, or several, is named ``column=level`` of the columns the arms differ in
    (``accept_queue=128``)."""
    column, levels = arm_levels(rep)
    cols = column.split(", ")
    fallback = [", ".join(f"{c}={v}" for c, v in zip(cols, lvl.split(", "), strict=True))
                for lvl in levels]
    names = [arm_profile(getattr(rep, side)) or key
             for side, key in zip(("base", "new"), fallback, strict=True)]
    return (names[0], names[1]) if names[0] != names[1] else (fallback[0], fallback[1])


def arm_profile(rows) -> str:
    """The one testbed profile the runs of ``rows`` (a :class:`RunSet`) recorded; ``""`` when
    none or several."""
    profiles = {str(p) for r in rows.runs
                if (p := ((r.manifest or {}).get("server") or {}).get("profile"))}
    return next(iter(profiles)) if len(profiles) == 1 else ""


def arm_levels(rep: Replication) -> tuple[str, tuple[str, ...]]:
    """The columns in which the two arms differ, and each arm's values of them:
    ``("cache", ("disk", "ram"))``."""
    from perfkit.analysis.core import Selection

    sides = [Selection.parse(f"x::{spec}").where for spec in (rep.link.base, rep.link.new)]
    cols = [k for k in sides[0] if sides[0][k] != sides[1].get(k)] or list(sides[0])
    return ", ".join(cols), tuple(", ".join("|".join(side[k]) for k in cols)
                                  for side in sides)


def _at(rep: Replication, side: str) -> tuple[np.ndarray, np.ndarray, str]:
    """The arm's per-run values at the claim's load level, which runs the test ranked worst
    (the comparison row's flags) and their statuses in words (``failed``, ``saturated``)."""
    from perfkit.analysis.seeds import cell_statuses

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
    """The caption of a repeated claim's runs: its metric at its load, both arms with their
    runs, the published values, and the runs ranked worst."""
    rep = result.replication
    assert rep is not None  # drawn only for a repeated claim
    c = rep.row.comparison
    pub = ("stars: the published values (one run per configuration, the authors' testbed); "
           if _published_points(result) else "no published value of this metric to draw; ")
    failed = c.n_failed_base + c.n_failed_new
    gone = (f"; {failed} run(s) ranked worst in the test (failed: no value; saturated: a wrk2 "
            "run that did not keep its rate): open markers at their printed value, not drawn "
            "without one: " + "; ".join(result.worst) if failed else "")
    few = " (none with fewer than 6 runs)" if min(c.n_base, c.n_new) < 6 else ""
    assert result.link is not None  # a repeated claim has its link
    return (f"Claim {result.claim['claim_id']}: {rep.metric.name} per run at {result.link.at}, "
            f"{rep.base_text} ({c.n_base} runs) vs {rep.new_text} ({c.n_new} runs); bars: "
            f"medians with {rep.table.confidence:.0%} order-statistic intervals{few}; "
            f"{pub}repeat {ratio_text(rep)} new/base, Mann-Whitney U p "
            f"{fmt_num(rep.row.p_adjusted, 3)} (Holm over {rep.table.family} load levels): "
            f"{verdict_words(result.reported_verdict)}{gone}")


def ratio_rows(analysis: SeedsAnalysis) -> pd.DataFrame:
    """Every repeated claim, labelled for a forest plot: ``ratio``/``ratio_ci_*`` as analysed,
    ``*_drawn`` the same within the axis (:func:`ratio_limits`; an estimate beyond it at the
    edge, an interval end beyond it past the edge, so the plot draws an arrow), ``off_axis``
    for rows with any part beyond it and ``text`` the values printed beside each row."""
    results = {r.claim["claim_id"]: r for r in analysis.results}
    frame = analysis.to_frame()
    frame = frame[frame["repeat_outcome"] != ""].reset_index(drop=True)
    reps = [cast(Replication, results[c].replication) for c in frame["claim_id"]]  # repeated
    c = [rep.row.comparison for rep in reps]
    frame["ratio"] = [x.ratio for x in c]
    frame["ratio_ci_low"] = [x.ratio_ci_low for x in c]
    frame["ratio_ci_high"] = [x.ratio_ci_high for x in c]
    frame["label"] = [f"{cid} {rep.metric.label}" for cid, rep in zip(frame["claim_id"], reps,
                                                                     strict=True)]
    frame["significant"] = frame["repeat_outcome"].isin(SIGNIFICANT)
    frame["published_confounded"] = [confounded(results[c].claim) for c in frame["claim_id"]]
    frame["text"] = [ratio_text(rep).split(" (")[0] for rep in reps]
    lo, hi = ratio_limits(frame, analysis.threshold)
    inside = 1.03
    frame["ratio_drawn"] = frame["ratio"].clip(lo * inside, hi / inside)
    frame["ratio_ci_low_drawn"] = frame["ratio_ci_low"].clip(lo / 2, hi * 2)
    frame["ratio_ci_high_drawn"] = frame["ratio_ci_high"].clip(lo / 2, hi * 2)
    ends = frame[["ratio", "ratio_ci_low", "ratio_ci_high"]].to_numpy(dtype=float)
    frame["off_axis"] = np.asarray(((ends < lo) | (ends > hi)).any(axis=1))
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
    its row (grey when it is not the setting's alone), with its legend entry; the equivalence
    band of the threshold shaded; the values printed at the right."""
    from matplotlib.lines import Line2D

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
    looks = {False: ("black", "diamond: published ratio"),
             True: (plots.style.GREY, "grey: not the setting's alone")}
    drawn = set()
    for i, r in rows.iterrows():
        if np.isfinite(r["published_ratio"]):
            colour = looks[bool(r["published_confounded"])][0]
            ax.plot([r["published_ratio"]], [n - 1 - cast(int, i)], marker="D", color=colour,
                    markerfacecolor="white", linestyle="none", zorder=5, clip_on=False)
            drawn.add(bool(r["published_confounded"]))
    _legend_with(fig, [(Line2D([], [], marker="D", color=looks[k][0], markerfacecolor="white",
                               linestyle="none", markersize=4), looks[k][1])
                       for k in sorted(drawn)])
    side = ax.secondary_yaxis("right")
    side.set_yticks([n - 1 - i for i in range(n)], list(rows["text"]))
    side.tick_params(length=0, pad=8)
    side.spines["right"].set_visible(False)
    return fig


def _legend_with(fig, extra: list) -> None:
    """The figure's legend (above the axes) with ``extra`` ``(handle, label)`` entries added."""
    old = fig.legends[0] if fig.legends else None
    handles = list(old.legend_handles) if old is not None else []
    labels = [t.get_text() for t in old.get_texts()] if old is not None else []
    if old is not None:
        old.remove()
    handles += [h for h, _ in extra]
    labels += [t for _, t in extra]
    fig.legend(handles, labels, loc="outside upper center", ncols=min(3, len(labels)),
               handletextpad=0.3, columnspacing=1.0)


def ratio_caption(analysis: SeedsAnalysis) -> str:
    """The caption of the ratios of every repeated claim: the estimate and its interval, what is
    filled, the published ratios, the threshold, each claim's load level and the values beyond
    the axis."""
    rows = ratio_rows(analysis)
    off = rows[rows["off_axis"]]
    edge = ("; beyond the axis, drawn at its edge with an arrow (values at the right): "
            + "; ".join(f"{r.claim_id} {r.text}" for r in off.itertuples())) if len(off) else ""
    return (f"Every repeated claim ({len(rows)}): the change new/base on our testbed "
            f"(Hodges-Lehmann ratio with its Moses interval, at {1 - analysis.alpha:.0%} "
            "Bonferroni-adjusted over each experiment's load levels; filled: "
            f"significant after Holm over each experiment's load levels, "
            f"{int(rows['significant'].sum())} of {len(rows)}); diamonds: the published "
            f"ratio (grey: not the setting's alone, the write-up changed more); "
            f"shaded: ±{analysis.threshold:.0%}; load levels: "
            + "; ".join(f"{r.claim_id} {r.at_column}={fmt_num(r.at_value)}"
                        for r in rows.itertuples()) + edge)
