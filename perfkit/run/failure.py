"""Why a load generator exited non-zero, in its own words: the reason a failed run records.

"exit code 1" says nothing; wrk prints ``unable to connect to 127.0.0.1:1 Connection refused``
on stderr, and Locust (which exits 1 when any request failed, its ``--exit-code-on-error``)
lists each error with its count in ``locust_failures.csv``. The reason quotes them.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path

#: the longest tool message quoted in a reason
MAX_QUOTE = 160


def _shorten(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= MAX_QUOTE else text[:MAX_QUOTE - 3] + "..."


def _said(path: Path, last: bool = False) -> str:
    """The first (or last) line of a tool's output that is not blank, or ''."""
    try:
        with open(path, "rb") as fh:
            if last:
                fh.seek(max(0, fh.seek(0, 2) - 4096))
            text = fh.read(4096).decode("utf-8", "replace")
    except OSError:
        return ""
    lines = [line for line in text.splitlines() if line.strip()]
    return _shorten(lines[-1 if last else 0]) if lines else ""


def locust_failures(run_dir: Path) -> tuple[int, str]:
    """(failed requests, the most frequent error) from ``locust_failures.csv``; (0, '') when
    there is none. Columns are read by name (they change between Locust versions)."""
    try:
        text = (run_dir / "locust_failures.csv").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return 0, ""
    total, top, top_n = 0, "", -1
    for row in csv.DictReader(io.StringIO(text)):
        try:
            n = int(row.get("Occurrences") or 0)
        except ValueError:
            continue
        total += n
        if n > top_n:
            where = " ".join(v for v in (row.get("Method"), row.get("Name")) if v)
            top, top_n = f"{where}: {row.get('Error', '')}".strip(": "), n
    return total, _shorten(top)


def reason(tool: str, exit_code: int, run_dir: Path) -> str:
    """The status reason of a run whose tool exited with ``exit_code`` (not 0)."""
    head = f"{tool} exit code {exit_code}"
    if tool == "locust":
        failed, top = locust_failures(run_dir)
        if failed:
            return (f"{head}: {failed} request(s) failed, most often {top} (Locust exits 1 "
                    "when any request fails; --arg=--exit-code-on-error --arg=0 accepts "
                    "failed requests)")
    # wrk says why on its first line; Locust logs first and ends with the error
    said = _said(run_dir / "stderr.txt", last=tool == "locust")
    if tool != "locust" and not said:
        said = _said(run_dir / "stdout.txt")
    return f"{head}: {said}" if said else head
