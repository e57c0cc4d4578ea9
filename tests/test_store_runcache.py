"""The run store as the ``perfkit`` command uses it: written before the process exits, read by
the next command, silent, and never a folder left where no store was written (issue 30).

Each test drives the real command in a fresh interpreter (a subprocess), as a user does: the
store used to be written by a thread that died at interpreter exit, so no test in one
long-lived process could see it. Evidence of a store read is the modules a command imported
(``python -X importtime``: the wrk parser's, or not) and the store's file, never a time.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import perfkit
from perfkit.store import runcache

ROOT = Path(__file__).resolve().parent.parent
DEMO = ROOT / "data" / "demo-aa"
#: a module only the wrk parser imports: imported when a wrk output is parsed, not when the
#: runs come from the store
PARSER = "perfkit.ingest._wrkcommon"
#: the environment of a user's shell: the run store on (tests/conftest.py turns it off)
STORE_ON = {**os.environ, "PERFKIT_CACHE": "1"}


@pytest.fixture
def demo(tmp_path) -> Path:
    """A copy of data/demo-aa (20 wrk runs with manifests), without any run store."""
    root = tmp_path / "aa"
    shutil.copytree(DEMO, root, ignore=shutil.ignore_patterns("cache"))
    return root


def perfkit_cli(*argv: str, imports: bool = False) -> tuple[int, set[str], str, str]:
    """``python -m perfkit ARGV`` in a fresh interpreter: (exit status, modules imported,
    stdout, stderr). ``imports``: run it with ``-X importtime`` to know the modules (its
    lines, interleaved with the writer thread's, are then taken out of stderr)."""
    flags = ["-X", "importtime"] if imports else []
    proc = subprocess.run([sys.executable, *flags, "-m", "perfkit", *argv],
                          capture_output=True, text=True, check=False, cwd=ROOT, env=STORE_ON)
    names, rest = set(), []
    for line in proc.stderr.splitlines():
        if imports and line.startswith("import time:"):
            names.add(line.rsplit("|", 1)[1].strip())
        else:
            rest.append(line)
    assert "perfkit.cli" in names or not imports  # the import lines were read
    return proc.returncode, names, proc.stdout, "\n".join(rest)


def stores(root: Path) -> list[Path]:
    return sorted((root / ".perfkit" / "cache").glob("runs-*.parquet"))


def test_the_command_writes_the_store_and_the_next_command_reads_it(demo):
    code, first, out, err = perfkit_cli("parse", str(demo), imports=True)
    assert (code, err) == (0, "") and out.count("arm=") == 20
    assert PARSER in first  # parsed
    (store,) = stores(demo)  # written before the process exited
    written = store.stat().st_mtime_ns
    code, second, again, err = perfkit_cli("parse", str(demo), imports=True)
    assert (code, err, again) == (0, "", out)
    assert PARSER not in second  # every run came from the store: nothing parsed
    assert stores(demo) == [store] and store.stat().st_mtime_ns == written  # not rewritten


def test_an_error_stays_one_line_on_stderr(demo):
    """The store's writer used to print two lines of CacheWarning under every error."""
    code, _, _, err = perfkit_cli("parse", str(demo), str(demo / "no-such-run"))
    assert code == 2
    assert err.splitlines() == [f"perfkit: error: {demo / 'no-such-run'}: no such file or "
                                "directory"]


def test_a_script_that_loads_and_exits_writes_the_store_and_prints_nothing(demo):
    proc = subprocess.run([sys.executable, "-c", "import sys, perfkit; "
                           "print(len(perfkit.load(sys.argv[1])))", str(demo)],
                          capture_output=True, text=True, check=False, env=STORE_ON)
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "20\n", "")
    assert len(stores(demo)) == 1


def test_a_read_only_folder_gets_no_store_and_no_folder(demo):
    shutil.rmtree(demo / ".perfkit")
    demo.chmod(0o555)
    try:
        code, names, out, err = perfkit_cli("parse", str(demo))
        assert (code, err) == (0, "") and out.count("arm=") == 20
        assert sorted(p.name for p in demo.iterdir()) == ["experiment.yaml", "plan.json",
                                                          "runs"]
        perfkit.load(demo, cache=True)
        runcache.flush()
        assert f"{demo / '.perfkit' / 'cache'}: no run store written: the folder is " \
               "read-only" in runcache.notes()
        assert not (demo / ".perfkit").exists()
    finally:
        demo.chmod(0o755)


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a folder to another user needs root")
def test_a_folder_of_another_user_gets_no_store(demo):
    shutil.rmtree(demo / ".perfkit")
    os.chown(demo, 65534, -1)
    code, _, out, err = perfkit_cli("parse", str(demo))
    assert (code, err) == (0, "") and out.count("arm=") == 20
    assert not (demo / ".perfkit").exists()


def test_showing_one_run_leaves_its_folder_as_it_was(demo):
    run = demo / "runs" / "0001-b01-arm=B"
    before = sorted(os.listdir(run))
    code, _, out, err = perfkit_cli("show", str(run))
    assert (code, err) == (0, "") and "0001-b01-arm=B" in out
    assert sorted(os.listdir(run)) == before  # no .perfkit/cache/ inside the run


def test_a_store_that_cannot_be_written_leaves_no_folder(demo, monkeypatch):
    shutil.rmtree(demo / ".perfkit")

    def broken(runs):
        raise MemoryError("no room")

    monkeypatch.setattr(runcache, "runs_to_table", broken)
    assert len(perfkit.load(demo, cache=True)) == 20
    runcache.flush()
    assert not (demo / ".perfkit").exists()
    assert runcache.notes()[-1] == (f"{demo / '.perfkit' / 'cache'}: run store not written: "
                                    "MemoryError: no room")
