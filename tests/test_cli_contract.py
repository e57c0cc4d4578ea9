"""The exit contract of ``perfkit``, over every command: a bad invocation exits 2, never 1 (which
CI reads as a regression), with exactly one line on stderr, ``perfkit[ COMMAND]: error: ...``,
and no traceback.

Each case is run in this process through :func:`perfkit.cli.main` (two go through a real
subprocess, to see the real stderr). Data are the bundled real runs in data/ and
tests/fixtures/, or temporary copies of them; ``{name}`` in an argument is a path from the
``places`` fixture.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import _cli_helpers as _cli
import pytest
from _runner_helpers import testbed_dir_fixture  # noqa: F401

from perfkit.commands import show

REPO = Path(__file__).resolve().parents[1]
FIX = REPO / "tests" / "fixtures"

AA, AB = "data/demo-aa::arm=A", "data/demo-aa::arm=B"
FACT = "data/demo-wrk-factorial"
RATES = "data/demo-wrk2-sweep"
HIST = "data/demo-history"
LOC = "http://127.0.0.1:1/"
WRK = ("run", "wrk", "--url", LOC, "--out", "{tmp}/runs")

#: (argv, a piece of the one stderr line)
CASES: list[tuple[tuple[str, ...], str]] = [
    # -- perfkit ---------------------------------------------------------------------------
    ((), "expected a command"),
    (("nosuchcmd",), "invalid choice: 'nosuchcmd'"),
    (("--nosuch",), "unrecognized arguments: --nosuch"),
    (("--debug",), "expected a command"),
    # -- parse / show ----------------------------------------------------------------------
    (("parse",), "the following arguments are required: PATH"),
    (("parse", "--nosuch", FACT), "unrecognized arguments: --nosuch"),
    (("parse", FACT, "--format", "xml"), "invalid choice: 'xml'"),
    (("parse", FACT, "--format"), "expected one argument"),
    (("parse", FACT, "--format", "csv", "--format", "json"), "--format: given more than once"),
    (("parse", "no/such/path"), "no/such/path: no such file or directory"),
    (("parse", "{empty}"), "no runs found under"),
    (("parse", "{html}"), "not the output of"),
    (("parse", "{binary}"), "found 'a binary file'"),
    (("parse", "{cut}"), "run.stdout:5: expected"),
    (("show",), "the following arguments are required: PATH"),
    (("show", "no/such/path"), "no such file or directory"),
    (("show", "{empty}"), "no runs found under"),
    (("show", FACT, "--format", "csv"), "unrecognized arguments: --format csv"),
    (("show", "{html}"), "not the output of"),
    (("show", "{cut}"), "run.stdout:5: expected"),
    # -- compare ---------------------------------------------------------------------------
    (("compare",), "the following arguments are required: BASE, NEW"),
    (("compare", AA), "the following arguments are required: NEW"),
    (("compare", AA, AB, "--nosuch"), "unrecognized arguments: --nosuch"),
    (("compare", AA, AB, "--metric", "nosuch"), "no metric 'nosuch' known"),
    (("compare", AA, AB, "--metric", "p99"), "did you mean 'latency_p99_ms'"),
    (("compare", AA, AB, "--metric", "latency_p99_ms", "--metric", "throughput_rps"),
     "--metric: given more than once"),
    (("compare", AA, AB, "--alpha", "nan"), "--alpha must be in (0, 1)"),
    (("compare", AA, AB, "--alpha", "-1"), "--alpha must be in (0, 1)"),
    (("compare", AA, AB, "--alpha", "1"), "--alpha must be in (0, 1)"),
    (("compare", AA, AB, "--alpha", "abc"), "invalid float value: 'abc'"),
    (("compare", AA, AB, "--confidence", "0"), "--confidence must be in (0, 1)"),
    (("compare", AA, AB, "--confidence", "inf"), "--confidence must be in (0, 1)"),
    (("compare", AA, AB, "--format", "xml"), "invalid choice: 'xml'"),
    (("compare", AA, AB, "--by", "nosuch"), "--by: no column 'nosuch'"),
    (("compare", AA, AB, "--by", "endpoint"), "--by endpoint: the runs of"),
    (("compare", AA, AB, "--by", "connections", "--by", "connections"),
     "--by: given more than once"),
    (("compare", "data/demo-aa::", AB), "expected column=value after '::'"),
    (("compare", "data/demo-aa::arm", AB), "expected column=value, found 'arm'"),
    (("compare", "data/demo-aa::nosuch=1", AB), "no column 'nosuch'"),
    (("compare", "data/demo-aa::arm=Z", AB), "matches no run"),
    (("compare", "::arm=A", AB), "expected PATH"),
    (("compare", "no/such/path", AB), "no runs found under no/such/path"),
    (("compare", "{empty}", AB), "no runs found under"),
    (("compare", AA, AB, "--exclude-failed", " "), "--exclude-failed: expected a reason"),
    (("compare", AA, AB, "--alpha"), "expected one argument"),
    (("compare", AA, AB, "--alpha", "\u0660.\u0660\u0665"), "invalid float value: '\u0660"),
    (("compare", AA, AB, "--alpha", "0_05"), "invalid float value: '0_05'"),
    (("compare", "data/demo-wrk-connections::connections=\u0661\u0666",
      "data/demo-wrk-connections::connections=16"), "matches no run"),
    # -- gate ------------------------------------------------------------------------------
    (("gate",), "the following arguments are required: BASE, NEW"),
    (("gate", AA), "the following arguments are required: NEW"),
    (("gate", AA, AB, "--max-regression", "-5%"), "found '-5%'"),
    (("gate", AA, AB, "--max-regression=-5%"), "found '-5%'"),
    (("gate", AA, AB, "--max-regression", "-0.05"), "found '-0.05'"),
    (("gate", AA, AB, "--max-regression", "5"), "5 would be 500%"),
    (("gate", AA, AB, "--max-regression", "0%"), "found '0%'"),
    (("gate", AA, AB, "--max-regression", "100%"), "found '100%'"),
    (("gate", AA, AB, "--max-regression", "abc"), "found 'abc'"),
    (("gate", AA, AB, "--max-regression", "nan"), "found 'nan'"),
    (("gate", AA, AB, "--max-regression", "inf%"), "found 'inf%'"),
    (("gate", AA, AB, "--max-regression", "\u0665%"), "found '\u0665%'"),
    (("gate", AA, AB, "--max-regression", "\uff15%"), "found '\uff15%'"),
    (("gate", "data/demo-wrk-connections::connections=16",
      "data/demo-wrk-connections::connections=32"),
     "the arms ran at different load levels (connections: base 16, new 32)"),
    (("gate", AA, AB, "--max-regression", "5%", "--max-regression", "3%"),
     "--max-regression: given more than once"),
    (("gate", AA, AB, "--junit", "/nonexistent/dir/x.xml"), "no folder '/nonexistent/dir'"),
    (("gate", AA, AB, "--junit", "{tmp}"), "--junit: expected a file name"),
    (("gate", AA, AB, "--format", "junit2"), "invalid choice: 'junit2'"),
    (("gate", AA, AB, "--metric", "nosuch"), "no metric 'nosuch' known"),
    (("gate", AA, AB, "--metric", "latency_p42_ms"), "no metric 'latency_p42_ms' in these runs"),
    (("gate", AA, AB, "--alpha", "2"), "--alpha must be in (0, 1)"),
    (("gate", AA, AB, "--confidence", "1.5"), "--confidence must be in (0, 1)"),
    (("gate", AA, AB, "--by", "endpoint"), "--by endpoint: the runs of"),
    (("gate", AA, AB, "--by", "arm", "--by", "block"), "--by: given more than once"),
    (("gate", "data/demo-aa::", AB), "expected column=value after '::'"),
    (("gate", "no/such/path", AB), "no runs found under no/such/path"),
    (("gate", f"{HIST}::nosuch=1", f"{HIST}::label=v08"), "no column 'nosuch'"),
    (("gate", f"{HIST}::label=v99", f"{HIST}::label=v08"), "matches no run"),
    (("gate", AA, AB, "--exclude-failed", ""), "--exclude-failed: expected a reason"),
    (("gate", f"{RATES}::profile=default,target_rate_rps=5000|15000",
      f"{RATES}::profile=tuned,target_rate_rps=15000|30000", "--format", "json"),
     "the gate could not judge 4 of 6 rows"),
    # -- effects ---------------------------------------------------------------------------
    (("effects",), "the following arguments are required: EXPERIMENT, --factors"),
    (("effects", FACT), "the following arguments are required: --factors"),
    (("effects", FACT, "--factors", ""), "--factors: name at least one factor"),
    (("effects", FACT, "--factors", ","), "--factors: name at least one factor"),
    (("effects", FACT, "--factors", "cahce"), "did you mean 'cache'?); the factors of"),
    (("effects", FACT, "--factors", "client_keepalive", "--factors", "cache"),
     "--factors: given more than once"),
    (("effects", FACT, "--factors", "cache", "--metric", "nosuch"), "no metric 'nosuch'"),
    (("effects", FACT, "--factors", "cache", "--ab", "--table", "simple"),
     "--table is an option of the factorial table"),
    (("effects", FACT, "--factors", "cache", "--ab", "--block", "nosuch"),
     "--block is an option of the factorial table"),
    (("effects", FACT, "--factors", "cache", "--ab", "--levels", "cache=a:b"),
     "--levels is an option of the factorial table"),
    (("effects", FACT, "--factors", "cache", "--ab", "--linear"),
     "--linear is an option of the factorial table"),
    (("effects", FACT, "--factors", "cache", "--table", "nosuch"), "invalid choice: 'nosuch'"),
    (("effects", FACT, "--factors", "cache", "--table", "simple"),
     "picks the table --format csv prints"),
    (("effects", FACT, "--factors", "cache", "--block", "nosuch"), "--block: no column"),
    (("effects", FACT, "--factors", "cache", "--levels", "cache=a:b"),
     "--levels: cache has levels"),
    (("effects", FACT, "--factors", "connections"), "a 2^k design needs exactly two"),
    (("effects", FACT, "--factors", "cache", "--confidence", "0"), "--confidence must be in"),
    (("effects", FACT, "--factors", "cache", "--alpha", "nan"), "--alpha must be in (0, 1)"),
    (("effects", FACT, "--factors", "cache", "--format", "xml"), "invalid choice: 'xml'"),
    (("effects", FACT, "--factors", "cache", "--by", "endpoint"), "--by endpoint: the runs"),
    (("effects", f"{FACT}::", "--factors", "cache"), "expected column=value after '::'"),
    (("effects", "no/such/path", "--factors", "cache"), "no runs found under no/such/path"),
    (("effects", "{empty}", "--factors", "cache"), "no runs found under"),
    # -- scaling ---------------------------------------------------------------------------
    (("scaling",), "the following arguments are required: EXPERIMENT, --x"),
    (("scaling", RATES), "the following arguments are required: --x"),
    (("scaling", RATES, "--x", "nosuch"), "invalid choice: 'nosuch'"),
    (("scaling", RATES, "--x", "target_rate_rps"), "needs --slo-ms"),
    (("scaling", RATES, "--x", "target_rate_rps", "--slo-ms", "nan"),
     "--slo-ms: expected a positive number, found nan"),
    (("scaling", RATES, "--x", "target_rate_rps", "--slo-ms", "-5"), "found -5"),
    (("scaling", RATES, "--x", "target_rate_rps", "--slo-ms", "0"), "found 0"),
    (("scaling", RATES, "--x", "target_rate_rps", "--slo-ms", "inf"), "found inf"),
    (("scaling", RATES, "--x", "target_rate_rps", "--slo-ms", "abc"), "invalid float value"),
    (("scaling", "data/demo-locust", "--x", "users", "--think-time-ms", "-5"),
     "--think-time-ms: expected a number >= 0, found -5"),
    (("scaling", "data/demo-locust", "--x", "users", "--think-time-ms", "nan"), "found nan"),
    (("scaling", RATES, "--x", "target_rate_rps", "--slo-ms", "5", "--percentile", "0"),
     "--percentile: expected a percentile in (0, 100]"),
    (("scaling", RATES, "--x", "target_rate_rps", "--slo-ms", "5", "--percentile", "101"),
     "found 101"),
    (("scaling", RATES, "--x", "target_rate_rps", "--slo-ms", "5", "--percentile", "0.99"),
     "0-100 scale"),
    (("scaling", RATES, "--x", "target_rate_rps", "--slo-ms", "5", "--resamples", "0"),
     "--resamples must be >= 1"),
    (("scaling", "data/demo-wrk-connections", "--x", "connections", "--table", "verdicts"),
     "--table verdicts is for the other axis"),
    (("scaling", "data/demo-wrk-connections", "--x", "connections", "--table", "littles"),
     "picks the table --format csv prints"),
    (("scaling", "data/demo-wrk-connections", "--x", "connections", "--slo-ms", "5"),
     "--slo-ms is judged over offered rates"),
    (("scaling", RATES, "--x", "target_rate_rps", "--slo-ms", "5", "--think-time-ms", "1"),
     "--think-time-ms is for Little's law"),
    (("scaling", "data/demo-wrk-connections", "--x", "connections", "--metric", "nosuch"),
     "no metric 'nosuch'"),
    (("scaling", RATES, "--x", "target_rate_rps", "--slo-ms", "5", "--confidence", "2"),
     "--confidence must be in (0, 1)"),
    (("scaling", "no/such/path", "--x", "connections"), "no runs found under no/such/path"),
    (("scaling", "data/demo-wrk-connections::", "--x", "connections"), "after '::'"),
    (("scaling", "data/demo-locust", "--x", "connections"), "Locust runs use --x users"),
    # -- plan ------------------------------------------------------------------------------
    (("plan",), "the following arguments are required: --detect, --from"),
    (("plan", "--from", AA), "the following arguments are required: --detect"),
    (("plan", "--detect", "0%", "--from", AA), "--detect: expected a percentage"),
    (("plan", "--detect", "-3%", "--from", AA), "found '-3%'"),
    (("plan", "--detect", "3", "--from", AA), "3 would be 300%"),
    (("plan", "--detect", "abc", "--from", AA), "found 'abc'"),
    (("plan", "--detect", "3%", "--from", AA, "--from", AB, "--from", AA),
     "--from: expected one or two selections, found 3"),
    (("plan", "--detect", "3%", "--from", AA, "--power", "1.5"), "--power must be in (0, 1)"),
    (("plan", "--detect", "3%", "--from", AA, "--power", "0"), "--power must be in (0, 1)"),
    (("plan", "--detect", "3%", "--from", AA, "--alpha", "0"), "--alpha must be in (0, 1)"),
    (("plan", "--detect", "3%", "--from", AA, "--family", "0"), "--family must be >= 1"),
    (("plan", "--detect", "3%", "--from", AA, "--family", "abc"), "invalid int value: 'abc'"),
    (("plan", "--detect", "3%", "--from", AA, "--family", "\u0663"),
     "invalid int value: '\u0663'"),
    (("plan", "--detect", "\u0663%", "--from", AA), "found '\u0663%'"),
    (("plan", "--detect", "3%", "--from", AA, "--metric", "nosuch"), "no metric 'nosuch'"),
    (("plan", "--detect", "3%", "--from", AA, "--format", "xml"), "invalid choice: 'xml'"),
    (("plan", "--detect", "3%", "--from", "no/such/path"), "no runs found under no/such/path"),
    (("plan", "--detect", "3%", "--from", "data/demo-aa::"), "after '::'"),
    (("plan", "--detect", "3%", "--from", AA, "--seed", "abc"), "invalid int value: 'abc'"),
    (("plan", "--detect", "3%", "--from", f"{HIST}::label=v07,repetition=1"),
     "needs >= 2 runs"),
    # -- history ---------------------------------------------------------------------------
    (("history",), "the following arguments are required: ACTION"),
    (("history", "nosuch"), "invalid choice: 'nosuch'"),
    (("history", "add"), "the following arguments are required: DIR, --label"),
    (("history", "add", AA), "the following arguments are required: --label"),
    (("history", "add", AA, "--label", " ", "--store", "{tmp}/h"), "--label: expected a commit"),
    (("history", "add", "no/such/path", "--label", "x", "--store", "{tmp}/h"),
     "no runs found under no/such/path"),
    (("history", "add", "data/demo-aa::", "--label", "x", "--store", "{tmp}/h"),
     "after '::'"),
    (("history", "add", "data/demo-aa::arm=Z", "--label", "x", "--store", "{tmp}/h"),
     "matches no run"),
    (("history", "add", "data/demo-aa::nosuch=1", "--label", "x", "--store", "{tmp}/h"),
     "no column 'nosuch'"),
    (("history", "add", AA, "--label", "x", "--time", "notatime", "--store", "{tmp}/h"),
     "notatime"),
    (("history", "add", AA, "--label", "x", "--time", "\u0662\u0660\u0662\u0666-11-22",
      "--store", "{tmp}/h"), "--time: expected an ISO 8601 time"),
    (("history", "add", "{cut}", "--label", "x", "--store", "{tmp}/h"), "run.stdout:5: expected"),
    (("history", "show", "--store", "no/such/path"), "no history at no/such/path"),
    (("history", "show", "--store", HIST, "--permutations", "0"), "--permutations must be >= 1"),
    (("history", "show", "--store", HIST, "--max-regression", "-5%"), "found '-5%'"),
    (("history", "show", "--store", HIST, "--alpha", "2"), "--alpha must be in (0, 1)"),
    (("history", "show", "--store", HIST, "--metric", "nosuch"), "no metric 'nosuch'"),
    (("history", "show", "--store", HIST, "--format", "latex"), "invalid choice: 'latex'"),
    (("history", "show", "--store", f"{HIST}::nosuch=1"), "no column 'nosuch'"),
    (("history", "show", "--nosuch"), "unrecognized arguments: --nosuch"),
    # -- run -------------------------------------------------------------------------------
    (("run",), "the following arguments are required: tool, --url"),
    (("run", "nosuch", "--url", LOC), "invalid choice: 'nosuch'"),
    (("run", "wrk"), "the following arguments are required: --url"),
    (("run", "wrk", "--url", "notaurl"), "--url: expected an http:// or https:// URL"),
    (("run", "wrk", "--url", "ftp://127.0.0.1/"), "--url: expected an http:// or https://"),
    (("run", "wrk", "--url", "http://example.com/"), "expected a loopback target"),
    ((*WRK, "-d", "abc"), "--duration: expected a duration such as 10s, found 'abc'"),
    ((*WRK, "-d", "0s"), "--duration: expected a duration such as 10s, found '0s'"),
    ((*WRK, "-d", "-5s"), "expected one argument"),
    ((*WRK, "-d", "1s", "-d", "2s"), "-d/--duration: given more than once"),
    ((*WRK, "-c", "0"), "--connections: expected an integer >= 1, found 0"),
    ((*WRK, "-c", "abc"), "invalid int value: 'abc'"),
    ((*WRK, "-t", "-1"), "--threads: expected an integer >= 1, found -1"),
    (("run", "wrk2", "--url", LOC, "-c", "1", "-t", "1", "-R", "nan"),
     "--rate: expected a positive number, found nan"),
    (("run", "wrk2", "--url", LOC, "-c", "1", "-t", "1", "-R", "0"), "--rate: expected a"),
    ((*WRK, "--factor", "noequals"), "--factor: expected NAME=LEVEL, found 'noequals'"),
    ((*WRK, "--factor", "=x"), "--factor: expected NAME=LEVEL"),
    ((*WRK, "--factor", "a=1", "--factor", "a=2"), "--factor: 'a' given twice"),
    ((*WRK, "--grace", "nan"), "--grace: expected a positive number"),
    ((*WRK, "--clients", "0"), "--clients: expected an integer >= 1"),
    ((*WRK, "--users", "0"), "--users: expected an integer >= 1"),
    ((*WRK, "--spawn-rate", "-1"), "--spawn-rate: expected a positive number"),
    (("run", "wrk", "--url", LOC, "-c", "1", "-t", "1", "--out", "{html}"),
     "--out: expected a folder, found the file"),
    ((*WRK, "--timeout", "abc"), "--timeout: expected a duration"),
    ((*WRK, "--taskset", "abc"), "--taskset: expected GEN_CPUS[:SERVER_CPUS]"),
    ((*WRK, "--taskset", "\u0660:\u0661"), "--taskset: expected GEN_CPUS[:SERVER_CPUS]"),
    ((*WRK, "-c", "\u0666\u0664", "-t", "1"), "invalid int value: '\u0666\u0664'"),
    (("run", "wrk", "--url", LOC, "--out", "{tmp}/runs"),
     "wrk: --connections and --threads are required"),
    (("run", "wrk", "--url", LOC, "-c", "1", "-t", "2", "--out", "{tmp}/runs"),
     "--threads (2) must not exceed --connections (1)"),
    (("run", "locust", "--url", LOC, "-u", "1", "--out", "{tmp}/runs"),
     "locust: --locustfile is required"),
    (("run", "wrk", "--url", LOC, "-c", "1", "-t", "1", "--clients", "2", "--users", "x"),
     "invalid int value: 'x'"),
    # -- sweep -----------------------------------------------------------------------------
    (("sweep",), "the following arguments are required: experiment"),
    (("sweep", "no/such.yaml"), "no/such.yaml: cannot read"),
    (("sweep", "{tmp}"), "cannot read"),
    (("sweep", "{binary}"), "expected valid YAML"),
    (("sweep", "{bomb}"), "an alias bomb"),
    (("sweep", "{selfref}"), "an alias that contains itself"),
    (("sweep", "{list_yaml}"), "expected a mapping of experiment keys"),
    (("sweep", "{bad_tool}", "--dry-run"), "tool: expected one of wrk, wrk2, locust"),
    (("sweep", "examples/aa.yaml", "--dry-run", "--port", "99999"),
     "--port: expected a TCP port in 1..65535, found 99999"),
    (("sweep", "examples/aa.yaml", "--dry-run", "--port", "abc"), "invalid int value: 'abc'"),
    (("sweep", "examples/aa.yaml", "--dry-run", "--upstream-port", "0"),
     "--upstream-port: expected a TCP port"),
    (("sweep", "examples/remote-url.yaml", "--dry-run", "--port", "9000"),
     "target is a url, so perfkit starts no testbed"),
    (("sweep", "examples/aa.yaml", "--dry-run", "--out", "{html}"),
     "--out: expected a folder, found the file"),
    (("sweep", "examples/aa.yaml", "--nosuch"), "unrecognized arguments: --nosuch"),
    # -- testbed ---------------------------------------------------------------------------
    (("testbed",), "the following arguments are required: action"),
    (("testbed", "nosuch"), "invalid choice: 'nosuch'"),
    (("testbed", "config", "--port", "99999", "--state-dir", "{tmp}/tb"),
     "testbed port: expected 1..65535, found 99999"),
    (("testbed", "config", "--port", "abc"), "invalid int value: 'abc'"),
    (("testbed", "config", "--set", "nosuch", "--state-dir", "{tmp}/tb"),
     "--set: expected NAME=VALUE, found 'nosuch'"),
    (("testbed", "config", "--set", "nosuch=1", "--state-dir", "{tmp}/tb"),
     "unknown testbed variable 'nosuch'"),
    (("testbed", "config", "--profile", "nosuch", "--state-dir", "{tmp}/tb"), "nosuch"),
    (("testbed", "config", "--set", "backlog=abc", "--state-dir", "{tmp}/tb"), "backlog"),
    (("testbed", "config", "--set", "backlog=\u0666\u0664", "--state-dir", "{tmp}/tb"),
     "backlog"),
    (("testbed", "config", "--set", "worker_processes=\u0662", "--state-dir", "{tmp}/tb"),
     "worker_processes"),
    (("testbed", "up", "--port", "0", "--state-dir", "{tmp}/tb"),
     "testbed port: expected 1..65535, found 0"),
    # -- report ----------------------------------------------------------------------------
    (("report",), "the following arguments are required: -p/--params"),
    (("report", "-p", "no/such.yaml", "--check"), "found no such file"),
    (("report", "-p", "{tmp}", "--check"), "expected a parameter file (YAML), found a folder"),
    (("report", "-p", "{binary}", "--check"), "found binary data"),
    (("report", "-p", "{bomb}", "--check"), "an alias bomb"),
    (("report", "-p", "{selfref}", "--check"), "an alias that contains itself"),
    (("report", "-p", "{list_yaml}", "--check"), "expected a mapping with a 'notebooks' key"),
    (("report", "-p", "{syntax}", "--check"), "expected valid YAML, found a syntax error"),
    (("report", "-p", "{unknown_nb}", "--check"), "did you mean 'latency'?"),
    (("report", "-p", "{outside}", "--check"), "which leaves the data root"),
    (("report", "-p", "{bad_fraction}", "--check"), "max_regression: expected a percentage"),
    (("report", "-p", "params/demo.yaml", "-o", "{html}"),
     "-o/--out: expected a folder, found the file"),
    # -- export ----------------------------------------------------------------------------
    (("export",), "the following arguments are required: PATH, --to"),
    (("export", FACT), "the following arguments are required: --to"),
    (("export", FACT, "--to", "x.nosuch"), "--to: expected a file name ending in .parquet"),
    (("export", FACT, "--to", "/nonexistent/dir/x.csv"), "no folder '/nonexistent/dir'"),
    (("export", FACT, "--to", "{tmp}/folder.csv"), "--to: expected a file name, found the fold"),
    (("export", "{empty}", "--to", "{tmp}/x.csv"), "no runs found under"),
    (("export", "no/such/path", "--to", "{tmp}/x.csv"), "no such file or directory"),
    (("export", "{html}", "--to", "{tmp}/x.csv"), "not the output of"),
    (("export", "{cut}", "--to", "{tmp}/x.csv"), "run.stdout:5: expected"),
]


@pytest.fixture(scope="module")
def places(tmp_path_factory) -> dict[str, str]:
    tmp = tmp_path_factory.mktemp("contract")
    (tmp / "empty").mkdir()
    (tmp / "folder.csv").mkdir()
    run = FIX / "wrk" / "single" / "plain_default_c50"
    shutil.copytree(run, tmp / "cut")
    stdout = tmp / "cut" / "run.stdout"  # the real output, cut as a killed run leaves it
    stdout.write_text("".join(stdout.read_text().splitlines(keepends=True)[:4]))
    bomb = "a: &a [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"{c}: &{c} [{', '.join(['*' + p] * 10)}]\n" for p, c in zip("abcdefghi", "bcdefghij",
                                                                         strict=True))
    notebooks = "notebooks:\n  latency:\n    experiment: "
    texts = {
        "bomb": bomb + "notebooks: *j\n",
        "selfref": "notebooks: &n\n  latency: *n\n",
        "list_yaml": "- tool\n- wrk\n",
        "syntax": "notebooks: [latency\n",
        "unknown_nb": "notebooks:\n  latncy: {}\n",
        "outside": f"{notebooks}../../../../../etc\n",
        "bad_fraction": "notebooks:\n  history:\n    max_regression: 5\n",
        "bad_tool": (REPO / "examples" / "aa.yaml").read_text().replace("tool: wrk",
                                                                        "tool: ab"),
    }
    found = {"tmp": str(tmp), "empty": str(tmp / "empty"), "cut": str(tmp / "cut"),
             "html": str(FIX / "locust" / "clean_u20" / "clean.html"),
             "binary": shutil.which("true") or "/bin/true"}
    for name, text in texts.items():
        path = tmp / f"{name}.yaml"
        path.write_text(text)
        found[name] = str(path)
    return found


def _argv(argv: tuple[str, ...], places: dict[str, str]) -> list[str]:
    return [a.format(**places) if "{" in a else a for a in argv]


def test_the_table_covers_every_command_and_150_invocations():
    from perfkit.cli import command_names

    assert len(CASES) >= 150
    assert {c[0][0] for c in CASES if c[0]} >= set(command_names())


@pytest.mark.parametrize("argv,message", CASES, ids=[" ".join(c[0])[:60] for c in CASES])
def test_a_bad_invocation_exits_2_with_one_line(argv, message, places):
    code, _, err = _cli.run_cli(*_argv(argv, places), cwd=REPO)
    lines = err.splitlines()
    assert code == 2, err
    assert len(lines) == 1 and lines[0].startswith("perfkit"), err
    assert ": error: " in lines[0] and "Traceback" not in err
    assert message.format(**places) in lines[0]


# -- the contract's other sides ---------------------------------------------------------------
@pytest.mark.slow
def test_real_stderr_is_one_line_for_argparse_and_for_an_unwritable_junit_file():
    for argv, message in ((["compare", AA], "perfkit compare: error: the following arguments"),
                          (["gate", AA, AB, "--junit", "/nonexistent/dir/x.xml"],
                           "perfkit: error: --junit: cannot write /nonexistent/dir/x.xml")):
        proc = subprocess.run([sys.executable, "-m", "perfkit", *argv], cwd=REPO,
                              capture_output=True, text=True, check=False)
        assert (proc.returncode, proc.stdout) == (2, "")  # nothing analysed, nothing printed
        assert proc.stderr.splitlines() == [proc.stderr.strip()]
        assert proc.stderr.startswith(message)


def test_help_still_shows_the_usage_and_states_the_contract():
    code, out, err = _cli.run_cli("--help")
    assert (code, err) == (0, "") and out.startswith("usage: perfkit")
    assert "exit status (every command):" in out and "1 and 3 never mean an error" in out
    code, out, _ = _cli.run_cli("gate", "--help")
    assert code == 0 and out.startswith("usage: perfkit gate") and "2 an error, never a" in out


def test_a_bug_is_an_internal_error_in_one_line_and_debug_adds_the_traceback(monkeypatch):
    def broken(run):
        raise ZeroDivisionError("division by zero")

    monkeypatch.setattr(show, "summary", broken)
    run = str(FIX / "wrk" / "single" / "plain_default_c50")
    code, _, err = _cli.run_cli("show", run)
    assert code == 2 and err == ("perfkit: error: internal error: ZeroDivisionError: division "
                                 "by zero (run with --debug for the traceback)\n")
    for argv in (("--debug", "show", run), ("show", run, "--debug")):
        code, _, err = _cli.run_cli(*argv)
        assert code == 2 and err.startswith("Traceback (most recent call last):")
        assert err.splitlines()[-1].startswith("perfkit: error: internal error: ZeroDivision")


def test_several_unreadable_files_give_one_line_each(tmp_path, places):
    for name in ("a", "b"):
        shutil.copytree(places["cut"], tmp_path / name)
    code, out, err = _cli.run_cli("parse", str(tmp_path))
    lines = err.splitlines()
    assert code == 2 and out == "" and len(lines) == 2
    assert all(line.startswith("perfkit: error: ") and "run.stdout:5:" in line for line in lines)


def test_an_analysis_keeps_0_1_and_3():
    v07, v08 = f"{HIST}::label=v07", f"{HIST}::label=v08"
    assert _cli.run_cli("gate", v07, v08, cwd=REPO)[0] == 1  # a real regression (v08)
    assert _cli.run_cli("gate", AA, AB, cwd=REPO)[0] == 3  # A/A: inconclusive at 10 runs
    assert _cli.run_cli("compare", AA, AB, cwd=REPO)[0] == 0


def test_exclude_failed_with_nothing_failed_says_so_and_keeps_the_answer():
    code, out, err = _cli.run_cli("gate", AA, AB, "--exclude-failed", "nosuch", cwd=REPO)
    assert code == 3 and "INCONCLUSIVE" in out
    assert err == ("perfkit: warning: --exclude-failed 'nosuch': no run failed, so none was "
                   "dropped\n")


def test_an_unknown_metric_lists_the_metrics_once():
    code, _, err = _cli.run_cli("gate", AA, AB, "--metric", "p99", cwd=REPO)
    assert code == 2 and err.count("throughput_rps") == 1
    assert err.count("latency_p99_ms") == 2  # the suggestion, and once in the list


# -- the README's tour: no Python warning, traceback or kernel noise on a successful command -
#: what Python (or a kernel) prints that a user must never see after a command that worked
NOISE = re.compile(r"Warning:|Traceback|\[IPKernelApp\]")
#: the README's words for places that are the user's own, and the bundled data that stands in
#: for them when no testbed runs (data/demo-wrk-factorial was swept from a design like
#: examples/keepalive-cache.yaml)
STAND_INS = {"runs/": "data/demo-aa/runs", "data/my-experiment": FACT}
#: each command of the README's table, as a user would run it on the bundled data (the
#: exit statuses an answer may have: gate's 1 and 3 are answers too)
TABLE = {
    "parse": [("parse", "data/demo-locust", "--format", "csv")],
    "show": [("show", "data/demo-aa")],
    "compare": [("compare", AA, AB), ("compare", AA, AB, "--format", "json")],
    "gate": [("gate", AA, AB, "--max-regression", "5%", "--format", "junit")],
    "history": [("history", "add", "data/demo-aa", "--label", "v1", "--store", "{tmp}/hist"),
                ("history", "show", "--store", HIST, "--metric", "latency_p99_ms")],
    "plan": [("plan", "--metric", "latency_p99_ms", "--detect", "3%", "--from", "data/demo-aa")],
    "effects": [("effects", FACT, "--factors", "upstream_keepalive,cache",
                 "--metric", "latency_p99_ms", "--format", "markdown")],
    "scaling": [("scaling", "data/demo-wrk-connections", "--x", "connections"),
                ("scaling", RATES, "--x", "target_rate_rps", "--slo-ms", "5")],
    "export": [("export", "data/demo-aa", "--to", "{tmp}/runs.parquet"),
                ("export", "data/demo-locust", "--to", "{tmp}/runs.csv")],
    "report": [("report", "-p", str(REPO / "params" / "demo.yaml"), "--check")],
}
#: commands that need the testbed (test_the_readme_tour_on_the_testbed runs them)
LIVE_COMMANDS = ("run", "sweep", "testbed")


def readme_tour() -> list[list[str]]:
    """The perfkit commands of the README's tour (its ``sh`` block under "## A tour")."""
    import shlex

    text = (REPO / "README.md").read_text(encoding="utf-8")
    block = text.split("## A tour", 1)[1].split("```sh", 1)[1].split("```", 1)[0]
    return [shlex.split(line.split(" #")[0]) for line in block.splitlines()
            if line.startswith("perfkit ")]


