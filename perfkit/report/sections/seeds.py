"""The seeds notebook: each published claim of the five nginx-tuning write-ups, what a sound
repeat on our testbed finds, and the verdict.

The analysis and its rule are :mod:`perfkit.analysis.seeds._seeds` (the repeated comparisons are the
same calls as ``perfkit compare``); this module shapes the results for the page: the verdict
table, the first-pass assessment, one figure per repeated claim, the ratio overview, and the
headline answers (one per claim).
"""

from __future__ import annotations

import functools
import math

import numpy as np
import pandas as pd

from perfkit.analysis.seeds import (
    ClaimResult,
    Replication,
    SeedsAnalysis,
    confounded,
    published_caps,
    reanalyse,
)
from perfkit.formatting import fmt_num
from perfkit.report.answers import ANSWERED, NOT_TESTABLE, Answer
from perfkit.report.sections import common
from perfkit.report.sections.seeds_figures import (  # noqa: F401 - the page's figures
    OFF_SCALE,
    arm_levels,
    ratio_caption,
    ratio_figure,
    ratio_limits,
    ratio_rows,
    ratio_text,
    runs_caption,
    runs_figure,
)
from perfkit.vocabulary import ClaimVerdict
from perfkit.wording import verdict_words

#: columns of the verdict table shown on the page, the verdict early (the CSV keeps every one;
#: ``repeat`` is the ratio new/base with its interval in words, :func:`ratio_text`)
SHOWN = ("claim_id", "verdict", "metric", "published_ratio", "published_runs_per_configuration",
         "factor", "at_column", "at_value", "n_base", "n_new", "repeat", "p_value_holm",
         "runs_per_arm_needed", "setting")
#: the verdict table's caption (shown once: as the table's title)
VERDICTS_CAPTION = "Each published claim, its repeat and its verdict"


def analyse(data_root: str = "", threshold: float = 0.1, alpha: float = 0.05,
            confidence: float = 0.95, seed: int = 1) -> SeedsAnalysis:
    """Every claim with its verdict; experiments are loaded once each from ``data_root``."""
    load = functools.lru_cache(maxsize=None)(
        lambda name: common.load_experiment(name, data_root or None))
    return reanalyse(load, _seeds_root(data_root), threshold=threshold, alpha=alpha,
                     confidence=confidence, seed=seed)


def _seeds_root(data_root: str):
    from perfkit import paths

    return paths.data_dir("seeds", data_root or None)


def verdict_table(analysis: SeedsAnalysis) -> pd.DataFrame:
    """One row per claim (every column; the page shows :data:`SHOWN`)."""
    return analysis.to_frame()


def shown(analysis: SeedsAnalysis) -> pd.DataFrame:
    """The verdict table's columns for the page (:data:`SHOWN`): the repeat's ratio as text,
    the load level only where there is a repeat."""
    frame = analysis.to_frame()
    frame["verdict"] = [r.reported_verdict for r in analysis.results]
    frame["repeat"] = [ratio_text(r.replication) if r.replication else ""
                       for r in analysis.results]
    untested = frame["repeat_outcome"] == ""
    frame.loc[untested, ["factor", "at_column"]] = ""
    frame.loc[untested, "at_value"] = np.nan
    # what the server and the kernel counted at the claim's load level (base -> new), where
    # the repeat recorded it
    counted = ["mechanism"] if "mechanism" in frame else []
    return frame[[*SHOWN, *counted]].fillna({"mechanism": ""})


def assessment_table(analysis: SeedsAnalysis) -> pd.DataFrame:
    """The first-pass assessment of every claim from the write-ups alone."""
    return analysis.to_frame()[["claim_id", "setting", "published_values",
                                "published_runs_per_configuration", "assessment"]]


def counts(analysis: SeedsAnalysis) -> list[str]:
    """How many claims got each verdict, one line each."""
    found = pd.Series([r.verdict for r in analysis.results]).value_counts()
    return [f"{verdict_words(v)}: {n} of {len(analysis.results)} claims"
            for v, n in found.items()]


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
        lines.append(f"{r.claim['claim_id']}:{pub}{found}{need} -> {verdict_words(r.verdict)}")
    return "\n".join(lines)


#: the verdicts of a claim the repeat cannot test: listed apart from the answers
NOT_TESTABLE_VERDICTS = (ClaimVerdict.NOT_TESTABLE_N1, ClaimVerdict.NOT_TESTABLE_UNSTATED,
                         ClaimVerdict.NOT_TESTABLE_NONE)


