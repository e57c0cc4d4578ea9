"""perfkit.load / perfkit.scan: finding tool outputs, skipping the rest, reporting bad files."""

import json
import os
import shutil
from pathlib import Path

import pytest

import perfkit
from perfkit._fsutil import read_bytes
from perfkit.errors import LoadError, ParseError, UnknownFormatError
from perfkit.warning import Code, Warn

FIX = Path(__file__).parent / "fixtures"


def _scan_fixtures() -> perfkit.LoadResult:
    """Every fixture folder but published/, whose outputs include ones refused on purpose
    (tests/test_ingest_published.py)."""
    result = perfkit.LoadResult()
    for folder in sorted(FIX.iterdir()):
        if folder.is_dir() and folder.name != "published":
            result.extend(perfkit.scan(folder))
    return result


def test_every_shared_fixture_loads_without_error():
    result = _scan_fixtures()
    assert result.errors == []
    tools = {r.tool for r in result.runs}
    assert tools == {"wrk", "wrk2", "locust"}
    # 24 wrk sweep + 8 wrk singles + 48 wrk2 sweep + 11 wrk2 singles = 91 wrk/wrk2 runs,
    # + 12 wrk/wrk2 runs in wild states (tests/fixtures/wild, issue 10)
    # + 5 wrk runs with the server's counters (tests/fixtures/counters: 2 of issue 25, 3
    # with the upstream's and the sockets', issue 29)
    # + 60 wrk runs of the first demo factorial, the testbed's stalls (tests/fixtures/stalls)
    # + 48 wrk runs of the first closed-loop sweep, on a busy shared VM (tests/fixtures/scaling)
    assert sum(r.tool in ("wrk", "wrk2") for r in result.runs) == 91 + 12 + 5 + 60 + 48


def test_non_tool_files_in_a_directory_are_skipped_quietly():
    # the Locust fixture directories hold HTML reports, meta.json, stderr logs: none is a run,
    # none is an error; the locustfile one level up is skipped too
    result = perfkit.scan(FIX / "locust")
    assert result.errors == []
    assert {r.source.rsplit("/", 1)[-1] for r in result.runs} >= {"run.stdout"}
    assert not any(r.source.endswith((".html", ".py", "meta.json")) for r in result.runs)


@pytest.mark.parametrize("name", [
    "locust/clean_u20/clean.html", "locust/locustfile.py", "wrk/sweep/sweep_order.csv",
    "wrk/sweep/default_c10_rep1/meta.json",
])
def test_a_named_file_that_is_no_tools_output_is_an_error(name):
    result = perfkit.scan(FIX / name)
    assert result.runs == []
    assert len(result.errors) == 1
    assert isinstance(result.errors[0], (UnknownFormatError, ParseError))


def test_named_empty_and_binary_files_are_errors(tmp_path):
    empty = tmp_path / "empty.txt"
    empty.write_text("")
    binary = tmp_path / "blob.bin"
    binary.write_bytes(bytes(range(256)) * 4)
    (err_empty,) = perfkit.scan(empty).errors
    expected = f"{empty}:1: expected output of wrk, wrk2 or Locust, found 'an empty file'"
    assert str(err_empty) == expected
    (err_bin,) = perfkit.scan(binary).errors
    assert "binary" in str(err_bin)


def test_missing_path_is_an_error(tmp_path):
    (error,) = perfkit.scan(tmp_path / "nope").errors
    assert "no such file" in str(error)


def test_good_runs_load_beside_a_truncated_one(tmp_path):
    good = tmp_path / "good"
    shutil.copytree(FIX / "wrk/single/latency_default_c50", good)
    bad = tmp_path / "bad"
    bad.mkdir()
    lines = (good / "run.stdout").read_text().splitlines(keepends=True)
    (bad / "run.stdout").write_text("".join(lines[:9]))  # killed before the totals
    result = perfkit.scan(tmp_path)
    assert [r.run_id for r in result.runs] == ["good"]
    (error,) = result.errors
    assert isinstance(error, ParseError) and error.path == str(bad / "run.stdout")
    with pytest.raises(LoadError) as info:
        perfkit.load(tmp_path)
    assert [r.run_id for r in info.value.runs] == ["good"]
    assert perfkit.load(tmp_path, strict=False)[0].run_id == "good"


