"""The Locust parsers read in bulk: a plain CSV split on commas, its counts and numbers each
converted all at once (a column checked on its own when in doubt), the --json maps' keys all at
once; they fall back to the cell-by-cell (key-by-key) reading when a check fails. The bulk path
must give what the cell-by-cell path gives on every real Locust output, and a bad cell must
still be the ParseError of its own file, line, column and value.

The damaged inputs are temporary copies of real recorded files with one cell changed (a test of
the parser's refusal, never a fixture).
"""

from __future__ import annotations

import csv
import dataclasses
import io
import math
import random
from pathlib import Path

import pytest

import perfkit
from perfkit.errors import LoadError, ParseError
from perfkit.histogram import HIGHEST_US
from perfkit.ingest import locust, locust_json, locust_keys
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


def _outcome(parser, text: str, source: str, bulk: bool) -> str:
    try:
        return _shown(parser(text, source, bulk=bulk))
    except ParseError as exc:
        return f"ParseError: {exc}"


def test_every_real_locust_csv_is_covered():
    kinds = {suffix for _, suffix in REAL}
    assert kinds == set(PARSERS), kinds
    assert sum(suffix == "_stats_history.csv" for _, suffix in REAL) >= 8


@pytest.mark.parametrize("path,suffix", REAL, ids=[str(p.relative_to(p.parents[2]))
                                                    for p, _ in REAL])
def test_bulk_parse_equals_the_cell_by_cell_parse_on_real_output(path, suffix):
    text = _text(path)
    bulk = _outcome(PARSERS[suffix], text, str(path), True)
    assert not bulk.startswith("ParseError"), bulk
    assert bulk == _outcome(PARSERS[suffix], text, str(path), False)


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
    assert (_outcome(parser, out.getvalue(), "f", True)
            == _outcome(parser, _text(path), "f", True)
            == _outcome(parser, out.getvalue(), "f", False))


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


HISTORIES = [path for path, suffix in REAL if suffix == "_stats_history.csv"]


def _aggregated_only(text: str) -> str:
    """The header and the Aggregated rows: the file Locust writes without --csv-full-history
    (cumulative percentiles)."""
    lines = text.splitlines(keepends=True)
    return "".join(lines[:1] + [x for x in lines[1:] if ",,Aggregated," in x])


VARIANTS = {
    "N/A edited to 0": lambda t: t.replace("N/A", "0"),
    # not for the batch conversion: each column is checked on its own
    "N/A with spaces and tabs": lambda t: t.replace("N/A", " N/A\t"),
    "cumulative": _aggregated_only,
    "cumulative, N/A edited to 0": lambda t: _aggregated_only(t).replace("N/A", "0"),
    "LF line ends": lambda t: t.replace("\r\n", "\n"),
}


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("path", HISTORIES, ids=[p.parent.name for p in HISTORIES])
def test_placeholders_read_in_bulk_as_cell_by_cell(path, variant):
    """Damaged copies that reach every placeholder rule (0s before any request, windowed 0s,
    N/A in cumulative and windowed files): the same rows and notes either way."""
    text = VARIANTS[variant](_text(path))
    bulk = _outcome(locust.parse_history_csv, text, "f", True)
    assert bulk == _outcome(locust.parse_history_csv, text, "f", False)
    assert not bulk.startswith("ParseError"), bulk


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
    # the same error as the cell-by-cell reader's, and through perfkit.load
    assert _outcome(locust.parse_history_csv, _text(damaged),
                    str(damaged), False) == f"ParseError: {err}"
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


def _json_maps() -> list[tuple[dict, str, bool, float]]:
    """Every numeric-keyed map of every real --json output: (map, key, as_int, limit)."""
    from perfkit.ingest.discover import walk
    from perfkit.ingest.loader import classify

    maps, seen = [], set()
    for source in SOURCES:
        if not source.is_dir():
            continue
        for _, entries, _ in walk(str(source), with_stat=False):
            for path, _ in entries:
                f = classify(path)
                if f is None or f.kind != "locust_json" or f.text in seen:
                    continue
                seen.add(f.text)
                for _, doc in locust_json.decode_documents(f.text):
                    for obj in doc if isinstance(doc, list) else ():
                        maps.append((obj["response_times"], "response_times", False,
                                     HIGHEST_US / 1000))
                        maps += [(obj[k], k, True, math.inf)
                                 for k in ("num_reqs_per_sec", "num_fail_per_sec") if k in obj]
    return maps


def test_json_maps_read_in_bulk_as_key_by_key():
    maps = _json_maps()
    assert len(maps) > 100 and sum(bool(m) for m, *_ in maps) > 50
    for mapping, key, as_int, limit in maps:
        bulk = locust_keys._keys_in_bulk(mapping, as_int, limit)
        assert bulk is not None  # real output: never in doubt
        assert repr(bulk) == repr(locust_keys._keys_one_by_one(mapping, key, as_int, limit)[0])


@pytest.mark.parametrize("damage", [
    {" 12": 1}, {"1_0": 1}, {"\u0661": 1}, {"1e999": 1}, {"-1": 1}, {"12": 1, "12.0": 2},
    {"12": True}, {"12": -1}, {"12": 2**62}, {"12": 1.5}, {"1\n2": 1}, {"": 1},
])
@pytest.mark.parametrize("as_int", [False, True])
def test_a_damaged_json_map_is_read_key_by_key(damage, as_int):
    """A key or count the bulk check doubts: the answer (and the problem named) of the
    key-by-key reading, after the keys of a real map."""
    real = next(m for m, _, is_int, _ in _json_maps() if m and is_int == as_int)
    mapping = {**real, **damage}
    limit = math.inf if as_int else HIGHEST_US / 1000
    assert locust_keys._keys_in_bulk(mapping, as_int, limit) is None
    assert (repr(locust_keys.numeric_keys(mapping, "k", as_int, limit))
            == repr(locust_keys._keys_one_by_one(mapping, "k", as_int, limit)))


ODD_CELLS = ["12x", "-3", "-0", "+1e5", "1e999", "9" * 401, " 7\t", "N/A", " N/A ", "1_0", "inf",
             "\u0663", "4 0", "", "0"]


TABLES = [r for r in REAL if r[1] in ("_stats_history.csv", "_stats.csv")]


@pytest.mark.parametrize("path,suffix", TABLES, ids=[str(p.relative_to(p.parents[2]))
                                                      for p, _ in TABLES])
def test_an_odd_cell_anywhere_reads_in_bulk_as_cell_by_cell(path, suffix):
    """Odd cells (bad, signed, overflowing, long, spaced, N/A, empty, 0) put in seeded random
    columns and rows of a real file, one at a time: the same rows, notes or ParseError."""
    text = _text(path)
    lines = text.split("\n")
    header = lines[0].rstrip("\r").split(",")
    # the rows a comma split reads (a quoted name holding a comma, a CR: tests/fixtures/names)
    rows = [i for i, ln in enumerate(lines, 1) if i > 1 and ln.rstrip("\r")
            and len(ln.rstrip("\r").split(",")) == len(header)]
    rng = random.Random(path.name)
    parser = PARSERS[suffix]
    for _ in range(24):
        column, value = rng.choice(header), rng.choice(ODD_CELLS)
        damaged = _damaged(text, rows[rng.randint(0, len(rows) - 1)], column, value)
        assert (_outcome(parser, damaged, "f", True)
                == _outcome(parser, damaged, "f", False)), (column, value)