# -- the headline answers: one per claim --------------------------------------------------------
def answers(analysis: SeedsAnalysis) -> list[Answer]:
    """The page's answers: one per published claim, its verdict on our testbed."""
    return [_answer(r) for r in analysis.results]


def _answer(r: ClaimResult) -> Answer:
    question = f"{r.claim['claim_id']} {r.claim['setting']}"  # its group names the seed
    published = f"published: {published_text(r)}"
    rep = r.replication
    need_note = [r.runs_needed_note] if r.runs_needed_note else []
    caveats = (r.reason, *r.worst, *r.warnings, *need_note)
    if rep is None:
        n_pub = r.assessment["n_per_configuration"]
        n = ("not stated" if pd.isna(n_pub) else "no measurement" if n_pub == 0
             else f"{n_pub} per configuration (published)")
        if r.reported_verdict in NOT_TESTABLE_VERDICTS:  # its verdict says the runs already
            n = ""
        need = (f"; a repeat would need >= {r.runs_needed} runs per arm" if r.runs_needed
                else "")
        # the assessment says in full what the verdict's reason restates (the runs published,
        # no test possible); of the reason only the published values on a timeout add to it
        said = (r.assessment["assessment"], *published_caps(r.claim["published_values"]),
                *need_note)
        return Answer(question, f"{published}; no repeat here{need}", r.reported_verdict, n,
                      tuple(dict.fromkeys(said)), group=_group(r), topic="claim",
                      kind=NOT_TESTABLE)
    c = rep.row.comparison
    assert r.link is not None  # a repeat has its link
    found = (f"repeat at {r.link.at}: {rep.metric.name} {ratio_text(rep)} (new/base), "
             f"p {fmt_num(rep.row.p_adjusted, 3)} (Holm over {rep.table.family}), "
             f"{rep.row.reported_verdict}")
    return Answer(question, f"{published}; {found}", r.reported_verdict,
                  f"{c.n_base} vs {c.n_new} runs", caveats, group=_group(r), topic="claim",
                  kind=NOT_TESTABLE if r.verdict in NOT_TESTABLE_VERDICTS else ANSWERED,
                  mechanism=rep.row.mechanism.text())


def _group(r: ClaimResult) -> str:
    """The heading of a claim's row: the write-up it comes from."""
    return f"Claims of {r.claim['seed']}"


def published_text(r: ClaimResult) -> str:
    """The published values, each ratio labelled with what it divides: the ratio tested (new
    over base of the printed outputs, or as published; no size to test when the write-up
    changed more than the repeat does, :func:`perfkit.analysis.seeds._seeds.confounded`) and, when
    the write-up's quoted figure is relative to another configuration, that ratio as well."""
    text = r.claim["published_values"] or "no value published"
    link = r.link
    if not math.isnan(r.published_ratio):
        assert link is not None  # a ratio is computed from a link
        what = (f"{link.published_new}/{link.published_base} of the printed outputs"
                if r.published_values else "as published")
        if r.replication is not None and confounded(r.claim):
            text += (f" (published ratio, {what}: x{fmt_num(r.published_ratio, 3)}; the "
                     "write-up changed more than the repeat does: no size to test)")
        else:
            text += f" (ratio tested, {what}: x{fmt_num(r.published_ratio, 3)})"
    if not math.isnan(r.quote_ratio):
        assert link is not None  # a quoted ratio is computed from a link
        text += (f"; the quoted figure is {link.published_new} against {link.quote_base}: "
                 f"x{fmt_num(r.quote_ratio, 3)} from the printed outputs, not the ratio tested")
    return text


# -- text ------------------------------------------------------------------------------------------
def methods(analysis: SeedsAnalysis, data_root: str = "") -> dict:
    """The Methods record of each repeated experiment, with the description of each of its
    comparisons; the verdict rule and the drift check, which hold for every claim and
    experiment, in one record of their own (stated once, not in each paragraph)."""
    from perfkit.analysis.context import describe_drift
    from perfkit.report.methods import shared

    out: dict = {}
    for exp in experiments(analysis, data_root):
        reps = [r for r in analysis.replications if r.link.experiment == exp.name]
        out.update(common.methods([exp], list(dict.fromkeys(r.table.describe() for r in reps))))
    out["every claim: the verdict rule and the drift check"] = shared(
        [rule_sentence(analysis), describe_drift()])
    return out


