"""The commands' shared loading (perfkit/commands/_common.py) with a run that cannot be read
(issue 30): every command that loads it names it (``path:line: reason``) and counts it; the
analyses (compare, gate, effects, scaling, plan, history add, report) refuse the input as a
whole, exit 2, unless ``--skip-unreadable``, which leaves it out and names it in the output,
in JSON, in JUnit and in the history.

The damaged input is the issue's: a copy of a bundled experiment with one run's output
overwritten, ``echo garbage > runs/RUN/stdout.txt``, its manifest kept. Last, the options several
commands share are declared there once (issue 32).
"""

from __future__ import annotations

import json
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

import _cli_helpers as _cli
import pytest

REPO = Path(__file__).resolve().parents[1]
DATA = REPO / "data"
#: experiment -> the run whose stdout.txt is overwritten
DAMAGED = {"demo-aa": "0004-b02-arm=A",
           "demo-wrk-factorial": "0002-b01-client_keepalive=on_upstream_keepalive=on_cache=ram_c16",
           "demo-wrk-connections": "0004-b01-profile=default_c32"}


@pytest.fixture(scope="module")
def root(tmp_path_factory) -> Path:
    """Copies of three bundled experiments, one run of each overwritten with ``garbage``."""
    top = tmp_path_factory.mktemp("damaged")
    for name, run in DAMAGED.items():
        shutil.copytree(DATA / name, top / name, ignore=shutil.ignore_patterns(".perfkit"))
        (top / name / "runs" / run / "stdout.txt").write_text("garbage\n")
    return top


def cli(root: Path, *argv: str) -> tuple[int, str, list[str]]:
    code, out, err = _cli.run_cli(*argv, cwd=root)
    return code, out, err.splitlines()


def named(line: str, name: str = "demo-aa") -> bool:
    return f"{name}/runs/{DAMAGED[name]}/stdout.txt:1: expected the wrk output of a complete " \
           "run" in line and "found 'garbage'" in line


# -- listed, named and counted --------------------------------------------------------------
def test_parse_lists_the_others_names_it_and_counts_it(root):
    code, out, err = cli(root, "parse", "demo-aa")
    assert code == 2 and sum(line.startswith("00") for line in out.splitlines()) == 19
    (line,) = err
    assert line.startswith("perfkit: error: ") and named(line)
    assert out.splitlines()[-1] == ("19 runs read; 1 file could not be read (named on stderr, "
                                    "exit status 2)")


def test_show_and_export_name_it_and_count_it(root, tmp_path):
    code, out, err = cli(root, "show", "demo-aa")
    assert code == 2 and named(err[0]) and out.endswith("19 runs read; 1 file could not be "
                                                         "read (named on stderr, exit status 2)\n")
    code, out, err = cli(root, "export", "demo-aa", "--to", str(tmp_path / "runs.csv"))
    assert code == 2 and named(err[0]) and "19 runs" in out and "1 file(s) could not be read" in out


def test_scan_lists_it(root):
    import perfkit

    result = perfkit.scan(root / "demo-aa", cache=False)
    assert len(result.runs) == 19 and [named(str(e)) for e in result.errors] == [True]
    assert perfkit.scan(DATA / "demo-aa", cache=False).errors == []  # the bundled one is whole


# -- refused as a whole ---------------------------------------------------------------------
REFUSING = [
    ("compare", "demo-aa::arm=A", "demo-aa::arm=B"),
    ("gate", "demo-aa::arm=A", "demo-aa::arm=B", "--max-regression", "10%"),
    ("effects", "demo-wrk-factorial", "--factors", "upstream_keepalive,cache"),
    ("scaling", "demo-wrk-connections", "--x", "connections", "--resamples", "20"),
    ("plan", "--detect", "5%", "--from", "demo-aa::arm=A"),
    ("history", "add", "demo-aa", "--label", "v1", "--store", "history"),
]


@pytest.mark.parametrize("argv", REFUSING, ids=lambda a: " ".join(a[:2]))
def test_an_analysis_refuses_an_input_with_an_unreadable_run(root, argv):
    code, out, err = cli(root, *argv)
    name = next(n for n in DAMAGED if any(a.startswith(n) for a in argv))
    assert code == 2 and out == ""
    (line,) = err  # one line per unreadable file, the last saying what was refused
    assert line.startswith("perfkit: error: ") and named(line, name)
    assert f"(1 file under {name} could not be read: " in line
    assert "--skip-unreadable leaves it out, named in the output)" in line
    assert not (root / "history").exists()


