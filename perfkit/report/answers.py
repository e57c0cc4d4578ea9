"""The answers table: one row per designed question, its caveats numbered once below it.

The pages and the index show answers the same way (:func:`answers_html`):

- rows are grouped by the designed question they answer (:attr:`Answer.group`, the groups
  ordered by :data:`TOPICS`), each row numbered; a row gives the question, the answer (the
  estimate with its interval, a ratio also as a percentage), the verdict and the runs;
- rows that are not measured answers, an artefact of a known timeout or a question the runs
  cannot test (:attr:`Answer.kind`), go in a short list of their own below the table, each
  run of rows of one group led by the group's name (``Effect of keepalive``);
- what was counted beside an answer (:attr:`Answer.mechanism`) is shown once: a later row
  that counted the same (the p99 and the throughput of one contrast) links to the first;
- every caveat (a coded warning, the same by its code and fields; or a text) is one numbered
  entry (``id="caveat-N"``), in full, that names every row it affects; a
  caveat that bears on every row of a group is marked once, on the group's heading; a row
  carries at most one mark, linked to the first of its own caveats (the entries of its
  others name it too).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from perfkit.formatting import consecutive_runs, fmt_ci, fmt_pct_change, fmt_sig
from perfkit.report.condense import escape as _e
from perfkit.vocabulary import ARTEFACT as _ARTEFACT
from perfkit.vocabulary import Verdict
from perfkit.warning import Warn
from perfkit.wording import verdict_words

#: a caveat: a coded warning, or a text (a threat to validity, a page's own prose)
Caveat = Warn | str

#: where a row is listed: the answers table ...
ANSWERED = "answered"
#: ... or the short list below it: an effect computed from values on a known timeout
ARTEFACT = _ARTEFACT
#: ... a question the runs cannot test (too few runs, nothing repeated): the analysis' word
NOT_TESTABLE = Verdict.NOT_TESTABLE
KINDS = (ANSWERED, ARTEFACT, NOT_TESTABLE)

#: the designed questions in the order a reader asks them (:attr:`Answer.topic`): the
#: effect of each factor, a configuration against another, the latency it gives, the SLO
#: bracket, the peak, a history's change points and gate, then the checks on the data
TOPICS = ("effect", "comparison", "latency", "slo", "peak", "history", "gate", "claim",
          "drift", "quality", "calibration")

#: the answers table's column shares in % (#, question, answer, verdict, runs): laid out
#: fixed to the page width, so that long unbroken text wraps in its cell
ANSWER_WIDTHS_PCT = (4, 34, 32, 17, 13)


def ratio_text(estimate: float, low: float, high: float, digits: int = 3) -> str:
    """A ratio with its interval and as a percentage change: ``"x0.67 [0.609, 0.738],
    -33%"``."""
    pct = fmt_pct_change((estimate - 1.0) * 100.0, 2) if estimate == estimate else "-"
    if not (low == low and high == high):  # no interval: say so, never print "[-, -]"
        return f"x{fmt_sig(estimate, digits)} (no interval), {pct}"
    return f"x{fmt_ci(estimate, low, high, '', digits)}, {pct}"


@dataclasses.dataclass(frozen=True)
class Answer:
    """One headline answer: the question, the answer with its interval, the verdict, the runs
    it rests on (``n``), the caveats that travel with it (``warnings``), the designed
    question it answers (``group``, ``topic``: one of :data:`TOPICS`) and where it is listed
    (``kind``: one of :data:`KINDS`)."""

    question: str
    answer: str
    verdict: str = ""
    n: str = ""
    warnings: tuple[Caveat, ...] = ()
    group: str = ""
    topic: str = ""
    kind: str = ANSWERED
    #: what the server and the kernel counted beside the answer (an effect's mechanism:
    #: :meth:`perfkit.analysis.core._mechanism.Mechanism.text`), empty when nothing was recorded
    mechanism: str = ""

    @property
    def shown(self) -> str:
        """The answer with its mechanism, as the answers tables show it."""
        return f"{self.answer}; counted: {self.mechanism}" if self.mechanism else self.answer

    def text(self) -> str:
        parts = [p for p in (verdict_words(self.verdict), f"n = {self.n}" if self.n else "")
                 if p]
        extra = f" ({'; '.join(parts)})" if parts else ""
        head = f"{self.question}: {self.shown}" if self.shown else self.question
        return f"{head}{extra}" + "".join(
            f"\n  - {w}" for w in self.warnings)

    def to_dict(self) -> dict[str, Any]:
        """The fields as JSON (a coded warning as :meth:`Warn.to_dict`, a text as itself)."""
        out = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        out["warnings"] = [w.to_dict() if isinstance(w, Warn) else w for w in self.warnings]
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Answer:
        names = {f.name for f in dataclasses.fields(cls)}
        fields: dict[str, Any] = {k: v for k, v in data.items() if k in names}
        fields["warnings"] = tuple(Warn.decode(w) if isinstance(w, Mapping) else w
                                   for w in data.get("warnings", ()))
        return cls(**fields)


