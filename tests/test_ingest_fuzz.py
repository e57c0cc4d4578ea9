"""Mutation fuzzing of every parser and of perfkit.load over real outputs (tests/_fuzz.py): a few
thousand damaged inputs, deterministic seed. Each must end in runs or in a PerfkitError (a
ParseError with a line inside the input), never another exception, never over 1 s; every
successful parse has sane values (tests/_fuzz_checks.py); the fast wrk2 path never disagrees
with wrk2.parse; the run store never changes a load. benchmarks/fuzz_ingest.py runs the same
engine over >= 10**5 inputs."""

from __future__ import annotations

import math
import random
import time

import _fuzz
import pytest
from _fuzz import FAILURES, MUTATIONS, load_seeds, make_input, mutate, run_fuzz
from _fuzz_checks import counter_problems, problems, strict_problems
from _fuzz_mutations import CSV, GENERIC, JSON, swap_columns

from perfkit.consistency import kept_out
from perfkit.counters import ServerCounters
from perfkit.errors import ParseError
from perfkit.ingest import counters, locust, wrk2
from perfkit.model import Run


@pytest.fixture(scope="module")
def seeds():
    return load_seeds()


def test_seeds_cover_every_kind_of_file_fixtures_data_and_locust_directories(seeds):
    kinds = {s.kind for s in seeds}
    assert kinds == {"wrk", "wrk2", "hlog", "locust_json", "locust_stats", "locust_history",
                     "locust_failures", "locust_exceptions", "locust_dir",
                     "locust_distribution",  # Locust 0.8-0.13.2 (tests/fixtures/published)
                     "stub_status", "proc_net"}
    assert any(s.name.startswith("wild/") for s in seeds)
    assert {s.kind for s in seeds if s.name.startswith("data/")} >= {"wrk", "wrk2",
                                                                     "locust_dir"}
    whole = [s for s in seeds if s.kind == "locust_dir" and s.name == "locust/clean_u20"]
    assert {k for k, _, _ in whole[0].files} == {"locust_json", "locust_stats",
                                                 "locust_history", "locust_failures",
                                                 "locust_exceptions"}


@pytest.mark.parametrize("op", MUTATIONS, ids=lambda op: op.__name__)
def test_every_mutation_changes_some_input(seeds, op):
    kind = "locust_stats" if op in CSV else "locust_json" if op in JSON else "wrk2"
    data = next(s.data for s in seeds if s.kind == kind)
    rng = random.Random(0)
    assert any(op(rng, data) != data for _ in range(5)), op.__name__


def test_csv_and_json_mutations_are_picked_for_their_files(seeds):
    stats = next(s for s in seeds if s.kind == "locust_stats")
    names = {mutate(random.Random(k), stats.data, stats.kind)[1] for k in range(200)}
    assert any(op.__name__ in n for n in names for op in CSV)
    wrk = next(s for s in seeds if s.kind == "wrk")
    names = {mutate(random.Random(k), wrk.data, wrk.kind)[1] for k in range(200)}
    assert not any(op.__name__ in n for n in names for op in CSV + JSON)
    assert len({op.__name__ for op in GENERIC}) == len(GENERIC) - 2  # two weighted twice


@pytest.mark.parametrize("kind", ["locust_stats", "locust_history", "locust_failures",
                                  "locust_exceptions"])
def test_swapping_two_csv_columns_does_not_change_the_parse(seeds, kind):
    """Locust's CSVs are read by header name: whole columns swapped give the same result."""
    for s in [s for s in seeds if s.kind == kind][:3]:
        clean = _fuzz.PARSERS[kind](s.data.decode(), "f.csv")
        for k in range(5):
            swapped = swap_columns(random.Random(k), s.data)
            assert swapped != s.data
            assert _fuzz._same(_fuzz._runs(_fuzz.PARSERS[kind](swapped.decode(), "f.csv")),
                               _fuzz._runs(clean)), (s.name, k)


def test_the_value_checks_catch_broken_runs(seeds):
    wrk2_seed = next(s for s in seeds if s.name.endswith("normal_tuned_R10000_c50/run.stdout"))
    run = wrk2.parse(wrk2_seed.data.decode(), "a")
    assert problems([run]) == []
    broken = [run.replace(requests=-1), run.replace(latency_mean_ms=math.nan),
              run.replace(threads=2.0), run.replace(percentiles_ms={900.0: 1.0}),
              run.replace(extra={**run.extra, "hdr": {**run.extra["hdr"], "total_count": 5}}),
              run.replace(throughput_rps=math.inf)]
    for bad in broken:
        assert problems([bad]), bad
    history = locust.parse_history_csv(
        next(s for s in seeds if s.kind == "locust_history").data.decode(), "h.csv")
    assert problems(history) == []


def test_a_fast_path_that_disagrees_is_caught(seeds, monkeypatch):
    real = _fuzz.fastwrk2.parse_many

    def off_by_one(items):
        return [None if r is None else r.replace(requests=r.requests + 1) for r in real(items)]

    monkeypatch.setattr(_fuzz.fastwrk2, "parse_many", off_by_one)
    wrk2_seeds = [s for s in seeds if s.kind == "wrk2" and not s.name.startswith("data/")]
    report = run_fuzz(40, seed=3, load_every=0, seeds=wrk2_seeds)
    assert report.counts["fast_taken"] > 0
    assert report.counts["fast_mismatch"] == report.counts["fast_taken"]


