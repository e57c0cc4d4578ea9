"""Run manifests: perfkit's manifest.json and the fixtures' meta.json, and argv parsing."""

import dataclasses
import json
from pathlib import Path

import pytest

import perfkit
from perfkit.errors import ParseError
from perfkit.model import FrozenMap, Run
from perfkit.store.manifest import (
    ManifestInfo,
    apply_manifest,
    parse_locust_argv,
    parse_wrk_argv,
    read_manifest,
)
from perfkit.warning import Code, Warn


def test_wrk2_argv_gives_rate_threads_connections_duration_url():
    opts = parse_wrk_argv(["wrk2", "-t2", "-c50", "-d20s", "-R20000", "--latency", "-U",
                           "http://127.0.0.1:8080/"])
    assert opts == {"threads": 2, "connections": 50, "duration_s": 20.0, "rate": 20000.0,
                    "latency": True, "U": True, "url": "http://127.0.0.1:8080/"}


def test_wrk_argv_with_separate_values_and_header():
    opts = parse_wrk_argv(["wrk", "--threads", "4", "--connections=100", "-d", "2m", "-H",
                           "Connection: Close", "http://127.0.0.1:8080/x"])
    assert opts["threads"] == 4 and opts["connections"] == 100
    assert opts["duration_s"] == 120.0 and opts["header"] == "Connection: Close"
    assert opts["url"] == "http://127.0.0.1:8080/x"


def test_locust_argv():
    opts = parse_locust_argv(["locust", "-f", "locustfile.py", "--headless", "-u", "20", "-r",
                              "10", "-t", "20s", "--host", "http://127.0.0.1:8080",
                              "--processes", "2", "CleanUser"])
    assert opts == {"users": 20, "spawn_rate": 10.0, "run_time_s": 20.0,
                    "host": "http://127.0.0.1:8080", "processes": 2}


def _write(tmp_path, name, data):
    path = tmp_path / name
    path.write_text(json.dumps(data) if not isinstance(data, str) else data)
    return path


def test_meta_json_profile_and_params_become_factors_and_bookkeeping(tmp_path):
    meta = {"tool": "wrk2", "version": "wrk 4.0.0 [epoll]",
            "argv": ["wrk2", "-t2", "-c64", "-d15s", "-R45000", "--latency",
                     "http://127.0.0.1:8080/"],
            "profile": "default",
            "params": {"order": 42, "rep": 1, "connections": 64, "threads": 2,
                       "duration": "15s", "rate": 45000},
            "start_utc": "2026-11-21T19:42:18.396Z", "exit_code": 0}
    info = read_manifest(_write(tmp_path, "meta.json", meta))
    assert info.factors == {"profile": "default"}
    assert (info.repetition, info.order, info.exit_code) == (1, 42, 0)
    run = apply_manifest(Run(tool="wrk2", source="s", latency_source="hdr_corrected",
                             threads=2, connections=64, throughput_rps=44000.0), info)
    assert run.target_rate_rps == 45000.0
    assert run.tool_version == "wrk 4.0.0 [epoll]"
    assert run.run_id == tmp_path.name and run.order == 42
    assert run.below_target is True


def test_perfkit_manifest_fields(tmp_path):
    manifest = {"schema_version": 1, "tool": "wrk", "tool_version": "wrk 4.1.0",
                "argv": ["wrk", "-t2", "-c16", "-d5s", "--latency", "http://127.0.0.1:8080/"],
                "factors": {"keepalive": "on", "cache": "off"},
                "load": {"connections": 16, "threads": 2},
                "run_id": "0003-abc", "repetition": 2, "block": 2, "order": 3,
                "exit_code": 0, "status": "complete"}
    info = read_manifest(_write(tmp_path, "manifest.json", manifest))
    run = apply_manifest(Run(tool="wrk", source="s", latency_source="summary_only",
                             connections=16), info)
    assert run.factors == {"keepalive": "on", "cache": "off"}
    assert (run.run_id, run.repetition, run.block, run.order) == ("0003-abc", 2, 2, 3)
    assert run.target_rate_rps is None  # wrk is closed-loop: no target rate


def test_printed_values_are_never_overwritten_by_the_manifest(tmp_path):
    meta = {"tool": "wrk", "argv": ["wrk", "-t4", "-c99", "http://other/"], "params": {}}
    info = read_manifest(_write(tmp_path, "meta.json", meta))
    run = apply_manifest(Run(tool="wrk", source="s", latency_source="summary_only", threads=2,
                             connections=50, url="http://127.0.0.1:8080/"), info)
    assert (run.threads, run.connections, run.url) == (2, 50, "http://127.0.0.1:8080/")


