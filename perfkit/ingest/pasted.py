"""wrk and wrk2 reports as people paste them: where the report starts, and what surrounds it.

A report copied from a terminal into a README, a blog post or a CI log is rarely the tool's
standard output alone. :func:`locate` finds the report's first line (``Running 10s test @ URL``)
and tells what a person reading it would set aside, each of which the run then says:

- **a preamble**: lines before the report (a shell prompt, the command line, a heading, a
  sentence), kept in ``extra["pasted"]["preamble"]``; a ``wrk``/``wrk2`` command line among them
  is read for the options the report does not print (:func:`command_options`), such as wrk2's
  ``-R`` rate;
- **a uniform indent**: the leading whitespace every line of the report shares (a Markdown code
  block's four spaces, a tab), removed;
- **echoed ^C**: a run stopped by hand shows ``^C`` at the start of the line printed next;
- **blank lines** where the tool prints none (a paste with a blank line between every line, a
  line of two spaces): skipped by the parser's :class:`~perfkit.ingest._wrkcommon.Cursor`,
  which counts them.

Nothing else is guessed: a line that is not the tool's still stops the parse with its
``path:line``.
"""

from __future__ import annotations

import dataclasses
import os
import re
import shlex

from perfkit.units import UnitError, count
from perfkit.warning import Code, Warn

# ASCII only, as every pattern of the wrk parsers (see perfkit.ingest._wrkcommon)
_A = re.ASCII
FIRST_LINE = re.compile(r"[ \t]*(?:\^C)?Running \S+ test @ \S+\s*$", _A)
LAST_LINE = re.compile(r"[ \t]*Transfer/sec:", _A)
CTRL_C = "^C"
#: a wrk or wrk2 command line (after a prompt, a path or ``./``) and the rest of its line
COMMAND = re.compile(r"(?:^|[\s/$#>%])(wrk2?)((?:\s+\S+)+)\s*$", _A)
# a longer line is not a command a person typed (shlex would take seconds over a megabyte)
COMMAND_MAX = 8192
#: options that take a value (wrk.c and wrk2's wrk.c ``getopt_long``), short and long
_VALUED = {"t": "threads", "c": "connections", "d": "duration", "s": "script", "H": "header",
           "T": "timeout", "R": "rate"}
_LONG_VALUED = {"threads", "connections", "duration", "script", "header", "timeout", "rate"}
_FLAGS = {"L": "latency", "U": "u_latency", "B": "batch_latency", "r": "requests",
          "v": "version"}


@dataclasses.dataclass(frozen=True)
class Layout:
    """Where the report sits among the lines of a text (0-based line indexes)."""

    start: int
    #: the uniform indent removed from every line of the report ("" when none)
    prefix: str = ""
    #: lines that began with an echoed ``^C``
    ctrl_c: tuple[int, ...] = ()
    #: the non-blank lines before ``start``
    preamble: tuple[str, ...] = ()

    @property
    def plain(self) -> bool:
        """The text is the tool's output as written: nothing to set aside."""
        return not (self.start or self.prefix or self.ctrl_c)


def locate(lines: list[str]) -> Layout | None:
    """The layout of the first report among ``lines``, or None when no line starts one."""
    start = next((i for i, line in enumerate(lines)
                  if "Running" in line and FIRST_LINE.match(line)), None)
    if start is None:
        return None
    if start == 0 and lines[0].startswith("Running") and "^C" not in lines[0]:
        if not any(CTRL_C in line for line in lines):
            return Layout(0)
    end = next((j for j in range(start, len(lines)) if LAST_LINE.match(lines[j])),
               len(lines) - 1)
    report = [line for line in lines[start:end + 1] if line.strip()]
    prefix = os.path.commonprefix([line[:len(line) - len(line.lstrip(" \t"))]
                                   for line in report])
    ctrl_c = tuple(i for i in range(start, len(lines))
                   if lines[i][len(prefix):].startswith(CTRL_C))
    preamble = tuple(line for line in lines[:start] if line.strip())
    return Layout(start, prefix, ctrl_c, preamble)


def report_lines(lines: list[str], layout: Layout) -> list[str]:
    """``lines`` with the indent and the ``^C`` echoes of the report removed (as many lines)."""
    if not (layout.prefix or layout.ctrl_c):
        return lines
    n = len(layout.prefix)
    out = list(lines)
    for i in range(layout.start, len(lines)):
        if lines[i].startswith(layout.prefix):
            out[i] = lines[i][n:]
    for i in layout.ctrl_c:
        out[i] = out[i][len(CTRL_C):]
    return out


def indent_words(prefix: str) -> str:
    """``'    '`` -> ``'4'``, ``'\\t'`` -> ``'a tab'``: the indent as a note names it."""
    if set(prefix) == {" "}:
        return str(len(prefix))
    if set(prefix) == {"\t"}:
        return "a tab" if len(prefix) == 1 else f"{len(prefix)} tabs"
    return repr(prefix)


def notes(layout: Layout) -> list[Warn]:
    """What the run says about the text around its report (one note per normalisation)."""
    out = []
    if layout.preamble:
        out.append(Warn(Code.PASTED_PREAMBLE, lines=len(layout.preamble)))
    if layout.prefix:
        out.append(Warn(Code.PASTED_INDENT, indent=indent_words(layout.prefix)))
    if layout.ctrl_c:
        out.append(Warn(Code.PASTED_CTRL_C, lines=tuple(i + 1 for i in layout.ctrl_c)))
    return out


def command_options(preamble: tuple[str, ...] | list[str]) -> dict | None:
    """The options of the last ``wrk``/``wrk2`` command line in ``preamble``, or None.

    Read as wrk's ``getopt_long`` reads them: ``-t12``, ``-t 12``, ``--threads 12``,
    ``--threads=12``; the URL is the argument that is not an option. Returns ``argv`` (the
    words from ``wrk`` on) and, when given, ``threads``, ``connections`` (int), ``rate``
    (float, wrk2's ``-R``), ``duration``, ``url`` and the flags (``latency`` ...)."""
    for line in reversed(preamble):
        if len(line) > COMMAND_MAX:
            continue
        m = COMMAND.search(line)
        if m is None:
            continue
        try:
            words = shlex.split(m.group(2))
        except ValueError:
            words = m.group(2).split()
        opts = _getopt(words)
        if opts is not None:
            opts["argv"] = (m.group(1), *words)
            return opts
    return None


def _getopt(words: list[str]) -> dict | None:
    opts: dict = {}
    i = 0
    while i < len(words):
        word = words[i]
        name: str | None = None
        value: str | None = None
        if word.startswith("--"):
            name, _, value = word[2:].partition("=")
            if name not in _LONG_VALUED:
                opts[name] = True
                i += 1
                continue
            value = value or None
        elif word.startswith("-") and len(word) > 1:
            letter = word[1]
            if letter in _FLAGS:
                opts[_FLAGS[letter]] = True
                i += 1
                continue
            if letter not in _VALUED:
                return None  # not wrk's option: not a wrk command line
            name, value = _VALUED[letter], word[2:] or None
        else:
            if "://" in word or "." in word or ":" in word:
                opts.setdefault("url", word)
            i += 1
            continue
        if value is None:
            if i + 1 >= len(words):
                return None
            value = words[i + 1]
            i += 1
        opts[name] = value
        i += 1
    for key in ("threads", "connections"):
        if key in opts:
            if not str(opts[key]).isdigit():
                return None
            opts[key] = int(opts[key])
    if "rate" in opts:
        try:
            opts["rate"] = count(str(opts["rate"]))  # wrk2 reads -R as a metric (2k)
        except UnitError:
            return None
    return opts