def test_hidden_directories_such_as_aborted_runs_are_never_counted(tmp_path):
    shutil.copytree(FIX / "wrk/single/plain_default_c50", tmp_path / "runs/a")
    shutil.copytree(FIX / "wrk/single/plain_default_c50", tmp_path / "runs/.aborted/a")
    assert [r.run_id for r in perfkit.load(tmp_path)] == ["a"]


def test_a_run_directory_owns_the_files_of_its_subdirectories(tmp_path):
    # perfkit's store keeps Locust's CSVs in runs/<id>/locust/ beside stdout.txt: one run
    run = tmp_path / "runs/r1"
    (run / "locust").mkdir(parents=True)
    src = FIX / "locust/clean_u20"
    shutil.copy(src / "run.stdout", run / "stdout.txt")
    for name in ("clean_stats.csv", "clean_stats_history.csv", "clean_failures.csv",
                 "clean_exceptions.csv"):
        shutil.copy(src / name, run / "locust" / name)
    meta = json.loads((src / "meta.json").read_text())
    manifest = {"schema_version": 1, "tool": "locust", "argv": meta["argv"],
                "factors": {"profile": "default"}, "run_id": "r1", "status": "complete"}
    (run / "manifest.json").write_text(json.dumps(manifest))
    runs = perfkit.load(tmp_path)
    agg = [r for r in runs if r.is_aggregate]
    assert len(agg) == 1 and agg[0].requests == 11738  # the --json totals, not the CSV's 11300
    assert Warn(Code.LOCUST_CSV_LAGS_JSON, csv_requests=11300, json_requests=11738,
                csv_failures=0, json_failures=0) in agg[0].warnings
    assert agg[0].extra["history"]  # the history CSV was combined into the same run
    assert agg[0].users == 20 and agg[0].factors == {"profile": "default"}


def test_a_failed_run_without_output_is_kept_and_says_so(tmp_path):
    run = tmp_path / "runs/r9"
    run.mkdir(parents=True)
    (run / "stdout.txt").write_text("")
    (run / "manifest.json").write_text(json.dumps(
        {"schema_version": 1, "tool": "wrk", "status": "killed", "exit_code": -9,
         "run_id": "r9", "factors": {"profile": "default"}}))
    (r,) = perfkit.load(tmp_path)
    assert r.run_id == "r9" and r.exit_code == -9 and r.requests is None
    assert any(w.code is Code.RUN_STATUS and w["status"] == "killed" for w in r.warnings)


def test_manifest_decides_wrk2_when_the_output_looks_like_wrk(tmp_path):
    # a wrk2 run too short to calibrate and without --latency prints what wrk prints;
    # here a real wrk output stands in, labelled wrk2 by its manifest
    shutil.copytree(FIX / "wrk/single/plain_default_c50", tmp_path / "r")
    (tmp_path / "r/meta.json").write_text(json.dumps(
        {"tool": "wrk2", "argv": ["wrk2", "-t2", "-c50", "-d10s", "-R40000",
                                  "http://127.0.0.1:8080/"]}))
    (r,) = perfkit.load(tmp_path)
    assert r.tool == "wrk2" and r.target_rate_rps == 40000.0
    assert r.latency_source == "hdr_corrected" and r.histogram is None


def test_a_fifo_beside_a_run_is_skipped_never_read(tmp_path):
    """A FIFO (or socket, device) is never a tool output; opening one to read would block."""
    shutil.copytree(FIX / "wrk/single/plain_default_c50", tmp_path / "runs/a")
    os.mkfifo(tmp_path / "runs/a/pipe.out")
    os.mkfifo(tmp_path / "runs/meta.json")  # not a manifest: the directory is not one run
    result = perfkit.scan(tmp_path, cache=False)
    assert [r.run_id for r in result.runs] == ["a"] and result.errors == []


