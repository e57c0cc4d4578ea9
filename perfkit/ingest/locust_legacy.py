"""What Locust before 1.1 wrote differently, read as Locust 1.x writes it, each difference said.

Sources: ``locust/stats.py`` of each release (``requests_csv``, ``distribution_csv``,
``stats_history_csv``, ``failures_csv``; ``StatsCSV`` from 1.1 on).

- **0.8-0.13.2** wrote ``PREFIX_requests.csv`` (``"Method","Name","# requests","# failures",
  "Median response time",...``) and ``PREFIX_distribution.csv`` (``"Name","# requests","50%",
  ...,"100%"``, a row's name ``"GET /path"``, or the name alone without requests); the totals row
  is ``"None","Total"`` (``Aggregated`` from 0.12.2). 0.8 and 0.9 counted only the successes in
  ``# requests`` (0.10 and later count every request): a file does not say which wrote it.
- **0.13.3-0.14.6** wrote ``PREFIX_stats.csv`` with the same lower-case names plus the
  percentiles (its ``99.999`` header lacks the ``%``) and ``PREFIX_stats_history.csv``
  (``"Type","Name","Timestamp","# requests",...``: totals so far, no user count).
- **up to 1.0.x** joined rows with ``"\\n"`` and no final newline, quoted every text field and
  printed a missing method as Python's ``None``.

:func:`modern_header` gives a header its 1.x names; :data:`STATS_NAMES` and
:data:`HISTORY_NAMES` say which (a 0.x history's ``# requests`` is a total so far).
"""

from __future__ import annotations

import re

from perfkit.warning import Code, Warn

#: 0.x column names -> the 1.x names of a _stats.csv (and of a 0.x _distribution.csv)
STATS_NAMES = {
    "Method": "Type", "# requests": "Request Count", "# failures": "Failure Count",
    "Median response time": "Median Response Time",
    "Average response time": "Average Response Time",
    "Min response time": "Min Response Time", "Max response time": "Max Response Time",
    "Requests Failed/s": "Failures/s",
}
#: 0.13.3-0.14.6 _stats_history.csv names -> 1.x names (its counts and times are totals so far)
HISTORY_NAMES = {
    "Method": "Type", "# requests": "Total Request Count", "# failures": "Total Failure Count",
    "Median response time": "Total Median Response Time",
    "Average response time": "Total Average Response Time",
    "Min response time": "Total Min Response Time", "Max response time": "Total Max Response Time",
    "Average Content Size": "Total Average Content Size", "Requests Failed/s": "Failures/s",
}
_BARE_NUMBER = re.compile(r"\d+(?:\.\d+)?", re.ASCII)
_PERCENTILE = re.compile(r"\d+(?:\.\d+)?%", re.ASCII)
#: what a missing method reads as in files of Locust up to 1.0 (``"%s" % None``)
NONE_METHOD = "None"


def modern_header(header: tuple[str, ...], names: dict[str, str]
                  ) -> tuple[tuple[str, ...], tuple[str, ...], list[Warn]]:
    """``header`` with Locust 1.x's names, the old names renamed, and the notes saying so
    (in the order of ``names``, wherever the columns are).

    A 0.x name is renamed when its 1.x name is not in the header already. A bare number in
    (0, 100] in a header with percentile columns (0.13.3-0.14.6's ``99.999``, between
    ``99.99%`` and ``100%``) is read as that percentile."""
    renamed = [old for old, new in names.items() if old in header and new not in header]
    out = [names[h] if h in renamed else h for h in header]
    notes = []
    if renamed:
        notes.append(Warn(Code.LOCUST_OLD_NAMES, renamed=[(old, names[old]) for old in renamed]))
    if any(_PERCENTILE.fullmatch(h) for h in header):
        for i, h in enumerate(header):
            if _BARE_NUMBER.fullmatch(h) and 0 < float(h) <= 100 and f"{h}%" not in header:
                out[i] = f"{h}%"
                notes.append(Warn(Code.LOCUST_BARE_PERCENTILE, column=h))
    return tuple(out), tuple(renamed), notes


def none_method_note(rows: int) -> Warn:
    return Warn(Code.LOCUST_NONE_METHOD, rows=rows)


def no_final_newline_note(fields: int) -> Warn:
    return Warn(Code.LOCUST_NO_FINAL_NEWLINE, fields=fields)


def is_quoted_writer(text: str) -> bool:
    """True for the hand-quoted files of Locust up to 1.0: a header of quoted names and no
    carriage return (1.1 and later write with the :mod:`csv` module: ``\\r\\n`` line ends)."""
    return text.startswith('"') and "\r" not in text


def successes_note(source: str, requests: int, failures: int) -> Warn:
    """What ``# requests`` of a 0.8-0.13.2 ``_requests.csv`` row with failures may mean (the
    consistency check reads its code: failures may pass such requests)."""
    return Warn(Code.LOCUST_SUCCESSES_ONLY, source=source, requests=requests,
                failures=failures)
