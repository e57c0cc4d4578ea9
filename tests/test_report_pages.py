"""The built demo report's pages, tables and notebooks, as a reader gets them: no long tables
or unrounded numbers, tidy CSV tables with one value per cell, no hidden column named, no
notebook text claiming a method the results do not use."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

ROOT = Path(__file__).resolve().parents[1]
#: what Python prints for a warning or an exception: never on a page a reader gets
NOISE = re.compile(r"Warning:|Traceback")


def noise(report: Path) -> list[str]:
    """Every ``Warning:`` or ``Traceback`` on the pages of ``report`` and in the outputs of
    its executed notebooks (a warning a kernel printed on its stderr), with where it is."""
    found = []
    for page in sorted(report.glob("*.html")):
        text = page.read_text(encoding="utf-8")
        found += [f"{page.name}: ...{text[max(0, m.start() - 120):m.end() + 80]}..."
                  for m in NOISE.finditer(text)]
    for notebook in sorted(report.glob("*.ipynb")):
        for i, cell in enumerate(json.loads(notebook.read_text(encoding="utf-8"))["cells"]):
            for output in cell.get("outputs", []):
                text = "".join(output.get("text", "")) + "".join(output.get("traceback", []))
                found += [f"{notebook.name}, cell {i}: {text[:300]}"
                          for _ in NOISE.finditer(text)][:1]
    return found


#: a report on wrk runs only (wrk prints four percentiles and no histogram): every page that
#: takes a closed-loop experiment, on bundled wrk experiments
WRK_PARAMS = """\
title: wrk runs only
data: {data}
notebooks:
  overview:
    experiments: [demo-aa, demo-wrk-connections]
    locust_experiment: ""
  latency:
    experiment: demo-wrk-connections
    by: [profile]
    select: {{connections: 64}}
    co_experiment: ""
  tuning-effects:
    experiment: demo-aa
    factors: [arm]
    metrics: [latency_p99_ms]
    per: ""
    aa_experiment: ""
"""


@pytest.fixture(scope="module")
def wrk_report(tmp_path_factory) -> tuple[Path, subprocess.CompletedProcess]:
    """``perfkit report`` of :data:`WRK_PARAMS`, as a user runs it (its own process: what the
    kernels print on the terminal is in its stderr), and that process."""
    folder = tmp_path_factory.mktemp("wrk-report")
    params = folder / "wrk.yaml"
    params.write_text(WRK_PARAMS.format(data=ROOT / "data"), encoding="utf-8")
    run = subprocess.run([sys.executable, "-m", "perfkit", "report", "-p", str(params), "-o",
                          str(folder / "out")], capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr
    return folder / "out", run


def test_no_python_warning_or_traceback_on_a_page_of_the_demo_report(demo_report):
    assert noise(demo_report) == []


@pytest.mark.slow
def test_no_python_warning_or_traceback_on_a_page_or_the_terminal_of_a_wrk_report(wrk_report):
    # wrk runs have no within-run interval: the latency page printed "RuntimeWarning: All-NaN
    # slice encountered" under its figure
    report, run = wrk_report
    assert sorted(p.name for p in report.glob("*.html")) == [
        "index.html", "latency.html", "methods.html", "overview.html", "tuning-effects.html"]
    assert noise(report) == []
    assert not NOISE.search(run.stderr) and "[IPKernelApp]" not in run.stderr, run.stderr


def test_pages_have_no_long_tables_or_unrounded_numbers(demo_report):
    for page in demo_report.glob("*.html"):
        text = page.read_text(encoding="utf-8")
        for body in re.findall(r"<tbody>(.*?)</tbody>", text, flags=re.S):
            assert body.count("<tr") <= 60, f"{page.name}: a table of {body.count('<tr')} rows"
        cells = re.findall(r"<td[^>]*>([^<]*)</td>", text)
        decimals = [c.strip() for c in cells if re.fullmatch(r"-?\d+\.\d+", c.strip())]
        long = [c for c in decimals  # more than 6 significant digits: not rounded
                if len(re.sub(r"^-?[0.]*", "", c).replace(".", "")) > 6]
        assert not long, f"{page.name}: unrounded numbers {long[:3]}"
        assert "--jp-layout-color0" not in text  # no JupyterLab theme CSS


def test_no_built_page_names_a_hidden_column(demo_report):
    for page in sorted(demo_report.glob("*.html")):
        text = page.read_text(encoding="utf-8")
        assert "see runs_needed" not in text and "_without_short" not in text, page.name


def test_the_csv_tables_are_tidy(demo_report):
    import csv as csvlib

    for csv in (demo_report / "tables").glob("*.csv"):
        with csv.open(encoding="utf-8", newline="") as fh:
            header, *body = list(csvlib.reader(fh))
        frame = pd.read_csv(csv)
        for name in frame.columns:
            assert not re.fullmatch(r"[\d.]+", str(name)), f"{csv.name}: value header {name}"
        for i, name in enumerate(header):
            cells = [r[i] for r in body if r[i] != ""]
            assert not (cells and all(re.fullmatch(r"-?\d+\.0", c) for c in cells)), \
                f"{csv.name}: {name} holds whole numbers written as floats"
        if "median_base_ms" in frame or "median_base_rps" in frame:
            assert "median_base" not in frame
    assert list((demo_report / "histograms").glob("*.hlog"))  # per-run histograms (issue 21)
    assert any(p.name.startswith("overview-runs-") for p in (demo_report / "tables").glob("*.csv"))


def test_the_csv_tables_hold_one_value_per_cell_no_inf_no_float_noise(demo_report):
    import csv as csvlib

    for path in (demo_report / "tables").glob("*.csv"):
        with path.open(encoding="utf-8", newline="") as fh:
            header, *body = list(csvlib.reader(fh))
        for i, name in enumerate(header):
            cells = [r[i] for r in body]
            assert not [c for c in cells if c.lower() in ("inf", "-inf")], (path.name, name)
            numbers = [c for c in cells if re.fullmatch(r"-?\d+\.\d+(e-?\d+)?", c)]
            digits = [len(re.sub(r"^0*", "", c.split("e")[0].lstrip("-").replace(".", "")))
                      for c in numbers]
            assert max(digits, default=0) <= 12, (path.name, name)  # 1.0950000000000002
            if path.name.startswith("tuning-effects-") and name not in ("warnings", "warning",
                                                                        "run_id", "source"):
                assert not [c for c in cells if re.fullmatch(r"[\w.]+=\S+", c)], \
                    (path.name, name)  # held_at=cache=none
        assert "flags" not in header, path.name  # latency_inflated x3


@pytest.mark.parametrize("name", ["latency", "scaling"])
def test_no_notebook_text_claims_a_median_or_no_averaging(name):
    nb = json.loads((ROOT / "notebooks" / f"{name}.ipynb").read_text())
    text = " ".join("".join(c["source"]).replace("\n", " ") for c in nb["cells"])
    for wrong in ("never averaged", "median of the runs' percentiles",
                  "the line joins the medians at each rate"):
        assert wrong not in text
