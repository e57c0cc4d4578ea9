"""``perfkit scaling``: golden stdout on the real sweeps, and user errors.

On a mismatch the output is written beside the golden file as ``<name>.txt.got`` (gitignored).
"""

import re
from pathlib import Path

import _cli_helpers as _cli
import pytest

TESTS = Path(__file__).parent
#: the closed-loop sweep recorded on a busy shared VM: its default profile has a claimed peak
SHARED_VM = (Path(__file__).resolve().parent / "fixtures" / "scaling"
             / "wrk-connections-shared-vm")

FIXTURES = TESTS / "fixtures"
GOLDEN = TESTS / "golden" / "cli_scaling"
#: bootstraps over the real sweeps (a module fixture runs each once): tens of seconds
pytestmark = pytest.mark.slow


def run_cli(*argv: str) -> tuple[int, str, str]:
    return _cli.run_cli(*argv)


def check_golden(name: str, text: str) -> None:
    _cli.check_golden(GOLDEN / f"{name}.txt", text)


@pytest.fixture(scope="module")
def wrk_sweep():
    return run_cli("scaling", str(FIXTURES / "wrk" / "sweep"), "--x", "connections",
                   "--by", "profile")


@pytest.fixture(scope="module")
def wrk2_sweep():
    return run_cli("scaling", str(FIXTURES / "wrk2" / "sweep"), "--x", "target_rate_rps",
                   "--slo-ms", "10", "--percentile", "99", "--by", "profile")


def test_wrk_sweep_usl_and_littles_law_golden(wrk_sweep):
    code, out, err = wrk_sweep
    assert code == 0 and err == ""
    check_golden("wrk_sweep_connections_by_profile", out)


def test_wrk_sweep_claims_no_peak_on_flat_throughput(wrk_sweep):
    # 2-core box: throughput is flat from 10 connections on, so no retrograde region is seen
    out = wrk_sweep[1]
    assert out.count("no peak claimed") == 2
    assert "the rising part of the curve was not measured" in out


def test_wrk2_sweep_slo_bracket_golden(wrk2_sweep):
    code, out, err = wrk2_sweep
    assert code == 0 and err == ""
    check_golden("wrk2_sweep_slo10_p99_by_profile", out)


def test_wrk2_sweep_brackets_per_profile_and_connections(wrk2_sweep):
    out = wrk2_sweep[1]
    assert "profile=default  connections=16 (12 runs): SLO p99 < 10 ms, bracket [30000, 45000]" \
        in out
    # 45000 req/s is inconclusive above the last pass: the bracket is not "open above"
    assert ("profile=tuned  connections=16 (12 runs): SLO p99 < 10 ms, bracket >= 30000 req/s; "
            "45000 inconclusive: run more there") in out
    # one run at 5000 req/s reached 0.964 x its target with its peers' latency: in doubt, kept
    # (counted short, not kept up), and said once
    assert ("profile=tuned  connections=64 (12 runs): SLO p99 < 10 ms, bracket [45000, none "
            "failed]") in out
    assert out.count("1 run(s) fell short of the target (0.964 x)") == 1
    assert "not monotone" not in out


def test_locust_users_with_think_time_golden():
    code, out, err = run_cli("scaling", str(FIXTURES / "locust"), "--x", "users",
                             "--think-time-ms", "30")
    assert code == 0 and err == ""
    check_golden("locust_users_think30", out)


@pytest.mark.parametrize("argv, status, message", [
    (("wrk2/sweep", "--x", "connections"), 2, "open loop"),
    (("wrk2/sweep", "--x", "target_rate_rps"), 2, "needs --slo-ms"),
    (("wrk/sweep", "--x", "target_rate_rps", "--slo-ms", "5"), 2, "no run has a target rate"),
    (("wrk/sweep", "--x", "connections", "--by", "nope"), 2, "no column 'nope'"),
    (("locust", "--x", "connections"), 2, "Locust runs use --x users"),
    (("wrk2/sweep", "--x", "target_rate_rps", "--slo-ms", "5", "--percentile", "0.99"), 2,
     "0-100 scale"),
    (("wrk2/sweep", "--x", "target_rate_rps", "--slo-ms", "-5"), 2,
     "--slo-ms: expected a positive number"),
    (("wrk/sweep", "--x", "connections", "--metric", "colour_rps"), 2, "no metric"),
    (("wrk/sweep", "--x", "connections", "--confidence", "2"), 2, "--confidence must be"),
    (("wrk/sweep", "--x", "connections", "--alpha", "1"), 2, "--alpha must be"),
    (("wrk/sweep", "--x", "connections", "--resamples", "0"), 2, "--resamples must be"),
    (("wrk/sweep", "--x", "connections", "--table", "verdicts"), 2, "for the other axis"),
    (("wrk/sweep::profile=fast", "--x", "connections"), 2, "matches no run"),
    (("nothing/here", "--x", "connections"), 2, "no runs found"),
])
def test_bad_input_is_one_line_with_status_2(argv, status, message):
    code, out, err = run_cli("scaling", str(FIXTURES / argv[0]), *argv[1:])
    assert (code, out) == (status, "")
    assert err.startswith("perfkit: error: ") and message in err
    assert len(err.strip().splitlines()) == 1


def test_every_footnote_is_referenced_including_a_claimed_peak():
    # the closed-loop sweep recorded on a busy shared VM (tests/fixtures/scaling): the default
    # profile's peak is claimed, buffered-log's not
    code, out, _ = run_cli("scaling", str(SHARED_VM),
                           "--x", "connections", "--by", "profile")
    assert code == 0
    # every table's notes are referenced in that table (its title or its rows)
    from perfkit.analysis import load_experiment, metric
    from perfkit.analysis.scaling import scaling_fits
    from perfkit.present import scaling as present_scaling

    rows = load_experiment(SHARED_VM).rows()
    fits = scaling_fits(rows, metric("throughput_rps"), by=["profile"])
    for table in present_scaling.scaling(fits):
        text = table.title + " ".join(c for row in table.rows for c in row)
        for n in range(1, len(table.notes) + 1):
            assert f"[{n}]" in text, f"footnote [{n}] is printed but no row refers to it"
    body = out
    n_star = [line for line in body.splitlines() if line.strip().startswith("N*")]
    assert len(n_star) == 2 and any("no peak claimed" in line for line in n_star)
    claimed = next(line for line in n_star if "no peak claimed" not in line)
    # the CI, then its footnotes: whose peak it is (host CPU >= 90% in 23 of 24 runs: the
    # box's, client and server on 2 cores), the F-test and what the percentile interval covers
    assert claimed.rstrip().endswith("]") and claimed.count("[") == 4
    assert "N* is the whole box's peak, not the server's: client and server share 2 cores " \
           "(host CPU >= 90% in 23 of 24 runs)" in body
    for table in present_scaling.scaling(fits, littles=False):
        assert "percentile where marked" in table.title and "bootstrap-t CIs" not in table.title
        notes = {f"[{i}]": str(t) for i, t in enumerate(table.notes, 1)}
        for row in table.rows:
            marks = re.findall(r"\[\d+\]", row[2])
            about_n_star = [m for m in marks if "N* interval" in notes[m]]
            assert not about_n_star or row[0] == "N*", row  # N*'s notes sit on the N* row
            if "percentile interval" in " ".join(notes[m] for m in marks):
                assert row[0] in ("N*", "sigma", "kappa", "gamma"), row
