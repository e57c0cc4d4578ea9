"""The words of a comparison's warnings: the sides' runs, timeout caps, drift and
the counters behind a row."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from perfkit import formatting
from perfkit.formatting import change_ci, fmt_sig, pct_change
from perfkit.warning import Code
from perfkit.wording._common import (
    CAP_NAMES,
    DRIFT_FIX,
    Wording,
    at_words,
    need_words,
    stall_words,
    verdict_words,
)

#: what runs that waited for a timeout do to a metric that is not a latency
#: (:func:`perfkit.analysis.core._cap_effects.consequence`)
CAP_CONSEQUENCES = {
    "throttled": "connections that waited for the timeout served nothing meanwhile, so "
                 "{metric} of these runs is throttled by it as well as by the service",
    "timeout-errors": "the generator counts a request that outlasts its timeout as a timeout "
                      "error, so {metric} of these runs counts that timeout as well as the "
                      "service's failures",
    "fewer-attempts": "connections that waited for the timeout made no request meanwhile, so "
                      "{metric} of these runs counts fewer attempts than the service alone "
                      "would have allowed",
}


#: what a cap does to a latency metric of the runs on it (:attr:`Code.ON_CAP`'s ``effect``)
CAP_EFFECTS = {
    "artefact": "{metric} of these runs measures the timeout as well as the service "
                "(requests that waited for it); effects computed from them are artefacts of it.",
    "below-some": "{metric} of some of these runs lies below the cap, but as the run's highest "
                  "percentile below it, requests that waited for the timeout can move it (up "
                  "to the slowest request that did not wait); effects computed from them are "
                  "treated as artefacts of it, not measured ratios.",
    "below-all": "{metric} of these runs lies below the cap, but as the run's highest "
                 "percentile below it, requests that waited for the timeout can move it (up to "
                 "the slowest request that did not wait); effects computed from them are "
                 "treated as artefacts of it, not measured ratios.",
}


#: why a column of a tidy frame holds no finite value (:func:`perfkit.analysis.core._tidy.
#: not_finite`)
NOT_FINITE_REASONS = {
    "median-ci": "an unbounded median interval (too few runs, or a failed run inside it)",
    "median": "the median run failed (ranked worst), so it has no value",
    "ratio": "a ratio of 0 or infinity (failed runs ranked worst) is no finite size",
    "not-finite": "not finite",
}


def _cap_evidence(evidence: tuple) -> str:
    if not evidence:
        return ""
    said = [(rid, stall_words(o, s, scope) if (o, s) != (None, None) else "")
            for rid, o, s, scope in evidence]
    parts = [f"{rid}: {text}" for rid, text in said if text]
    none = [rid for rid, text in said if not text]
    inferred = (f"; inferred from the latency alone for {', '.join(none)} (no counters)"
                if none else "")
    return (f"; the kernel counters, the evidence of connection attempts dropped and retried: "
            f"{'; '.join(parts)}{inferred}")


def _on_cap(f: Mapping[str, Any]) -> str:
    cap, metric = f["cap_ms"], f["metric"]
    shown = "; ".join(f"{rid}: {', '.join(f'{col} {fmt_sig(v)}' for col, v in values)}"
                      for rid, values in f["runs"])
    why = ("standing out from the run's other latencies, or, where the kernel counted the "
           "retries in the run's namespace, up to the run's median more" if f["counted"]
           else "standing out from the run's other latencies")
    side = f"{f['side']}: " if f.get("side") else ""
    head = (f"{side}{len(f['runs'])} run(s) with latencies that sit on {cap:g} ms (a "
            f"percentile within {f['tolerance']:.0%}, the max up to {f['max_above']:.0%} "
            f"above, {why}), {CAP_NAMES[cap]} ({shown}){_cap_evidence(f['evidence'])}")
    if f["effect"] in CAP_EFFECTS:
        return f"{head}: {CAP_EFFECTS[f['effect']].format(metric=metric)}"
    return (f"{head}: {CAP_CONSEQUENCES[f['effect']].format(metric=metric)}; effects computed "
            "from them are affected by the cap (measured, not the service's alone).")


def _drift_may_make_change(f: Mapping[str, Any]) -> str:
    where = ", ".join(f"{k}={v}" for k, v in f["where"])
    d = f["distance_runs"]
    return (f"{where + ': ' if where else ''}the change {pct_change(f['change'])} could be "
            f"drift: the new runs ran {abs(d):.1f} runs {'after' if d > 0 else 'before'} the "
            f"base runs on average, and the drift within the arms ({change_ci(*f['per_run'])} "
            f"per run, p {formatting.fmt_p(f['p_value'])}, {f['runs']} runs) makes "
            f"{change_ci(*f['made'])} over that distance; without it the change is "
            f"{change_ci(*f['without'])}{_straddles(f)}; {DRIFT_FIX}")


def _straddles(f: Mapping[str, Any]) -> str:
    """The gate's clause of a drift note: the threshold the change without the drift
    straddles (empty without one)."""
    if f.get("straddles") is None:
        return ""
    return (f", which straddles {pct_change(f['straddles'])}: the gate cannot tell a "
            f"{f['what']} from the drift")


def _arm_drift_check(f: Mapping[str, Any]) -> str:
    low, high = f["ci_low_pct"], f["ci_high_pct"]
    interval = (f"[{low:+.1f}%, {high:+.1f}%]" if low is not None else
                "(no interval: too few pairs of runs within the arms)")
    return (f"drift check over the run order ({f['runs']} runs, pairs of runs within each arm "
            f"and row): {f['change_pct']:+.1f}% {interval} from the first run to the last: "
            f"{verdict_words(f['verdict'])}")


def _holm_step(f: Mapping[str, Any]) -> str:
    family = f["family"]
    return (f"significant after Holm over {family} tests (p {formatting.fmt_p(f['p_adjusted'])}: "
            f"a later step of the step-down, at a larger level), while its "
            f"{f['level'] * 100:.3g}% interval (Bonferroni over {family}, so that the family's "
            "intervals hold together) holds no change: the direction is shown, the size only "
            "bounded by that interval")


def _side_runs(what: str) -> Callable[[Mapping[str, Any]], str]:
    """The wording of a side's runs of one status, with each run's reason: ``"base: 2 run(s)
    <what>: r1 ...; r2 ..."``."""
    return lambda f: f"{f['side']}: {len(f['reasons'])} run(s) {what}: {'; '.join(f['reasons'])}"