def test_failed_status_is_noted(tmp_path):
    info = read_manifest(_write(tmp_path, "manifest.json",
                                {"tool": "wrk", "status": "killed", "exit_code": -9}))
    run = apply_manifest(Run(tool="wrk", source="s", latency_source="summary_only"), info)
    assert Warn(Code.RUN_STATUS, status="killed", exit_code=-9) in run.warnings


@pytest.mark.parametrize("text, line", [("{\n  \"tool\": \n", 3), ("[1, 2]", 1)])
def test_malformed_manifest_names_file_and_line(tmp_path, text, line):
    path = _write(tmp_path, "manifest.json", text)
    with pytest.raises(ParseError) as info:
        read_manifest(path)
    assert info.value.line == line
    assert str(info.value).startswith(f"{path}:{line}: expected a JSON object")


def test_argv_must_be_a_list_of_strings(tmp_path):
    path = _write(tmp_path, "meta.json", {"argv": "wrk -t2 http://x/"})
    with pytest.raises(ParseError, match="argv"):
        read_manifest(path)


def test_merged_runs_hold_what_run_checks_would_make_of_them():
    """apply_manifest skips Run.__post_init__ when its values are already frozen: the runs are
    exactly what the checked path (Run.replace) gives."""
    runs = perfkit.load(Path(__file__).parent / "fixtures" / "wrk2" / "sweep", cache=False)
    assert runs
    for run in runs:
        assert run.same_as(run.replace())
        assert isinstance(run.factors, FrozenMap) and isinstance(run.notes, tuple)
        assert run.argv is None or isinstance(run.argv, tuple)


META = {"tool": "wrk2", "argv": ["wrk2", "-R1000", "http://127.0.0.1:8080/"],
        "params": {"rep": 1, "order": 2, "connections": 16, "rate": 1000, "duration": "15s"},
        "exit_code": 0}


@pytest.mark.parametrize("change, accepted", [
    ({}, True),
    ({"exit_code": None}, True),
    ({"exit_code": 3.0}, False),  # a typed key: an integer, not a float
    ({"exit_code": " 3 "}, True),  # or as digits
    ({"exit_code": ""}, True),
    ({"exit_code": 2**62}, True),
    ({"exit_code": 2**62 + 1}, False),
    ({"exit_code": -(2**62) - 1}, False),
    ({"exit_code": True}, False),
    ({"exit_code": 3.5}, False),
    ({"exit_code": "x"}, False),
    ({"params": {"rep": "9" * 30}}, False),
    ({"params": {"rep": [1]}}, False),
    ({"params": {"rep": 1.0}}, True),  # untyped inside params: an integer written as a float
    ({"params": {"rep": 1.5}}, False),
    ({"params": {"connections": True}}, False),
    ({"params": {"connections": [16]}}, False),
    ({"params": {"connections": None, "duration": "15s", "rate": 1e3}}, True),
    ({"argv": ["wrk2", 5]}, False),
    ({"argv": "wrk2 -R1000"}, False),
    ({"warnings": 5}, False),  # once a TypeError
    ({"warnings": ["a", "b"]}, True),
    ({"tool": 5}, False),
    ({"params": []}, False),
])
def test_manifest_types_are_checked_whatever_the_shortcut(tmp_path, change, accepted):
    """The type checks answer every case alike, whether the common case's one-pass test
    decides it or the key-by-key one; a refusal names the key's line."""
    path = _write(tmp_path, "meta.json", json.dumps({**META, **change}, indent=2))
    if accepted:
        assert read_manifest(path).tool == "wrk2"
        return
    with pytest.raises(ParseError) as info:
        read_manifest(path)
    key = next(iter(change)) if "params" not in change else next(iter(change["params"]), "params")
    text = path.read_text()
    assert info.value.line == text[:text.index(f'"{key}"')].count("\n") + 1


def test_a_manifest_read_sets_every_field_of_its_info(tmp_path):
    """read_manifest builds ManifestInfo without its __init__: every field must be set."""
    info = read_manifest(_write(tmp_path, "meta.json", META))
    names = [f.name for f in dataclasses.fields(ManifestInfo)]
    assert [k for k in vars(info) if k in names] == names
    with pytest.raises(dataclasses.FrozenInstanceError):
        info.tool = "wrk"  # type: ignore[misc]
