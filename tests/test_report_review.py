"""Review of the SLO, scaling, latency and history pages, item by item: what a reviewer found on
the demo report, checked on the same data.

Each test is named after the numbered item it answers. The numbers it expects are computed here
from the runs (achieved / offered rates, X * R / N) or written out by hand, not taken from the
code under test; the built report is checked where the defect was on a page.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from perfkit.analysis import load_experiment
from perfkit.model import SATURATION_RATIO
from perfkit.present import compare as present_compare
from perfkit.present import effects as present_effects
from perfkit.present import frame as present_frame
from perfkit.present import scaling as present_scaling
from perfkit.present.tables import render
from perfkit.report.sections import scaling

DATA = Path(__file__).resolve().parents[1] / "data"


@pytest.fixture(scope="module")
def sweep():
    return load_experiment(DATA / "demo-wrk2-sweep")


@pytest.fixture(scope="module")
def slo_table(sweep):
    return scaling.slo(sweep.rows(), ["profile", "connections"], 5.0, 99.0, 0.95, seed=1,
                       n_resamples=2000)


def _bracket(table, profile, connections):
    (b,) = [b for b in table.brackets if b.key == (profile, connections)]
    return b


def _slo_text(table, profile, connections) -> str:
    (t,) = [t for t in present_scaling.slo(table) if t.title.startswith(
        f"profile={profile}  connections={connections} ")]
    return render(t, "text")


# -- 1: SLO tables --------------------------------------------------------------------------
def test_item01_kept_up_counts_follow_the_run_status_rule(sweep, slo_table):
    frame = sweep.rows().frame
    cell = frame[(frame["profile"] == "tuned") & (frame["connections"] == 64)
                 & (frame["target_rate_rps"] == 5000)]
    achieved = (cell["throughput_rps"] / cell["target_rate_rps"]).to_numpy()
    assert sorted(np.round(achieved, 3))[0] == 0.964  # one run fell short of 0.99 x ...
    kept = int((achieved >= SATURATION_RATIO).sum())
    assert kept == 2
    # ... and the run-status rule calls it short (its latency is like its peers'), not saturated
    (v,) = [v for v in _bracket(slo_table, "tuned", 64).bracket.rates if v.rate_rps == 5000]
    assert (v.n_kept_up, v.n_short, v.n_saturated, v.n_failed) == (kept, 1, 0, 0)
    assert v.verdict == "pass"
    text = _slo_text(slo_table, "tuned", 64)
    assert re.search(r"^\s*5000\s+2\s+1\s+0\s", text, flags=re.M), text
    # a saturated run is counted as such: default, 16 connections, 45000 req/s (0.916 x)
    (v,) = [v for v in _bracket(slo_table, "default", 16).bracket.rates if v.rate_rps == 45000]
    assert (v.n_kept_up, v.n_short, v.n_saturated) == (2, 0, 1) and v.verdict == "fail"
    records = slo_table.verdicts_frame()
    assert {"n_kept_up", "n_short", "n_saturated", "n_failed"} <= set(records.columns)


def test_item01_an_inconclusive_rate_above_the_last_pass_is_in_the_answer(slo_table):
    for connections in (16, 64):
        b = _bracket(slo_table, "tuned", connections)
        assert b.bracket.bracket == (30000, None)
        assert [v.verdict for v in b.bracket.rates][-1] == "inconclusive"
        assert b.verdict == "inconclusive above" and b.inconclusive_rps == (45000,)
        assert not any("test higher rates" in w for w in b.warnings)
        (answer,) = [a for a in scaling.answers(slo_table, None)
                     if a.question.endswith(f"profile tuned, {connections} connections")]
        assert answer.answer == ">= 30000 req/s; 45000 inconclusive: run more there"
        assert answer.verdict == "inconclusive above"
        assert "none failed" not in _slo_text(slo_table, "tuned", connections)
    # inconclusive between a pass and a fail: the answer names the rate too
    b = _bracket(slo_table, "default", 64)
    assert b.verdict == "inconclusive between" and b.inconclusive_rps == (30000,)
    assert scaling.bracket_text(*b.bracket.bracket, b.inconclusive_rps) == \
        "[15000, 45000] req/s; 30000 inconclusive: run more there"
    # every rate passed and none failed: open above, test higher rates
    assert scaling.bracket_text(30000, None) == "[30000, none failed] req/s"


def test_item01_runs_needed_say_in_all_and_how_many_more(slo_table):
    b = _bracket(slo_table, "tuned", 64)
    (v,) = [v for v in b.bracket.rates if v.verdict == "inconclusive"]
    assert v.n_runs == 3 and v.runs_needed is not None and v.runs_needed > 3
    assert (f"about {v.runs_needed} runs in all at this rate would settle it "
            f"({v.runs_needed - 3} more)") in v.reason
    assert "would settle it" in v.reason and "about 9 runs would" not in v.reason


def test_item01_slo_notes_state_each_warning_once(slo_table):
    for t in present_scaling.slo(slo_table):
        for i, note in enumerate(t.notes):
            assert not any(note in other for j, other in enumerate(t.notes) if j != i), note
    text = _slo_text(slo_table, "tuned", 64)
    assert text.count("fell short of the target (0.964 x)") == 1, text


# -- 2: one precision -----------------------------------------------------------------------
def _significant(text: str) -> int:
    """Significant digits of a printed number (``"0.00062"`` -> 2, ``"14900"`` -> 3)."""
    digits = text.lstrip("+-").replace(".", "").lstrip("0")
    return len(digits.rstrip("0")) if "." not in text else len(digits)


@pytest.mark.parametrize("value, printed", [
    (239.5, "240"), (4.387, "4.39"), (32817.3, "32800"), (10.39, "10.4"), (0.03454, "0.0345"),
    (14911.2, "14900"), (0.0006195, "0.00062"), (25.76, "25.8"), (57.68, "57.7"),
    (3.0312, "3.03"), (45000, "45000"), (float("inf"), "inf"), (float("nan"), "-")])
def test_item02_estimates_print_to_three_significant_digits(value, printed):
    from perfkit.formatting import fmt_sig

    assert fmt_sig(value) == printed


def test_item02_interval_and_changes_share_one_form():
    from perfkit.formatting import fmt_ci, pct_change

    assert fmt_ci(239.5, 4.387, 32817.3) == "240 [4.39, 32800]"
    assert fmt_ci(3.0312, 1.7654, 6.7721, "ms") == "3.03 ms [1.77, 6.77]"
    # a change beyond +-100% to 3 significant digits, below it to one decimal
    assert pct_change(37.872) == "+3690%" and pct_change(29.532) == "+2850%"
    assert pct_change(1.031) == "+3.1%" and pct_change(0.5) == "-50.0%"
    # one percentage-change form: signed, with % on every number
    assert fmt_ci(49.37, 24.1, 80.2, "%", digits=2) == "+49% [+24%, +80%]"
    assert fmt_ci(-18.2, -24.3, -11.1, "%", digits=2) == "-18% [-24%, -11%]"


def test_item02_usl_parameters_print_as_the_index_does():
    closed = load_experiment(DATA / "demo-wrk-connections")
    models = scaling.fits(closed.rows(), ["profile"], n_resamples=100, seed=1)
    for table in present_scaling.scaling(models, littles=False):
        for name, estimate, interval in table.rows:
            numbers = re.findall(r"-?\d[\d.e+-]*", f"{estimate} {interval.split('(')[0]}")
            numbers = [n for n in numbers if not re.fullmatch(r"\d", n) or n != "0"]
            assert all(_significant(n) <= 3 for n in numbers), (name, estimate, interval)
    (default,) = [r for r in models.results if r.key == ("default",)]
    lo, hi = default.fit.n_star_ci
    (n_star,) = [row for t in present_scaling.scaling(models, littles=False) for row in t.rows
                 if row[0] == "N*" and row[1] != "-"]
    assert n_star[1] == f"{float(f'{default.fit.n_star:.3g}'):g}"
    assert n_star[2].startswith(f"[{float(f'{lo:.3g}'):g}, {float(f'{hi:.3g}'):g}]")


def test_item02_variation_explained_prints_alike_in_both_tables():
    from perfkit.analysis import metric
    from perfkit.analysis.effects import factorial_effects

    rows = load_experiment(DATA / "demo-wrk-factorial").rows()
    result = factorial_effects(rows, ["keepalive", "cache"], metric("latency_p99_ms"),
                               by=["connections"])
    (table, *_) = present_effects.factorial(result)
    frame = result.to_frame()
    share = frame[(frame["connections"] == 16) & (frame["term"] == "keepalive")]
    expected = f"{share['variation_pct'].iloc[0]:.3g}"
    (row,) = [r for r in table.rows if r[0] == "16" and r[1] == "keepalive"]
    at = [c.name for c in table.columns].index("variation")
    assert row[at] == expected == "6.22"


# -- 3: Little's law and the claimed peak on the scaling page --------------------------------
@pytest.fixture(scope="module")
def closed():
    return load_experiment(DATA / "demo-wrk-connections")


@pytest.fixture(scope="module")
def models(closed):
    return scaling.closed_models(closed, {}, ["profile"], n_resamples=100, seed=1)


def test_item03_a_ratio_above_one_is_explained_where_it_occurs(closed, models):
    frame = closed.rows().frame
    default = frame[frame["profile"] == "default"]
    ratio = (default["throughput_rps"] * default["latency_mean_ms"] / 1000
             / default["connections"]).groupby(default["connections"]).median()
    assert [round(ratio[n], 2) for n in (2, 4, 8, 16)] == [2.76, 2.41, 1.69, 1.36]
    text = " ".join(scaling.littles_text(models))
    assert "Above 1.2" in text and "stats_correct" in text
    assert "profile default at 2, 4, 8, 16 connections" in text
    assert "cannot exceed N" in text and "not affected" in text
    # what the page does not show, it does not describe: no Locust, no think-time column
    assert "Locust" not in text and "think time Z" not in text
    table = scaling.present_littles(models)
    headers = [c.header for c in table.columns]
    assert "X*R/N" in headers and not any("Z" in h or "think" in h for h in headers)
    assert any("stats_correct" in n for n in table.notes)
    intro = scaling.intro(load_experiment(DATA / "demo-wrk2-sweep"), closed, None, models)
    assert "Locust" not in intro and "users" not in intro and "wrk at 2 to 256" in intro


def test_item03_the_claimed_peak_carries_its_experiments_threats(closed, models):
    (table,) = [t for t in scaling.present_models(models, closed)
                if t.title.startswith("profile=default")]
    (n_star,) = [row for row in table.rows if row[0] == "N*"]
    marks = [int(m) for m in re.findall(r"\[(\d+)\]", n_star[2])]
    beside = [table.notes[m - 1] for m in marks]
    assert any("throughput_rps -33%" in n for n in beside), beside
    assert any("between blocks" in n and "16%" in n for n in beside), beside
    caption = scaling.models_caption(models, closed)
    assert "N* = 35.3 [" in caption and "threat" in caption


# -- 4: every caption and file names its own load point ---------------------------------------
SELECT = {"target_rate_rps": 30000, "connections": 64}


@pytest.fixture(scope="module")
def groups(sweep):
    from perfkit.report.sections import latency

    return latency.grouped_runs(sweep, ["profile"], SELECT)


def test_item04_the_latency_page_names_each_load_point(sweep, groups):
    import matplotlib.pyplot as plt

    from perfkit.plots import describe
    from perfkit.report.sections import latency

    intro = "".join(_notebook_cells("latency")[0]["source"])
    assert "of every figure and table is the selection named below" not in intro
    assert "Each caption" in intro
    co = load_experiment(DATA / "demo-wrk2-uncorrected")
    (run,) = co.runs
    assert (run.target_rate_rps, run.connections) == (20000, 50)
    assert "20000 req/s offered, 50 connections" in latency.co_audit_caption(co)
    assert "20000 req/s offered, 50 connections" in latency.co_caption(co)
    table = latency.percentiles(groups, (50.0, 99.0, 99.9), seed=1)
    spectrum = latency.spectrum(groups, seed=1)
    within = latency.within_run_table(groups, 99.0)
    for fig in (latency.spectrum_figure(spectrum, ["profile"], where=SELECT),
                latency.intervals_figure(within, table, 99.0, ["profile"], where=SELECT)):
        assert "at 30000 req/s offered, 64 connections" in describe(fig)
        plt.close(fig)
    for caption in (latency.spectrum_caption(spectrum, SELECT, 0.95),
                    latency.intervals_caption(within, 99.0, SELECT, 0.95)):
        assert "30000 req/s offered, 64 connections" in caption


def test_item04_histogram_files_name_their_load_point_and_are_linked(groups, tmp_path,
                                                                    monkeypatch):
    # issue 21: one interval log per configuration, one tagged line per run (the per-run
    # histograms the spectrum draws), not the pooled requests
    from perfkit.ingest import hlog
    from perfkit.report import nb
    from perfkit.report.sections import latency

    shown = []
    monkeypatch.setattr(nb, "_display", lambda data, meta=None: shown.append(data))
    report = nb.Report("latency", tmp_path)
    report.histograms(groups, "demo-wrk2-sweep", latency.load_point(SELECT))
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
        assert all(r.histogram == runs[r.endpoint].histogram for r in parsed)
    (page,) = shown
    for f in files:
        assert f'href="histograms/{f.name}"' in page["text/html"]


def test_item04_the_history_says_its_load_point_from_the_data():
    from perfkit.analysis import history as hist
    from perfkit.analysis import metric
    from perfkit.report.sections import history as hs

    h = hs.load("demo-history", str(DATA))
    frame = h.rows().frame
    assert frame["connections"].unique().tolist() == [16]
    (a,) = hs.analyse(h, ["latency_p99_ms"], permutations=19)
    assert dict(a.load)["connections"] == 16
    for text in (hs.series_caption(a), hs.series_alt(a), hs.series_table_caption(a),
                 hs.gates_caption(a, 0.05), hs.labels_caption(h, [a]),
                 *(t.title for t in present_gate_series(a))):
        assert "16 connections" in text, text
    _, table, items = hs.gates(h, a, 0.05, n_sim=200)
    assert "16 connections" in table.title
    assert all("16 connections" in x.question + x.group
               for x in hs.answers([a], {a.metric.name: items}))
    assert hist.analyse(h, metric("latency_p99_ms"), permutations=19).load == a.load


def present_gate_series(analysis):
    from perfkit.present import history as present_history

    return [t for t in present_history.series(analysis) if "labels of" in t.title]


def _notebook_cells(name: str) -> list:
    import json

    path = Path(__file__).resolve().parents[1] / "notebooks" / f"{name}.ipynb"
    return json.loads(path.read_text())["cells"]


# -- 5: the coordinated-omission audit table ---------------------------------------------------
def test_item05_percentile_headers_and_no_duplicate_or_empty_columns():
    from perfkit.report.sections import latency

    for name, header in (("latency_p99_9_ms", "latency p99.9 [ms]"),
                         ("uncorrected_p99_9_ms", "uncorrected p99.9 [ms]"),
                         ("ratio_p99_9", "ratio p99.9"), ("latency_p99_99_ms",
                                                          "latency p99.99 [ms]"),
                         ("p50_ms", "p50 [ms]"), ("median_base_ms", "median base [ms]")):
        assert present_frame.column(name, True).header == header
    co = load_experiment(DATA / "demo-wrk2-uncorrected")
    audit, _ = latency.corrected_vs_uncorrected(co.runs)
    assert audit["co_ratio_p99"].equals(audit["ratio_p99"])  # the same numbers twice
    assert audit["endpoint"].isna().all()
    headers = [c.header for c in present_frame.frame(audit, hide=latency.CO_HIDDEN).columns]
    assert "ratio p99.9" in headers and "p99.9 [ms]" in headers
    assert not any(re.search(r"p99 9|co ratio|endpoint", h) for h in headers), headers


# -- 6: alt text --------------------------------------------------------------------------------
def test_item06_alt_text_says_what_the_lines_are_on_one_line(groups):
    import matplotlib.pyplot as plt

    from perfkit.plots import describe
    from perfkit.report.sections import latency

    co = load_experiment(DATA / "demo-wrk2-uncorrected")
    _, co_spectrum = latency.corrected_vs_uncorrected(co.runs)
    fig = latency.co_figure(co_spectrum, co.runs)
    alt = describe(fig)
    plt.close(fig)
    assert "configurations" not in alt and "measurements of one run" in alt
    assert "20000 req/s offered, 50 connections" in alt
    table = latency.percentiles(groups, (99.0,), seed=1)
    fig = latency.intervals_figure(latency.within_run_table(groups, 99.0), table, 99.0,
                                   ["profile"], where=SELECT)
    alt = describe(fig)
    plt.close(fig)
    assert "\n" not in alt and "\\n" not in alt
    assert "(bar; at true size: narrower than the marker here)" in alt


# -- 7: layout ----------------------------------------------------------------------------------
def test_item07_number_cells_stay_on_one_line_text_cells_may_wrap():
    from perfkit.present.tables import Column, Table
    from perfkit.present.tables import render as render_table

    page = render_table(Table((Column("config"), Column("p99", "ms", True)),
                              (("a long text cell that may wrap", "3.03 [1.77, 6.77]"),)), "html")
    assert '<td style="text-align:right" class="nowrap">3.03 [1.77, 6.77]</td>' in page
    assert '<td style="text-align:left">a long text cell' in page
    template = (Path(__file__).resolve().parents[1] / "perfkit" / "report" / "templates"
                / "nbconvert" / "perfkit" / "index.html.j2").read_text()
    cells = re.search(r"table\.perfkit-table th, table\.perfkit-table td \{[^}]*\}", template)
    assert cells and "white-space: normal" in cells.group(0)
    assert re.search(r"table\.perfkit-table \.nowrap \{ white-space: nowrap; \}", template)


def test_item07_wide_figures_span_the_index(tmp_path):
    from perfkit.plots import style
    from perfkit.report import nb
    from perfkit.report.index import is_wide

    for width_in, wide in ((style.WIDTH_IN, False), (style.WIDTH_IN * 1.6, True)):
        fig, _ = style.figure(width_in=width_in)
        path = tmp_path / f"f{width_in}.png"
        fig.savefig(path, dpi=nb.PNG_DPI)
        assert is_wide(path, nb.PNG_DPI) is wide
    template = (Path(__file__).resolve().parents[1] / "perfkit" / "report" / "templates"
                / "index.html.j2").read_text()
    assert ".figures figure.wide { grid-column: 1 / -1; }" in template


def test_item07_pages_fit_their_answers_and_carry_no_pygments_css(built, browser):
    for page in ("overview", "latency", "scaling", "tuning-effects", "history"):
        text = (built / f"{page}.html").read_text(encoding="utf-8")
        head = text[:text.index("</head>")]
        assert ".highlight" not in head and "linenos" not in head, page
        browser.open((built / f"{page}.html").as_uri())
        (fit,) = browser.evaluate(ANSWERS_JS)
        assert fit["table"] <= fit["column"] + 1, (page, fit)
    browser.open((built / "index.html").as_uri())
    widths = browser.evaluate(THUMBS_JS)
    history = [w for src, w in widths if "history-series" in src]
    others = [w for src, w in widths if "history-series" not in src]
    # the history figures span the index (as every wide figure does); the others are thumbnails
    assert history and min(history) == max(w for _, w in widths) > 2 * min(others), widths


ANSWERS_JS = """JSON.stringify(Array.from(document.querySelectorAll('.perfkit-answers table'))
  .map(t => ({table: t.scrollWidth, column: t.parentElement.clientWidth})))"""
THUMBS_JS = """JSON.stringify(Array.from(document.querySelectorAll('.figures img'))
  .map(i => [i.getAttribute('src'), i.clientWidth]))"""


@pytest.fixture(scope="module")
def built(demo_report):
    return demo_report


@pytest.fixture(scope="module")
def browser():
    import shutil
    import tempfile

    from test_browser import CHROMIUM, Browser

    if not Path(CHROMIUM).exists():
        pytest.skip("chromium not installed")
    profile = tempfile.mkdtemp(prefix="perfkit-chromium-")
    b = Browser(profile)
    b.call("Emulation.setDeviceMetricsOverride", {"width": 1400, "height": 900,
                                                  "deviceScaleFactor": 1, "mobile": False},
           session=True)
    try:
        yield b
    finally:
        b.close()
        shutil.rmtree(profile, ignore_errors=True)


# -- 8: every reference points to something on the page ----------------------------------------
def test_item08_no_note_names_a_column_the_page_does_not_show(sweep, slo_table):
    from perfkit.analysis import metric
    from perfkit.analysis.compare import compare_runs

    notes = [w for b in slo_table.brackets for w in b.warnings]
    notes += [n for t in present_scaling.slo(slo_table) for n in t.notes]
    assert notes and not any("runs_needed" in n for n in notes)
    rows = sweep.rows()
    table = compare_runs(rows.where({"profile": "default", "connections": 64}),
                         rows.where({"profile": "tuned", "connections": 64}),
                         metric("latency_p99_ms"), exclude=["profile"])
    (short,) = [r for r in table.rows if r.n_short_new]  # 5000 req/s: one run at 0.964 x
    assert short.sensitivity is not None and short.sensitivity.n_new == 2
    shown = present_compare.comparison(table)
    text = render(shown, "text")
    assert "_without_short" not in text
    (row,) = [r for r in shown.rows if r[0] == "5000"]
    marks = [int(m) for m in re.findall(r"\[(\d+)\]", row[-1])]
    assert any("5000 without its short runs (3 vs 2 runs)" in shown.notes[m - 1] for m in marks)


def test_item08_built_pages_name_no_hidden_column(built):
    for page in sorted(built.glob("*.html")):
        text = page.read_text(encoding="utf-8")
        assert "see runs_needed" not in text and "_without_short" not in text, page.name


# -- 9: wording ---------------------------------------------------------------------------------
def test_item09_gate_rows_read_like_every_verdict_the_ci_contract_is_kept():
    import xml.etree.ElementTree as ET

    import _cli_helpers as cli

    v07, v08 = "data/demo-history::label=v07", "data/demo-history::label=v08"
    both = ("--metric", "latency_p99_ms", "--metric", "throughput_rps")
    root = Path(__file__).resolve().parents[1]
    code, out, _ = cli.run_cli("gate", v07, v08, *both, cwd=root)
    assert code == 1 and out.startswith("perfkit gate: REGRESSION (exit 1; 2 regression)")
    rows = [line for line in out.splitlines() if line.startswith(("latency_p99", "throughput"))]
    assert len(rows) == 2 and all(" regression " in r and "REGRESSION" not in r for r in rows)
    code, out, _ = cli.run_cli("gate", v07, v08, *both, "--format", "junit", cwd=root)
    for case in ET.fromstring(out).findall("./testsuite/testcase"):
        assert case.find("failure").get("message").startswith("REGRESSION: ")
        assert "gate: REGRESSION: the CI lies beyond" in case.find("system-out").text


@pytest.mark.parametrize("name, ci, reason", [
    ("throughput_rps", (0.97, 1.10), "the CI stays above -5.0%"),
    ("latency_p99_ms", (0.90, 1.04), "the CI stays below +5.0%")])
def test_item09_a_pass_says_which_side_of_the_threshold_the_ci_stays(name, ci, reason):
    from perfkit.analysis import ComparisonRow, metric
    from perfkit.analysis.gate import PASS, classify, threshold_ratio
    from perfkit.stats.comparison import Comparison

    m = metric(name)
    c = Comparison(10, 10, ratio=1.0, ratio_ci_low=ci[0], ratio_ci_high=ci[1], p_value=0.5,
                   min_attainable_p=1e-5, alpha=0.05, significant=False)
    status, _, why = classify(ComparisonRow((), c, 0.5, "~"), m, threshold_ratio(m, 0.05))
    assert status == PASS and why == reason
