"""``perfkit sweep``: design validation, randomized complete blocks, dry run, and a live sweep."""

from __future__ import annotations

import io
import json
import random
import textwrap
from collections import Counter
from pathlib import Path

import _cli_helpers as _cli
import pytest
from _runner_helpers import REPO, free_port, testbed_dir_fixture  # noqa: F401

import perfkit
from perfkit.cli import main
from perfkit.run import plan as ex
from perfkit.run.runner import sha256_file
from perfkit.run.sweep import Sweep, SweepError

FACTORIAL = """\
name: factorial
tool: wrk
target:
  testbed: {port: 8080}
factors:
  keepalive: {none: null, keepalive: keepalive}
  cache: {none: null, cache-ram: cache-ram}
load:
  connections: [16, 64, 256]
  threads: 2
duration: 5s
repetitions: 5
seed: 20261121
"""


def write(tmp_path: Path, text: str, name: str = "experiment.yaml") -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return path


def problems(tmp_path: Path, text: str) -> str:
    path = write(tmp_path, text, "bad.yaml")
    data, _ = ex.load_yaml(path)
    with pytest.raises(ex.ExperimentError) as info:
        ex.validate(data, str(path), tmp_path)
    return str(info.value)


# -- validation ---------------------------------------------------------------------------
def test_errors_name_the_file_the_key_what_was_expected_and_what_was_found(tmp_path):
    text = problems(tmp_path, FACTORIAL.replace("tool: wrk", "tool: ab")
                    .replace("[16, 64, 256]", "[16, lots]"))
    lines = text.splitlines()
    assert f"{tmp_path / 'bad.yaml'}: tool: expected one of wrk, wrk2, locust, found 'ab'" in lines


@pytest.mark.parametrize("change,key,expected", [
    (("[16, 64, 256]", "[16, lots]"), "load.connections", "a positive integer"),
    (("duration: 5s", "duration: soon"), "duration", "a duration such as 5s"),
    (("repetitions: 5", "repetitions: 0"), "repetitions", "a positive integer"),
    (("seed: 20261121", "seed: 20261121\nspeed: 3"), "speed", "one of "),
    (("threads: 2", "threads: 32"), "load.threads", "no more threads than the fewest"),
    (("threads: 2", "threads: 2\n  users: 3"), "load.users", "one of connections, threads"),
    (("{none: null, keepalive: keepalive}", "{none: null, fast: turbo}"), "factors",
     "levels that make a known testbed profile"),
])
def test_each_mistake_is_reported_at_its_key(tmp_path, change, key, expected):
    from perfkit.run.profiles import parse_profile

    path = write(tmp_path, FACTORIAL.replace(*change), "bad.yaml")
    data, _ = ex.load_yaml(path)
    with pytest.raises(ex.ExperimentError) as info:
        ex.validate(data, str(path), tmp_path, profile_check=parse_profile)
    assert f"{path}: {key}: expected {expected}" in str(info.value)


def test_locust_needs_a_locustfile_that_exists(tmp_path):
    text = problems(tmp_path, """\
        tool: locust
        target: {url: "http://127.0.0.1:8080"}
        load: {users: 10}
        duration: 5s
        repetitions: 1
        options: {locustfile: nowhere.py}
        """)
    assert "options.locustfile: expected an existing file" in text


def test_profile_factors_are_refused_for_a_server_perfkit_does_not_run(tmp_path):
    text = problems(tmp_path, FACTORIAL.replace("testbed: {port: 8080}",
                                                'url: "http://127.0.0.1:8080/"'))
    assert "factors: expected no testbed profile factors with target.url" in text


def test_broken_yaml_gives_the_line(tmp_path):
    path = write(tmp_path, "tool: wrk\nload: [16\n", "broken.yaml")
    with pytest.raises(ex.ExperimentError, match=r"broken.yaml:\d+: expected valid YAML"):
        ex.load_yaml(path)


# -- the plan -----------------------------------------------------------------------------
def factorial_plan(tmp_path: Path, seed: int = 20261121) -> dict:
    path = write(tmp_path, FACTORIAL.replace("seed: 20261121", f"seed: {seed}"))
    data, raw = ex.load_yaml(path)
    return ex.make_plan(ex.validate(data, str(path), tmp_path), raw)


