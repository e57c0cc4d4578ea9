"""The words of every warning, given once: a code's wording is a template over its fields.

:data:`WORDING` maps each :class:`perfkit.warning.Code` to its wording: a :meth:`str.format`
template over the warning's fields (``"{ratio:.1%} of requests failed ..."``), or, where the
words depend on a value (a plural, a clause said only when a field is given), a function of
the fields. :func:`text` is the one way a warning becomes words: ``str(w)``, ``f"{w}"`` and
``w.text`` call it, and so does everything that shows a warning (tables and CSV through
``to_frame``, ``perfkit show``, :mod:`perfkit.present`, the report's pages).
``tests/test_wording.py`` checks that every code has a wording.

Converting a sentence into a coded warning (the recipe)
--------------------------------------------------------
Where a result still appends a sentence, ``warnings.append(f"{n} run(s) failed: {why}")``:

1. add a member to :class:`perfkit.warning.Code` under its family, named for what it says,
   its value a short identity: ``RUNS_FAILED = "runs-failed"``;
2. add its wording here, under the same family, the f-string's text with its fields as
   template fields: ``Code.RUNS_FAILED: "{n} run(s) failed: {why}"`` (the format specs as
   they were: ``{ratio:.1%}``; a function of the fields, ``lambda f: ...``, for a plural or
   an optional clause);
3. append the value where the sentence was: ``warnings.append(Warn(Code.RUNS_FAILED, n=n,
   why=why))``. A field is a number, a name or run id, a :class:`~perfkit.warning.Warn` (a
   warning within another) or a tuple of these. A decision that read the sentence
   (``w.startswith("3 run(s)")``) reads the code (``w.code is Code.RUNS_FAILED``).

The words come out as before, so the pages and tables do not change.

The vocabulary's identities (:mod:`perfkit.vocabulary`) have their wording here too, where it
is more than the identity: :func:`verdict_words` (``stable`` -> ``no drift beyond ±10%``, with
the tunable :data:`DRIFT_TOLERANCE_PCT`; a claim's verdict; :data:`NoteKind.ON_CAP`), and so do
the composed verdicts of a value on a timeout cap (:func:`artefact_words`,
:func:`affected_words`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from perfkit import formatting
from perfkit.formatting import change_ci, fmt_sig, pct_change
from perfkit.vocabulary import ARTEFACT, ClaimVerdict, DriftVerdict, NoteKind, RunStatus
from perfkit.warning import Code, Warn

#: a wording: a str.format template over the fields, or a function of them
Wording = str | Callable[[Mapping[str, Any]], str]


#: a drift smaller than this over a whole experiment (first run to last) does not matter: the
#: tunable of the drift verdict ``stable`` (:mod:`perfkit.analysis.context._drift`)
DRIFT_TOLERANCE_PCT = 10.0

#: the words of the vocabulary's identities whose words are more than the identity
#: (:func:`verdict_words`)
VERDICT_WORDS: dict[str, str] = {
    DriftVerdict.STABLE: f"no drift beyond ±{DRIFT_TOLERANCE_PCT:g}%",
    ClaimVerdict.SUPPORTED_DIRECTION: f"{ClaimVerdict.SUPPORTED} in direction; size not "
                                      "comparable",
    ClaimVerdict.CONTRADICTED: "contradicted by a repeated experiment",
    ClaimVerdict.NOT_TESTABLE_N1: "not testable (n = 1)",
    ClaimVerdict.NOT_TESTABLE_UNSTATED: "not testable (runs not stated)",
    ClaimVerdict.NOT_TESTABLE_NONE: "not testable (no measurement)",
    NoteKind.ON_CAP: "on a timeout cap",
}


def verdict_words(verdict: Any) -> str:
    """A verdict or status of the vocabulary in words (its identity when that is its word:
    ``better``, ``~``; ``stable`` -> ``no drift beyond ±10%``); any other text as it is."""
    return VERDICT_WORDS.get(verdict, str(verdict)) if isinstance(verdict, str) else \
        str(verdict)


def the_caps(caps: Any) -> str:
    """``"the 1000 ms cap"``, ``"the 1000 and 2000 ms caps"``."""
    names = " and ".join(f"{c:g}" for c in sorted(caps))
    return f"the {names} ms cap{'s' if len(caps) > 1 else ''}"


def artefact_words(caps: Any) -> str:
    """The verdict of an effect computed from values on ``caps`` (ms): ``"artefact of the 1000
    ms cap"``."""
    return f"{ARTEFACT} of {the_caps(caps)}"


