"""wrk2 output: golden values, histograms checked against their footers and round-tripped
through hdrh's own ``output_percentile_distribution``, ``-U``, calibration and the loader."""

from __future__ import annotations

import csv
import math
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from hdrh import iterators
from hdrh.histogram import HdrHistogram

import perfkit
from perfkit.histogram import HIGHEST_US, LAYOUT, LatencyHistogram
from perfkit.ingest import wrk2
from perfkit.warning import Code, Warn

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "wrk2"
RUNS = sorted(p.parent for p in FIXTURES.glob("*/*/run.stdout"))
IDS = [f"{p.parent.name}/{p.name}" for p in RUNS]
US_PER = {"us": 1, "ms": 1000, "s": 1_000_000, "m": 60_000_000}


def parse_dir(run_dir: Path):
    path = run_dir / "run.stdout"
    return wrk2.parse(path.read_text(), str(path))


def parse_fixture(name: str):
    return parse_dir(FIXTURES / name)


def printed_blocks(text: str) -> list[dict]:
    """Each latency distribution as printed, read with str.split (independent of the parser)."""
    blocks = []
    for part in text.split("Latency Distribution (HdrHistogram - ")[1:]:
        lines = part.split("\n")
        summary = [row.split() for row in lines[1:9]]
        start = lines.index("       Value   Percentile   TotalCount 1/(1-Percentile)") + 2
        end = next(i for i in range(start, len(lines)) if lines[i].startswith("#[Mean"))
        rows = [row.split() for row in lines[start:end]]
        footer = " ".join(lines[end:end + 3]).replace(",", " ").replace("]", " ").split()
        blocks.append({
            "uncorrected": lines[0].startswith("Uncorrected"),
            "summary": [(float(q.rstrip("%")), v) for q, v in summary],
            "rows": [(float(v), float(p), int(c), r) for v, p, c, r in rows],
            "mean": footer[2], "max": footer[8], "total": int(footer[12]),
        })
    return blocks


def histograms(run) -> list[LatencyHistogram]:
    return [h for h in (run.histogram, run.uncorrected_histogram) if h is not None]


def test_every_wrk2_fixture_is_found():
    assert len([r for r in RUNS if r.parent.name == "single"]) == 11
    assert len([r for r in RUNS if r.parent.name == "sweep"]) == 48


@pytest.mark.parametrize("run_dir", RUNS, ids=IDS)
def test_wrk2_output_matches_golden_values(run_dir, wrk_check_golden):
    run = parse_dir(run_dir)
    wrk_check_golden(run, f"wrk2/{run_dir.parent.name}/{run_dir.name}")
    assert run.tool == "wrk2" and run.latency_source == "hdr_corrected"
    assert run.tool_version is None and run.target_rate_rps is None  # not printed


@pytest.mark.parametrize("run_dir", RUNS, ids=IDS)
def test_histogram_agrees_with_its_footer(run_dir):
    run = parse_dir(run_dir)
    blocks = printed_blocks((run_dir / "run.stdout").read_text())
    assert len(blocks) == len(histograms(run))
    for block, hist in zip(blocks, histograms(run), strict=True):
        assert hist.total_count == block["total"]
        # wrk2's HdrHistogram_c prints the lowest value equivalent to the recorded maximum
        lowest = LAYOUT.lowest[LAYOUT.index_of(np.array([int(hist.max_us)]))[0]]
        assert f"{lowest / 1000:.3f}" == block["max"]
        assert hist.max_us == round(block["rows"][-1][0] * 1000)
        # the printed mean lies between the lowest and highest means the rows allow (hdrh's
        # mean of the rebuilt histogram is the highest; the lowest puts each row's requests
        # just above the previous row's bucket)
        low = HdrHistogram(1, HIGHEST_US, 3)
        previous = None
        for value_ms, _, total, _ in block["rows"]:
            us = round(value_ms * 1000)
            delta = total - (previous[1] if previous else 0)
            at = us if previous is None or previous[0] == us else previous[0] + 1
            if delta:
                low.record_value(at, delta)
            previous = (us, total)
        mean = float(block["mean"])
        assert low.get_mean_value() / 1000 - 0.0005 <= mean <= hist.mean_us / 1000 + 0.0005


def _c_percentile_ladder(self):
    """HdrHistogram_c / Java's ladder: hdrh 0.10.8 forgets the integer cast in half_distance."""
    self.percentile_to_iterate_from = self.percentile_to_iterate_to
    gap = 100.0 - self.percentile_to_iterate_to
    if gap:
        half_distance = 2 ** (int(math.log(100.0 / gap) / math.log(2)) + 1)
        ticks = self.percentile_ticks_per_half_distance * half_distance
        self.percentile_to_iterate_to += 100.0 / ticks


