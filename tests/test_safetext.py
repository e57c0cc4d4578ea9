"""perfkit.safetext: CSV cells a spreadsheet reads as text, terminal text that is shown and never
obeyed, XML text that stays well-formed. The names come from real runs
(tests/fixtures/names/hostile_names: Locust request names and factor levels)."""

from __future__ import annotations

import csv
import io
import xml.etree.ElementTree as ET

import pandas as pd
import pytest
from _cli_helpers import hostile_names

from perfkit.safetext import FORMULA_STARTS, csv_cell, csv_frame, csv_lines, terminal, xml_text


def test_the_fixture_holds_every_start_a_spreadsheet_runs_and_the_control_characters():
    names = hostile_names()
    assert {n[0] for n in names} >= set(FORMULA_STARTS)
    assert any("\x1b" in n and "\x07" in n for n in names)
    assert any(n.startswith("約") for n in names) and any("\\|" in n for n in names)


def test_a_cell_a_spreadsheet_would_run_begins_with_a_quote_and_numbers_keep_their_sign():
    for name in hostile_names():
        safe = csv_cell(name)
        if name.startswith(FORMULA_STARTS):
            assert safe == "'" + name
        else:
            assert safe == name
    assert [csv_cell(v) for v in ("-2.5", "+3", "-1e-05", -2.5, -3, None, "page")] == \
        ["-2.5", "+3", "-1e-05", -2.5, -3, None, "page"]
    assert csv_cell("-inf") == "'-inf" and csv_cell("-2+3") == "'-2+3"


def test_a_frame_keeps_its_numbers_and_neutralises_its_text_columns():
    names = hostile_names()
    frame = pd.DataFrame({"endpoint": names, "latency_ms": [-1.5] * len(names),
                          "n": list(range(len(names)))})
    out = csv_frame(frame)
    assert out["latency_ms"].tolist() == frame["latency_ms"].tolist()
    assert out["n"].tolist() == frame["n"].tolist()
    assert all(not v.startswith(FORMULA_STARTS) for v in out["endpoint"])
    assert frame["endpoint"].tolist() == names  # the input is left as it was


def test_a_line_break_inside_a_cell_is_quoted_and_records_end_with_lf():
    names = hostile_names()
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\r\n")
    writer.writerow(["name", "n"])
    for i, name in enumerate(names):
        writer.writerow([csv_cell(name), i])
    text = csv_lines(buffer.getvalue())
    assert text.count("\n") == len(names) + 1 and "\r\n" not in text
    back = list(csv.reader(io.StringIO(text, newline="")))
    assert [row[0] for row in back[1:]] == [csv_cell(n) for n in names]


def test_the_terminal_shows_control_characters_as_escapes():
    for name in hostile_names():
        shown = terminal(name)
        assert all(ch.isprintable() for ch in shown), repr(shown)
    assert terminal("esc \x1b[31mred bel \x07\tx\r\n") == "esc \\x1b[31mred bel \\x07\\tx\\r\\n"
    assert terminal("\x9b2J 約3倍") == "\\x9b2J 約3倍"


def test_xml_text_keeps_a_document_well_formed():
    for name in hostile_names():
        element = ET.Element("testcase", {"name": xml_text(name)})
        element.text = xml_text(name)
        back = ET.fromstring(ET.tostring(element, "unicode"))
        assert back.get("name") == xml_text(name)
    assert xml_text("a\x1bb\x07\tc\ud800") == "a\\x1bb\\x07\tc\\ud800"


@pytest.mark.parametrize("name", ["\x1b", "\x07", "\x00", "\ufffe"])
def test_an_element_tree_alone_writes_xml_no_parser_reads(name):
    # why xml_text exists: ElementTree writes these characters raw
    with pytest.raises(ET.ParseError):
        ET.fromstring(ET.tostring(ET.Element("a", {"name": name}), "unicode"))
