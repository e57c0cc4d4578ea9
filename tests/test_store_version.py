"""perfkit's own files as typed records: older versions read, newer refused, writer -> reader.

Every case starts from a real file: a run of ``data/`` (written by ``perfkit sweep``), a
fixture's ``meta.json`` (the shape before perfkit's manifest, read as version 0), a bundled
experiment's ``experiment.yaml`` and ``plan.json``. Only perfkit's own JSON is edited (its
``schema_version``, or a key added); no tool output is touched.

Unknown keys are kept as read (a Run's ``manifest`` holds them) and do not warn: the
bookkeeping keys differ between the writers of manifests (``perfkit run``, ``perfkit sweep``,
the import script).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from _cli_helpers import run_cli

import perfkit
from perfkit.errors import ParseError
from perfkit.run import plan as ex
from perfkit.store import (
    DESIGN_SCHEMA_VERSION,
    PLAN_SCHEMA_VERSION,
    SCHEMA_VERSION,
    SchemaVersionError,
    read_design,
    read_plan,
    read_run_manifest,
    write_manifest,
    write_plan,
)
from perfkit.store.manifest import MANIFEST_KEYS, RunManifest, read_manifest
from perfkit.store.plan import PLAN_KEYS, PLAN_RUN_KEYS

REPO = Path(__file__).resolve().parent.parent
DATA = REPO / "data"
AA = DATA / "demo-aa"
AA_RUN = AA / "runs" / "0001-b01-arm=B"
FIXTURE_RUN = REPO / "tests" / "fixtures" / "wrk" / "sweep" / "default_c10_rep1"
EXPERIMENTS = sorted(p for p in DATA.iterdir() if (p / "plan.json").is_file())


def _copy_run(tmp_path: Path, src: Path = AA_RUN) -> Path:
    dest = tmp_path / "runs" / src.name
    shutil.copytree(src, dest)
    return dest


def _set_version(path: Path, version: int) -> None:
    data = json.loads(path.read_text(encoding="utf-8"))
    data["schema_version"] = version
    path.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")


# -- the run manifest ---------------------------------------------------------------------------
def test_a_fixture_meta_json_is_read_as_version_0_and_upgraded():
    record = read_run_manifest(FIXTURE_RUN / "meta.json")
    meta = json.loads((FIXTURE_RUN / "meta.json").read_text())
    assert "schema_version" not in meta and "params" in meta
    assert record["tool_version"] == meta["version"]
    assert record["factors"] == {"profile": meta["profile"]}
    assert record["load"] == {"connections": 10, "threads": 2, "duration": "5s"}
    assert (record["repetition"], record["order"]) == (meta["params"]["rep"],
                                                       meta["params"]["order"])
    assert record["run_id"] == FIXTURE_RUN.name and record["status"] == "complete"
    info = read_manifest(FIXTURE_RUN / "meta.json")
    assert info.factors == {"profile": "default"} and info.repetition == 1
    assert dict(info.frozen)["version"] == meta["version"]  # the Run keeps the file as read


def test_a_newer_manifest_is_refused_with_a_clear_message(tmp_path):
    run = _copy_run(tmp_path)
    _set_version(run / "manifest.json", SCHEMA_VERSION + 1)
    expected = (f"{run / 'manifest.json'}: schema_version {SCHEMA_VERSION + 1} is newer than "
                f"this perfkit reads ({SCHEMA_VERSION}); upgrade perfkit")
    with pytest.raises(SchemaVersionError) as caught:
        read_manifest(run / "manifest.json")
    assert str(caught.value) == expected
    with pytest.raises(SchemaVersionError):
        read_run_manifest(run / "manifest.json")
    result = perfkit.ingest.scan(run, cache=False)  # reported as a parse error would be
    assert [str(e) for e in result.errors] == [expected]


def test_the_cli_exits_2_on_a_newer_manifest(tmp_path):
    run = _copy_run(tmp_path)
    _set_version(run / "manifest.json", SCHEMA_VERSION + 7)
    code, _, err = run_cli("parse", str(run))
    assert code == 2
    assert f"schema_version {SCHEMA_VERSION + 7} is newer than this perfkit reads" in err
    assert "Traceback" not in err


@pytest.mark.parametrize("bad", ["2", 1.5, True, 0, -1])
def test_a_schema_version_that_is_not_a_count_is_a_parse_error(tmp_path, bad):
    run = _copy_run(tmp_path)
    data = json.loads((run / "manifest.json").read_text())
    data["schema_version"] = bad
    (run / "manifest.json").write_text(json.dumps(data))
    with pytest.raises(ParseError, match="schema_version"):
        read_manifest(run / "manifest.json")


def test_manifest_writer_then_reader_round_trip(tmp_path):
    original = json.loads((AA_RUN / "manifest.json").read_text())
    write_manifest(tmp_path / "manifest.json", RunManifest(**original))
    assert read_run_manifest(tmp_path / "manifest.json") == original
    # byte for byte what perfkit sweep wrote: same keys, same order, same layout
    assert (tmp_path / "manifest.json").read_bytes() == (AA_RUN / "manifest.json").read_bytes()
    assert not list(tmp_path.glob("*.part"))


def test_every_key_perfkit_sweep_writes_is_in_the_record():
    written = json.loads((AA_RUN / "manifest.json").read_text())
    assert set(written) <= set(MANIFEST_KEYS)
    assert [k for k in MANIFEST_KEYS if k in written] == list(written)  # the record's order


def test_unknown_keys_are_kept_without_a_warning(tmp_path):
    run = _copy_run(tmp_path)
    data = json.loads((run / "manifest.json").read_text())
    data["written_by_a_newer_minor_tool"] = {"x": 1}
    (run / "manifest.json").write_text(json.dumps(data))
    [loaded] = perfkit.load(run, cache=False)
    assert loaded.manifest["written_by_a_newer_minor_tool"] == {"x": 1}
    assert not any("written_by" in n for n in loaded.notes)


def test_a_key_of_the_wrong_type_names_the_line(tmp_path):
    run = _copy_run(tmp_path)
    text = (run / "manifest.json").read_text()
    line = text[:text.index('"host"')].count("\n") + 1
    (run / "manifest.json").write_text(text.replace('"host": {', '"host": ["x"], "was": {', 1))
    with pytest.raises(ParseError, match=rf'manifest.json:{line}: expected "host" to be an '
                                         "object"):
        read_manifest(run / "manifest.json")


@pytest.mark.parametrize("experiment", EXPERIMENTS, ids=lambda p: p.name)
def test_every_bundled_run_reads_as_the_current_version(experiment):
    result = perfkit.ingest.scan(experiment, cache=False)
    assert result.runs and not result.errors
    for run in result.runs:
        assert 1 <= run.manifest["schema_version"] <= SCHEMA_VERSION  # 1: warnings as text
        assert read_run_manifest(run.manifest["path"])["status"] == run.manifest["status"]


# -- the plan -----------------------------------------------------------------------------------
@pytest.mark.parametrize("experiment", EXPERIMENTS, ids=lambda p: p.name)
def test_every_bundled_plan_reads_and_is_what_make_plan_makes_again(experiment):
    plan = read_plan(experiment / "plan.json")
    assert plan["schema_version"] == PLAN_SCHEMA_VERSION
    assert set(plan) == set(PLAN_KEYS)
    assert all(list(r) == list(PLAN_RUN_KEYS) for r in plan["runs"])
    data, raw = read_design(experiment / "experiment.yaml")
    if "imported" in data or (data.get("options") or {}).keys() & {"locustfile", "script"}:
        return  # imported designs are not re-planned; file options resolve to this checkout
    again = ex.make_plan(ex.validate(dict(data), str(experiment / "experiment.yaml"),
                                     experiment), raw)
    written = json.loads(json.dumps({**again, "created_utc": plan["created_utc"]}))
    assert written == plan


def test_plan_writer_then_reader_round_trip(tmp_path):
    plan = read_plan(AA / "plan.json")
    write_plan(tmp_path / "plan.json", plan)
    assert read_plan(tmp_path / "plan.json") == plan
    assert (tmp_path / "plan.json").read_bytes() == (AA / "plan.json").read_bytes()


def test_a_newer_plan_is_refused(tmp_path):
    # version 1 is the only plan there has been: no older shape to read
    path = tmp_path / "plan.json"
    shutil.copy(AA / "plan.json", path)
    _set_version(path, PLAN_SCHEMA_VERSION + 1)
    with pytest.raises(SchemaVersionError, match=r"plan.json: schema_version 2 is newer than "
                                                 r"this perfkit reads \(1\); upgrade perfkit"):
        read_plan(path)


def test_a_plan_without_runs_names_the_file(tmp_path):
    path = tmp_path / "plan.json"
    data = json.loads((AA / "plan.json").read_text())
    data["runs"] = {"0001": "x"}
    path.write_text(json.dumps(data, indent=2))
    with pytest.raises(ParseError, match=r'plan.json:\d+: expected "runs" to be a list'):
        read_plan(path)


def test_sweep_exits_2_on_a_plan_from_a_newer_perfkit(tmp_path):
    out = tmp_path / "exp"
    out.mkdir()
    shutil.copy(AA / "experiment.yaml", out / "experiment.yaml")
    shutil.copy(AA / "plan.json", out / "plan.json")
    _set_version(out / "plan.json", PLAN_SCHEMA_VERSION + 1)
    code, _, err = run_cli("sweep", str(out / "experiment.yaml"))
    assert code == 2
    assert f"plan.json: schema_version {PLAN_SCHEMA_VERSION + 1} is newer" in err
    assert not (out / "runs").exists()  # nothing ran, nothing stored was touched


# -- experiment.yaml ----------------------------------------------------------------------------
def test_experiment_yaml_may_state_its_version_and_a_newer_one_is_refused(tmp_path):
    text = (AA / "experiment.yaml").read_text()
    path = tmp_path / "experiment.yaml"
    path.write_text(f"schema_version: {DESIGN_SCHEMA_VERSION}\n{text}")
    data, _ = read_design(path)
    assert ex.validate(data, str(path), tmp_path)["name"] == "demo-aa"
    path.write_text(f"schema_version: {DESIGN_SCHEMA_VERSION + 1}\n{text}")
    with pytest.raises(SchemaVersionError, match="experiment.yaml: schema_version 2 is newer"):
        read_design(path)
    code, _, err = run_cli("sweep", str(path), "--out", str(tmp_path / "out"))
    assert code == 2 and "upgrade perfkit" in err


def test_the_analysis_loader_reads_the_design_with_the_same_reader():
    from perfkit.analysis.core import load_experiment

    exp = load_experiment(AA)
    data, _ = read_design(AA / "experiment.yaml")
    assert dict(exp.design) == dict(data)
