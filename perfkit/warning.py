"""Warnings as values: a :class:`Code` and its fields, worded once, at presentation.

A result's warnings (a :class:`perfkit.model.Run`'s, a statistic's, an analysis result's) are
:class:`Warn` values, as benchstat's ``benchmath`` keeps ``Warnings []error`` on every sample,
summary and comparison: ``Warn(Code.FAILED_EVERY_RESPONSE)``, ``Warn(Code.ERRORS_HIGH,
ratio=0.25)``. A code is an identity (``failed-every-response``), never a sentence; the
fields are the numbers, names and run ids the wording needs. Code decides on codes
(``w.code is Code.FAILED_EVERY_RESPONSE``); only presentation turns a warning into words, through
the one wording module, :mod:`perfkit.wording` (``str(w)``, ``f"{w}"``, ``w.text``).

A :class:`Warn` is frozen and hashable: two warnings are the same when their code and fields
are, so a set of them de-duplicates caveats without reading their words. :meth:`Warn.to_dict`
is its JSON form (``code``, ``text``, ``fields``); :meth:`Warn.encode` and :meth:`Warn.decode` are
the lossless form the run store and the manifests keep.

How to turn a sentence into a coded warning: see :mod:`perfkit.wording`.
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Iterable, Mapping
from enum import StrEnum
from typing import Any

__all__ = ["Code", "Warn", "texts"]


class Code(StrEnum):
    """Every warning's identity, by the family that makes it. The value is what JSON, the run
    store and the manifests keep; its words are :data:`perfkit.wording.WORDING`'s."""

    # -- a run, as its parser read it (perfkit.ingest) ---------------------------------------
    #: a printed value that is not finite (``-nan``, ``inf``): kept as missing
    PRINTED_NOT_FINITE = "printed-not-finite"
    #: a printed 0 where the output shows nothing was measured (perfkit.ingest.nodata)
    PRINTED_ZERO_PLACEHOLDER = "printed-zero-placeholder"
    #: wrk/wrk2's Latency row recorded no sample
    NO_LATENCY_SAMPLES = "no-latency-samples"
    #: wrk2's Req/Sec row printed -nan
    NO_RATE_SAMPLES = "no-rate-samples"
    #: percentiles other than 0 beside a Latency row without samples
    PERCENTILES_WITHOUT_SAMPLES = "percentiles-without-samples"
    #: wrk2's calibration mean beyond its 24 h range
    CALIBRATION_OUT_OF_RANGE = "calibration-out-of-range"
    #: wrk2's histogram is empty (Total count = 0)
    HISTOGRAM_EMPTY = "histogram-empty"
    #: wrk2's output pasted without its Detailed Percentile spectrum
    SPECTRUM_LEFT_OUT = "spectrum-left-out"
    #: the histogram holds a part of the run's requests (wrk2's calibration)
    HISTOGRAM_PARTIAL = "histogram-partial"
    #: a pasted report: lines before it skipped
    PASTED_PREAMBLE = "pasted-preamble"
    #: a pasted report: its indent removed
    PASTED_INDENT = "pasted-indent"
    #: a pasted report: an echoed ^C removed
    PASTED_CTRL_C = "pasted-ctrl-c"
    #: a pasted report: blank lines skipped
    PASTED_BLANK_LINES = "pasted-blank-lines"
    #: a pasted report's command line names other settings than the report
    PREAMBLE_OTHER_SETTINGS = "preamble-other-settings"
    #: a pasted report's command line gave the target rate (-R)
    PREAMBLE_RATE = "preamble-rate"
    #: an HdrHistogram log's tag with only empty intervals
    HLOG_EMPTY = "hlog-empty"
    #: an HdrHistogram log's value unit, given by --unit or inferred
    HLOG_UNIT = "hlog-unit"
    #: intervals of an HdrHistogram log before its StartTime
    HLOG_BEFORE_START = "hlog-before-start"
    #: Locust: only the failures/exceptions table, no request statistics
    LOCUST_FAILURES_ONLY = "locust-failures-only"
    #: Locust: only the history CSV (totals from its last row)
    LOCUST_HISTORY_ONLY = "locust-history-only"
    #: Locust: an endpoint in the --json output but not in the CSV stats
    LOCUST_JSON_ONLY_ENDPOINT = "locust-json-only-endpoint"
    #: Locust: the CSV stats lag (or differ from) the --json totals
    LOCUST_CSV_LAGS_JSON = "locust-csv-lags-json"
    #: Locust printed N/A in some columns of a row
    LOCUST_NA = "locust-na"
    #: Locust's history: rows with N/A
    LOCUST_HISTORY_NA = "locust-history-na"
    #: Locust's history: rows whose windowed percentiles are all 0
    LOCUST_HISTORY_WINDOW_ZERO = "locust-history-window-zero"
    #: Locust's history: rows whose printed 0 percentiles are placeholders (no request yet)
    LOCUST_HISTORY_UNMEASURED = "locust-history-unmeasured"
    #: Locust's --json: an endpoint without timed requests
    LOCUST_JSON_UNTIMED = "locust-json-untimed"
    #: Locust's --json: no request statistics at all
    LOCUST_JSON_EMPTY = "locust-json-empty"
    #: a warning of one file among a run's (``source``, the ``warning``)
    IN_FILE = "in-file"
    #: Locust before 1.0: columns read by their 1.x names
    LOCUST_OLD_NAMES = "locust-old-names"
    #: Locust 0.13.3-0.14.6: a percentile column without its '%'
    LOCUST_BARE_PERCENTILE = "locust-bare-percentile"
    #: Locust up to 1.0: a method printed as Python's None
    LOCUST_NONE_METHOD = "locust-none-method"
    #: Locust up to 1.0: no final newline
    LOCUST_NO_FINAL_NEWLINE = "locust-no-final-newline"
    #: Locust 0.8-0.13.2: '# requests' may count the successes alone
    #: (:func:`perfkit.consistency.problems` reads it: failures may pass such requests)
    LOCUST_SUCCESSES_ONLY = "locust-successes-only"
    #: Locust before 0.12.2: the last row, 'Total', read as the aggregate
    LOCUST_TOTAL_ROW = "locust-total-row"
    #: Locust: Average Content Size x Requests/s beyond any number
    LOCUST_TRANSFER_BEYOND = "locust-transfer-beyond"
    #: Locust 0.x: an endpoint without a row in _distribution.csv
    LOCUST_NO_DISTRIBUTION_ROW = "locust-no-distribution-row"
    #: Locust 0.x: _distribution.csv's requests differ from the requests file's
    LOCUST_DISTRIBUTION_REQUESTS = "locust-distribution-requests"
    #: Locust 0.x: _distribution.csv rows matching no row of the requests file
    LOCUST_DISTRIBUTION_ROWS_LEFT_OUT = "locust-distribution-rows-left-out"
    #: Locust 0.x: only the _distribution.csv
    LOCUST_DISTRIBUTION_ONLY = "locust-distribution-only"
    #: a file decoded as its byte-order mark says (perfkit.ingest.decode)
    DECODED_BY_BOM = "decoded-by-bom"
    #: a file not UTF-8, decoded as Latin-1
    DECODED_LATIN1 = "decoded-latin1"
    #: a run that did not end normally (the loader's placeholder, or its manifest's status)
    RUN_ENDED = "run-ended"
    #: a manifest's status other than complete
    RUN_STATUS = "run-status"
    #: the load generator used most of its cores (the runner's check)
    GENERATOR_BOTTLENECK = "generator-bottleneck"
    #: a server like a testbed whose state perfkit could not read (the runner's check)
    TESTBED_UNREAD = "testbed-unread"
    #: the testbed's counters could not be read (the runner's check)
    COUNTERS_UNREAD = "counters-unread"
    #: a run combined from concurrent clients (perfkit.run.distributed)
    COMBINED_CLIENTS = "combined-clients"
    COMBINED_HISTOGRAMS = "combined-histograms"
    COMBINED_NO_HISTOGRAM = "combined-no-histogram"
    COMBINED_WRK_PERCENTILES = "combined-wrk-percentiles"
    #: a warning an earlier perfkit recorded in a manifest, as text
    RECORDED = "recorded"
    # -- a run's validity (perfkit.model, perfkit.consistency) -------------------------------
    NO_REQUEST_COMPLETED = "no-request-completed"
    FAILED_EVERY_RESPONSE = "failed-every-response"
    ERRORS_HIGH = "errors-high"
    WRK_CLOSED_LOOP = "wrk-closed-loop"
    CLOSED_LOOP = "closed-loop"
    LOCUST_ROUNDING = "locust-rounding"
    SATURATION_UNKNOWN = "saturation-unknown"
    BELOW_TARGET = "below-target"
    NOT_A_NUMBER = "not-a-number"
    INFINITE = "infinite"
    NEGATIVE = "negative"
    LATENCY_ABOVE_DAY = "latency-above-day"
    PERCENTILES_DECREASE = "percentiles-decrease"
    PERCENTILE_ABOVE_MAX = "percentile-above-max"
    MEAN_ABOVE_MAX = "mean-above-max"
    MIN_ABOVE_MAX = "min-above-max"
    HISTOGRAM_ABOVE_REQUESTS = "histogram-above-requests"
    COUNT_ABOVE_REQUESTS = "count-above-requests"
    #: a value that cannot be true, kept out of every analysis (perfkit.consistency.kept_out):
    #: the ``warning`` that says why, the ``fields`` it names
    KEPT_OUT = "kept-out"
    # -- a comparison (perfkit.analysis.compare, .context) ----------------------------------
    #: a warning of one metric among several (a gate's comparisons)
    OF_METRIC = "of-metric"
    #: a side's saturated runs, ranked with the failed ones, and its runs in doubt
    RUNS_SATURATED = "runs-saturated"
    RUNS_SHORT = "runs-short"
    #: a side's runs that fewer connections got into than asked (kept with their values)
    RUNS_PARTIAL = "runs-partial"
    #: only Holm's adjustment over the table makes the row untestable
    UNTESTABLE_DESIGN = "untestable-design"
    #: Holm's later step calls a row significant while its Bonferroni interval holds no change
    HOLM_STEP_INTERVAL_HOLDS = "holm-step-interval-holds"
    #: every run of one arm ran before every run of the other
    ARMS_NOT_INTERLEAVED = "arms-not-interleaved"
    #: the A/A calibration (perfkit.analysis.compare._aa)
    AA_RANKED_WORST = "aa-ranked-worst"
    AA_LEFT_OUT_OF_REQUEST_TEST = "aa-left-out-of-request-test"
    AA_NOT_TESTED = "aa-not-tested"
    AA_LEVELS_NOT_SPLIT = "aa-levels-not-split"
    AA_SPLITS_SHARE_RUNS = "aa-splits-share-runs"
    #: the drift over the run order within the arms
    ARM_DRIFT_CHECK = "arm-drift-check"
    #: a row's change the drift within the arms could have made
    DRIFT_MAY_MAKE_CHANGE = "drift-may-make-change"
    # -- the analysis' core (perfkit.analysis.core) ---------------------------------------
    #: runs whose latencies sit on a known timeout cap (perfkit.analysis.core._caps)
    ON_CAP = "on-cap"
    #: runs of a side that never measured the metric (left out, not failed)
    RUNS_UNMEASURED = "runs-unmeasured"
    #: a column that differs between the arms: part of what they compare, not a row
    COLUMN_DIFFERS_BETWEEN_ARMS = "column-differs-between-arms"
    #: a column not recorded for some arms' runs: not a row
    COLUMN_NOT_RECORDED = "column-not-recorded"
    #: the kernel counters of some runs are system-wide
    COUNTERS_SYSTEM_WIDE = "counters-system-wide"
    #: the kernel's counters of runs in a network namespace: totals over its listening sockets
    COUNTERS_NAMESPACE_TOTAL = "counters-namespace-total"
    #: the counters cover wrk2's calibration, which its histogram leaves out
    COUNTERS_INCLUDE_CALIBRATION = "counters-include-calibration"
    #: the row's smallest detectable change cannot be computed
    NO_MDE = "no-mde"
    #: cells of a tidy frame that are not finite, written as missing
    WRITTEN_AS_MISSING = "written-as-missing"
    # -- statistics (perfkit.stats) ---------------------------------------------------------
    #: a warning of one side (or both) of a comparison: ``side`` and the ``warning``
    ON_SIDE = "on-side"
    NO_RUNS = "no-runs"
    EMPTY_HISTOGRAM = "empty-histogram"
    MEDIAN_CI_NEEDS_RUNS = "median-ci-needs-runs"
    MEDIAN_CI_RANGE = "median-ci-range"
    MEDIAN_CI_NONE = "median-ci-none"
    QUANTILE_CI_NEEDS_REQUESTS = "quantile-ci-needs-requests"
    EXCLUDED_FAILED = "excluded-failed"
    NOTHING_TO_COMPARE = "nothing-to-compare"
    NO_FINISHED_RUN = "no-finished-run"
    FAILED_RANKED_WORST = "failed-ranked-worst"
    INFINITE_VALUES = "infinite-values"
    NONPOSITIVE_VALUES = "nonpositive-values"
    NO_RATIO_CI = "no-ratio-ci"
    TOO_FEW_RUNS = "too-few-runs"
    #: the rank test's smallest p (times the family) near alpha: Welch's t decides, or not
    RANK_TEST_FLOOR = "rank-test-floor"
    #: percentiles across runs (perfkit.stats.acrossruns, .bootstrap)
    RUNS_LEFT_OUT = "runs-left-out"
    RUNS_RANKED_SLOWEST = "runs-ranked-slowest"
    NO_RUNS_WITH_VALUE = "no-runs-with-value"
    ONE_RUN = "one-run"
    FEW_RUNS_T_LOG = "few-runs-t-log"
    FEW_RUNS_LOG_NORMAL = "few-runs-log-normal"
    PERCENTILE_ON_JUMP = "percentile-on-jump"
    #: printed percentiles whose tail differs between runs (a pause in some): two modes
    PRINTED_TAIL_MODES = "printed-tail-modes"
    THIN_TAILS = "thin-tails"
    PER_RUN_DRIFT = "per-run-drift"
    BOOTSTRAP_UNDER_COVERS = "bootstrap-under-covers"
    EMPTY_HISTOGRAMS_LEFT_OUT = "empty-histograms-left-out"
    #: an SLO (perfkit.stats.slo): why a rate got its verdict, and the bracket's warnings
    RATE_RUNS_FAILED = "rate-runs-failed"
    RATE_NOT_KEPT_UP = "rate-not-kept-up"
    RATE_ERRORS = "rate-errors"
    RATE_INTERVAL = "rate-interval"
    RUNS_SHORT_OF_TARGET = "runs-short-of-target"
    AT_RATE = "at-rate"
    NOT_MONOTONE = "not-monotone"
    INCONCLUSIVE_ABOVE_PASS = "inconclusive-above-pass"
    LOWEST_RATE_FAILED = "lowest-rate-failed"
    BRACKET_OPEN_ABOVE = "bracket-open-above"
    CONNECTIONS_MIXED = "connections-mixed"
    #: scalability fits (perfkit.stats.usl)
    RUNS_LEFT_OUT_OF_FIT = "runs-left-out-of-fit"
    FIT_NOT_CONVERGED = "fit-not-converged"
    RUNS_BOOTSTRAP_SINGLE_RUN = "runs-bootstrap-single-run"
    REFITS_NOT_CONVERGED = "refits-not-converged"
    ONE_RUN_PER_N = "one-run-per-n"
    SIGMA_ON_BOUND = "sigma-on-bound"
    LINEAR_REGION_MISSED = "linear-region-missed"
    AMDAHL_NO_PEAK = "amdahl-no-peak"
    NSTAR_NOT_CLAIMED = "nstar-not-claimed"
    NSTAR_CLAIMED = "nstar-claimed"
    NSTAR_ROUGH_RANGE = "nstar-rough-range"
    NSTAR_EXTRAPOLATED = "nstar-extrapolated"
    #: factorial effects (perfkit.analysis.effects)
    BLOCKS_NOT_USED = "blocks-not-used"
    FACTORIAL_KEEPS_RUNS = "factorial-keeps-runs"
    FACTORIAL_KEEPS_PARTIAL = "factorial-keeps-partial"
    #: two factors interact at a level: their simple effects given, not main effects
    INTERACT_AT = "interact-at"
    #: a load level's partial runs (fewer connections got in than opened), named
    LEVEL_RUNS_PARTIAL = "level-runs-partial"
    #: a simple effect and the A/B row of the same two cells differ by their families
    AB_FAMILY_DIFFERS = "ab-family-differs"
    #: an effect printed without its interval (too wide to print): why, on its row
    EFFECT_INTERVAL_HIDDEN = "effect-interval-hidden"
    #: latency percentiles (perfkit.analysis.latency)
    LATENCIES_WRK_CLOSED_LOOP = "latencies-wrk-closed-loop"
    LATENCIES_CLOSED_LOOP = "latencies-closed-loop"
    LATENCIES_HISTOGRAM_PARTIAL = "latencies-histogram-partial"
    ESTIMATE_RUNS_STATUS = "estimate-runs-status"
    ESTIMATES_FEW_RUNS = "estimates-few-runs"
    #: a history (perfkit.analysis.history, perfkit.store.history)
    LABEL_STORED_TWICE = "label-stored-twice"
    OF_LABELS = "of-labels"
    LABELS_RUNS_FAILED = "labels-runs-failed"
    #: a label added without its job's unreadable files (--skip-unreadable)
    LABEL_ADDED_WITHOUT = "label-added-without"
    #: the scaling analysis (perfkit.analysis.scaling)
    AMDAHL_ONLY = "amdahl-only"
    NO_SCALING_MODEL = "no-scaling-model"
    FIT_FAILED = "fit-failed"
    RUNS_WITHOUT_CONCURRENCY = "runs-without-concurrency"
    RUNS_WITHOUT_TARGET_RATE = "runs-without-target-rate"
    #: why an offered rate did not pass, at its rate
    RATE_REASON = "rate-reason"
    #: factorial designs (perfkit.stats.factorial_design)
    AT_LEVEL = "at-level"
    RUNS_WITHOUT_RESPONSE = "runs-without-response"
    UNBALANCED_DESIGN = "unbalanced-design"
    NO_SPREAD_IN_CELLS = "no-spread-in-cells"
    ONE_RUN_CELL = "one-run-cell"
    NON_ORTHOGONAL = "non-orthogonal"
    #: change points (perfkit.stats.changepoint)
    TOO_FEW_LABELS = "too-few-labels"
    RATIO_PER_UNIT = "ratio-per-unit"
    WEAK_NO_INTERVAL = "weak-no-interval"
    WEAK_HOLDS_ONE = "weak-holds-one"
    FAILED_RUNS_LEFT_OUT = "failed-runs-left-out"
    LABELS_LEFT_OUT = "labels-left-out"
    #: a step in the newest labels cannot show as a change point (and what tests it instead)
    NEWEST_UNSEEN = "newest-unseen"
    #: the recent-step test (perfkit.stats.recent): why the newest labels are not tested
    RECENT_FEW_LABELS = "recent-few-labels"
    RECENT_CHANGE_POINT_AT_NEWEST = "recent-change-point-at-newest"
    #: a history's test adjusted over the page's metrics at one load level (Holm)
    HOLM_OVER_METRICS = "holm-over-metrics"
    #: power (perfkit.stats.power)
    NO_SPREAD = "no-spread"
    TIED_VALUES = "tied-values"
    SPREAD_FEW_DF = "spread-few-df"
    RUNS_LEFT_OUT_OF_SPREAD = "runs-left-out-of-spread"
    DESIGN_CANNOT_REACH_ALPHA = "design-cannot-reach-alpha"
    MORE_RUNS_THAN = "more-runs-than"
    RATIO_OF_ONE = "ratio-of-one"
    #: the change a pilot shows is compatible with none (perfkit.stats.planning): no run count
    CHANGE_COMPATIBLE_WITH_NONE = "change-compatible-with-none"


