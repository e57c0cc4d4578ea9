"""Every run folder is a run or an error (issue 30): a run folder whose manifest records a run
that none of its files gives is an error at the file that should hold it
(:func:`perfkit.ingest.refusal.unreadable_run`), never a run that vanishes.

Each case damages a copy of a real run folder (data/demo-aa, written by ``perfkit sweep``;
tests/fixtures, written by hand-run tools with a meta.json) the way a user or a disk does it:
``echo garbage > stdout.txt``, an emptied file, a deleted one, binary bytes.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

import perfkit
from perfkit.errors import LoadError, ParseError
from perfkit.warning import Code

REPO = Path(__file__).resolve().parents[1]
AA = REPO / "data" / "demo-aa"
RUN = "0004-b02-arm=A"
FIXTURE = REPO / "tests" / "fixtures" / "wrk" / "single" / "latency_default_c50"


@pytest.fixture
def aa(tmp_path) -> Path:
    root = tmp_path / "aa"
    shutil.copytree(AA, root)
    return root


@pytest.mark.parametrize(("damage", "line", "found"), [
    (lambda p: p.write_text("garbage\n"), 1, "found 'garbage'"),
    (lambda p: p.write_bytes(b""), 1, "found 'an empty file'"),
    (lambda p: p.write_bytes(b"\x00\x01binary" * 10), None, "found 'binary data"),
    (lambda p: p.unlink(), None, "found 'no such file or directory'"),
])
def test_a_run_folder_whose_output_is_damaged_is_an_error_at_its_file(aa, damage, line, found):
    stdout = aa / "runs" / RUN / "stdout.txt"
    damage(stdout)
    result = perfkit.scan(aa, cache=False)
    assert len(result.runs) == 19  # the other 19 still load
    (error,) = result.errors
    assert isinstance(error, ParseError) and error.path == str(stdout) and error.line == line
    recorded = json.loads((aa / "runs" / RUN / "manifest.json").read_text())["files"]
    size, sha = recorded["stdout.txt"]["bytes"], recorded["stdout.txt"]["sha256"]
    assert (f"expected the wrk output of a complete run ({size:,} bytes, sha256 {sha[:12]}...), "
            f"as manifest.json records, {found}") in str(error)
    with pytest.raises(LoadError) as info:
        perfkit.load(aa, cache=False)
    assert len(info.value.runs) == 19
    assert [str(e) for e in info.value.errors] == [str(error)]


def test_the_run_store_reports_it_on_every_load(aa):
    (aa / "runs" / RUN / "stdout.txt").write_text("garbage\n")
    first = perfkit.scan(aa, cache=True)
    from perfkit.store import runcache

    runcache.flush()
    again = perfkit.scan(aa, cache=True)
    assert [str(e) for e in again.errors] == [str(e) for e in first.errors] != []
    assert len(again.runs) == 19


def test_a_fixture_run_names_the_file_its_meta_json_names(tmp_path):
    run = tmp_path / "run"
    shutil.copytree(FIXTURE, run)
    (run / "run.stdout").write_text("garbage\n")
    (error,) = perfkit.scan(run, cache=False).errors
    assert error.path == str(run / "run.stdout") and error.line == 1
    assert "expected the wrk output of a run, as meta.json records, found 'garbage'" in str(error)


def test_a_failed_run_stays_a_failed_run_not_an_error(aa):
    """A run its manifest records as failed gives a failed Run (with the reason), as before."""
    manifest = aa / "runs" / RUN / "manifest.json"
    data = json.loads(manifest.read_text())
    manifest.write_text(json.dumps({**data, "status": "failed", "exit_code": 1}))
    (aa / "runs" / RUN / "stdout.txt").write_bytes(b"")
    result = perfkit.scan(aa, cache=False)
    assert result.errors == [] and len(result.runs) == 20
    (failed,) = [r for r in result.runs if r.run_id == RUN]
    assert failed.exit_code == 1 and failed.notes[0].code is Code.RUN_ENDED
    assert str(failed.notes[0]).startswith("run failed")


def test_no_real_run_folder_is_called_unreadable():
    """The bundled data and fixtures: no error says a run its manifest records is missing."""
    for root in (REPO / "data", REPO / "tests" / "fixtures"):
        errors = perfkit.scan(root, cache=False).errors
        assert not [e for e in errors if "records" in str(e)], errors[:3]
