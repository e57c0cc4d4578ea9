"""The built demo report's pages, tables and notebooks, as a reader gets them: no long tables
or unrounded numbers, tidy CSV tables with one value per cell, no hidden column named, no
notebook text claiming a method the results do not use."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pandas as pd
import pytest

ROOT = Path(__file__).resolve().parents[1]


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
