"""The Locust readers on whole real files: a plain CSV is split on commas (as the csv module
would split it), its cells read one by one; a bad cell deep in a large real file is the ParseError
of its own file, line, column and value, the first in file order. (A second, bulk reader of the
cells was removed: benchmarks/bench_locust_readers.py; its values and errors were the same on
3,513 real and damaged inputs.)

The damaged inputs are temporary copies of real recorded files with one cell changed (a test of
the parser's refusal, never a fixture).
"""

from __future__ import annotations

import csv
import dataclasses
import io
import random
from pathlib import Path

import pytest

import perfkit
from perfkit.errors import LoadError, ParseError
from perfkit.ingest import locust, locust_keys
from perfkit.ingest.locust_table import _csv_records, _physical_lines, _plain_records
from perfkit.model import Run

FIELDS = sorted(f.name for f in dataclasses.fields(Run))
ROOT = Path(__file__).resolve().parents[1]
SOURCES = (ROOT / "tests" / "fixtures", Path("/work/shared/fixtures"), ROOT / "data")
PARSERS = {"_stats_history.csv": locust.parse_history_csv, "_stats.csv": locust.parse_stats_csv,
           "_failures.csv": locust.parse_failures_csv,
           "_exceptions.csv": locust.parse_exceptions_csv}
BIG_HISTORY = ROOT / "tests" / "fixtures" / "locust" / "processes2_u40" / "procs_stats_history.csv"


def _real_files() -> list[tuple[Path, str]]:
    found = {}
    for source in SOURCES:
        for suffix in PARSERS:
            for path in sorted(source.rglob(f"*{suffix}")) if source.is_dir() else ():
                if "published" not in path.parts:  # its own test: test_ingest_published
                    found.setdefault(path.read_bytes(), (path, suffix))  # each content once
    return list(found.values())


REAL = _real_files()


def _text(path: Path) -> str:
    return path.read_bytes().decode("utf-8")  # byte-faithful: keep Locust's CRLF


def _shown(result) -> str:
    """Everything a parse gave, with types and key order (``repr`` of plain structures)."""
    if isinstance(result, list):  # runs
        return repr([[(f, getattr(run, f)) for f in FIELDS] for run in result])
    if isinstance(result, locust.History):
        return repr((result.rows, result.cumulative_percentiles, result.notes))
    return repr(result)


def _outcome(parser, text: str, source: str) -> str:
    try:
        return _shown(parser(text, source))
    except ParseError as exc:
        return f"ParseError: {exc}"


def test_every_real_locust_csv_is_covered():
    kinds = {suffix for _, suffix in REAL}
    assert kinds == set(PARSERS), kinds
    assert sum(suffix == "_stats_history.csv" for _, suffix in REAL) >= 8


@pytest.mark.parametrize("path,suffix", REAL, ids=[str(p.relative_to(p.parents[2]))
                                                    for p, _ in REAL])
def test_every_real_locust_csv_reads(path, suffix):
    assert not _outcome(PARSERS[suffix], _text(path), str(path)).startswith("ParseError")


@pytest.mark.parametrize("path,suffix", [r for r in REAL if r[1] in ("_stats_history.csv",
                                                                      "_stats.csv")][:6])
def test_a_quoted_copy_reads_as_the_plain_file(path, suffix):
    """Quoting every field (csv.QUOTE_ALL) changes no value: the file is no longer plain, so the
    csv module reads it, and the parse is the same."""
    rows = list(csv.reader(io.StringIO(_text(path), newline="")))
    out = io.StringIO(newline="")
    csv.writer(out, quoting=csv.QUOTE_ALL).writerows(rows)
    assert _plain_records(out.getvalue()) is None
    parser = PARSERS[suffix]
    assert _outcome(parser, out.getvalue(), "f") == _outcome(parser, _text(path), "f")