def ordered(items: Iterable[Answer]) -> list[Answer]:
    """Answers by designed question: groups in :data:`TOPICS` order (unknown topics last, in
    order of first appearance), rows in their given order inside a group."""
    items = list(items)
    first: dict[tuple[str, str], int] = {}
    for i, a in enumerate(items):
        first.setdefault((a.topic, a.group), i)

    def rank(a: Answer) -> tuple:
        topic = TOPICS.index(a.topic) if a.topic in TOPICS else len(TOPICS)
        return topic, first[(a.topic, a.group)]

    return sorted(items, key=rank)


@dataclasses.dataclass(frozen=True)
class Caveats:
    """The caveats of a list of rows, each once (:func:`number`).

    ``notes``: the distinct texts, numbered from 1 in order of first use; ``rows``: per note,
    every row (numbered from 1) it bears on; ``groups``: per note, the groups on whose
    heading it is marked (it bears on all their rows); ``marks``: per row, the one note number shown
    beside it (None: none); ``group_marks``: per group, the one note number on its heading."""

    notes: tuple[Caveat, ...]
    rows: tuple[tuple[int, ...], ...]
    groups: tuple[tuple[str, ...], ...]
    marks: tuple[int | None, ...]
    group_marks: Mapping[str, int]


def number(items: Sequence[Answer], start: int = 1) -> Caveats:
    """Number the caveats of ``items`` (rows numbered from ``start``): each distinct caveat
    once (a warning by its code and fields, a text by its words); one borne by every row of a
    group of two or more rows is marked on the group."""
    groups: dict[str, list[int]] = {}
    for i, a in enumerate(items):
        if a.kind == ANSWERED:  # a group's heading is in the table: its answered rows
            groups.setdefault(a.group, []).append(i)
    common = {g: set.intersection(*(set(items[i].warnings) for i in idx))
              for g, idx in groups.items() if len(idx) > 1 and g}
    notes: list[Caveat] = []
    rows: dict[Caveat, list[int]] = {}
    on: dict[Caveat, list[str]] = {}
    marks: list[int | None] = []
    group_marks: dict[str, int] = {}

    def note(text: Caveat) -> int:
        if text not in rows:
            notes.append(text)
            rows[text], on[text] = [], []
        return notes.index(text) + 1

    for i, a in enumerate(items):
        shared = common.get(a.group, set()) if a.kind == ANSWERED else set()
        if shared and a.group not in group_marks:
            nums = [note(w) for w in a.warnings if w in shared]
            for w in a.warnings:
                if w in shared:
                    on[w].append(a.group)
                    rows[w] += [start + j for j in groups[a.group]]
            group_marks[a.group] = min(nums)
        own = [w for w in a.warnings if w not in shared]
        nums = [note(w) for w in own]
        for w in own:
            rows[w].append(start + i)
        marks.append(nums[0] if nums else None)  # its first caveat: the one it leads with
    return Caveats(tuple(notes), tuple(tuple(sorted(set(rows[t]))) for t in notes),
                   tuple(tuple(on[t]) for t in notes), tuple(marks), group_marks)


def listed(items: Iterable[Answer]) -> tuple[list[Answer], list[Answer]]:
    """The rows in the order they are listed: the answered ones (the table), then the rest
    (artefacts and untestable questions, the short list below it), each by :func:`ordered`."""
    items = ordered(items)
    return ([a for a in items if a.kind == ANSWERED], [a for a in items if a.kind != ANSWERED])


def _mark(n: int | None, prefix: str) -> str:
    return "" if n is None else (f'<sup class="caveat-mark"><a href="#{prefix}caveat-{n}">'
                                 f"[{n}]</a></sup>")


def _head(group: str) -> str:
    """A group's heading up to its first colon (``Effect of keepalive``): in the list of
    rows apart, it says which group a row belongs to, once per run of rows of one group."""
    return group.split(": ")[0]


def _counted(a: Answer, same: int | None, prefix: str) -> str:
    """What was counted beside an answer, or, when an earlier row counted the same (the
    p99 and the throughput of one contrast come from the same runs), a link to that row."""
    if not a.mechanism:
        return ""
    text = (f'as <a href="#{prefix}row-{same}">row {same}</a>' if same is not None
            else _e(a.mechanism))
    return f'<span class="counted">counted: {text}</span>'


def _answer(a: Answer, same: int | None = None, prefix: str = "") -> str:
    """The answer cell: the estimate, and under it, smaller, what was counted beside it."""
    return _e(a.answer) + _counted(a, same, prefix)


def _row(a: Answer, k: int, mark: int | None, prefix: str, same: int | None = None) -> str:
    return (f'<tr id="{prefix}row-{k}"><td class="num">{k}</td>'
            f'<td class="question">{_e(a.question)}{_mark(mark, prefix)}</td>'
            f'<td class="answer">{_answer(a, same, prefix)}</td>'
            f'<td class="verdict">{_e(verdict_words(a.verdict))}</td>'
            f'<td class="n">{_e(a.n)}</td></tr>')


