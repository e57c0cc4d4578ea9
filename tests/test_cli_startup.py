"""Start-up: the commands that must feel instant import nothing heavy (issue 24).

Read from ``python -X importtime`` in a fresh interpreter (which modules were imported, never
how long they took: timings belong in benchmarks/). ``perfkit --help`` builds every
subcommand's parser, so this also checks that no command module imports the analysis at the
top.
"""

from __future__ import annotations

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
