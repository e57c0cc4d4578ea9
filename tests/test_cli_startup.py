"""Start-up: the commands that must feel instant import nothing heavy (issue 24).

Read from ``python -X importtime`` in a fresh interpreter (which modules were imported, never
how long they took: timings belong in benchmarks/). ``perfkit --help`` builds every
subcommand's parser, so this also checks that no command module imports the analysis at the
top.
"""

from __future__ import annotations

import functools
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
HEAVY = ("pandas", "scipy", "matplotlib", "pyarrow")
WRK2 = ROOT / "tests" / "fixtures" / "wrk2" / "sweep" / "default_R15000_c16_rep1" / "run.stdout"


def imported(*argv: str) -> set[str]:
    """Every module a fresh ``python -m perfkit ARGV`` imports."""
    proc = subprocess.run([sys.executable, "-X", "importtime", "-m", "perfkit", *argv],
                          capture_output=True, text=True, check=False, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr[-2000:]
    names = set()
    for line in proc.stderr.splitlines():
        if line.startswith("import time:") and "|" in line:
            names.add(line.rsplit("|", 1)[1].strip())
    assert "perfkit.cli" in names  # the output was read
    return names


def heavy(names: set[str]) -> list[str]:
    return sorted(n for n in names if n.split(".")[0] in HEAVY)


@pytest.mark.parametrize("argv", [("--help",), ("--version",)])
def test_help_and_version_import_nothing_heavy(argv):
    names = imported(*argv)
    assert heavy(names) == []
    # nor numpy, the parsers or the analysis: --help only builds argparse parsers
    assert not [n for n in names if n.split(".")[0] == "numpy"
                or n.startswith(("perfkit.analysis", "perfkit.ingest", "perfkit.stats"))]


def test_parse_of_one_file_imports_no_pandas_scipy_matplotlib_pyarrow():
    names = imported("parse", str(WRK2))
    assert heavy(names) == []
    assert "perfkit.ingest.loader" in names  # it did parse


def test_a_command_imports_its_analysis_when_it_runs():
    """The analysis is imported where it is used: running ``compare`` still works."""
    names = imported("compare", "--help")
    assert heavy(names) == []


def test_a_command_line_builds_the_parser_of_its_command_alone():
    """``perfkit compare ...`` neither imports the other commands' modules nor builds their
    parsers (issue 33: 0.05x the import of numpy and pandas); ``perfkit --help`` builds all."""
    probe = ("import io, json, sys; from perfkit.cli import main; "
             "main(json.loads(sys.argv[1]), io.StringIO(), io.StringIO()); "
             "print(' '.join(sorted(m for m in sys.modules if m.startswith('perfkit.commands.')"
             " and '._' not in m)))")

    def commands(*argv: str) -> set[str]:  # from sys.modules: importtime does not see
        proc = subprocess.run([sys.executable, "-c", probe, json.dumps(argv)],  # import_module
                              capture_output=True, text=True, check=True, cwd=ROOT)
        return set(proc.stdout.split())

    assert commands("--unit", "ms", "compare", "--help") == {"perfkit.commands.compare"}
    assert {"perfkit.commands.run", "perfkit.commands.report"} <= commands("--help")


AA, AB = "data/demo-aa::arm=A", "data/demo-aa::arm=B"
#: command lines refused for an option alone (issue 30: ``gate A B --max-regression 5`` was
#: refused only after the analysis had been imported, 9-14 s under load)
BAD_OPTIONS = [
    ("gate", AA, AB, "--max-regression", "5"),
    ("gate", AA, AB, "--max-regression", "\u0665%"),
    ("gate", AA, AB, "--alpha", "2"),
    ("gate", AA, AB, "--confidence", "1.5"),
    ("gate", AA, AB, "--exclude-failed", ""),
    ("gate", AA, AB, "--junit", "/nonexistent/dir/x.xml"),
    ("gate", AA, AB, "--format", "junit2"),
    ("compare", AA, AB, "--alpha", "1"),
    ("compare", AA, AB, "--alpha", "\u0660.\u0660\u0665"),
    ("compare", AA, AB, "--exclude-failed", " "),
    ("effects", "data/demo-wrk-factorial", "--factors", "cache", "--confidence", "0"),
    ("effects", "data/demo-wrk-factorial", "--factors", "cache", "--ab", "--linear"),
    ("effects", "data/demo-wrk-factorial", "--factors", ","),
    ("scaling", "data/demo-wrk2-sweep", "--x", "target_rate_rps"),
    ("scaling", "data/demo-wrk2-sweep", "--x", "target_rate_rps", "--slo-ms", "5",
     "--resamples", "0"),
    ("plan", "--detect", "3", "--from", AA),
    ("plan", "--detect", "3%", "--from", AA, "--power", "1.5"),
    ("history", "show", "--store", "data/demo-history", "--max-regression", "5"),
    ("history", "show", "--store", "data/demo-history", "--permutations", "0"),
    ("history", "add", AA, "--label", "x", "--time", "notatime", "--store", "/tmp/no-history"),
    ("history", "add", AA, "--label", " ", "--store", "/tmp/no-history"),
]
#: runs each command line through perfkit.cli.main in a fresh interpreter; prints, per line,
#: its exit status, its stderr, and the heavy modules imported so far
_PROBE = """
import io, json, sys
from perfkit.cli import main
for argv in json.loads(sys.argv[1]):
    err = io.StringIO()
    code = main(argv, io.StringIO(), err)
    loaded = sorted(m for m in sys.modules if m.split(".")[0] in ("pandas", "scipy", "numpy",
                    "pyarrow", "matplotlib") or m.startswith(("perfkit.analysis", "perfkit.stats")))
    print(json.dumps([code, err.getvalue(), loaded]))
"""


def test_a_bad_option_is_refused_before_the_analysis_is_imported():
    """Checked from the modules a fresh interpreter has imported when each command line is
    refused (one after the other: the first to import the analysis is named), not from a
    time."""

    proc = subprocess.run([sys.executable, "-c", _PROBE, json.dumps(BAD_OPTIONS)],
                          capture_output=True, text=True, check=True, cwd=ROOT)
    results = [json.loads(line) for line in proc.stdout.splitlines()]
    assert len(results) == len(BAD_OPTIONS)
    for argv, (code, err, loaded) in zip(BAD_OPTIONS, results, strict=True):
        assert code == 2 and len(err.splitlines()) == 1 and ": error: " in err, (argv, err)
        assert loaded == [], (argv, err, loaded[:5])


#: modules a command pays for only when its statistics or output use them (issue 33):
#: ``scipy.stats`` alone cost about 1.5x the import of numpy and pandas on ``compare``
UNUSED_HEAVY = ("scipy.stats", "matplotlib", "nbformat", "papermill")
ANSWERING = [
    ("compare", AA, AB),
    ("gate", AA, AB, "--max-regression", "5%"),
    ("effects", "data/demo-wrk-factorial", "--factors",
     "client_keepalive,upstream_keepalive,cache"),
]


def _answer_imports(*argv: str, cwd: Path = ROOT, env: dict[str, str] | None = None
                    ) -> set[str]:
    """Modules a fresh ``python -m perfkit ARGV`` imports, whatever its exit status (0/1/3)."""
    proc = subprocess.run([sys.executable, "-X", "importtime", "-m", "perfkit", *argv],
                          capture_output=True, text=True, check=False, cwd=cwd, env=env)
    assert proc.returncode in (0, 1, 3), proc.stderr[-2000:]
    names = {line.rsplit("|", 1)[1].strip() for line in proc.stderr.splitlines()
             if line.startswith("import time:") and "|" in line}
    assert "perfkit.analysis" in names  # it analysed: the statistics ran
    return names


#: what a command computed once and remembered beside the run store is not imported again:
#: ``scipy.optimize`` (0.3x the import of numpy and pandas) finds the factorial's
#: noncentralities, remembered by their inputs (perfkit.stats.tpower); ``scipy.special``
#: (0.35x) gives the t, F, normal and binomial values, remembered by their arguments
#: (perfkit.stats._dist): a second command imports no scipy at all
REMEMBERED_HEAVY = ("scipy",)


def _heavy_of(names: set[str], heavy: tuple[str, ...]) -> list[str]:
    return sorted(n for n in names if any(n == h or n.startswith(h + ".") for h in heavy))


@pytest.mark.slow
@pytest.mark.parametrize("argv", ANSWERING, ids=[a[0] for a in ANSWERING])
def test_answering_on_the_demo_imports_no_unused_heavy_module(argv, tmp_path):
    for name in ("demo-aa", "demo-wrk-factorial"):  # run stores on, in a copy of the data
        shutil.copytree(ROOT / "data" / name, tmp_path / "data" / name,
                        ignore=shutil.ignore_patterns(".perfkit"))
    env = {**os.environ, "PERFKIT_CACHE": "1"}
    assert _heavy_of(_answer_imports(*argv, cwd=tmp_path, env=env), UNUSED_HEAVY) == []
    # the second time, with what the first remembered
    second = _answer_imports(*argv, cwd=tmp_path, env=env)
    assert _heavy_of(second, UNUSED_HEAVY + REMEMBERED_HEAVY) == []


def test_the_command_runs_blas_on_one_thread_unless_the_user_sized_its_pool():
    """OpenBLAS's idle threads spin after each call: on perfkit's small matrices a pool costs
    CPU and gains nothing (issue 33); a pool the user sized is theirs."""
    probe = ("import os, sys; from perfkit.cli import one_blas_thread; one_blas_thread(); "
             "print(os.environ['OPENBLAS_NUM_THREADS'], 'numpy' in sys.modules)")
    env = {k: v for k, v in os.environ.items()
           if k not in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")}
    run = functools.partial(subprocess.run, [sys.executable, "-c", probe], capture_output=True,
                            text=True, check=True, cwd=ROOT)
    assert run(env=env).stdout.split() == ["1", "False"]  # set before numpy loads BLAS
    assert run(env={**env, "OMP_NUM_THREADS": "4", "OPENBLAS_NUM_THREADS": "4"}
               ).stdout.split() == ["4", "False"]
