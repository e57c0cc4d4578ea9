"""The words of the statistics' warnings: intervals, tests, power, fits,
factorial effects and histories."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from perfkit import formatting
from perfkit.formatting import change_ci, fmt_sig, pct_change
from perfkit.vocabulary import RunStatus
from perfkit.warning import Code
from perfkit.wording._common import WRK_LATENCY, Wording, fmt_p, labels_words, pct, runs_text


def _compatible_with_none(f: Mapping[str, Any]) -> str:
    ref = f["reference"]
    what = "no change" if ref == 1 else f"a change of exactly {pct_change(ref)} (the threshold)"
    return (f"the change seen, {pct_change(f['ratio'])} ({f['level']:.0%} interval "
            f"{pct_change(f['low'])} to {pct_change(f['high'])}), is compatible with {what}: no "
            "number of runs can be promised to decide it")


def _cannot_reach_alpha(f: Mapping[str, Any]) -> str:
    family = f["family"]
    holm = f" (Holm over {family})" if family > 1 else ""
    tail = (f"needs >= {f['need']} runs per arm" if f["need"]
            else f"needs > {f['most']} runs per arm")
    if family > 1:
        tail += " or fewer comparisons"
    return (f"the smallest p of {f['n_base']} vs {f['n_new']} runs is {f['min_p']:.2g}, not "
            f"below alpha {f['alpha']:.3g}{holm}: {tail}")


#: the simulation behind the N* interval's coverage (:data:`perfkit.stats.usl.
#: NSTAR_COVERAGE_NOTE`)
NSTAR_COVERAGE = ("200 simulated USL data sets, N = 1-128 x 3 runs, 3% proportional noise; MC "
                  "se 0.023")


def _f_test(f: Mapping[str, Any]) -> str:
    return (f"F-test USL vs Amdahl (kappa = 0) on log throughput: F(1, {f['dof']}) = "
            f"{f['f_stat']:.3g}, p = {f['p_value']:.3g}")


def _rate_interval(f: Mapping[str, Any]) -> str:
    pct_ci = (f"{f['confidence']:.0%} CI of p{f['q']:g} [{fmt_sig(f['low_ms'])}, "
              f"{fmt_sig(f['high_ms'])}] ms")
    where = {"above": "lies above", "below": "lies below", "contains": "contains"}[f["where"]]
    text = f"{pct_ci} {where} the SLO {f['slo_ms']:g} ms"
    if f["where"] != "contains":
        return text
    need = f["need"]
    more = (f"about {need} runs in all at this rate would settle it ({need - f['runs']} more)"
            if need is not None else
            "more runs are needed (the estimate is too close to the SLO to say how many)")
    return f"{text}: {more}"


#: what an estimate's runs of a status are, and what became of them
#: (:attr:`Code.ESTIMATE_RUNS_STATUS`)
ESTIMATE_STATUS_WORDS = {
    RunStatus.FAILED: (RunStatus.FAILED.value, "left out of the estimate"),
    RunStatus.NO_DATA: ("did not measure it", "left out of the estimate, not failed"),
    RunStatus.SATURATED: ("saturated, not sustaining the offered rate",
                          "kept in the estimate with their latency, queueing included; the SLO "
                          "verdict fails this rate"),
    RunStatus.SHORT: ("fell slightly short of the target rate with a latency like their "
                      "peers'", "kept with their values, a generator shortfall in doubt"),
    RunStatus.PARTIAL: ("fewer connections got in than the generator asked for",
                        "kept with their values, which describe the connections that got in"),
}


def _estimate_runs_status(f: Mapping[str, Any]) -> str:
    what, effect = ESTIMATE_STATUS_WORDS[f["status"]]
    named = "; ".join(f"{rid}: {reason}" for rid, reason in f["runs"])
    return (f"{f['config']}: {len(f['runs'])} of {f['of']} run(s) {what} ({named}): "
            f"{effect}.")


def _too_few_labels(f: Mapping[str, Any]) -> str:
    n, need = f["labels"], f["need"]
    head = f"{n} labels: a change point needs >= {need} labels at alpha {f['alpha']:g}"
    if f["floor"] is None:
        return (f"{head} (a split needs {f['min_labels']} labels on each side); nothing was "
                "tested")
    return (f"{head}: shuffling whole labels, the permutation test of {n} labels cannot give p "
            f"below 2 / C({n}, {n // 2}) = {f['floor']:.3f}; nothing was tested")


def _too_few_runs(f: Mapping[str, Any]) -> str:
    need, family = f["need"], f["family"]
    holm = f" for Holm over {family} comparisons" if family > 1 else ""
    hint = f" (>= {need} vs {need}{holm})" if need is not None else ""
    return (f"{f['n_base']} vs {f['n_new']} runs cannot reach p < {f['alpha']:g} (smallest p "
            f"{fmt_p(f['min_p'])}): run more{hint}")


def _rank_test_floor(f: Mapping[str, Any]) -> str:
    holm = f"; with {f['family']} comparisons {f['floor']:.2g}" if f["family"] > 1 else ""
    near = "within a factor of 2 of" if f["floor"] < f["alpha"] else "not below"
    head = (f"{f['n_base']} vs {f['n_new']} runs: the smallest p the rank test can give is "
            f"{f['min_p']:.2g}{holm}, {near} alpha {f['alpha']:g}")
    if f["switched"]:
        return (f"{head}, so Welch's t on the log values (a test with no such floor) decides, "
                "with the ratio of geometric means and its t interval (its size is measured in "
                "benchmarks/calibration_floor.py)")
    why = (f"fewer than {f['min_runs']} runs a side"
           if min(f["n_base"], f["n_new"]) < f["min_runs"]
           else "failed runs ranked worst, values <= 0 or no spread")
    return (f"{head}: only a complete or nearly complete separation of the runs reaches it, so "
            f"its verdict rests on the test's floor (no t test stands in: {why})")


def _no_ratio_ci(f: Mapping[str, Any]) -> str:
    family = f.get("family", 1)
    over = f" (Bonferroni over {family})" if family > 1 else ""
    return (f"no {f['confidence'] * 100:.3g}% ratio CI{over} from {f['n_base']} vs "
            f"{f['n_new']} runs")


def _ab_family_differs(f: Mapping[str, Any]) -> str:
    other = f["at"].partition("=")[0]
    test = (", where the rank test's floor is within a factor of 2 of alpha, so Welch's t on "
            "the log values decides (the ratio of geometric means)" if f["welch"] else "")
    return (f"{f['factor']} at {f['at']}: the A/B table compares the same two cells in a "
            f"Holm family of {f['family']} (every factor at every load level){test}, its "
            f"interval Bonferroni-adjusted over them: {change_ci(f['ratio'], f['low'], f['high'])}"
            f", p {formatting.fmt_p(f['p_adjusted'])} after Holm, {f['verdict']}; here the "
            f"family is the {f['levels']} levels of {other}: the families make the estimate, "
            "interval, p or verdict differ")


def _newest_unseen(f: Mapping[str, Any]) -> str:
    k = f["k"]
    text = (f"a step in the newest {k} labels cannot show as a change point: permuting whole "
            f"labels, a split there gives no p below 2 / C({f['labels']}, {k}) = "
            f"{f['floor']:.3f} > {f['alpha']:g} (>= {f['need']} labels needed)")
    if f.get("windows") is not None:
        return (f"{text}; the newest labels are tested against the segment before them "
                f"instead (t on the labels' medians, {f['windows']} window(s))")
    if f.get("untested") is not None:
        return (f"{text}; nor can they be tested against the segment before them: "
                f"{f['untested']}")
    return text


STATISTICS: dict[Code, Wording] = {
    Code.ON_SIDE: "{side}: {warning}",
    Code.NO_RUNS: "no runs",
    Code.EMPTY_HISTOGRAM: "empty histogram",
    Code.MEDIAN_CI_NEEDS_RUNS: lambda f: (f"need >= {f['need']} runs for a "
                                          f"{pct(f['confidence'])} median CI"),
    Code.MEDIAN_CI_RANGE: lambda f: (
        f"{runs_text(f['runs'])}: the interval is their range, which covers the median with "
        f"probability {pct(f['coverage'])} (the most {f['runs']} runs allow)"),
    Code.MEDIAN_CI_NONE: lambda f: (
        f"{runs_text(f['runs'])}: no {pct(f['confidence'])} interval (their range covers the "
        f"median with probability {pct(f['coverage'])}); need >= {f['need']} runs"),
    Code.QUANTILE_CI_NEEDS_REQUESTS: lambda f: (
        f"{f['requests']} requests are too few for a finite {pct(f['confidence'])} CI of "
        f"p{f['q']:g}: need >= {f['need']}"),
    Code.EXCLUDED_FAILED: "excluded {n_base} failed base and {n_new} failed new runs (reason: "
                          "{reason})",
    Code.NOTHING_TO_COMPARE: lambda f: (
        f"nothing to compare: a side has no run that measured {f['metric']}" if f.get("metric")
        else "nothing to compare: a side has no runs"),
    Code.NO_FINISHED_RUN: "no finished run on either side: every run failed, nothing to "
                          "compare (fix the failures, or see each run's warnings)",
    Code.FAILED_RANKED_WORST: lambda f: (
        f"{f['side']}: {f['runs']} failed run(s) ranked "
        f"{'slower' if f['lower_is_better'] else 'lower'} than every finished run"),
    Code.INFINITE_VALUES: "{side}: {values} infinite value(s) taken as failed runs (no tool "
                          "measures +-inf)",
    Code.NONPOSITIVE_VALUES: "values <= 0: no ratio (it needs positive values)",
    Code.NO_RATIO_CI: _no_ratio_ci,
    Code.TOO_FEW_RUNS: _too_few_runs,
    Code.RANK_TEST_FLOOR: _rank_test_floor,
    Code.RUNS_LEFT_OUT: "{missing} of {runs} runs have no usable p{q:g} (failed or not "
                        "measured) and were left out: the interval describes the runs that "
                        "finished",
    Code.RUNS_RANKED_SLOWEST: "{missing} of {runs} runs have no usable p{q:g} (failed): ranked "
                              "slower than every finished run",
    Code.NO_RUNS_WITH_VALUE: "no runs with a value",
    Code.ONE_RUN: "one run: no across-runs interval; run more (>= 5 recommended)",
    Code.FEW_RUNS_T_LOG: "only {runs} runs: the interval leans on log per-run p{q:g} being "
                         "roughly normal; run more (>= {few})",
    Code.FEW_RUNS_LOG_NORMAL: "only {runs} runs: below {few} runs no distribution-free "
                              "interval exists, so the median run's p{q:g} is estimated under "
                              "a log-normal run-to-run spread: the geometric mean of the runs' "
                              "p{q:g} with a t interval on logs (a pause or one slow run "
                              "breaks it); run >= {few} for an order-statistic interval around "
                              "the median",
    Code.PERCENTILE_ON_JUMP: lambda f: (
        f"p{f['q']:g} sits on a jump of the latency distribution in {f['jumps']} of "
        f"{f['runs']} runs (p{f['low_q']:g} to p{f['high_q']:g} rises up to "
        f"x{f['ratio']:.3g}): a pause mode holds about {100 - f['q']:g}% of requests, so runs "
        f"land below or inside it and p{f['q']:g} is fragile; the interval is the exact "
        "(wider) order-statistic one; read the latency spectrum"),
    Code.PRINTED_TAIL_MODES: lambda f: (
        f"p{f['q']:g} sits in a pause in some runs: {f['modes']} of {f['runs']} runs print a "
        f"p{f['q']:g} up to x{f['ratio']:.3g} their p{f['shape_q']:g}, the others down to "
        f"x{f['least']:.3g}, so the runs' p{f['q']:g} has two modes and an interpolated "
        "interval would cover less than it says (0.92-0.94 for 95% at 10 runs); the interval "
        "is the exact (wider) order-statistic one; read the runs' latency spectra"),
    Code.THIN_TAILS: "{thin} of {runs} runs have fewer than {least} requests beyond p{q:g} "
                     "(fewest {fewest}): their p{q:g} is one of their few slowest requests and "
                     "grows with the run length; compare only runs of equal length",
    Code.PER_RUN_DRIFT: lambda f: (
        f"per-run p{f['q']:g} {'rises' if f['tau'] > 0 else 'falls'} with the run order "
        f"(Kendall tau {f['tau']:.2f}, p = {f['p_value']:.2g}): the runs drift, so they are "
        "not replicates of one condition and the interval describes this window of runs only"),
    Code.BOOTSTRAP_UNDER_COVERS: "{runs} runs: the percentile cluster bootstrap under-covers "
                                 "below ~{least} runs, and more when runs differ (use "
                                 "percentile_ci_across_runs)",
    Code.RATE_RUNS_FAILED: "{failed} of {runs} runs failed (left out of the interval)",
    Code.RATE_NOT_KEPT_UP: lambda f: (
        f"{f['not_kept_up']} of {f['runs']} runs did not keep up (achieved < {f['ratio']:g} x "
        "target" + (f"; lowest {f['lowest']:.3f}" if f["lowest"] is not None else "") + ")"),
    Code.RATE_ERRORS: "error ratio up to {highest:.2%} > {most:.2%}: failed requests are not in "
                      "the latency histogram",
    Code.RATE_INTERVAL: _rate_interval,
    Code.RUNS_SHORT_OF_TARGET: lambda f: (
        f"{len(f['ratios'])} run(s) fell short of the target "
        f"({', '.join(f'{r:.3f}' for r in f['ratios'])} x) with a latency like their peers': "
        "kept, a generator shortfall in doubt rather than a failure"),
    Code.AT_RATE: "at {rate_rps:g} req/s, {warning}",
    Code.NOT_MONOTONE: lambda f: (
        "not monotone: " + ", ".join(f"{r:g}" for r in f["passed_rps"]) + " req/s passed above "
        f"a failing {f['failed_rps']:g} req/s; repeat {f['failed_rps']:g} req/s before "
        "trusting the bracket"),
    Code.INCONCLUSIVE_ABOVE_PASS: lambda f: (
        "inconclusive above the last pass: " + ", ".join(f"{r:g}" for r in f["rates_rps"])
        + " req/s: run more there"),
    Code.LOWEST_RATE_FAILED: "the lowest rate tested ({rate_rps:g} req/s) did not pass: test "
                             "lower rates",
    Code.BRACKET_OPEN_ABOVE: "no tested rate failed: the bracket is open above; test higher "
                             "rates",
    Code.CONNECTIONS_MIXED: "runs at several connection counts were judged together: group "
                            "them (slo_brackets(..., by=['connections']))",
    Code.RUNS_LEFT_OUT_OF_FIT: "{runs} run(s) without a throughput or N were left out of the "
                               "fit",
    Code.FIT_NOT_CONVERGED: "the least-squares fit did not report convergence: check the plot",
    Code.RUNS_BOOTSTRAP_SINGLE_RUN: "some N have a single run, so runs cannot be resampled "
                                    "within N: used the wild bootstrap instead",
    Code.REFITS_NOT_CONVERGED: "{failed} of {of} bootstrap refits did not converge",
    Code.ONE_RUN_PER_N: "one run per N: the residuals mix run-to-run noise with lack of fit; "
                        "repeat each N (>= 3 runs) for a model-free check",
    Code.SIGMA_ON_BOUND: "sigma = {sigma:g} sits on its bound [0, 1]: the CIs there are "
                         "one-sided",
    Code.LINEAR_REGION_MISSED: "throughput at the lowest N ({lowest_n:g}) is already "
                               "{share:.0%} of the highest: the rising part of the curve was "
                               "not measured, so gamma and sigma are poorly determined; add "
                               "lower N (1, 2, 4, ...)",
    Code.AMDAHL_NO_PEAK: "Amdahl's law has no peak: throughput rises to gamma/sigma",
    Code.NSTAR_NOT_CLAIMED: lambda f: (
        _f_test(f) + (", but the least-squares kappa is 0" if f["kappa_zero"]
                      else f" >= alpha {f['alpha']:g}")
        + ": no retrograde scaling shown, so no peak N* is claimed"),
    Code.NSTAR_CLAIMED: lambda f: f"{_f_test(f)} < alpha {f['alpha']:g}: Amdahl rejected",
    Code.NSTAR_ROUGH_RANGE: "the N* interval is a percentile interval of the bootstrap refits' "
                            "N* (not bootstrap-t) whose measured coverage falls short of its "
                            f"level (0.875 at nominal 0.95, {NSTAR_COVERAGE}): read it as a "
                            "rough range",
    Code.NSTAR_EXTRAPOLATED: "N* = {n_star:.4g} lies beyond the largest N measured "
                             "({largest_n:g}): an extrapolation; measure above it",
    Code.BLOCKS_NOT_USED: lambda f: (
        "blocks not used: not every block holds the whole design (incomplete blocks), so the "
        "block term would not be a nuisance term" if f["incomplete"] else
        "blocks not used: some runs have no block, or there is only one"),
    Code.FACTORIAL_KEEPS_RUNS: lambda f: (
        f"{f['runs']} wrk2 run(s) "
        + ("did not sustain their offered rate" if f["status"] == RunStatus.SATURATED
           else "fell slightly short of their offered rate (in doubt)")
        + f": kept with their measured {f['metric']} (a factorial needs a value per run; "
        "queueing in the generator included)"),
    Code.FACTORIAL_KEEPS_PARTIAL: lambda f: (
        f"{len(f['reasons'])} run(s) {RunStatus.PARTIAL}, kept with their measured "
        f"{f['metric']}: {'; '.join(f['reasons'])}"),
    Code.INTERACT_AT: lambda f: (
        f"{f['factors']} interact at {f['where'] or 'every level'}: each factor's effect there "
        "depends on the other's level, so it is given at each level of the other (simple "
        "effects), not as a main effect"),
    Code.LEVEL_RUNS_PARTIAL: lambda f: (
        f"{len(f['runs'])} of {f['of']} runs {RunStatus.PARTIAL}: fewer connections got in than "
        "the generator opened, for all or part of the run (the server's listening socket "
        "dropped attempts, each retried after 1 s or more); their latencies describe the "
        f"connections that got in ({', '.join(f['runs'])})"),
    Code.AB_FAMILY_DIFFERS: _ab_family_differs,
    Code.EFFECT_INTERVAL_HIDDEN: lambda f: (
        f"{f['metric']}, {f['where']}: the effect of {f['term']} is printed without its "
        f"interval, {f['why']}: its runs cannot bound it; its verdict rests on its test"),
    Code.LATENCIES_WRK_CLOSED_LOOP: f"{WRK_LATENCY}.",
    Code.LATENCIES_CLOSED_LOOP: lambda f: (
        f"{', '.join(f['tools'])} measure(s) in a closed loop: the tail is understated "
        "(coordinated omission); only wrk2's corrected percentiles describe it."),
    Code.LATENCIES_HISTOGRAM_PARTIAL: "{runs} of {wrk2} wrk2 run(s) have a histogram of the "
                                      "post-calibration part only (wrk2 resets it after ~10 s): "
                                      "their percentiles describe the end of each run.",
    Code.ESTIMATE_RUNS_STATUS: _estimate_runs_status,
    Code.ESTIMATES_FEW_RUNS: "With {runs} runs per configuration no distribution-free interval "
                             "exists: the estimate is {estimate}, and its interval a t interval "
                             "on their logs, which assumes that spread. Run >= {least} "
                             "repetitions for the median of the runs' percentiles with an "
                             "order-statistic interval.",
    Code.LABEL_STORED_TWICE: "label {label!r} is stored twice ({older}, {newer}): the newer "
                             "file is used",
    Code.OF_LABELS: lambda f: f"{labels_words(f['labels'])}: {f['warning']}",
    Code.LABELS_RUNS_FAILED: lambda f: (
        f"{f['runs']} run(s) of {labels_words(f['labels'])} failed, did not keep up or have no "
        f"value of {f['metric']}: ranked worst in their label's median and interval, left out "
        "of the change points"),
    Code.LABEL_ADDED_WITHOUT: lambda f: (
        f"label {f['label']!r} was added without {len(f['errors'])} file(s) of its job that "
        f"could not be read (--skip-unreadable): {'; '.join(f['errors'])}"),
    Code.AMDAHL_ONLY: "{levels} concurrency levels: Amdahl's law only (the USL needs >= "
                      "{least})",
    Code.NO_SCALING_MODEL: "{levels} concurrency level(s): no scaling model can be fitted "
                           "(Amdahl needs >= {least})",
    Code.FIT_FAILED: "fit failed: {error}",
    Code.RUNS_WITHOUT_TARGET_RATE: "{runs} run(s) without a target rate (closed loop) left out",
    Code.RATE_REASON: lambda f: f"{formatting.fmt_num(f['rate_rps'])} req/s: {f['reason']}",
    Code.RUNS_WITHOUT_CONCURRENCY: "{runs} run(s) without {column} left out (Locust runs use "
                                   "--x users, wrk runs --x connections)",
    Code.AT_LEVEL: lambda f: f"{'/'.join(f['columns'])}={f['level']}: {f['warning']}",
    Code.RUNS_WITHOUT_RESPONSE: "{runs} run(s) without {response} (failed?) left out",
    Code.UNBALANCED_DESIGN: lambda f: (
        f"unbalanced design (fitted by OLS): cells with fewer than {f['most']} runs: "
        + "; ".join(f"{k} ({v} runs)" for k, v in f["cells"])),
    Code.NO_SPREAD_IN_CELLS: "no spread within the cells (every run of a cell has the same "
                             "value: a rounded metric?): intervals have zero width, and a "
                             "change smaller than the rounding would not show",
    Code.ONE_RUN_CELL: "a cell has one run: its spread is unknown, so the effects resting on it "
                       "have no interval (run every cell at least twice)",
    Code.NON_ORTHOGONAL: lambda f: (
        "non-orthogonal design ("
        + ("unequal cells" if f["unequal_cells"] else f"blocks of {f['block']!r} are incomplete")
        + f"): sums of squares are Type II and add up to {f['share_pct']:.1f}% of the total, so "
        "variation_pct is each term's share after the others, not an allocation of the "
        "variation"),
    Code.TOO_FEW_LABELS: _too_few_labels,
    Code.RATIO_PER_UNIT: "ratio per {unit}: {warning}",
    Code.WEAK_NO_INTERVAL: lambda f: (
        f"weakly supported: no {f['confidence']:.0%} interval for the ratio, since "
        f"{f['n_before']} vs {f['n_after']} {f['unit']} either side are too few for a Moses "
        f"interval (their smallest two-sided rank-test p is {f['floor']:.2g} > "
        f"{f['alpha']:g}); the permutation test moved the level, but nothing bounds the size "
        "or the direction of the change"),
    Code.WEAK_HOLDS_ONE: "weakly supported: the {confidence:.0%} interval of the ratio, "
                         "[{low:.3g}, {high:.3g}], holds no change (1)",
    Code.FAILED_RUNS_LEFT_OUT: "{runs} failed or missing run(s) left out",
    Code.LABELS_LEFT_OUT: lambda f: (
        f"{len(f['labels'])} label(s) without a usable run left out: "
        + ", ".join(f["labels"][:5]) + (" ..." if len(f["labels"]) > 5 else "")),
    Code.NEWEST_UNSEEN: _newest_unseen,
    Code.RECENT_FEW_LABELS: "{labels} labels: a step in the newest label needs >= {before} "
                            "labels before it in its segment ({need} in all)",
    Code.RECENT_CHANGE_POINT_AT_NEWEST: "a change point already starts at the newest label",
    Code.HOLM_OVER_METRICS: lambda f: (
        f"p {formatting.fmt_p(f['p_adjusted'])} after Holm over {f['family']} metrics at this "
        f"load level (p {formatting.fmt_p(f['p_value'])} for this metric alone); its interval "
        f"at {f['level'] * 100:.3g}% (Bonferroni over the windows and the metrics)"
        + ("; significant at a later step of Holm's step-down, at a larger level, while that "
           "interval holds no change: the direction is shown, the size only bounded by it"
           if f.get("interval_holds") else "")),
    Code.NO_SPREAD: "no run-to-run spread: every run of a side has the same value (a rounded "
                    "metric?), so any change counts as detected once the runs can reach alpha; "
                    "a change smaller than the metric's rounding would not show in such runs",
    Code.TIED_VALUES: "tied per-run values: the simulation treats the metric as continuous, "
                      "so ties in real runs would lower the power",
    Code.SPREAD_FEW_DF: "spread from {df:g} degrees of freedom: the stated power averages over "
                        "a wide range of possible spreads; more runs pin it down",
    Code.RUNS_LEFT_OUT_OF_SPREAD: "{side}: {runs} failed or missing run(s) left out of the "
                                  "spread",
    Code.DESIGN_CANNOT_REACH_ALPHA: _cannot_reach_alpha,
    Code.MORE_RUNS_THAN: "more than {runs} runs per arm would be needed",
    Code.RATIO_OF_ONE: "no design detects a ratio of 1",
    Code.CHANGE_COMPATIBLE_WITH_NONE: _compatible_with_none,
    Code.EMPTY_HISTOGRAMS_LEFT_OUT: "{runs} runs have an empty histogram and were left out",
}