def readme_table_commands() -> set[str]:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    return set(re.findall(r"^\| `perfkit (\w+)", text, re.M))


def check_quiet(run: subprocess.CompletedProcess, argv) -> None:
    """No noise on stderr: no Python warning (the run store's CacheWarning at interpreter
    exit, issue 30 item 2, included) and no traceback."""
    noise = [line for line in run.stderr.splitlines() if NOISE.search(line)]
    assert noise == [], (argv, run.stderr)


@pytest.fixture(scope="module")
def user_dir(tmp_path_factory) -> Path:
    """A user's folder holding copies of the bundled experiments the tour reads (the run
    store, on as for any user, writes beside them, never into data/)."""
    folder = tmp_path_factory.mktemp("tour")
    for name in ("demo-aa", "demo-locust", "demo-wrk-factorial", "demo-wrk-connections",
                 "demo-wrk2-sweep", "demo-history"):
        shutil.copytree(REPO / "data" / name, folder / "data" / name,
                        ignore=shutil.ignore_patterns("cache"))
    return folder


def perfkit_in(folder: Path, argv, env: dict | None = None) -> subprocess.CompletedProcess:
    import os

    environ = {k: v for k, v in os.environ.items() if k != "PERFKIT_CACHE"} | (env or {})
    return subprocess.run([sys.executable, "-m", "perfkit", *argv], cwd=folder, env=environ,
                          capture_output=True, text=True, timeout=600)