def test_every_block_runs_every_cell_exactly_once(tmp_path):
    plan = factorial_plan(tmp_path)
    assert len(plan["cells"]) == 2 * 2 * 3 and len(plan["runs"]) == 12 * 5
    for block in range(1, 6):
        cells = [r["cell"] for r in plan["runs"] if r["block"] == block]
        assert sorted(cells) == list(range(12))
    assert len({r["run_id"] for r in plan["runs"]}) == 60
    assert [r["seq"] for r in plan["runs"]] == list(range(1, 61))


def test_block_orders_are_python_random_shuffles_of_the_seed(tmp_path):
    plan = factorial_plan(tmp_path, seed=99)
    rng = random.Random(99)
    for block in range(1, 6):
        expected = list(range(12))
        rng.shuffle(expected)
        assert [r["cell"] for r in plan["runs"] if r["block"] == block] == expected


def test_the_order_is_random_between_blocks_and_seeds(tmp_path):
    plan = factorial_plan(tmp_path)
    orders = {tuple(r["cell"] for r in plan["runs"] if r["block"] == b) for b in range(1, 6)}
    assert len(orders) == 5
    (tmp_path / "other").mkdir()
    other = factorial_plan(tmp_path / "other", seed=1)
    assert [r["cell"] for r in other["runs"]] != [r["cell"] for r in plan["runs"]]


def test_factor_levels_map_onto_composed_testbed_profiles(tmp_path):
    plan = factorial_plan(tmp_path)
    profiles = Counter((c["factors"]["keepalive"], c["factors"]["cache"], c["profile"])
                       for c in plan["cells"])
    assert profiles == Counter({("none", "none", "default"): 3,
                                ("keepalive", "none", "keepalive"): 3,
                                ("none", "cache-ram", "cache-ram"): 3,
                                ("keepalive", "cache-ram", "keepalive+cache-ram"): 3})


def test_restarts_count_profile_changes_in_run_order(tmp_path):
    plan = factorial_plan(tmp_path)
    profiles = [r["profile"] for r in plan["runs"]]
    changes = sum(a != b for a, b in zip(profiles, profiles[1:], strict=False))
    assert ex.restarts_in(plan, "on-change") == 1 + changes
    assert ex.restarts_in(plan, "per-run") == 60


def test_dry_run_prints_the_plan_and_writes_nothing(tmp_path):
    path = write(tmp_path, FACTORIAL)
    out_dir = tmp_path / "exp"
    out, err = io.StringIO(), io.StringIO()
    assert main(["sweep", str(path), "--out", str(out_dir), "--dry-run"], out, err) == 0
    text = out.getvalue()
    assert "12 cells x 5 blocks = 60 runs" in text
    assert "0001-b01-" in text and "0060-b05-" in text
    assert not out_dir.exists()


def test_resume_refuses_a_changed_experiment(tmp_path):
    path = write(tmp_path, FACTORIAL)
    out_dir = tmp_path / "exp"
    Sweep(path, str(out_dir)).write_plan()
    assert json.loads((out_dir / "plan.json").read_text())["experiment_sha256"] == sha256_file(
        path)
    path.write_text(FACTORIAL.replace("repetitions: 5", "repetitions: 6"))
    with pytest.raises(SweepError, match="changed since"):
        Sweep(path, str(out_dir)).check_plan()


# -- live ---------------------------------------------------------------------------------
LIVE = """\
name: live-two-profiles
tool: wrk
target:
  testbed: {{port: {port}}}
factors:
  profile: [default, keepalive]
load:
  connections: 8
  threads: 2
duration: 2s
repetitions: 2
warmup: 1s
seed: 5
"""