def _first_counted(rows: Sequence[Answer]) -> list[int | None]:
    """Per row (numbered from 1): the earlier row that counted the same, else None."""
    first: dict[str, int] = {}
    out: list[int | None] = []
    for k, a in enumerate(rows, 1):
        out.append(first.get(a.mechanism) if a.mechanism else None)
        if a.mechanism:
            first.setdefault(a.mechanism, k)
    return out


def _named(rows: Sequence[int], prefix: str) -> str:
    """``(rows 1-9, 41)``: every row a caveat bears on, runs of consecutive rows as ranges,
    each linked."""
    if not rows:
        return ""

    def link(r: int) -> str:
        return f'<a href="#{prefix}row-{r}">{r}</a>'

    text = ", ".join(link(a) if a == b else f"{link(a)}-{link(b)}"
                     for a, b in consecutive_runs(rows))
    word = "row" if len(rows) == 1 else "rows"
    return f' <span class="caveat-rows">({word} {text})</span>'


def answers_html(items: Iterable[Answer], prefix: str = "", heading: str = "h2",
                 caveats_open: bool = False, links: Mapping[str, tuple[str, str]] | None = None
                 ) -> tuple[str, Caveats]:
    """The answers block as HTML: the table of answered rows grouped by designed question,
    the short list of artefacts and untestable questions, then the numbered caveats
    (collapsed unless ``caveats_open``), each naming the rows it affects. ``prefix`` keeps
    the anchors of two blocks on one page apart; ``links``: per group, the ``(href, name)``
    of the page that answers it, linked from its heading. Returns the HTML and the
    numbering."""
    links = links or {}
    shown, aside = listed(items)
    rows = [*shown, *aside]
    cav = number(rows)
    same = _first_counted(rows)
    body, group = [], None
    for k, a in enumerate(shown, 1):
        if a.group and a.group != group:
            page = (f' <a class="page" href="{_e(links[a.group][0])}">'
                    f"{_e(links[a.group][1])}</a>") if a.group in links else ""
            body.append(f'<tr class="group"><th colspan="5">{_e(a.group)}'
                        f"{_mark(cav.group_marks.get(a.group), prefix)}{page}</th></tr>")
        group = a.group
        body.append(_row(a, k, cav.marks[k - 1], prefix, same[k - 1]))
    cols = "".join(f'<col style="width:{w}%">' for w in ANSWER_WIDTHS_PCT)
    out = []
    if shown:
        out.append(f'<div class="perfkit-scroll"><table class="answers perfkit-table">'
                   f"<colgroup>{cols}</colgroup><thead><tr><th>#</th><th>question</th>"
                   "<th>answer</th><th>verdict</th><th>runs</th></tr></thead>"
                   f"<tbody>{''.join(body)}</tbody></table></div>")
    if aside:
        heads = [_head(a.group) if a.group and (i == 0 or aside[i - 1].group != a.group)
                 else "" for i, a in enumerate(aside)]
        out.append(f"<{heading} class=\"aside-head\">Not answered as measured ({len(aside)}): "
                   f"artefacts and questions the runs cannot test</{heading}>"
                   '<ul class="answers-aside">' + "".join(
                       f'<li id="{prefix}row-{k}">{k}. '
                       + (f'<span class="aside-group">{_e(h)}</span> — ' if h else "")
                       + _e(a.question) + (f": {_e(a.answer)} " if a.answer else " ")
                       + f"<i>{_e(verdict_words(a.verdict or a.kind))}</i>"
                       + (f" ({_e(a.n)})" if a.n else "") + _mark(cav.marks[k - 1], prefix)
                       + _counted(a, same[k - 1], prefix) + "</li>"
                       for k, (a, h) in enumerate(zip(aside, heads, strict=True), len(shown) + 1))
                   + "</ul>")
    if cav.notes:  # each caveat once (number(): one entry per code and fields, or text)
        entries = "".join(
            f'<li id="{prefix}caveat-{i}">{_e(t)}{_named(r, prefix)}</li>'
            for i, (t, r) in enumerate(zip(cav.notes, cav.rows, strict=True), 1))
        out.append(f'<details class="caveats"{" open" if caveats_open else ""}>'
                   f"<summary>Caveats ({len(cav.notes)}), each once, with the rows it "
                   f'affects</summary><ol class="perfkit-notes caveats">{entries}</ol>'
                   "</details>")
    return "".join(out), cav


def answers_text(items: Iterable[Answer]) -> str:
    """The answers as plain text: rows numbered, one mark each, the caveats below."""
    shown, aside = listed(items)
    rows = [*shown, *aside]
    cav = number(rows)
    lines = ["Answers"]
    group = None
    for k, (a, m) in enumerate(zip(rows, cav.marks, strict=True), 1):
        if a.group and a.group != group:
            g = cav.group_marks.get(a.group)
            lines.append(f"{a.group}" + (f" [{g}]" if g else ""))
        group = a.group
        mark = f"[{m}]" if m else ""
        kind = "" if a.kind == ANSWERED else f" ({a.kind})"
        lines.append(f"{k}. " + dataclasses.replace(a, question=a.question + mark,
                                                     warnings=()).text() + kind)
    lines += [f"[{i}] {t}" for i, t in enumerate(cav.notes, 1)]
    return "\n".join(lines)