def affected_words(verdict: str, caps: Any) -> str:
    """A measured verdict from runs that waited for ``caps`` (ms): ``"better (affected by the
    1000 ms cap)"``."""
    return f"{verdict_words(verdict)} (affected by {the_caps(caps)})"


def _s(n: int) -> str:
    """The plural ``s`` of ``n`` things (none for one)."""
    return "" if n == 1 else "s"


def pct(share: float) -> str:
    """A share in [0, 1] as a percentage without trailing zeros: ``0.95`` -> ``95%``."""
    return f"{share * 100:g}%"


def fmt_p(p: float) -> str:
    """A p-value in a warning: 2 decimals, 2 significant digits below 0.01."""
    return f"{p:.2f}" if p >= 0.01 else f"{p:.2g}"


def runs_text(n: int) -> str:
    """``1 run``, ``5 runs``."""
    return "1 run" if n == 1 else f"{n} runs"


#: how wrk 4 computes the latencies it prints, as its source does (wg/wrk 4.x, src/wrk.c
#: ``main`` and src/stats.c ``stats_correct``): the one wording of the run's warning, the
#: Methods, every page and ``perfkit show``
WRK_LATENCY = ("wrk is closed-loop: each connection sends its next request only when the "
               "previous response arrives, and latency is timed from the send; before "
               "printing, wrk 4 adds synthetic samples for the requests a slow response held "
               "up (stats_correct: with the run's mean time per request on one connection as "
               "the interval, each latency of two intervals or more adds one sample at every "
               "interval below it), so the printed mean, stdev and percentiles include them "
               "and the max does not; the interval is the run's own achieved one, not an "
               "intended schedule, so the tail may still be understated (coordinated "
               "omission): use wrk2 for tail latency")

#: why a printed value is not finite (:attr:`Code.PRINTED_NOT_FINITE`'s ``kind``)
NOT_FINITE_WHY = {
    "latency": "not a number: no latency data",
    "rate": "not a number: no rate data",
    "duration": "not a finite duration",
    "bytes": "not a finite byte count",
    "throughput": "Requests/sec is not a number: throughput unknown",
    "transfer": "Transfer/sec is not a number",
}
#: what in the output shows nothing was measured (:attr:`Code.PRINTED_ZERO_PLACEHOLDER`'s
#: ``because``)
NOTHING_MEASURED = {
    "no-sample": "the Latency row recorded no sample",
    "no-request": "Request Count is 0 (no request was made)",
    "no-request-yet": "Total Request Count is 0 (no request yet)",
}


def _printed_zero(f: Mapping[str, Any]) -> str:
    head = f"{f['where']}: " if f.get("where") else ""
    return (f"{head}{f['fields']}: printed 0 where {NOTHING_MEASURED[f['because']]}: a "
            "placeholder, kept as missing, not 0")


def _hlog_unit(f: Mapping[str, Any]) -> str:
    if f.get("given"):
        return f"values read in {f['unit']}, as --unit says"
    if f["unit"] == "ns":
        return ("values read in ns: the log states no unit, each interval's Interval_Max is "
                f"its histogram's maximum / 1e6 and its layout reaches {f['highest']:.3g} (a "
                "Java tool's nanosecond log, maxima in ms); --unit overrides")
    return ("unit assumed: µs (the log does not state its value unit; add '#[ValueUnit: ns]' "
            "or use --unit if the tool recorded nanoseconds)")


def _csv_lag(f: Mapping[str, Any]) -> str:
    verb = "lag" if (f["csv_requests"] or 0) <= (f["json_requests"] or 0) else "differ from"
    text = (f"CSV stats {verb} the --json totals: {f['csv_requests']} vs {f['json_requests']} "
            "requests")
    if f["csv_failures"] != f["json_failures"]:
        text += f", {f['csv_failures']} vs {f['json_failures']} failures"
    return text + "; using --json"


