"""No silent nonsense: a run that contradicts itself carries a warning naming the field; every
real output (fixtures, wild states, bundled data) is consistent."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

import perfkit
from perfkit.consistency import consistency_warnings
from perfkit.ingest import wrk2
from perfkit.warning import Code, Warn

HERE = Path(__file__).resolve().parent
RUN = HERE / "fixtures" / "wrk2" / "single" / "normal_tuned_R10000_c50" / "run.stdout"


@pytest.fixture(scope="module")
def run():
    return wrk2.parse(RUN.read_text(), str(RUN))


def test_every_real_run_is_consistent():
    # data/seeds holds outputs as the write-ups printed them; one is elided by its author
    # ("..."), and its refusal is tested in tests/test_analysis_seeds_published.py
    data = [p for p in (HERE.parent / "data").iterdir() if p.is_dir() and p.name != "seeds"]
    fixtures = [d for d in sorted((HERE / "fixtures").iterdir())
                if d.is_dir() and d.name != "published"]  # published/: refusals on purpose
    runs = [r for d in fixtures + list(data) for r in perfkit.load(d)]
    assert len(runs) > 300
    assert [(r.source, consistency_warnings(r)) for r in runs
            if consistency_warnings(r)] == []


@pytest.mark.parametrize(("changes", "code", "fields"), [
    ({"requests": -5}, Code.NEGATIVE, {"field": "requests"}),
    ({"throughput_rps": -1.0}, Code.NEGATIVE, {"field": "throughput_rps"}),
    ({"latency_mean_ms": math.nan}, Code.NOT_A_NUMBER, {"field": "latency_mean_ms"}),
    ({"latency_max_ms": math.inf}, Code.INFINITE, {"field": "latency_max_ms"}),
    ({"errors_timeout": -1}, Code.NEGATIVE, {"field": "errors_timeout"}),
    ({"latency_mean_ms": 500.0}, Code.MEAN_ABOVE_MAX, {"mean": 500.0}),
    ({"latency_min_ms": 900.0, "latency_max_ms": 10.0}, Code.MIN_ABOVE_MAX, {"low": 900.0}),
    ({"requests": 10}, Code.HISTOGRAM_ABOVE_REQUESTS, {"requests": 10}),
])
def test_a_damaged_field_is_named_in_a_warning(run, changes, code, fields):
    assert consistency_warnings(run) == []
    damaged = run.replace(**changes)
    found = [w for w in damaged.warnings if w.code is code]
    assert any(all(w.get(k) == v for k, v in fields.items()) for w in found), damaged.warnings


def test_percentiles_must_not_decrease_nor_pass_the_max(run):
    p = dict(run.percentiles_ms)
    p[99.0], p[90.0] = p[90.0], p[99.0] + 1.0
    (warning,) = [w for w in consistency_warnings(run.replace(percentiles_ms=p))
                  if w.code is Code.PERCENTILES_DECREASE and w["q2"] == 99.0]
    assert (warning["field"], warning["q1"]) == ("percentiles_ms", 90.0)
    assert str(warning).startswith("percentiles_ms: p99 (")
    high = dict(run.percentiles_ms)
    high[99.9] = run.latency_max_ms * 2
    assert any(w.code is Code.PERCENTILE_ABOVE_MAX
               for w in consistency_warnings(run.replace(percentiles_ms=high)))
    bad = {**run.uncorrected_percentiles_ms, 50.0: -1.0}
    assert Warn(Code.NEGATIVE, field="uncorrected_percentiles_ms[50]", value=-1.0) in \
        consistency_warnings(run.replace(uncorrected_percentiles_ms=bad))


def test_printing_precision_is_not_damage(run):
    """wrk2 prints Max 2.89s beside 100.000% 2.90s (a real output): within the slack."""
    p = dict(run.percentiles_ms)
    p[99.999] = p[100.0] = 2900.0
    warnings = consistency_warnings(run.replace(percentiles_ms=p, latency_max_ms=2890.0))
    assert not any(w.code is Code.PERCENTILE_ABOVE_MAX for w in warnings)