def test_make_input_is_deterministic_and_reaches_locust_directories(seeds):
    a = [make_input(seeds, 7, i)[2:] for i in range(50)]
    assert a == [make_input(seeds, 7, i)[2:] for i in range(50)]
    assert any(isinstance(data, tuple) for data, _ in a)


@pytest.mark.slow
def test_three_thousand_mutated_inputs_never_crash_hang_or_give_bad_values(seeds):
    report = run_fuzz(3000, seed=20261122, seeds=seeds)
    assert report.counts["inputs"] == 3000
    assert report.failures == 0, {k: report.examples.get(k) for k in FAILURES}
    # the fuzzer is not vacuous: inputs end in every outcome, values are checked, the fast
    # path takes some inputs
    assert report.counts["runs"] > 300 and report.counts["parse_error"] > 900
    assert report.counts["perfkit_error"] > 50
    assert report.counts["values_checked"] > 300 and report.counts["fast_taken"] > 10
    # ... contradictions are made and kept out, counter snapshots read or refused
    assert report.counts["kept_out"] > 10 and report.counts["contradictions_checked"] > 800
    assert report.counts["counter_inputs"] > 150 and report.counts["counters_checked"] > 20


def test_a_known_quadratic_case_stays_fast():
    """A CR-only output is one long line: the header regex once backtracked quadratically."""
    line = "Running 15s test @ http://127.0.0.1:8081/\r  2 threads and 64 connections" + (
        " " * 200_000)
    with pytest.raises(ParseError) as info:
        wrk2.parse(line, "cr.txt")
    assert info.value.line == 1


def test_a_megabyte_command_line_above_a_pasted_report_stays_fast():
    """A preamble line naming wrk, a megabyte long: shlex.split took 15 s over it (fuzz #2202)."""
    from perfkit.ingest import pasted

    line = "$ wrk -t2 -c64 http://127.0.0.1/" + " 9" * 500_000
    start = time.process_time()
    assert pasted.command_options([line]) is None
    assert pasted.command_options(["$ wrk -t2 -c64 http://127.0.0.1/"])["connections"] == 64
    assert time.process_time() - start < 1.0


def test_mutate_is_deterministic(seeds):
    a = mutate(random.Random(5), seeds[0].data)
    b = mutate(random.Random(5), seeds[0].data)
    assert a == b


def test_a_run_is_a_run():
    assert problems([object()]) and problems(object())
    assert problems([Run(tool="wrk", source="s", latency_source="summary_only")]) == []


# -- issue 30: contradictions and counter snapshots -------------------------------------------
def test_the_strict_checks_catch_what_kept_out_removes(seeds):
    """A contradiction of each kind in a real run: the strict check sees it, and after
    kept_out (the loader's step) none is left."""
    wrk2_seed = next(s for s in seeds if s.name.endswith("normal_tuned_R10000_c50/run.stdout"))
    run = wrk2.parse(wrk2_seed.data.decode(), "a")
    assert strict_problems([run]) == []
    p = dict(run.percentiles_ms)
    p[99.0], p[90.0] = p[90.0], p[99.0]
    broken = [run.replace(percentiles_ms=p), run.replace(latency_min_ms=1e6),
              run.replace(percentiles_ms={**run.percentiles_ms, 50.0: 1e308}),
              run.replace(non_2xx_3xx=run.requests + 1),
              run.replace(counters=ServerCounters(server_requests=-1)),
              run.replace(latency_mean_ms=run.latency_max_ms * 10)]
    for bad in broken:
        assert strict_problems([bad]), bad
        assert strict_problems([kept_out(bad)]) == [], kept_out(bad).notes


def test_the_counter_checks_catch_a_non_ascii_or_negative_count(seeds):
    stub = next(s for s in seeds if s.kind == "stub_status")
    text = stub.data.decode()
    page = counters.parse_stub_status(text)
    assert counter_problems("stub_status", text, page) == []
    assert counter_problems("stub_status", text.replace("1", "\u0661", 1), page)
    assert counter_problems("stub_status", text, {**page, "accepts": -1})
    snmp = next(s for s in seeds if s.kind == "proc_net" and b"Tcp:" in s.data)
    table = counters.parse_proc_table(snmp.data.decode())
    assert counter_problems("proc_net", snmp.data.decode(), table) == []  # MaxConn -1 is fine
    assert counter_problems("proc_net", snmp.data.decode(),
                            {**table, "Tcp": {**table["Tcp"], "ActiveOpens": -2}})


def test_a_small_fuzz_of_counter_snapshots_and_contradictions_finds_nothing(seeds):
    """The fast tier's sample: counter snapshots and the wrk/wrk2/Locust seeds whose values
    the contradiction checks judge (benchmarks/fuzz_ingest.py runs >= 10**5 inputs)."""
    picked = [s for s in seeds if s.kind in ("stub_status", "proc_net", "wrk", "wrk2")
              and not s.name.startswith("data/")]
    report = run_fuzz(400, seed=30, load_every=4, seeds=picked)
    assert report.failures == 0, {k: report.examples.get(k) for k in FAILURES}
    assert report.counts["counter_inputs"] > 20 and report.counts["contradictions_checked"] > 50
