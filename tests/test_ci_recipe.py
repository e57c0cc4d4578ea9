"""The CI recipe of docs/ci.md, played end to end on the testbed by scripts/ci_recipe.sh.

Three "commits" on nginx at 127.0.0.1 (a free port; the script starts and stops the testbed
itself): c1 and c2 run the same server, c3 makes its upstream answer after 20 ms instead of
10 ms. Each job sweeps, gates against the history (markdown summary, JUnit XML), appends to
the history; the HTML report of the history comes last.

c2 against c1 is an A/A pair measured in two jobs one after the other, so drift of the machine
between jobs is confounded with the "change" (the gate prints that warning): on a busy shared
machine it can gate to 1, so only "not an error" is asserted for it. The interleaved A/A pair
that must gate to 0 is tests/test_analysis_compare_gate.py::test_an_a_a_pair_gates_to_0.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from _runner_helpers import free_port, port_is_free

REPO = Path(__file__).resolve().parents[1]
SCRIPT = REPO / "scripts" / "ci_recipe.sh"

pytestmark = [
    pytest.mark.live,
    pytest.mark.slow,
    pytest.mark.skipif(not (shutil.which("nginx") or Path("/usr/sbin/nginx").exists())
                       or not shutil.which("wrk"), reason="needs nginx and wrk"),
]


def _testbed_dirs() -> set[str]:
    return {p.name for p in Path("/tmp").glob("perfkit-ci-testbed-*")}


@pytest.fixture(scope="module")
def ci(tmp_path_factory) -> Path:
    work = tmp_path_factory.mktemp("ci") / "work"
    port = free_port()
    before = _testbed_dirs()
    env = {**os.environ, "PORT": str(port), "PERFKIT": f"{sys.executable} -m perfkit",
           "PERFKIT_NO_PROGRESS": "1"}
    done = subprocess.run(["bash", str(SCRIPT), str(work)], env=env, cwd=REPO,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    assert _testbed_dirs() == before, "the testbed state folder was left behind"
    assert port_is_free(port) and port_is_free(port + 1000), "nginx or upstream left running"
    return work


def _gates(work: Path) -> dict[str, str]:
    return {line.split()[0]: line.split()[2]
            for line in (work / "gates.txt").read_text().splitlines()}


def test_the_first_job_records_and_the_regression_gates_to_1(ci):
    gates = _gates(ci)
    assert gates["c1"] == "skipped" and gates["c3"] == "1"
    assert gates["c2"] in ("0", "1", "3")  # see the module docstring


def test_the_job_summary_is_markdown_with_the_regression_and_its_ci(ci):
    text = (ci / "summary.md").read_text()
    assert text.startswith("No baseline yet for c1")
    c3 = text[text.rindex("**perfkit gate:"):]
    assert c3.startswith("**perfkit gate: REGRESSION (exit 1")
    assert "runs/c3 (4 runs)" in c3 and "(8 runs)" in c3  # the last two labels as baseline
    assert "the arms were not interleaved" in c3
    assert "regression | the CI lies beyond -10.0%" in c3  # throughput, at the least


def test_junit_of_the_regression_has_a_failure_per_regressed_metric(ci):
    root = ET.parse(ci / "gate-c3.xml").getroot()
    cases = {c.get("name"): c for c in root.iter("testcase")}
    assert set(cases) == {"latency_p99_ms", "throughput_rps"}
    assert cases["throughput_rps"].find("failure") is not None
    assert int(root.get("failures")) >= 1 and root.get("errors") == "0"


def test_the_history_holds_every_job_in_order(ci):
    out = subprocess.run([sys.executable, "-m", "perfkit", "history", "show", "--store",
                          str(ci / "history"), "--metric", "throughput_rps", "--format",
                          "json"], capture_output=True, text=True, cwd=REPO, check=True).stdout
    series = json.loads(out)["series"]
    assert [p["label"] for p in series] == ["c1", "c2", "c3"]
    assert all(p["n_runs"] == 4 for p in series)
    assert series[2]["median_rps"] < 0.9 * min(series[0]["median_rps"], series[1]["median_rps"])


def test_the_html_report_of_the_history_is_written(ci):
    assert (ci / "report" / "index.html").is_file()
    page = (ci / "report" / "history.html").read_text()
    assert "Performance history" in page and "c3" in page
    assert sorted(p.name for p in (ci / "report" / "figures").glob("history-series-*.svg")) == [
        "history-series-latency_p99_ms.svg", "history-series-throughput_rps.svg"]