def test_every_command_of_the_readme_has_a_tour_case():
    assert readme_table_commands() == set(TABLE) | set(LIVE_COMMANDS)
    assert {argv[1] for argv in readme_tour()} <= set(TABLE) | set(LIVE_COMMANDS)


def _bundled_tour() -> list[tuple[str, ...]]:
    tour = [tuple(STAND_INS.get(a, a) for a in argv[1:]) for argv in readme_tour()
            if argv[1] not in LIVE_COMMANDS]
    return tour + [argv for cases in TABLE.values() for argv in cases]


@pytest.mark.slow
@pytest.mark.parametrize("argv", _bundled_tour(), ids=" ".join)
def test_a_successful_command_of_the_tour_prints_no_warning_or_traceback(argv, user_dir,
                                                                         tmp_path):
    argv = [a.replace("{tmp}", str(tmp_path)) for a in argv]
    run = perfkit_in(user_dir, argv)
    assert run.returncode in ((0, 1, 3) if argv[0] == "gate" else (0,)), run.stderr
    check_quiet(run, argv)


@pytest.mark.live
@pytest.mark.slow
def test_the_readme_tour_on_the_testbed(tmp_path, testbed_dir):
    """The tour as the README writes it, on a free port and with the design cut short
    (1 s runs, 2 blocks, 16 connections): every command succeeds, and none prints noise."""
    import yaml
    from _runner_helpers import free_port

    port = free_port()
    design = yaml.safe_load((REPO / "examples" / "keepalive-cache.yaml").read_text())
    design.update(duration="1s", repetitions=2, pause="0s")
    design["load"]["connections"] = [16]
    design["target"]["testbed"]["port"] = port
    (tmp_path / "examples").mkdir()
    (tmp_path / "examples" / "keepalive-cache.yaml").write_text(yaml.safe_dump(design))
    for argv in readme_tour():
        argv = [a.replace("127.0.0.1:8080", f"127.0.0.1:{port}").replace("5s", "2s")
                for a in argv[1:]]
        if argv[:2] == ["testbed", "up"]:
            argv += ["--port", str(port)]
        run = perfkit_in(tmp_path, argv, {"PERFKIT_NO_PROGRESS": "0"})
        assert run.returncode == 0, (argv, run.stderr)
        check_quiet(run, argv)
