"""A gate as a paper-ready table (:class:`perfkit.present.tables.Table`) and as JUnit XML: one
presentation for the CLI (``perfkit gate``) and the report's history page, which shares its
words (:func:`gate_status`, :func:`change`, :func:`key_text`, :func:`span`).

Formatting only: every number, status and reason comes from :mod:`perfkit.analysis.compare._gate`.

JUnit XML (``perfkit gate --format junit``): one ``<testsuite>`` per gate, one ``<testcase>``
per metric and load level (``classname`` ``perfkit.gate.<metric>``, ``name`` the metric and
its load level). A regression is a ``<failure>``; an inconclusive row is ``<skipped>`` (CI test
reporters show it as neither passed nor failed, and the exit status 3 lets the job decide), as
is a row whose runs did not measure the metric (``no data``); a row where a side has no run
is an ``<error>``. The message states the change with its interval, the
threshold and, when inconclusive, the runs per arm needed. A character XML 1.0 cannot hold (an
endpoint named with ESC or BEL) is written as its escape (``\\x1b``), so the file stays
well-formed.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Sequence

from perfkit.analysis.compare import (
    ERROR,
    INCONCLUSIVE,
    NO_DATA_GATE,
    PASS,
    REGRESSION,
    GateResult,
    GateRow,
)
from perfkit.formatting import Footnotes, change_ci, fmt_p, interval_text, level_text, pct_change
from perfkit.present.tables import Column, Table
from perfkit.safetext import xml_text
from perfkit.vocabulary import GateOutcome, GateStatus
from perfkit.warning import Code, Warn

#: a gate's overall status as the headline of ``perfkit gate`` and JUnit XML write it (a CI
#: contract: ``perfkit gate: REGRESSION (exit 1; ...)``)
STATUS_TEXT = {s: str(s) if s == PASS else s.upper() for s in GateStatus}
#: a row's gate in a table, lower-case like every other verdict of a table
ROW_TEXT: dict[str, str] = {s: str(s) for s in GateStatus}


def _p(value: float) -> str:
    return "-" if value is None or value != value else fmt_p(value)


def change(ratio: float, low: float, high: float) -> str:
    """``+3.1% [+1.0%, +5.2%]``; without an interval only the estimate
    (:func:`perfkit.formatting.change_ci`)."""
    return change_ci(ratio, low, high)


def _median(est: float, low: float, high: float, unit: str) -> str:
    text = interval_text(est, low, high, 3)
    return text if text == "-" else f"{text} {unit}".rstrip()


def gate_status(g: GateRow, junit: bool = False) -> str:
    """A row's gate as a table writes it: ``regression``, ``pass (improvement)``,
    ``inconclusive (straddles threshold)`` ...; ``junit``: as the JUnit messages write it
    (``REGRESSION``, ``INCONCLUSIVE (straddles threshold)``, unchanged for CI reporters)."""
    word = (STATUS_TEXT if junit else ROW_TEXT)[g.status]
    plain = (g.outcome in (GateOutcome.REGRESSION, GateOutcome.NO_REGRESSION)
             or g.status == NO_DATA_GATE)
    return word if plain else f"{word} ({g.outcome})"


def span(labels: Sequence[str]) -> str:
    """``v01..v07`` for a run of labels, ``v08`` for one."""
    return "..".join(dict.fromkeys((labels[0], labels[-1]))) if labels else ""


def key_text(keys: Sequence[str], key: Sequence) -> str:
    return " ".join(f"{k}={level_text(v)}" for k, v in zip(keys, key, strict=True))


# -- gate -------------------------------------------------------------------------------------
def table_warnings(result: GateResult) -> list[Warn]:
    """The comparisons' warnings once each; one that not every metric shares (the drift
    check) names its metric (:attr:`Code.OF_METRIC`)."""
    out: list[Warn] = []
    for t in result.tables:
        for w in t.warnings:
            shared = all(w in other.warnings for other in result.tables)
            out.append(w if shared else Warn(Code.OF_METRIC, metric=t.metric.name, warning=w))
    return list(dict.fromkeys(out))


def gate(result: GateResult) -> Table:
    """The gate as one table: a row per metric and load level."""
    notes = Footnotes()
    keys = list(dict.fromkeys(k for g in result.rows for k in g.keys))
    warns = table_warnings(result)
    counts = result.counts()
    summary = ", ".join(f"{n} {ROW_TEXT[s]}" for s, n in counts.items() if n)
    n_base = max((t.n_base_runs for t in result.tables), default=0)
    n_new = max((t.n_new_runs for t in result.tables), default=0)
    title = (f"perfkit gate: {STATUS_TEXT[result.status]} (exit {result.exit_status}; "
             f"{summary or 'no rows'}): max regression {result.max_regression:.1%}, alpha "
             f"{result.alpha:g}, change new/base with its {result.interval_words()}"
             f"{notes.mark([*result.warnings, *warns])}\n"
             f"base: {result.base} ({n_base} runs)\nnew:  {result.new} ({n_new} runs)")
    cols = [Column("metric"), *(Column(k) for k in keys), Column("base"), Column("new"),
            Column("change"), Column("threshold", right=True), Column("p Holm", right=True),
            Column("gate"), Column("why"), Column("runs")]
    rows = []
    for g in result.rows:
        c = g.row.comparison
        values = dict(zip(g.keys, g.row.key, strict=True))
        unit = g.metric.unit
        rows.append((g.metric.name, *(level_text(values.get(k, "")) for k in keys),
                     _median(c.median_base, c.median_base_ci_low, c.median_base_ci_high, unit),
                     _median(c.median_new, c.median_new_ci_low, c.median_new_ci_high, unit),
                     change(c.ratio, c.ratio_ci_low, c.ratio_ci_high),
                     pct_change(g.threshold_ratio), _p(g.row.p_adjusted), gate_status(g),
                     g.reason, f"{c.n_base} vs {c.n_new} {notes.mark(g.row.warnings)}".rstrip()))
    return Table(tuple(cols), tuple(rows), title, tuple(notes.items))


def junit(result: GateResult, left_out: Sequence[str] = ()) -> str:
    """The gate as JUnit XML (see the module docstring). ``left_out``: the unreadable runs
    ``--skip-unreadable`` left out, each a skipped case of ``perfkit.gate.unreadable`` named
    by its file, with its error as the message."""
    counts = result.counts()
    attrs = {"tests": str(len(result.rows) + len(left_out)),
             "failures": str(counts[REGRESSION]), "errors": str(counts[ERROR]),
             "skipped": str(counts[INCONCLUSIVE] + counts[NO_DATA_GATE] + len(left_out)),
             "time": "0"}
    root = ET.Element("testsuites", {"name": "perfkit gate", **attrs})
    suite = ET.SubElement(root, "testsuite", {"name": f"perfkit gate: {result.new} vs "
                                                      f"{result.base}", **attrs})
    props = ET.SubElement(suite, "properties")
    for name, value in (("base", result.base), ("new", result.new),
                        ("max_regression", f"{result.max_regression:.1%}"),
                        ("alpha", f"{result.alpha:g}"), ("status", str(result.status)),
                        ("exit_status", str(result.exit_status)),
                        *([("left_out", str(len(left_out)))] if left_out else [])):
        ET.SubElement(props, "property", {"name": name, "value": value})
    for error in left_out:
        case = ET.SubElement(suite, "testcase", {"classname": "perfkit.gate.unreadable",
                                                 "name": error.split(": ", 1)[0], "time": "0"})
        ET.SubElement(case, "skipped", {"message": f"left out (--skip-unreadable): {error}"})
    warns = [*result.warnings, *table_warnings(result)]
    for g in result.rows:
        where = key_text(g.keys, g.row.key)
        case = ET.SubElement(suite, "testcase", {
            "classname": f"perfkit.gate.{g.metric.name}",
            "name": f"{g.metric.name} {where}".strip(), "time": "0"})
        c = g.row.comparison
        message = f"{gate_status(g, True)}: {change(c.ratio, c.ratio_ci_low, c.ratio_ci_high)}: " \
                  f"{g.reason}"
        if g.status == REGRESSION:
            ET.SubElement(case, "failure", {"message": message, "type": str(REGRESSION)}).text = \
                _details(g)
        elif g.status in (INCONCLUSIVE, NO_DATA_GATE):
            ET.SubElement(case, "skipped", {"message": message})
        elif g.status == ERROR:
            ET.SubElement(case, "error", {"message": message,
                                          "type": str(g.outcome)}).text = _details(g)
        ET.SubElement(case, "system-out").text = _details(g)
    if warns:
        ET.SubElement(suite, "system-err").text = "\n".join(map(str, warns))
    for element in root.iter():  # a name may hold what XML 1.0 cannot (ESC, BEL): escaped
        element.attrib = {k: xml_text(v) for k, v in element.attrib.items()}
        if element.text:
            element.text = xml_text(element.text)
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, "unicode") + "\n"


def _details(g: GateRow) -> str:
    c = g.row.comparison
    unit = g.metric.unit
    lines = [f"metric: {g.metric.name} ({g.metric.better} is better)",
             f"base: {_median(c.median_base, c.median_base_ci_low, c.median_base_ci_high, unit)}"
             f" ({c.n_base} runs)",
             f"new: {_median(c.median_new, c.median_new_ci_low, c.median_new_ci_high, unit)} "
             f"({c.n_new} runs)",
             f"change: {change(c.ratio, c.ratio_ci_low, c.ratio_ci_high)}; threshold "
             f"{pct_change(g.threshold_ratio)}; p {_p(c.p_value)}, p Holm {_p(g.row.p_adjusted)}",
             f"gate: {gate_status(g, True)}: {g.reason}"]
    return "\n".join(lines + [f"note: {w}" for w in g.row.warnings])