#: the known timeout caps (ms), named (:data:`perfkit.analysis.core.KNOWN_CAPS_MS`): Linux's
#: initial SYN retransmission timeout (1 s, RFC 6298) and its next backoff (3 s total), wrk's
#: default --timeout (2 s)
CAP_NAMES = {1000.0: "the Linux SYN retransmission timeout (1 s): connection attempts "
                     "dropped from a full accept queue and retried",
             2000.0: "wrk's default request timeout (2 s)",
             3000.0: "the second SYN retransmission (3 s)"}
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


def stall_words(overflows: int | None, syn_retransmits: int | None, scope: str | None) -> str:
    """What a run's kernel counters say about connection attempts retried after 1 s: ``"1,234
    listen overflows and 567 SYN retransmissions (netns X)"``, or ``"no listen overflow and no
    SYN retransmission (...)"`` when both are 0."""
    where = f" ({scope})" if scope else ""
    if not overflows and not syn_retransmits:
        return f"no listen overflow and no SYN retransmission{where}"
    parts = [f"{v:,} {name}" for v, name in ((overflows, "listen overflows"),
                                            (syn_retransmits, "SYN retransmissions"))
             if v is not None]
    return " and ".join(parts) + where


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


#: what to do about a drift the arms' order confounds
DRIFT_FIX = ("interleave the arms (perfkit sweep randomizes the run order) to tell a change "
             "from a drift")


def at_words(where: tuple[tuple[str, Any], ...]) -> str:
    """``" at connections=64, keepalive=on"`` (empty without a key)."""
    text = ", ".join(f"{k}={v}" for k, v in where)
    return f" at {text}" if text else ""


def need_words(need: int | None, family: int, most: int) -> str:
    """What would make a comparison testable: ``"needs >= 5 runs per arm"`` (``need``: the
    fewest equal runs per arm, None beyond ``most``; Holm over ``family`` comparisons)."""
    more = ", or fewer comparisons" if family > 1 else ""
    return (f"needs >= {need} runs per arm{more}" if need
            else f"needs more than {most} runs per arm{more}")


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


def labels_words(labels: tuple[str, ...]) -> str:
    """``label v03`` or ``labels v03, v07``."""
    return f"label{'s' if len(labels) > 1 else ''} {', '.join(labels)}"


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


def _holm_step(f: Mapping[str, Any]) -> str:
    family = f["family"]
    return (f"significant after Holm over {family} tests (p {formatting.fmt_p(f['p_adjusted'])}: "
            f"a later step of the step-down, at a larger level), while its "
            f"{f['level'] * 100:.3g}% interval (Bonferroni over {family}, so that the family's "
            "intervals hold together) holds no change: the direction is shown, the size only "
            "bounded by that interval")


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


def _percentile_above_max(f: Mapping[str, Any]) -> str:
    beyond = " by more than Locust's rounding" if f["rounded"] else ""
    return (f"{f['field']}: p{f['q']:g} ({f['value']} ms) is above latency_max_ms "
            f"({f['max_ms']} ms){beyond}: input damaged?")