def hdrh_rows(hist: LatencyHistogram) -> list[tuple]:
    lines = hist.spectrum_text().split("\n")
    return [tuple(line.split()) for line in lines[2:] if line and not line.startswith("#")]


#: the round trip's runs: hdrh prints a spectrum in Python (about 0.25 s of CPU a run), so the
#: fast tier takes every single run (each a quirk of its own) and the sweep's first repetition
#: at 64 connections (each profile and rate once), 19 of 59; the slow tier the other 40
ROUND_TRIP = [pytest.param(run, id=i, marks=() if not i.startswith("sweep/")
                           or i.endswith("_c64_rep1") else pytest.mark.slow)
              for run, i in zip(RUNS, IDS, strict=True)]


@pytest.mark.parametrize("run_dir", ROUND_TRIP)
def test_spectrum_round_trips_through_hdrh_output(run_dir, monkeypatch):
    """Rebuilt histogram -> hdrh's output_percentile_distribution -> the printed rows.

    Formatting differences, compared numerically instead: hdrh prints Percentile with 12
    decimals (wrk2: 6) and leaves the last row's 1/(1-Percentile) empty (wrk2: ``inf``).
    hdrh's own percentile ladder differs from HdrHistogram_c's (0.19, 0.271, ... instead of
    0.2, 0.3, ...), so the C ladder is patched in for a row-by-row comparison.
    """
    monkeypatch.setattr(iterators.PercentileIterator, "increment_iteration_level",
                        _c_percentile_ladder)
    run = parse_dir(run_dir)
    for block, hist in zip(printed_blocks((run_dir / "run.stdout").read_text()),
                           histograms(run), strict=True):
        got = hdrh_rows(hist)
        assert len(got) == len(block["rows"])
        for (value, pct, total, inverse), row in zip(block["rows"], got, strict=True):
            assert float(row[0]) == value
            assert round(float(row[1]), 6) == pct
            assert int(row[2]) == total
            assert (row[3] if len(row) == 4 else "inf") == inverse


@pytest.mark.parametrize("run_dir", RUNS[:12], ids=IDS[:12])
def test_hdrh_unpatched_output_stays_on_printed_rows(run_dir):
    """With hdrh's own ladder every (Value, TotalCount) it prints is one wrk2 printed."""
    run = parse_dir(run_dir)
    for block, hist in zip(printed_blocks((run_dir / "run.stdout").read_text()),
                           histograms(run), strict=True):
        printed = {(v, c) for v, _, c, _ in block["rows"]}
        got = {(float(r[0]), int(r[2])) for r in hdrh_rows(hist)}
        assert got <= printed
        assert max(got) == max(printed)


def to_us(token: str) -> tuple[float, float]:
    """A printed time (``'1.24ms'``) in us, and half its last printed digit in us."""
    unit = token.lstrip("0123456789.")
    number = token[: len(token) - len(unit)]
    return float(Fraction(number) * US_PER[unit]), 0.005 * US_PER[unit]


@pytest.mark.parametrize("run_dir", RUNS, ids=IDS)
def test_printed_percentiles_lie_in_their_spectrum_bracket(run_dir):
    run = parse_dir(run_dir)
    for block, hist in zip(printed_blocks((run_dir / "run.stdout").read_text()),
                           histograms(run), strict=True):
        rows = block["rows"]
        for q, token in block["summary"]:
            rank = max(1, math.floor(q / 100 * block["total"] + 0.5))
            upper = next(v for v, _, c, _ in rows if c >= rank) * 1000
            lower = max([v for v, _, c, _ in rows if c < rank], default=upper / 1000) * 1000
            printed, half_digit = to_us(token)
            assert lower - half_digit <= printed <= upper + half_digit, (q, token)
            assert hist.percentile_us(q) == pytest.approx(upper, abs=0.5)


def test_hand_checked_values_of_the_uncorrected_run():
    run = parse_fixture("single/uncorrected_U_default_R20000_c50")
    assert run.latency_stdev_ms == 0.57478  # "574.78us"
    assert run.bytes_read == 480.36 * 1024**2  # "480.36MB read"
    assert run.transfer_bytes_per_s == 24.02 * 1024**2
    assert run.throughput_rps == 19940.03
    assert run.extra["thread_stats"]["req_per_thread_avg_rps"] == 10550.0  # "10.55k"


def test_uncorrected_block_is_kept_apart():
    run = parse_fixture("single/uncorrected_U_default_R20000_c50")
    assert run.percentiles_ms[50.0] == 1.30 and run.uncorrected_percentiles_ms[50.0] == 0.439
    assert run.percentiles_ms[99.9] == 4.63 and run.uncorrected_percentiles_ms[99.9] == 2.71
    assert run.histogram.total_count == run.uncorrected_histogram.total_count == 197502
    assert run.histogram.percentile_ms(50) == 1.296
    assert run.uncorrected_histogram.percentile_ms(50) == 0.439
    assert run.extra["hdr"]["mean_ms"] == 1.319
    assert run.extra["hdr_uncorrected"]["mean_ms"] == 0.476
    record = run.to_record()
    assert record["latency_p50_ms"] == 1.30 and record["latency_p99_9_ms"] == 4.63
    assert record["latency_uncorrected_p50_ms"] == 0.439
    assert record["latency_uncorrected_p90_ms"] == 0.839
    assert record["latency_uncorrected_p99_ms"] == 1.20
    assert record["latency_uncorrected_p99_9_ms"] == 2.71


