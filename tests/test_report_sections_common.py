"""The report's per-run tables (perfkit.report.sections.common.runs_table) carry the run-status
rule's status, the one the data-quality table gives, and name the model's raw 0.99 flag for
what it is."""

from __future__ import annotations

from perfkit.analysis.context import quality
from perfkit.report.sections.common import runs_table
from perfkit.vocabulary import RunStatus


def test_a_short_run_is_short_in_the_runs_table_as_in_the_quality_table(demo_sweep):
    frame, _ = runs_table(demo_sweep.rows())
    assert "saturated" not in frame  # the raw flag is not the run status
    row = frame.set_index("run_id").loc["tuned_R5000_c64_rep2"]
    assert row["below_target"] and row["status"] == RunStatus.SHORT
    q = quality([demo_sweep]).to_frame().set_index("run_id")
    assert frame.set_index("run_id")["status"].to_dict() == q["status"].to_dict()
    reason = q.loc["tuned_R5000_c64_rep2", "reason"]  # the run-status rule's, as the table's
    assert reason and row["status_reason"] == reason
    assert frame.columns.get_loc("status") == frame.columns.get_loc("below_target") + 1


def test_the_status_is_judged_among_the_runs_peers_on_a_page_selection(demo_sweep):
    page, _ = runs_table(demo_sweep.rows({"target_rate_rps": 45000, "connections": 64}))
    whole, _ = runs_table(demo_sweep.rows())
    mine = page.set_index("run_id")["status"]
    assert (mine == whole.set_index("run_id")["status"].loc[mine.index]).all()
    assert mine["default_R45000_c64_rep2"] == RunStatus.SATURATED


def test_a_report_page_keeps_its_power_simulations_beside_its_first_experiment(
        tmp_path, monkeypatch):
    import shutil

    from perfkit import paths
    from perfkit.report.order import PAGE_ENV
    from perfkit.report.sections import common
    from perfkit.stats import _simcache

    for name in ("demo-aa", "demo-backlog"):
        shutil.copytree(paths.data_dir(name), tmp_path / name)
    monkeypatch.setattr(common, "_REMEMBERING", [])
    monkeypatch.setattr(_simcache, "_DIRECTORY", [])
    monkeypatch.setenv("PERFKIT_CACHE", "1")  # the tests' default is no store
    monkeypatch.delenv(PAGE_ENV, raising=False)
    common.load_experiment("demo-aa", str(tmp_path))
    assert _simcache._DIRECTORY == []  # outside perfkit report: in the process only
    monkeypatch.setenv(PAGE_ENV, "tuning-effects")
    common.load_experiment("demo-aa", str(tmp_path))
    common.load_experiment("demo-backlog", str(tmp_path))  # the page's first experiment kept
    assert _simcache._DIRECTORY == [tmp_path / "demo-aa" / ".perfkit" / "cache" / "power"]
