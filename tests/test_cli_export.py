"""perfkit export DIR --to runs.parquet|runs.csv: the tidy runs frame, read back."""

from __future__ import annotations

import io
import os
import stat
from pathlib import Path

import pandas as pd
import pytest

import perfkit
from perfkit.cli import command_names, main
from perfkit.frames import runs_frame

FIXTURES = Path(__file__).resolve().parent / "fixtures"


def run_cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    return main(list(argv), out, err), out.getvalue(), err.getvalue()


def test_export_is_a_listed_command():
    assert "export" in command_names()
    code, out, _ = run_cli("--help")
    assert code == 0 and "export" in out


@pytest.mark.parametrize("suffix", [".parquet", ".csv"])
def test_export_writes_the_runs_frame(tmp_path, suffix):
    target = tmp_path / f"runs{suffix}"
    code, out, err = run_cli("export", str(FIXTURES / "wrk2" / "single"),
                             str(FIXTURES / "locust" / "clean_u20"), "--to", str(target))
    assert code == 0 and err == "" and "-> " in out
    got = pd.read_parquet(target) if suffix == ".parquet" else pd.read_csv(target)
    expected = runs_frame(perfkit.load(FIXTURES / "wrk2" / "single")
                          + perfkit.load(FIXTURES / "locust" / "clean_u20"))
    assert list(got.columns) == list(expected.columns)
    assert len(got) == len(expected)
    pd.testing.assert_series_equal(got["latency_p99_ms"], expected["latency_p99_ms"],
                                   check_names=False)
    assert got["requests"].tolist() == expected["requests"].tolist()
    assert [x for x in tmp_path.iterdir()] == [target]  # no temporary file left


def test_export_refuses_other_formats_and_reports_bad_files(tmp_path):
    code, _, err = run_cli("export", str(FIXTURES / "wrk2" / "single"), "--to",
                           str(tmp_path / "runs.xlsx"))
    assert code == 2 and ".parquet or .csv" in err
    bad = tmp_path / "bad" / "run.stdout"
    bad.parent.mkdir()
    bad.write_text((FIXTURES / "wrk2" / "single" / "non2xx_404" / "run.stdout").read_text()[:300])
    code, out, err = run_cli("export", str(bad.parent), str(FIXTURES / "wrk" / "single"),
                             "--to", str(tmp_path / "runs.csv"))
    assert code == 2 and f"{bad}:" in err and "8 runs" in out


def test_csv_export_neutralises_names_a_spreadsheet_would_run(tmp_path):
    from _cli_helpers import HOSTILE, formula_cells

    target = tmp_path / "runs.csv"
    code, _, _ = run_cli("export", str(HOSTILE), "--to", str(target))
    assert code == 0
    text = target.read_bytes().decode()  # as written: a CR inside a cell stays a CR
    assert formula_cells(text) == []
    got = pd.read_csv(target, keep_default_na=False)
    assert "'=HYPERLINK(\"http://example.invalid/\",\"click\")" in set(got["endpoint"])
    assert "'\rCR=1+1" in set(got["endpoint"]) and len(got) == 40  # the CR stays in its cell
    assert set(got["arm"]) == {"'=1+1", "'-2\x1b]0;pwned\x07"}
    parquet = tmp_path / "runs.parquet"  # Parquet is typed data, not a sheet: names as they are
    assert run_cli("export", str(HOSTILE), "--to", str(parquet))[0] == 0
    assert "=1+1" in set(pd.read_parquet(parquet)["arm"])


@pytest.mark.parametrize("umask", [0o022, 0o077, 0o002])
@pytest.mark.parametrize("suffix", [".parquet", ".csv"])
def test_export_creates_its_file_with_the_users_umask(tmp_path, umask, suffix):
    target = tmp_path / f"runs{suffix}"
    old = os.umask(umask)
    try:
        code, _, _ = run_cli("export", str(FIXTURES / "wrk" / "single"), "--to", str(target))
    finally:
        os.umask(old)
    assert code == 0
    assert stat.S_IMODE(target.stat().st_mode) == 0o666 & ~umask