def test_runs_without_u_have_no_uncorrected_values():
    record = parse_fixture("single/normal_tuned_R10000_c50").to_record()
    assert math.isnan(record["latency_uncorrected_p99_ms"])


def test_calibration_lines_go_to_extra():
    run = parse_fixture("single/normal_tuned_R10000_c50")
    assert [dict(c) for c in run.extra["calibration"]] == [
        {"mean_latency_ms": 1.196, "rate_sampling_interval_ms": 10.0},
        {"mean_latency_ms": 1.181, "rate_sampling_interval_ms": 10.0},
    ]
    assert "calibration" not in parse_fixture("single/short_5s_no_calibration").extra
    slow = parse_fixture("single/timeouts_slow_upstream")
    assert slow.extra["calibration"][0]["rate_sampling_interval_ms"] == 17219.0


def test_nan_req_per_sec_is_missing_with_a_note():
    run = parse_fixture("single/short_5s_no_calibration")
    stats = run.extra["thread_stats"]
    assert stats["req_per_thread_avg_rps"] is None
    assert stats["req_per_thread_stdev_rps"] is None
    assert stats["req_per_thread_max_rps"] is None
    assert Code.NO_RATE_SAMPLES in {n.code for n in run.notes}
    assert run.latency_mean_ms == 0.90  # the latency row is real


def test_histogram_after_calibration_is_flagged_when_it_covers_little():
    run = parse_fixture("single/short_11s_calibration")
    assert run.histogram_count == 974 and run.requests == 10994
    assert Warn(Code.HISTOGRAM_PARTIAL, held=974, requests=10994) in run.notes
    assert run.to_record()["histogram_count"] == 974
    full = parse_fixture("single/short_5s_no_calibration")
    assert full.histogram_count == 4992
    assert Code.HISTOGRAM_PARTIAL not in {n.code for n in full.notes}


def test_seconds_and_socket_errors():
    run = parse_fixture("single/saturated_default_R150000_c100")
    assert run.percentiles_ms[50.0] == 10150.0  # "10.15s " with wrk's trailing space
    assert run.latency_mean_ms == 10120.0
    assert run.bytes_read == 1.15 * 1024**3
    slow = parse_fixture("single/timeouts_slow_upstream")
    assert slow.errors_timeout == 100 and slow.requests == 82
    assert slow.histogram_count == 20
    close = parse_fixture("single/socket_errors_backlog8_close_c1500")
    assert (close.errors_read, close.errors_timeout) == (10, 4569)


def test_no_latency_flag_gives_no_histogram():
    run = parse_fixture("single/no_latency_flag")
    assert run.histogram is None and run.histogram_count is None
    assert run.percentiles_ms == {}
    assert run.latency_mean_ms == 0.96 and run.latency_stdev_ms == 0.45185
    assert run.latency_source == "hdr_corrected"


def test_wrk2_sweep_loads_with_its_manifests():
    runs = perfkit.load(FIXTURES / "sweep")
    assert len(runs) == 48
    with open(FIXTURES / "sweep" / "sweep_order.csv", newline="") as fh:
        order = {row["run_dir"]: row for row in csv.DictReader(fh)}
    for run in runs:
        row = order[Path(run.source).parent.name]
        assert run.tool == "wrk2"
        assert run.target_rate_rps == float(row["rate"])  # from -R in meta.json's argv
        assert run.factors["profile"] == row["profile"]
        assert run.repetition == int(row["rep"])
        assert run.order == int(row["order"])
        assert run.connections == int(row["connections"])
        assert run.tool_version.startswith("wrk 4.0.0 [epoll] (wrk2")
        assert run.histogram_count == run.histogram.total_count > 0
        assert run.below_target == (run.throughput_rps < 0.99 * run.target_rate_rps)


def test_meta_json_decides_wrk2_when_the_output_looks_like_wrk(tmp_path):
    # wrk2 without --latency and without -nan prints nothing wrk would not print
    runs = {Path(r.source).parent.name: r for r in perfkit.load(FIXTURES / "single")}
    assert len(runs) == 11
    assert all(r.tool == "wrk2" for r in runs.values())
    assert runs["no_latency_flag"].target_rate_rps == 5000.0
    assert runs["short_11s_calibration"].target_rate_rps == 1000.0