WORDING: dict[Code, Wording] = {
    # -- a run, as its parser read it -------------------------------------------------------
    Code.PRINTED_NOT_FINITE: lambda f: (f"{f['field']}: printed {f['token']!r} "
                                        f"({NOT_FINITE_WHY[f['kind']]}); kept as missing, "
                                        "not 0"),
    Code.PRINTED_ZERO_PLACEHOLDER: _printed_zero,
    Code.NO_LATENCY_SAMPLES: (
        "{tool} recorded no latency samples (its Latency row printed {row!r}: 0.00us or -nan "
        "placeholders; every request timed out or failed?): latency_mean_ms, latency_stdev_ms, "
        "latency_max_ms, the +/- Stdev share and the percentiles are missing, not 0"),
    Code.NO_RATE_SAMPLES: (
        "{tool} printed Req/Sec {row!r} (Req/Sec -nan: no per-thread rate sample, as when the "
        "run ends before calibration or a sampling interval): the Req/Sec thread statistics "
        "(req_per_thread_*) are missing, not 0"),
    Code.PERCENTILES_WITHOUT_SAMPLES: lambda f: (
        f"{', '.join(f['fields'])}: printed other than 0 although the Latency row recorded no "
        "sample: input damaged?"),
    Code.CALIBRATION_OUT_OF_RANGE: (
        "calibration mean_latency_ms: wrk2 printed {token!r}, beyond its 24 h range (it "
        "calibrated on an empty histogram: no response had arrived yet); kept as missing"),
    Code.HISTOGRAM_EMPTY: (
        "{field}: wrk2's {kind} histogram is empty (Total count = 0): its printed percentiles "
        "(0.00us) and footer (Mean = -nan) are placeholders, missing, not 0"),
    Code.SPECTRUM_LEFT_OUT: (
        "{field}: the 'Detailed Percentile spectrum' is left out of this output (as pasted): "
        "the printed percentiles are kept, no histogram is rebuilt"),
    Code.HISTOGRAM_PARTIAL: (
        "histogram covers only {held} of {requests} requests (after wrk2's calibration): its "
        "percentiles describe the end of the run only"),
    Code.PASTED_PREAMBLE: lambda f: (f"preamble: {f['lines']} line{_s(f['lines'])} before the "
                                     "report skipped (kept in extra['pasted'])"),
    Code.PASTED_INDENT: "pasted: indented {indent} (removed)",
    Code.PASTED_CTRL_C: lambda f: (
        f"pasted: an echoed ^C removed at the start of line {', '.join(map(str, f['lines']))} "
        "(a run stopped by hand)"),
    Code.PASTED_BLANK_LINES: lambda f: (f"pasted: {f['lines']} blank line{_s(f['lines'])} "
                                        "skipped where the tool prints none"),
    Code.PREAMBLE_OTHER_SETTINGS: lambda f: (
        "preamble: the command line there names other settings than the report ("
        + ", ".join(f"{k} {given} (printed: {printed})" for k, given, printed in f["other"])
        + "): not used"),
    Code.PREAMBLE_RATE: "preamble: target rate {rate_rps:g} req/s read from the command line "
                        "there (-R)",
    Code.HLOG_EMPTY: "tag {tag!r}: every interval histogram is empty: no latencies",
    Code.HLOG_UNIT: _hlog_unit,
    Code.HLOG_BEFORE_START: lambda f: (
        f"{f['intervals']} interval{_s(f['intervals'])} start before the log's #[StartTime] "
        "(HdrHistogram's readers skip them; the format has no such rule): read"),
    Code.LOCUST_FAILURES_ONLY: "{path}: only Locust's failures/exceptions table, no request "
                               "statistics",
    Code.LOCUST_HISTORY_ONLY: "{path}: only the history CSV; totals from its last row at "
                              "{timestamp_s} (no throughput or percentiles of the whole run)",
    Code.LOCUST_JSON_ONLY_ENDPOINT: "{endpoint!r} is in the --json output but not in the CSV "
                                    "stats (its first requests came after the last CSV write)",
    Code.LOCUST_CSV_LAGS_JSON: _csv_lag,
    Code.LOCUST_NA: lambda f: (f"{f['where']}: Locust printed N/A (no data) in "
                               f"{', '.join(f['columns'])}; kept as missing"),
    Code.LOCUST_HISTORY_NA: "history: {rows} row(s) with N/A (no requests yet); kept as "
                            "missing",
    Code.LOCUST_HISTORY_WINDOW_ZERO: "history: {rows} row(s) with every windowed percentile "
                                     "printed as 0 (no 10 s window yet); kept as missing",
    Code.LOCUST_HISTORY_UNMEASURED: lambda f: (
        f"history: the percentiles of {f['rows']} row(s): printed 0 where "
        f"{NOTHING_MEASURED['no-request-yet']}: a placeholder, kept as missing, not 0"),
    Code.LOCUST_JSON_UNTIMED: "{endpoint!r}: no timed requests in the --json output, so no "
                              "latencies",
    Code.LOCUST_JSON_EMPTY: "the --json output holds no request statistics: no request was "
                            "made",
    Code.IN_FILE: "{source}: {warning}",
    Code.LOCUST_OLD_NAMES: lambda f: (
        "columns named as by Locust before 1.0, read by their 1.x names: "
        + ", ".join(f"{old!r} as {new!r}" for old, new in f["renamed"])),
    Code.LOCUST_BARE_PERCENTILE: lambda f: (
        f"column {f['column']!r}, among the percentile columns, read as {f['column'] + '%'!r} "
        "(Locust 0.13.3-0.14.6 wrote it without the '%')"),
    Code.LOCUST_NONE_METHOD: "method 'None' on {rows} row(s) read as no method (Locust up to "
                             "1.0 printed Python's None for the totals row)",
    Code.LOCUST_NO_FINAL_NEWLINE: "no final newline (Locust up to 1.0 wrote none); the last row "
                                  "has all {fields} fields",
    Code.LOCUST_SUCCESSES_ONLY: lambda f: (
        f"{f['source']}: '# requests' kept as printed: Locust 0.8 and 0.9 counted only the "
        "successes there, 0.10 and later every request ("
        + ("here # failures > # requests: successes only, so Locust 0.8 or 0.9"
           if f["failures"] > f["requests"] else "the file does not say which") + ")"),
    Code.LOCUST_TOTAL_ROW: "{source}: the last row, 'Total', read as the aggregate (Locust "
                           "before 0.12.2 named it so)",
    Code.LOCUST_TRANSFER_BEYOND: "{where}: Average Content Size x Requests/s is beyond any "
                                 "number: transfer_bytes_per_s missing",
    Code.LOCUST_NO_DISTRIBUTION_ROW: "{path}: no row for {endpoint!r}: no percentiles",
    Code.LOCUST_DISTRIBUTION_REQUESTS: "{path}:{line}: # requests {printed} where the requests "
                                       "file says {requests}; percentiles taken as printed",
    Code.LOCUST_DISTRIBUTION_ROWS_LEFT_OUT: lambda f: (
        f"{f['path']}: rows matching no row of the requests file, left out: "
        f"{', '.join(f['rows'])}"),
    Code.LOCUST_DISTRIBUTION_ONLY: "{path}: only Locust's _distribution.csv: request counts and "
                                   "percentiles (no failures, mean or throughput)",
    Code.DECODED_BY_BOM: lambda f: f"decoded as {f['codec'].upper()} (its byte-order mark)",
    Code.DECODED_LATIN1: "not UTF-8 (byte 0x{byte:02x} on line {line}): decoded as Latin-1; "
                         "names may read wrong, numbers are as printed",
    Code.RUN_ENDED: lambda f: (f"run {f['status']}" + (f" (exit code {f['exit_code']})"
                                                      if "exit_code" in f else "")
                               + f": {f['reason']}"),
    Code.RUN_STATUS: "run status is {status!r} (exit code {exit_code}): it did not finish "
                     "normally",
    Code.GENERATOR_BOTTLENECK: "load generator at {share:.0%} of its {cores:g} core(s): the "
                               "generator, not the server, may be the bottleneck",
    Code.TESTBED_UNREAD: "{reason}; give --state-dir DIR if it is yours",
    Code.COUNTERS_UNREAD: lambda f: (
        "the testbed's counters could not be read, so the run records none of them: "
        + "; ".join(f"{group}: {reason}" for group, reason in f["why"])),
    Code.COMBINED_CLIENTS: "combined from {clients} concurrent {tool} clients: throughput, "
                           "requests and errors are sums",
    Code.COMBINED_HISTOGRAMS: "latency percentiles read from the clients' histograms merged by "
                              "summing counts",
    Code.COMBINED_NO_HISTOGRAM: "a client has no histogram (run without --latency): no "
                                "combined percentiles",
    Code.COMBINED_WRK_PERCENTILES: "wrk prints four percentiles and no histogram: percentiles "
                                   "of concurrent clients cannot be combined (see each "
                                   "client's run); the mean is request-weighted",
    Code.RECORDED: "{text}",
    # -- a run's validity -------------------------------------------------------------------
    Code.NO_REQUEST_COMPLETED: "no request completed (0 requests): the server never answered "
                               "within the run; throughput 0 and no latency, not a measurement",
    Code.FAILED_EVERY_RESPONSE: "every response failed: not a throughput measurement",
    Code.ERRORS_HIGH: "{ratio:.1%} of requests failed (errors or non-2xx/3xx): throughput and "
                      "latency describe a failing server",
    Code.WRK_CLOSED_LOOP: WRK_LATENCY,
    Code.CLOSED_LOOP: "{tool} is closed-loop: its latencies understate the tail (coordinated "
                      "omission); use wrk2 for tail latency",
    Code.LOCUST_ROUNDING: "Locust rounds response times (whole ms below 100 ms, 10 ms below "
                          "1 s, 100 ms below 10 s) before taking percentiles",
    Code.SATURATION_UNKNOWN: "saturation: unknown (no target rate -R; give a manifest with the "
                             "argv)",
    Code.BELOW_TARGET: lambda f: (
        f"below target: achieved {f['achieved_rps'] / f['target_rps']:.3f} x the target rate "
        f"(< {f['ratio']:g}): {f['achieved_rps']:.0f} of {f['target_rps']:.0f} req/s"),
    Code.NOT_A_NUMBER: "{field} is NaN (not a number) without a printed placeholder: input "
                       "damaged?",
    Code.INFINITE: "{field} is infinite ({value}): not a measurement; input damaged?",
    Code.NEGATIVE: "{field} is negative ({value}): no tool prints that; input damaged?",
    Code.LATENCY_ABOVE_DAY: "{field} is {value:g} ms, more than 24 h: no latency of a load "
                            "test; input damaged?",
    Code.PERCENTILES_DECREASE: "{field}: p{q2:g} ({v2} ms) is below p{q1:g} ({v1} ms); "
                               "percentiles must not decrease: input damaged?",
    Code.PERCENTILE_ABOVE_MAX: _percentile_above_max,
    Code.MEAN_ABOVE_MAX: "latency_mean_ms ({mean}) is above latency_max_ms ({high}): input "
                         "damaged?",
    Code.MIN_ABOVE_MAX: "latency_min_ms ({low}) is above latency_max_ms ({high}): input "
                        "damaged?",
    Code.HISTOGRAM_ABOVE_REQUESTS: "the histogram holds {held} samples but requests is "
                                   "{requests}: input damaged?",
    Code.COUNT_ABOVE_REQUESTS: "{field} ({count}) is above requests ({requests}): they are "
                               "counted among the requests; input damaged?",
    Code.KEPT_OUT: lambda f: (f"{f['warning']} kept out of every analysis: "
                              f"{', '.join(f['fields'])}"),
    # -- statistics --------------------------------------------------------------------------
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
    Code.EMPTY_HISTOGRAMS_LEFT_OUT: "{runs} runs have an empty histogram and were left out",
    # -- the analysis' core -----------------------------------------------------------------
    # -- a comparison ------------------------------------------------------------------------
    Code.OF_METRIC: "{metric}: {warning}",
    Code.RUNS_SATURATED: lambda f: (f"{f['side']}: {len(f['reasons'])} run(s) saturated "
                                    f"(ranked with the failed runs): {'; '.join(f['reasons'])}"),
    Code.RUNS_SHORT: lambda f: (
        f"{f['side']}: {len(f['reasons'])} run(s) in doubt, kept with their values (the row's "
        f"result without them is noted on the row): {'; '.join(f['reasons'])}"),
    Code.RUNS_PARTIAL: lambda f: (
        f"{f['side']}: {len(f['reasons'])} run(s) partial, kept with their values (fewer "
        f"connections got in than asked): {'; '.join(f['reasons'])}"),
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
    Code.COUNTERS_INCLUDE_CALIBRATION: "the counters cover the whole run, wrk2's calibration "
                                       "(about its first 10 s) included, which its latency "
                                       "histogram leaves out",
}


def text(warning: Warn) -> str:
    """``warning`` in words: its code's wording over its fields."""
    how = WORDING[warning.code]
    fields = dict(warning.fields)
    return how.format(**fields) if isinstance(how, str) else how(fields)
