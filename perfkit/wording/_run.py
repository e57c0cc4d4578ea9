"""The words of a run's warnings: what its parser read, and whether it is a measurement."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from perfkit.warning import Code
from perfkit.wording._common import WRK_LATENCY, Wording, plural_s

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


def _percentile_above_max(f: Mapping[str, Any]) -> str:
    beyond = " by more than Locust's rounding" if f["rounded"] else ""
    return (f"{f['field']}: p{f['q']:g} ({f['value']} ms) is above latency_max_ms "
            f"({f['max_ms']} ms){beyond}: input damaged?")


#: how a report's per-run histograms of wrk2 runs were made, said beside their links
#: (perfkit.store.hlog.shipped_histogram, measurement_interval)
HLOG_FROM_WRK2 = ("rebuilt from wrk2's printed output, its Detailed Percentile spectrum with "
                  "its printed percentiles, each line over wrk2's own measurement window "
                  "after its calibration; each file's comments say so run by run")

RUN: dict[Code, Wording] = {
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
    Code.PASTED_PREAMBLE: lambda f: (f"preamble: {f['lines']} line{plural_s(f['lines'])} "
                                     "before the report skipped (kept in extra['pasted'])"),
    Code.PASTED_INDENT: "pasted: indented {indent} (removed)",
    Code.PASTED_CTRL_C: lambda f: (
        f"pasted: an echoed ^C removed at the start of line {', '.join(map(str, f['lines']))} "
        "(a run stopped by hand)"),
    Code.PASTED_BLANK_LINES: lambda f: (f"pasted: {f['lines']} blank line{plural_s(f['lines'])} "
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
        f"{f['intervals']} interval{plural_s(f['intervals'])} start before the log's #[StartTime] "
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
}