def rule_sentence(analysis: SeedsAnalysis) -> str:
    t = analysis.threshold
    return (f"A claimed change was called supported when the repeat found a significant change "
            f"in the claimed direction whose interval contains the published ratio (when one "
            f"was published); supported in direction, size not comparable, when the direction "
            f"held but the size could not be tested: the published ratio is not the setting's "
            f"alone (the write-up changed more between its runs), or the repeat's interval has "
            f"an end at 0 or infinity (runs ranked worst: failed, or saturated wrk2 runs), a "
            f"bound with no size; contradicted when the change was significant the other way, "
            f"when an interval that is a size excluded a comparable published ratio, or when "
            f"it lay within ±{t:.0%} where a change was claimed; a claim of no difference was "
            f"supported when the interval lay within ±{t:.0%} (an equivalence statement) and "
            f"contradicted by a significant change wholly beyond it; anything else is "
            f"inconclusive.")


def replications(analysis: SeedsAnalysis) -> list[Replication]:
    """Every replication of the analysis: one ``perfkit compare`` of a claim's two arms."""
    return analysis.replications


def repeated(analysis: SeedsAnalysis) -> list[ClaimResult]:
    """The claims repeated on our testbed (those with a replication), in the analysis' order."""
    return [r for r in analysis.results if r.replication is not None]


def present_table(rep: Replication):
    """A repeated claim's comparison at every load level as the page shows it
    (:func:`perfkit.present.compare.comparison` over both arms' runs)."""
    from perfkit.present import compare as present_compare

    return present_compare.comparison(rep.table, [*rep.base.runs, *rep.new.runs])


def table_caption(rep: Replication) -> str:
    """The caption of a repeated claim's comparison table: its claim, arms and metric."""
    return (f"Claim {rep.link.claim_id}: {rep.base_text} vs {rep.new_text}, {rep.metric.name} "
            f"at every load level (as `perfkit compare`)")


def threats(analysis: SeedsAnalysis, data_root: str = "") -> list[str]:
    """Threats to validity of the repeated experiments (the block threat names the claims
    whose comparisons pool an experiment's blocks)."""
    by_experiment: dict[str, list] = {}
    for r in analysis.replications:
        by_experiment.setdefault(r.link.experiment, []).append(r)
    return common.threats(experiments(analysis, data_root), by_experiment)


#: columns of the drift table: one row per repeated experiment and metric
DRIFT_COLUMNS = ["experiment", "metric", "runs", "change_first_to_last_pct", "ci_low_pct",
                 "ci_high_pct", "p_value", "verdict", "runs_left_out", "note"]


def drift_table(analysis: SeedsAnalysis, data_root: str = "") -> pd.DataFrame:
    """Every repeated experiment's drift verdict (``drift``, ``inconclusive``, ``stable``:
    worded ``no drift beyond ±10%`` where shown) for each metric the threats check
    (:data:`perfkit.analysis.context._validity.DRIFT_METRICS`), as
    :func:`perfkit.analysis.context._drift.check` finds it; the threats name only the experiments
    that drifted."""
    from perfkit.analysis.context import DRIFT_METRICS, check_drift

    rows = []
    for exp in experiments(analysis, data_root):
        for m in DRIFT_METRICS:
            d = check_drift(exp, m)
            if d is not None:
                rows.append({"experiment": exp.name, "metric": m, "runs": d.runs,
                             "change_first_to_last_pct": d.change_pct,
                             "ci_low_pct": d.ci_low_pct, "ci_high_pct": d.ci_high_pct,
                             "p_value": d.p_value, "verdict": d.verdict,
                             "runs_left_out": d.left_out, "note": d.note})
    return pd.DataFrame(rows, columns=DRIFT_COLUMNS)


def drift_caption(table: pd.DataFrame) -> str:
    """The caption of the drift table: the method, and how many repeated experiments have each
    verdict."""
    counts = table["verdict"].value_counts()
    return ("Drift of each repeated experiment over its run order, first run to last "
            "(Theil-Sen on the within-cell log residuals, Sen's 95% interval, Kendall's p; "
            "failed and saturated runs left out): "
            + ", ".join(f"{verdict_words(v)} {n}" for v, n in counts.items())
            + f" of {len(table)}")


def present_verdicts(analysis: SeedsAnalysis, caption: str = VERDICTS_CAPTION):
    """The verdict table for the page: the columns of :data:`SHOWN`, titled ``caption`` (pass
    it here only, not to ``report.table`` as well, or the page shows it twice)."""
    from perfkit.present import frame as present_frame

    return present_frame.frame(shown(analysis), caption)


def experiments(analysis: SeedsAnalysis, data_root: str = "") -> list:
    """The repeated experiments, loaded (their per-run metrics go into the report's files)."""
    names = list(dict.fromkeys(r.link.experiment for r in analysis.replications))
    return [common.load_experiment(n, data_root or None) for n in names]