@dataclasses.dataclass(frozen=True, init=False, repr=False)
class Warn:
    """One warning: ``code`` and its ``fields`` (name, value) pairs, sorted by name.

    A field's value is a number, a string (a name, a run id), None, a :class:`Warn` (a warning
    within another: ``base: <warning>``) or a tuple of these; a list given is kept as a
    tuple, a numpy scalar as its Python value. Words: ``str(w)``, ``f"{w}"`` or :attr:`text`
    (:func:`perfkit.wording.text`)."""

    code: Code
    fields: tuple[tuple[str, Any], ...]

    def __init__(self, code: Code | str, /, **fields: Any) -> None:
        object.__setattr__(self, "code", Code(code))
        object.__setattr__(self, "fields", tuple(sorted((k, _frozen(v))
                                                        for k, v in fields.items())))

    def __getitem__(self, name: str) -> Any:
        for key, value in self.fields:
            if key == name:
                return value
        raise KeyError(name)

    #: not a sequence: ``"text" in w`` and ``for x in w`` raise TypeError (test ``w.code``)
    __iter__ = None

    def get(self, name: str, default: Any = None) -> Any:
        """The field ``name``, or ``default``."""
        return dict(self.fields).get(name, default)

    @property
    def text(self) -> str:
        """The warning in words (:func:`perfkit.wording.text`)."""
        from perfkit.wording import text

        return text(self)

    def __str__(self) -> str:
        return self.text

    def __format__(self, spec: str) -> str:
        return format(self.text, spec)

    def __repr__(self) -> str:
        args = "".join(f", {k}={v!r}" for k, v in self.fields)
        return f"Warn({self.code.value!r}{args})"

    def to_dict(self) -> dict[str, Any]:
        """The JSON form: ``{"code": ..., "text": ..., "fields": {...}}`` (a NaN field as
        None, a warning within as its own dict)."""
        return {"code": self.code.value, "text": self.text,
                "fields": {k: _jsonable(v) for k, v in self.fields}}

    def encode(self) -> str:
        """The lossless JSON text of the code and fields (NaN kept) that :meth:`decode`
        reads back: what the run store keeps."""
        return json.dumps(_plain(self), separators=(",", ":"))

    @classmethod
    def decode(cls, data: str | Mapping[str, Any]) -> Warn:
        """The warning of :meth:`encode`'s text or of a ``{"code", "fields"}`` mapping
        (:meth:`to_dict`'s too). An unknown code raises ValueError."""
        raw = json.loads(data) if isinstance(data, str) else data
        return cls(raw["code"], **{k: _restored(v)
                                   for k, v in (raw.get("fields") or {}).items()})


