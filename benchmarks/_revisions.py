"""The revisions a benchmark measures side by side: this checkout, and with ``--before REV`` a
detached worktree of REV, removed afterwards."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


@contextmanager
def revisions(before: str | None, tmp: Path) -> Iterator[dict[str, Path]]:
    """``{"after": ROOT}``, or ``{"before": <worktree of before under tmp>, "after": ROOT}``
    (in that order, as the tables print them); the worktree is removed on the way out."""
    if not before:
        yield {"after": ROOT}
        return
    old = tmp / "before"
    subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "-q", "--detach", str(old),
                    before], check=True)
    try:
        yield {"before": old, "after": ROOT}
    finally:
        subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(old)],
                       check=False)