@pytest.mark.parametrize("size", [0, 1, 65_535, 65_536, 65_537, 1_200_000])
def test_read_bytes_gives_the_whole_file(tmp_path, size):
    data = bytes(range(256)) * (size // 256) + bytes(size % 256)
    (tmp_path / "f").write_bytes(data)
    assert read_bytes(tmp_path / "f") == data
    with pytest.raises(IsADirectoryError):
        read_bytes(tmp_path)
    with pytest.raises(FileNotFoundError):
        read_bytes(tmp_path / "missing")


def test_a_run_directory_keeps_what_classify_finds_in_each_of_its_files():
    """The loader reads and sniffs each file itself (classify() spelled out, for thousands of
    files per load): on every real run directory of the fixtures and data/ it keeps exactly
    the files classify() recognises, as the same kind and text."""
    from perfkit.ingest.loader import _MANIFEST_SUFFIXES, _prepare, classify
    from perfkit.store.discover import walk

    seen = 0
    for source in (FIX, FIX.parent.parent / "data"):
        for directory, entries, manifest in walk(str(source), with_stat=False):
            paths = [p for p, _ in entries]
            prepared = _prepare(directory, paths, manifest)
            tool = prepared.info.tool if prepared.info is not None else None
            wrk_tool = tool if tool in ("wrk", "wrk2") else None
            found = [classify(p, wrk_tool) for p in sorted(paths)
                     if not p.endswith(_MANIFEST_SUFFIXES)]
            assert prepared.files == [f for f in found if f is not None], directory
            seen += len(prepared.files)
    assert seen > 300


def test_a_large_file_sniffed_by_its_head_is_kept_as_when_decoded_whole():
    """The loader sniffs the head of a file over 64 KiB before decoding it whole (Locust's
    1 MB HTML report is no tool output): the same answer as decoding first, for a character
    cut at the head's end, bytes that are not UTF-8 after the head, and a long real history
    (its rows repeated: a test input, never a fixture)."""
    from perfkit.ingest.decode import decode
    from perfkit.ingest.loader import _output, _output_of
    from perfkit.ingest.sniffer import HEAD_BYTES

    html = (FIX / "locust" / "clean_u20" / "clean.html").read_bytes()
    history = (FIX / "locust" / "processes2_u40" / "procs_stats_history.csv").read_bytes()
    header, rows = history.split(b"\n", 1)
    long_history = header + b"\n" + rows * (8 * HEAD_BYTES // len(rows))
    cut = 4 * HEAD_BYTES - 1
    cases = {
        "html": html, "html, bad byte at the end": html + b"\xff",
        "html, a character across the head's end": html[:cut] + "\u00e9".encode() + html[cut:],
        "long history": long_history, "long history, bad byte": long_history + b"\xff",
        "long history, a character across the head's end":
            long_history[:cut] + "\u20ac".encode() + long_history[cut:],
        "4-byte characters to the head's end": "\U0001f600".encode() * HEAD_BYTES + history,
    }
    kinds = {}
    for name, data in cases.items():
        assert len(data) > 4 * HEAD_BYTES, name
        whole = _output("f", decode(data, HEAD_BYTES), None)
        assert _output_of("f", data, None) == whole, name
        kinds[name] = None if whole is None else whole.kind
    assert kinds["long history"] == "locust_history" and kinds["html"] is None
    # not UTF-8 at the end: read as Latin-1 (and said), never dropped
    assert kinds["long history, bad byte"] == "locust_history"
    said = _output_of("f", cases["long history, bad byte"], None).decoded
    assert said is not None and said.code is Code.DECODED_LATIN1 and said["byte"] == 0xff
    assert str(said).startswith("not UTF-8 (byte 0xff on line ")


def test_every_hdrhistogram_log_marker_starts_with_a_hint_the_sniffer_looks_for():
    # the sniffer splits a file into lines only when one of the hints occurs in it
    from perfkit.ingest import sniffer

    assert all(marker.startswith(sniffer._HLOG_HINTS) for marker in sniffer.HLOG_MARKERS)
    for marker in sniffer.HLOG_MARKERS:
        assert sniffer.sniff(f"some preamble\n{marker} 1\n") == "hlog"
    assert sniffer.sniff("TcpExt: SyncookiesSent ListenOverflows\nTcpExt: 0 3\n") is None