def test_the_plain_reader_splits_as_the_csv_reader():
    """On real files and on random texts of commas, quotes, carriage returns and newlines,
    wherever the text is plain, the comma split gives the csv module's records."""
    texts = [_text(p) for p, _ in REAL]
    rng = random.Random(24)
    alphabet = ["a", "1", ",", ",", " ", "\t", "\r\n", "\n", "\r", '"', "N/A"]
    texts += ["".join(rng.choice(alphabet) for _ in range(rng.randint(1, 30)))
              for _ in range(8000)]
    compared = 0
    for text in texts:
        records = _plain_records(text)
        if records is None:
            continue
        compared += 1
        assert records == list(_csv_records(_physical_lines(text), "f", "t")), repr(text)
    assert compared > 1000


def _damaged(text: str, line: int, column: str, value: str) -> str:
    """``text`` with the cell of ``column`` on physical line ``line`` replaced by ``value``
    (lines end at LF: a CR inside a quoted name ends none)."""
    lines = text.split("\n")
    header = lines[0].rstrip("\r").split(",")
    fields = lines[line - 1].rstrip("\r").split(",")
    fields[header.index(column)] = value
    lines[line - 1] = ",".join(fields) + "\r"
    return "\n".join(lines) + ("\n" if line == len(lines) else "")


@pytest.mark.parametrize("column,value,expected", [
    ("95%", "12x", "a number in column '95%'"),
    ("95%", "-3", "a number (finite, not negative) in column '95%'"),
    ("Requests/s", "1e999", "a number (finite, not negative) in column 'Requests/s'"),
    ("Total Max Response Time", "9" * 401, "a number (of a sane length) in column "
                                           "'Total Max Response Time'"),
    ("Total Request Count", "N/A", "a whole number in column 'Total Request Count'"),
    ("Timestamp", "\u0663", "a whole number in column 'Timestamp'"),
    ("User Count", "4 0", "a whole number in column 'User Count'"),
])
def test_a_bad_cell_deep_in_a_large_real_history_is_the_error_of_its_line(tmp_path, column,
                                                                          value, expected):
    text = _text(BIG_HISTORY)
    line = len(text.splitlines()) - 3  # deep: the 4th row from the end
    damaged = tmp_path / "procs_stats_history.csv"
    damaged.write_bytes(_damaged(text, line, column, value).encode())
    with pytest.raises(ParseError) as info:
        locust.parse_history_csv(_text(damaged), str(damaged))
    err = info.value
    assert (err.path, err.line, err.expected) == (str(damaged), line, expected)
    shown = value if len(value) <= 400 else value[:40] + "..."
    assert err.found.startswith(f"{shown!r} in ")
    # the same error through perfkit.load
    with pytest.raises(LoadError) as loaded:
        perfkit.load(str(tmp_path), cache=False)
    assert [str(e) for e in loaded.value.errors] == [str(err)]


def test_the_first_bad_cell_in_file_order_is_reported(tmp_path):
    """Two bad cells in different columns: the error names the earlier line, as cell-by-cell
    reading finds it, though its column comes later in the header."""
    text = _text(BIG_HISTORY)
    n = len(text.splitlines())
    damaged = _damaged(_damaged(text, n - 1, "Timestamp", "x"), n - 20, "100%", "y")
    with pytest.raises(ParseError) as info:
        locust.parse_history_csv(damaged, "f")
    assert (info.value.line, info.value.expected) == (n - 20, "a number in column '100%'")


@pytest.mark.parametrize("damage", [
    {" 12": 1}, {"1_0": 1}, {"\u0661": 1}, {"1e999": 1}, {"-1": 1}, {"12": 1, "12.0": 2},
    {"12": True}, {"12": -1}, {"12": 2**62}, {"12": 1.5}, {"1\n2": 1}, {"": 1},
])
@pytest.mark.parametrize("as_int", [False, True])
def test_a_damaged_json_map_names_its_problem(damage, as_int):
    """A key or count Locust never writes, after good keys: nothing read, the problem named."""
    mapping = {"5": 1, "17": 2, **damage}
    read, problem = locust_keys.numeric_keys(mapping, "k", as_int, 1e9)
    if damage == {"12": 1, "12.0": 2} and not as_int:  # the same number twice: counts added
        assert read == {5.0: 1, 17.0: 2, 12.0: 3} and problem is None
        return
    assert read == {} and problem.startswith("'k' has the ")
