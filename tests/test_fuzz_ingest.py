"""Mutation fuzzing of every parser and of perfkit.load over the real fixtures (tests/_fuzz.py):
a few thousand damaged inputs, deterministic seed. Each must end in runs or in a PerfkitError
(a ParseError with a line inside the input), never another exception, never over 1 s.
benchmarks/fuzz_ingest.py runs the same engine over >= 10**5 inputs."""

from __future__ import annotations

import random

import pytest
from _fuzz import FAILURES, MUTATIONS, load_seeds, mutate, run_fuzz

from perfkit.errors import ParseError
from perfkit.ingest import wrk2


@pytest.fixture(scope="module")
def seeds():
    return load_seeds()


def test_seeds_cover_every_kind_of_file(seeds):
    kinds = {s.kind for s in seeds}
    assert kinds == {"wrk", "wrk2", "hlog", "locust_json", "locust_stats", "locust_history",
                     "locust_failures", "locust_exceptions"}
    assert any(s.name.startswith("wild/") for s in seeds)


def test_every_mutation_changes_some_input(seeds):
    rng = random.Random(0)
    data = next(s.data for s in seeds if s.kind == "wrk2")
    for op in MUTATIONS:
        assert any(op(rng, data) != data for _ in range(5)), op.__name__


@pytest.mark.slow
def test_three_thousand_mutated_inputs_never_crash_or_hang(seeds):
    report = run_fuzz(3000, seed=20261122, seeds=seeds)
    assert sum(report.counts.values()) == 3000
    assert report.failures == 0, {k: report.examples.get(k) for k in FAILURES}
    # the fuzzer is not vacuous: inputs end in every outcome
    assert report.counts["runs"] > 300 and report.counts["parse_error"] > 1000
    assert report.counts["perfkit_error"] > 50


def test_a_known_quadratic_case_stays_fast():
    """A CR-only output is one long line: the header regex once backtracked quadratically."""
    line = "Running 15s test @ http://127.0.0.1:8081/\r  2 threads and 64 connections" + (
        " " * 200_000)
    with pytest.raises(ParseError) as info:
        wrk2.parse(line, "cr.txt")
    assert info.value.line == 1


def test_mutate_is_deterministic(seeds):
    a = mutate(random.Random(5), seeds[0].data)
    b = mutate(random.Random(5), seeds[0].data)
    assert a == b