@pytest.mark.parametrize("argv", REFUSING, ids=lambda a: " ".join(a[:2]))
def test_skip_unreadable_leaves_it_out_and_names_it_in_the_output(root, tmp_path, argv):
    argv = tuple(str(tmp_path / "h") if i and argv[i - 1] == "--store" else a
                 for i, a in enumerate(argv))
    code, out, err = cli(root, *argv, "--skip-unreadable")
    name = next(n for n in DAMAGED if any(a.startswith(n) for a in argv))
    assert code in (0, 1, 3)
    assert [line for line in err if named(line, name)] == [
        line for line in err if line.startswith("perfkit: warning: left out "
                                                "(--skip-unreadable): ")]
    assert len([line for line in err if named(line, name)]) == 1
    assert "left out (--skip-unreadable): 1 file(s) that could not be read:" in out
    assert any(named(line, name) for line in out.splitlines())


@pytest.mark.parametrize("argv", REFUSING[:5], ids=lambda a: " ".join(a[:2]))
def test_skip_unreadable_names_it_in_json(root, argv):
    code, out, _ = cli(root, *argv, "--skip-unreadable", "--format", "json")
    assert code in (0, 1, 3)
    (left,) = json.loads(out)["left_out"]
    assert named(left, next(n for n in DAMAGED if any(a.startswith(n) for a in argv)))


def test_the_gate_names_it_in_junit(root, tmp_path):
    junit = tmp_path / "gate.xml"
    code, _, _ = cli(root, *REFUSING[1], "--skip-unreadable", "--junit", str(junit))
    assert code in (0, 1, 3)
    suite = ET.parse(junit).getroot().find("testsuite")
    (case,) = suite.findall("testcase[@classname='perfkit.gate.unreadable']")
    assert case.get("name").endswith(f"{DAMAGED['demo-aa']}/stdout.txt:1")
    assert named(case.find("skipped").get("message"))
    props = {p.get("name"): p.get("value") for p in suite.iter("property")}
    assert props["left_out"] == "1" and int(suite.get("skipped")) >= 1


def test_the_history_names_it_in_the_label(root, tmp_path):
    store = str(tmp_path / "h")
    code, out, _ = cli(root, "history", "add", "demo-aa", "--label", "v1", "--store", store,
                       "--skip-unreadable")
    assert code == 0 and "'v1': 19 runs" in out and "1 unreadable file(s) left out" in out
    code, _, err = cli(root, "history", "show", "--store", store)
    assert code == 0
    (note,) = [line for line in err if "was added without" in line]
    assert note.startswith("perfkit: warning: label 'v1' was added without 1 file(s)")
    assert named(note)
    code, _, err = cli(root, "gate", f"{store}::label=v1", "demo-aa::arm=B",
                       "--skip-unreadable")
    assert any("label 'v1' was added without 1 file(s)" in line for line in err)


def test_a_report_is_refused_before_a_page_is_made(root, tmp_path):
    params = tmp_path / "p.yaml"
    params.write_text(f"data: {root}\nnotebooks:\n  overview:\n    experiments: [demo-aa]\n")
    out_dir = tmp_path / "report"
    code, out, err = cli(root, "report", "-p", str(params), "-o", str(out_dir))
    assert code == 2 and out == "" and not out_dir.exists()
    (line,) = err
    assert named(line) and "could not be read: no report built; --skip-unreadable" in line


def test_the_methods_name_what_was_left_out(root):
    from perfkit.analysis import load_experiment
    from perfkit.analysis.context import provenance
    from perfkit.report.methods import exclusions_sentence

    sentence = exclusions_sentence(provenance(load_experiment(root / "demo-aa")))
    assert "1 file(s) could not be read and were left out (" in sentence and named(sentence)


#: the options several commands take, declared once in perfkit/commands/_common.py
SHARED = ("--alpha", "--confidence", "--exclude-failed", "--by", "--metric")


def _declared(path: Path) -> set[str]:
    """The options a module declares itself: ``add_argument("--x", ...)`` calls (gate's
    ``--metric``, repeatable, is its own option)."""
    import ast

    out = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if (isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "add_argument"
                and node.args and isinstance(node.args[0], ast.Constant)
                and not any(k.arg == "action" and getattr(k.value, "value", "") == "append"
                            for k in node.keywords)):
            out.add(node.args[0].value)
    return out


def test_the_shared_options_are_declared_once():
    commands = REPO / "perfkit" / "commands"
    again = {p.name: sorted(_declared(p) & set(SHARED)) for p in sorted(commands.glob("*.py"))
             if p.name != "_common.py" and _declared(p) & set(SHARED)}
    assert not again, f"declared again outside commands/_common.py: {again}"
    assert set(SHARED) <= _declared(commands / "_common.py")

