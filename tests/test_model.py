"""perfkit.model: the Run record, its derived fields and its validity warnings."""

import math
import pickle

import pytest

from perfkit.histogram import LatencyHistogram
from perfkit.model import RECORD_COLUMNS, FrozenMap, Run, percentile_column
from perfkit.warning import Code, Warn


def codes(run: Run) -> set[Code]:
    return {w.code for w in run.warnings}


def make(**kw):
    base = dict(tool="wrk", source="x", latency_source="summary_only", requests=1000,
                errors_connect=0, errors_read=0, errors_write=0, errors_timeout=0,
                non_2xx_3xx=0, throughput_rps=100.0)
    base.update(kw)
    return Run(**base)


def test_percentile_column_names():
    assert percentile_column(99.9) == "latency_p99_9_ms"
    assert percentile_column(50) == "latency_p50_ms"
    assert percentile_column(99.99) == "latency_p99_99_ms"
    assert percentile_column(99, "uncorrected") == "latency_uncorrected_p99_ms"


def test_run_is_frozen_all_the_way_down():
    run = make(percentiles_ms={50: 1.0}, factors={"profile": "a"})
    with pytest.raises(AttributeError):
        run.requests = 3
    with pytest.raises(TypeError):
        run.factors["profile"] = "b"
    with pytest.raises(TypeError):
        run.percentiles_ms[50.0] = 2.0
    assert run.percentiles_ms == {50.0: 1.0}


def test_run_pickles_with_its_histogram():
    hist = LatencyHistogram.from_values_us([100, 200, 300])
    run = make(tool="wrk2", latency_source="hdr_corrected", histogram=hist,
               factors=FrozenMap(profile="a"))
    back = pickle.loads(pickle.dumps(run))
    assert back.histogram == hist and back.factors == {"profile": "a"}


def test_unknown_latency_source_is_refused():
    with pytest.raises(ValueError):
        make(latency_source="averaged")


def test_record_has_every_contract_column_in_order():
    rec = make().to_record()
    assert list(rec)[: len(RECORD_COLUMNS)] == list(RECORD_COLUMNS)
    assert math.isnan(rec["latency_p99_9_ms"])  # wrk never prints it: missing, not 0
    assert rec["histogram_count"] is None


def test_error_ratio_counts_failed_attempts():
    run = make(requests=42998, errors_write=105015)
    assert run.error_ratio == pytest.approx(105015 / (42998 + 105015))
    assert Code.ERRORS_HIGH in codes(run)


def test_no_error_warning_below_one_percent():
    run = make(requests=10000, non_2xx_3xx=50)
    assert run.error_ratio == pytest.approx(0.005)
    assert not codes(run) & {Code.ERRORS_HIGH, Code.FAILED_EVERY_RESPONSE}


def test_every_response_failed_is_not_a_throughput_measurement():
    run = make(requests=290698, non_2xx_3xx=290698)
    assert Code.FAILED_EVERY_RESPONSE in codes(run)
    assert Code.ERRORS_HIGH not in codes(run)


def test_closed_loop_tools_are_flagged_for_coordinated_omission():
    assert Code.WRK_CLOSED_LOOP in codes(make())
    assert "coordinated omission" in Warn(Code.WRK_CLOSED_LOOP).text
    wrk2 = make(tool="wrk2", latency_source="hdr_corrected")
    assert not codes(wrk2) & {Code.WRK_CLOSED_LOOP, Code.CLOSED_LOOP}


def test_saturation_is_unknown_without_a_target_rate():
    run = make(tool="wrk2", latency_source="hdr_corrected", throughput_rps=1000.0)
    assert run.below_target is None
    assert Code.SATURATION_UNKNOWN in codes(run)


@pytest.mark.parametrize("achieved, saturated", [(9901.0, False), (9899.0, True)])
def test_saturation_threshold_is_99_percent_of_target(achieved, saturated):
    run = make(tool="wrk2", latency_source="hdr_corrected", throughput_rps=achieved,
               target_rate_rps=10000.0)
    assert run.below_target is saturated
    # the raw check says what it measured; the verdict (saturated or short) is the run-status
    # rule's, among the run's peers
    assert (Code.BELOW_TARGET in codes(run)) is saturated
    if saturated:  # the words of the measurement, not a verdict
        assert str(next(w for w in run.warnings if w.code is Code.BELOW_TARGET)) == (
            "below target: achieved 0.990 x the target rate (< 0.99): 9899 of 10000 req/s")


def test_locust_rounding_and_failures():
    run = Run(tool="locust", source="x", latency_source="locust_rounded", requests=200,
              failures=10)
    assert run.error_ratio == 0.05
    assert {Code.LOCUST_ROUNDING, Code.CLOSED_LOOP, Code.ERRORS_HIGH} <= codes(run)


def test_provenance_is_declared_once_for_the_run_and_its_manifest():
    """Run and the manifest reader's ManifestInfo share the fields of Provenance (issue 32):
    neither class declares one of them again."""
    import dataclasses

    from perfkit.model import PROVENANCE_FIELDS, Provenance, Run
    from perfkit.store.manifest import ManifestInfo

    assert issubclass(Run, Provenance) and issubclass(ManifestInfo, Provenance)
    assert not set(vars(Run)["__annotations__"]) & set(PROVENANCE_FIELDS)
    assert not set(vars(ManifestInfo)["__annotations__"]) & set(PROVENANCE_FIELDS)
    for cls in (Run, ManifestInfo):
        fields = {f.name: f for f in dataclasses.fields(cls)}
        assert all(fields[name].kw_only for name in PROVENANCE_FIELDS)
    run = Run(tool="wrk", source="x", latency_source="summary_only", run_id="r1", order=3)
    assert (run.run_id, run.order, run.block) == ("r1", 3, None)