ANALYSIS: dict[Code, Wording] = {
    Code.OF_METRIC: "{metric}: {warning}",
    Code.RUNS_SATURATED: _side_runs("saturated (ranked with the failed runs)"),
    Code.RUNS_SHORT: _side_runs("in doubt, kept with their values (the row's result without "
                                "them is noted on the row)"),
    Code.RUNS_PARTIAL: _side_runs("partial, kept with their values (fewer connections got in "
                                  "than asked)"),
    Code.UNTESTABLE_DESIGN: lambda f: (
        f"not testable with this design: Holm over {f['family']} comparisons "
        f"{need_words(f['need'], f['family'], f['most'])}"),
    Code.HOLM_STEP_INTERVAL_HOLDS: _holm_step,
    Code.AA_RANKED_WORST: lambda f: (
        f"{f['metric']}{at_words(f['where'])}: {f['runs']} run(s) failed, saturated or without "
        "a value, ranked worst in the splits"),
    Code.AA_LEFT_OUT_OF_REQUEST_TEST: lambda f: (
        f"{f['runs']} failed or saturated run(s){at_words(f['where'])} left out of the "
        "request-level test"),
    Code.AA_NOT_TESTED: "{runs} vs {runs} runs cannot reach p < {alpha:g}: no split was tested; "
                        "use >= {need} runs per side",
    Code.AA_LEVELS_NOT_SPLIT: "{levels} load level(s) with fewer than {least} runs: not split",
    Code.AA_SPLITS_SHARE_RUNS: "the {splits} splits and the pairs of runs share their runs: "
                               "each rate is descriptive, not a binomial proportion, and "
                               "carries no interval",
    Code.ARMS_NOT_INTERLEAVED: "the arms were not interleaved: every {first} run ran before "
                               "every {then} run, so a drift over time is confounded with the "
                               "change; see the drift check, and randomize the order",
    Code.ARM_DRIFT_CHECK: _arm_drift_check,
    Code.DRIFT_MAY_MAKE_CHANGE: _drift_may_make_change,
    Code.NO_MDE: "no minimum detectable change: a side has fewer than 2 runs with a positive "
                 "value (a ratio, and so its detectable size, needs positive values)",
    Code.ON_CAP: _on_cap,
    Code.RUNS_UNMEASURED: lambda f: (
        (f"{f['side']}: " if f.get("side") else "") + f"{f['runs']} run(s) did not measure "
        f"{f['metric']} (left out, not failed): {f['reason']}"),
    Code.COLUMN_DIFFERS_BETWEEN_ARMS: lambda f: (
        f"{f['column']} differs between the arms (base: {', '.join(f['base'])}; new: "
        f"{', '.join(f['new'])}): it is part of what the arms compare, not a row"),
    Code.COLUMN_NOT_RECORDED: lambda f: (
        f"{f['column']} is not recorded for the {' and '.join(f['arms'])} runs: not a row "
        "(their runs cannot be placed in one)"),
    Code.WRITTEN_AS_MISSING: lambda f: (f"{', '.join(f['columns'])} written as missing: "
                                        f"{NOT_FINITE_REASONS[f['why']]}"),
    Code.COUNTERS_SYSTEM_WIDE: "the kernel counters of {runs} of {of} runs are system-wide "
                               "(the host's network namespace): they include other traffic on "
                               "this host; the testbed's isolated profile counts a run's "
                               "traffic alone",
    Code.COUNTERS_NAMESPACE_TOTAL: lambda f: (
        f"listen overflows and SYN retransmissions are the totals of the run's network "
        f"namespace ({f['runs']} of {f['of']} runs), over every listening socket in it "
        f"({' and '.join(f['sockets'])}): they do not say whose queue filled; each socket's "
        "own drops (ss's skmem d) are in the runs tables (server_listen_drops"
        + (", upstream_listen_drops" if len(f["sockets"]) > 1 else "") + ")"),
    Code.COUNTERS_INCLUDE_CALIBRATION: "the counters cover the whole run, wrk2's calibration "
                                       "(about its first 10 s) included, which its latency "
                                       "histogram leaves out",
}