def texts(warnings: Iterable[Warn | str]) -> list[str]:
    """The words of each warning, in order (a text as it is: a caveat not coded yet)."""
    return [str(w) for w in warnings]


_SCALARS = (str, int, float, bool, type(None))


def _frozen(value: Any) -> Any:
    item = getattr(value, "item", None)  # a numpy scalar (np.float64 is a float too)
    if item is not None and getattr(value, "shape", None) == ():
        return item()
    if isinstance(value, _SCALARS) or isinstance(value, Warn):
        return value
    if isinstance(value, list | tuple):
        return tuple(_frozen(v) for v in value)
    raise TypeError(f"a warning's field must be a number, a string, None, a Warn or a tuple "
                    f"of these, not {type(value).__name__}")


def _plain(value: Any) -> Any:
    if isinstance(value, Warn):
        return {"code": value.code.value, "fields": {k: _plain(v) for k, v in value.fields}}
    if isinstance(value, tuple):
        return [_plain(v) for v in value]
    return value


def _jsonable(value: Any) -> Any:
    if isinstance(value, Warn):
        return value.to_dict()
    if isinstance(value, tuple):
        return [_jsonable(v) for v in value]
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def _restored(value: Any) -> Any:
    if isinstance(value, Mapping):
        return Warn.decode(value)
    if isinstance(value, list):
        return tuple(_restored(v) for v in value)
    return value
