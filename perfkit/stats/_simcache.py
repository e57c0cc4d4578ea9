"""Power simulations remembered by their inputs (issue 33).

A simulated rejection rate depends on the spread (its residuals, sd and degrees of freedom),
the run counts, the log shift, the critical U, the number of simulations and the seed: never
on the runs themselves beyond their residuals. The same inputs give the same rate bit for bit
(the generator is seeded), so a remembered rate is the rate. Rates are kept for the process
and, once :func:`use_directory` names one (the CLI names the run store,
``DIR/.perfkit/cache/power``), one small file per key there; a file that cannot be read or
written is ignored (the rate is simulated again).
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from collections.abc import Callable
from pathlib import Path

import numpy as np

#: bump when the simulation changes, so that old files are never read as new rates
VERSION = 1
_MEMO: dict[str, tuple[float, ...]] = {}
_DIRECTORY: list[Path] = []


def use_directory(path: str | Path | None) -> None:
    """Keep rates in ``path`` too (None: in this process only)."""
    _DIRECTORY[:] = [] if path is None else [Path(path)]


def key(*parts: object, residuals: np.ndarray | None = None) -> str:
    """A digest of the simulation's inputs (floats by their exact repr)."""
    h = hashlib.sha256(repr((VERSION, *parts)).encode())
    if residuals is not None:
        h.update(np.ascontiguousarray(residuals, dtype=np.float64).tobytes())
    return h.hexdigest()


def remembered(digest: str, compute: Callable[[], float]) -> float:
    """The rate kept under ``digest``, or ``compute()`` kept there."""
    return remembered_many(digest, lambda: (compute(),))[0]


def remembered_many(digest: str, compute: Callable[[], tuple[float, ...]]
                    ) -> tuple[float, ...]:
    """The floats kept under ``digest``, or ``compute()``'s kept there (each exactly: hex)."""
    if digest in _MEMO:
        return _MEMO[digest]
    values = _read(digest)
    if values is None:
        values = tuple(float(v) for v in compute())
        _write(digest, values)
    _MEMO[digest] = values
    return values


def _read(digest: str) -> tuple[float, ...] | None:
    if not _DIRECTORY:
        return None
    try:
        text = (_DIRECTORY[0] / digest).read_text().split()
        return tuple(float.fromhex(v) for v in text) if text else None
    except (OSError, ValueError):
        return None


def _write(digest: str, values: tuple[float, ...]) -> None:
    if not _DIRECTORY:
        return
    folder = _DIRECTORY[0]
    try:
        folder.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=".tmp-")
        with os.fdopen(fd, "w") as f:
            f.write(" ".join(v.hex() for v in values))
        os.replace(tmp, folder / digest)
    except OSError:
        pass
