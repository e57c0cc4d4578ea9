"""The order of a report's pages, for what they share while they execute in parallel.

``perfkit report`` executes its notebooks at once (:mod:`perfkit.report.build`), but what pages
share must not depend on which one got there first. They share the palette
(:meth:`perfkit.report.nb.Report.palette`): a configuration keeps the colour it got the first
time any figure of the report showed it. Run one after another in the parameter file's order,
the pages give each configuration one colour, the same on every build; run in parallel, the
rule below gives the same colours:

- before starting the kernels, the report writes ``OUT/.perfkit-report/order.json`` (the pages
  in order, and its process id) and tells each kernel its page (``PERFKIT_REPORT_PAGE``);
  when a page's notebook ends (done or failed), it writes ``OUT/.perfkit-report/done/PAGE``;
- a page reads the colours already given without waiting (each was given by a page before
  it: a page gives colours only when every page before it has ended, so none after it can
  have given one yet), and before it gives a new one it waits until every page before it has
  ended (:func:`wait_for_earlier_pages`), saying so in ``OUT/.perfkit-report/waiting/PAGE``:
  the report then starts the next page in its place, so that a waiting kernel leaves its core
  to another (:func:`waiting`);
- outside ``perfkit report`` (JupyterLab, nbval) there is no page: nothing waits. Nor does a
  page wait for a report process that is gone, or longer than :data:`MAX_WAIT_S`: the palette
  is then still one colour per configuration (its file is changed under a lock), only its
  order may differ from the sequential one.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path

from perfkit._fsutil import write_json_atomic

#: the environment variable that names a kernel's page
PAGE_ENV = "PERFKIT_REPORT_PAGE"
STATE_DIR = ".perfkit-report"
#: the longest a page waits for the pages before it (a cell's timeout is 600 s)
MAX_WAIT_S = 300.0
_POLL_S = 0.05


def begin(out_dir: Path, pages: list[str]) -> None:
    """Record the order of ``pages`` (none has ended yet)."""
    folder = out_dir / STATE_DIR
    shutil.rmtree(folder, ignore_errors=True)
    (folder / "done").mkdir(parents=True)
    (folder / "waiting").mkdir()
    write_json_atomic(folder / "order.json", {"pid": os.getpid(), "pages": pages})


def ended(out_dir: Path, page: str) -> None:
    """Record that ``page``'s notebook has ended, done or failed."""
    (out_dir / STATE_DIR / "done" / page).touch()


def waiting(out_dir: Path) -> set[str]:
    """The pages waiting for the pages before them now."""
    try:
        return set(os.listdir(out_dir / STATE_DIR / "waiting"))
    except OSError:
        return set()


def finish(out_dir: Path) -> None:
    """Forget the order: every page has ended."""
    shutil.rmtree(out_dir / STATE_DIR, ignore_errors=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # alive, another user's
        return True
    return True


def wait_for_earlier_pages(out_dir: Path | None, max_wait_s: float = MAX_WAIT_S) -> bool:
    """Wait until every page before this kernel's has ended; False when nothing was waited for
    (not a page of a running report, or the first page), True after waiting."""
    page = os.environ.get(PAGE_ENV)
    if not page or out_dir is None:
        return False
    folder = out_dir / STATE_DIR
    try:
        state = json.loads((folder / "order.json").read_text(encoding="utf-8"))
        pages, pid = list(state["pages"]), int(state["pid"])
    except (OSError, ValueError, KeyError, TypeError):
        return False
    if page not in pages:
        return False
    earlier = pages[:pages.index(page)]
    if all((folder / "done" / p).exists() for p in earlier):
        return bool(earlier)
    marker = folder / "waiting" / page
    deadline = time.monotonic() + max_wait_s
    try:
        marker.touch()
        while not all((folder / "done" / p).exists() for p in earlier):
            if not _alive(pid) or time.monotonic() > deadline:
                break
            time.sleep(_POLL_S)
    except OSError:  # the report's folder went away: nothing left to wait for
        pass
    finally:
        marker.unlink(missing_ok=True)
    return True
