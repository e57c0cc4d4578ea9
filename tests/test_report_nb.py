"""perfkit.report.nb, what a page's notebook writes and reads: its histogram files named by
their load point and linked from the page, and papermill's text for a list parameter made
the list."""

from __future__ import annotations

from pathlib import Path

import pytest

from perfkit.report import nb, nbparams

REPO = Path(__file__).resolve().parents[1]
AT = {"target_rate_rps": 30000, "connections": 64}


@pytest.fixture(scope="module")
def groups(demo_sweep):
    from perfkit.report.sections import latency

    return latency.grouped_runs(demo_sweep, ["profile"], AT)


def test_histogram_files_name_their_load_point_and_are_linked(groups, tmp_path,
                                                                    monkeypatch):
    # issue 21: one interval log per configuration, one tagged line per run (the per-run
    # histograms the spectrum draws), not the pooled requests
    from perfkit.report import nb
    from perfkit.report.sections import latency
    from perfkit.store import hlog
    from perfkit.store.hlog import shipped_histogram

    shown = []
    monkeypatch.setattr(nb, "_display", lambda data, meta=None: shown.append(data))
    report = nb.Report("latency", tmp_path)
    report.histograms(groups, "demo-wrk2-sweep", latency.load_point(AT))
    files = sorted((tmp_path / "histograms").glob("*.hlog"))
    assert [f.name for f in files] == [
        f"latency-demo-wrk2-sweep-{c}-30000-req-s-offered-64-connections.hlog"
        for c in ("default", "tuned")]
    for f, config in zip(files, ("default", "tuned"), strict=True):
        head = f.read_text().splitlines()[0]
        assert head.startswith("# ") and "at 30000 req/s offered, 64 connections" in head
        runs = {r.run_id: r for r in groups[config]}
        parsed = hlog.parse(f.read_text(), f.name)
        assert sorted(r.endpoint for r in parsed) == sorted(runs)
        # the run's histogram, with wrk2's printed percentiles placed at their values
        assert all(r.histogram == shipped_histogram(runs[r.endpoint]) for r in parsed)
        assert all(r.histogram.total_count == runs[r.endpoint].histogram.total_count
                   for r in parsed)
    (page,) = shown
    for f in files:
        assert f'href="histograms/{f.name}"' in page["text/html"]


def test_papermill_text_for_a_list_parameter_becomes_the_list(monkeypatch):
    # nb.setup sets PERFKIT_NO_PROGRESS=1 for the notebook's process: restored after the test
    monkeypatch.delenv("PERFKIT_NO_PROGRESS", raising=False)
    notebook = REPO / "notebooks" / "tuning-effects.ipynb"
    assert [n for n, p in nbparams.declared(notebook).items() if p.type_name == "list[str]"] \
        == ["factors", "metrics", "answer_metrics", "aa_metrics"]
    namespace = {"nb": nb, "metrics": "throughput_rps", "factors": "keepalive, cache",
                 "aa_metrics": ["latency_p99_ms"]}
    exec('report = nb.setup("tuning-effects", "")', namespace)  # noqa: S102 - as the notebook
    assert namespace["metrics"] == ["throughput_rps"]
    assert namespace["factors"] == ["keepalive", "cache"]
    assert namespace["aa_metrics"] == ["latency_p99_ms"]


def test_a_report_table_neutralises_names_as_the_cli_csv_does(tmp_path, monkeypatch):
    # real Locust runs whose request names and arm levels begin with = + - @ (a spreadsheet
    # would run them): the report's tables/*.csv and `--format csv` write the same text
    import _cli_helpers as cli

    import perfkit

    monkeypatch.setattr(nb, "_display", lambda data, meta=None: None)
    exp = perfkit.load_experiment(cli.HOSTILE)
    base, new = (exp.rows({"arm": level}, per_endpoint=True, label=sel)
                 for level, sel in zip(("=1+1", "-2\x1b]0;pwned\x07"), cli.HOSTILE_ARMS,
                                       strict=True))
    table = perfkit.compare_runs(base, new, perfkit.metric("latency_p50_ms"), by=["endpoint"],
                                 exclude=["arm"])
    nb.Report("tuning-effects", tmp_path).table(table.to_frame(), "hostile")
    written = (tmp_path / "tables" / "tuning-effects-hostile.csv").read_bytes().decode()
    code, out, _ = cli.run_cli("compare", *cli.HOSTILE_ARMS, "--by", "endpoint", "--metric",
                               "latency_p50_ms", "--format", "csv")
    assert code == 0 and written == out
    assert cli.formula_cells(written) == []
    assert "'=HYPERLINK(\"\"http://example.invalid/\"\",\"\"click\"\")" in written


def test_a_figures_checks_and_alt_text_read_the_pages_draw_and_draw_nothing_again(
        tmp_path, monkeypatch):
    from perfkit import plots
    from perfkit.plots import checks, describe

    shown = []
    monkeypatch.setattr(nb, "_display", lambda data, meta=None: shown.append(meta))
    fig, ax = plots.figure()
    ax.plot([1, 2, 3], [3, 40, 400], label="tuned")
    ax.set_xlabel("connections")
    ax.set_ylabel("latency (ms)")
    ax.text(2, 40, "a note over")
    ax.text(2, 40, "another note")  # overlapping: a problem the checks find
    ax.legend()
    draws = []
    real = checks._draw
    monkeypatch.setattr(checks, "_draw", lambda f: (draws.append(f), real(f))[1])
    nb.Report("t", tmp_path).figure(fig, "f")
    assert draws == []  # the page's PNG drew it at the figure's dpi: nothing else draws
    meta = shown[0]["perfkit"]
    again = checks.check(fig)  # drawn afresh, at the figure's dpi
    assert again["overlapping_text"] and again["labels_without_units"]
    assert {k: meta[k] for k in again} == again
    assert meta["alt"] == describe(fig, drawn=True)