@pytest.mark.live
def test_a_sweep_on_the_testbed_reads_back_as_its_design(tmp_path, testbed_dir):
    from perfkit.run.testbed import Testbed

    path = write(tmp_path, LIVE.format(port=free_port()))
    out_dir = tmp_path / "exp"
    out, err = io.StringIO(), io.StringIO()
    assert main(["sweep", str(path), "--out", str(out_dir)], out, err) == 0, err.getvalue()
    assert Testbed(testbed_dir).status() is None  # the sweep brought its testbed down
    plan = json.loads((out_dir / "plan.json").read_text())
    runs = perfkit.load(out_dir)
    assert len(runs) == 4  # warm-up runs (runs/.warmup/) are never counted
    assert len(list((out_dir / "runs" / ".warmup").iterdir())) == 4
    by_id = {r.run_id: r for r in runs}
    for entry in plan["runs"]:
        run = by_id[entry["run_id"]]
        manifest = json.loads((out_dir / "runs" / entry["run_id"] / "manifest.json").read_text())
        assert manifest["status"] == "complete"
        assert (run.block, run.order, run.repetition) == (entry["block"], entry["seq"],
                                                          entry["repetition"])
        assert run.factors["profile"] == entry["profile"] == manifest["server"]["profile"]
        keepalive_line = "keepalive_requests 100000;" in manifest["server"]["config_text"]
        assert keepalive_line == (entry["profile"] == "keepalive")
        assert run.connections == 8 and run.requests > 0 and run.throughput_rps > 0
        for name, f in manifest["files"].items():
            assert sha256_file(out_dir / "runs" / entry["run_id"] / name) == f["sha256"]
    again = io.StringIO()
    assert main(["sweep", str(path), "--out", str(out_dir)], again, err) == 0
    assert "0 runs this time" in again.getvalue()
    assert REPO.exists()


def test_an_imported_experiment_documents_its_design_but_is_never_swept(tmp_path):
    path = write(tmp_path, FACTORIAL + "imported: {from: somewhere else}\n")
    with pytest.raises(ex.ExperimentError, match="imported: expected a design perfkit can run"):
        Sweep(path)


# -- the bundled demo data ----------------------------------------------------------------
DATA = REPO / "data"
SWEPT = ("demo-wrk-factorial", "demo-wrk-connections", "demo-locust", "demo-aa")


@pytest.mark.parametrize("name", SWEPT)
def test_bundled_experiments_hold_exactly_their_plan_with_untouched_raw_files(name):
    exp = DATA / name
    plan = json.loads((exp / "plan.json").read_text())
    assert plan["experiment_sha256"] == sha256_file(exp / "experiment.yaml")
    runs = sorted(p.name for p in (exp / "runs").iterdir() if not p.name.startswith("."))
    assert runs == sorted(r["run_id"] for r in plan["runs"])
    for entry in plan["runs"]:
        run_dir = exp / "runs" / entry["run_id"]
        manifest = json.loads((run_dir / "manifest.json").read_text())
        assert manifest["status"] == "complete"
        assert (manifest["block"], manifest["order"]) == (entry["block"], entry["seq"])
        for rel, f in manifest["files"].items():
            assert sha256_file(run_dir / rel) == f["sha256"], (run_dir, rel)
    for block in {r["block"] for r in plan["runs"]}:
        cells = [r["cell"] for r in plan["runs"] if r["block"] == block]
        assert sorted(cells) == list(range(len(plan["cells"])))


@pytest.mark.parametrize("name, source, count", [
    ("demo-wrk2-sweep", "sweep", 48),
    ("demo-wrk2-uncorrected", "single", 1),
])
def test_the_imported_wrk2_runs_keep_every_fixture_byte(name, source, count):
    exp = DATA / name
    source = REPO / "tests" / "fixtures" / "wrk2" / source
    runs = [p for p in (exp / "runs").iterdir()]
    assert len(runs) == count
    for run_dir in runs:
        for ours, theirs in (("stdout.txt", "run.stdout"), ("stderr.txt", "run.stderr"),
                             ("meta.json", "meta.json")):
            assert sha256_file(run_dir / ours) == sha256_file(source / run_dir.name / theirs)
    assert len(perfkit.load(exp)) == count


def test_sweep_help_tells_how_to_confine_a_sweep():
    code, out, _ = _cli.run_cli("sweep", "--help")
    assert code == 0
    assert "--port N" in out and "--upstream-port N" in out and "--state-dir DIR" in out
    assert "refuses to touch one it did not start" in out


# -- progress -------------------------------------------------------------------------------
URL_DESIGN = """\
name: three-runs
tool: wrk
target:
  url: http://127.0.0.1:1/
load:
  connections: [8, 16, 32]
  threads: 2
duration: 1s
repetitions: 1
seed: 3
"""


class _Tty(io.StringIO):
    def isatty(self):
        return True


@pytest.mark.parametrize("terminal", [False, True])
def test_each_run_is_told_as_it_ends_with_the_count_and_the_time_left(
        tmp_path, monkeypatch, terminal):
    """Every run as it ends, with done/planned and the time left: one line each in a log,
    the same lines above a bar on a terminal. The runs themselves are replaced (the runner's
    seam, as tests/_paused_sweep.py replaces its events): this is about what is printed."""
    import re
    import types

    monkeypatch.delenv("PERFKIT_NO_PROGRESS", raising=False)
    monkeypatch.setattr(Sweep, "_run_one",
                        lambda self, entry, state: types.SimpleNamespace(status="complete"))
    err = _Tty() if terminal else io.StringIO()
    out = io.StringIO()
    path = write(tmp_path, URL_DESIGN)
    assert main(["sweep", str(path), "--out", str(tmp_path / "exp")], out, err) == 0
    text = err.getvalue()
    assert ("\r" in text) == terminal  # the bar only on a terminal
    lines = [ln for ln in text.replace("\r", "\n").splitlines()
             if ln.startswith("sweep ") and "%|" not in ln]  # not the bar's own lines
    runs = [json.loads((tmp_path / "exp" / "plan.json").read_text())["runs"][i]["run_id"]
            for i in range(3)]
    for i, (line, run_id) in enumerate(zip(lines, runs, strict=True), 1):
        tail = r"about \d+ s left" if i < 3 else r"all done in \d+ s"
        assert re.fullmatch(rf"sweep three-runs: {i}/3 runs, {run_id} complete "
                            rf"\(\d+\.\d s\); {tail}", line), line


def test_progress_off_prints_no_line_and_the_summary_stays(tmp_path, monkeypatch):
    import types

    monkeypatch.setenv("PERFKIT_NO_PROGRESS", "1")
    monkeypatch.setattr(Sweep, "_run_one",
                        lambda self, entry, state: types.SimpleNamespace(status="complete"))
    out, err = io.StringIO(), _Tty()
    assert main(["sweep", str(write(tmp_path, URL_DESIGN)), "--out", str(tmp_path / "e")],
                out, err) == 0
    assert err.getvalue() == "" and "3 runs this time (3 complete)" in out.getvalue()


@pytest.mark.live
def test_a_real_sweep_prints_each_run_as_it_ends(tmp_path, testbed_dir, monkeypatch):
    """A real sweep on the testbed (4 runs of 2 s, each after a 1 s warm-up): a line per run
    in the log as it ends, not one line of output in the whole sweep as before."""
    import re
    import subprocess
    import sys
    import time

    monkeypatch.delenv("PERFKIT_NO_PROGRESS", raising=False)
    path = write(tmp_path, LIVE.format(port=free_port()))
    proc = subprocess.Popen([sys.executable, "-m", "perfkit", "sweep", str(path), "--out",
                             str(tmp_path / "exp")], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, cwd=REPO)
    started, seen = time.monotonic(), []
    assert proc.stderr is not None
    for line in proc.stderr:  # read as the sweep writes, each line when its run ends
        seen.append((time.monotonic() - started, line.rstrip("\n")))
    assert proc.wait(timeout=120) == 0
    done = [re.fullmatch(r"sweep live-two-profiles: (\d)/4 runs, (\S+) complete \(\d+\.\d s\); "
                         r"(about \d+ s left|all done in \d+ s)", text) for _, text in seen]
    assert all(done) and [m.group(1) for m in done] == ["1", "2", "3", "4"]
    times = [t for t, _ in seen]
    assert times[-1] - times[0] > 4  # told as they ended, not all at the end (>= 3 x 2 s)
