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

import base64
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
#: the special-function values of a folder, one line each: ``digest dtype shape base64``
VALUES_FILE = f"special-values-v{VERSION}"
#: values kept for the process (:func:`remembered_value`), and the folders whose file was read
_VALUES: dict[str, np.ndarray] = {}
_VALUES_READ: set[Path] = set()
#: a value of more elements is computed every time (a line stays one short append)
VALUE_MAX_SIZE = 256
#: the process keeps at most this many values (then starts again)
_VALUES_MAX = 20_000
#: a values file larger than this is started again (a cache: it may be emptied at any time)
_VALUES_FILE_MAX_BYTES = 4_000_000


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


def value_key(name: str, args: tuple) -> str | None:
    """The digest of ``name(*args)`` by each argument's type and exact bits; None when an
    argument is not a number or a small numeric array (such a call is not remembered)."""
    h = hashlib.sha256(f"{VERSION} {name}".encode())
    for arg in args:
        if isinstance(arg, np.ndarray):
            if arg.dtype.kind not in "biuf" or arg.size > VALUE_MAX_SIZE:
                return None
            h.update(f"|ndarray {arg.dtype.str} {arg.shape}|".encode())
            h.update(np.ascontiguousarray(arg).tobytes())
        elif isinstance(arg, (bool, int, float, np.integer, np.floating)):
            h.update(f"|{type(arg).__name__} {arg!r}|".encode())
        else:
            return None
    return h.hexdigest()


def remembered_value(name: str, args: tuple, compute: Callable[[], object]) -> object:
    """``compute()``, the value of the function ``name`` at ``args``, as it returned it (a
    numpy scalar or array), remembered by :func:`value_key`: in the process, and in
    :data:`VALUES_FILE` of the directory :func:`use_directory` named."""
    digest = value_key(name, args)
    if digest is None:
        return compute()
    if digest not in _VALUES and _DIRECTORY and _DIRECTORY[0] not in _VALUES_READ:
        _read_values(_DIRECTORY[0])
    if digest in _VALUES:
        kept = _VALUES[digest]
        return kept[()] if kept.ndim == 0 else kept.copy()
    value = compute()
    array = np.asarray(value)
    if (isinstance(value, (np.floating, np.ndarray)) and array.dtype == np.float64
            and array.size <= VALUE_MAX_SIZE):
        if len(_VALUES) >= _VALUES_MAX:
            _VALUES.clear()
            _VALUES_READ.clear()
        _VALUES[digest] = array.copy()
        _append_value(digest, array)
    return value


def _read_values(folder: Path) -> None:
    _VALUES_READ.add(folder)
    try:
        path = folder / VALUES_FILE
        if path.stat().st_size > _VALUES_FILE_MAX_BYTES:
            path.unlink()
            return
        lines = path.read_bytes().decode("ascii", "replace").splitlines()
    except OSError:
        return
    for line in lines:
        parsed = _parse_value(line)
        if parsed is not None:
            _VALUES.setdefault(*parsed)


def _parse_value(line: str) -> tuple[str, np.ndarray] | None:
    """``digest <f8 2,3 BASE64`` -> (digest, array); None for a line that is not one (cut
    short by a crash, or not ours)."""
    parts = line.split(" ")
    if len(parts) != 4 or len(parts[0]) != 64 or parts[1] != "<f8":
        return None
    try:
        shape = tuple(int(n) for n in parts[2].split(",") if n)
        data = base64.b64decode(parts[3], validate=True)
    except ValueError:
        return None
    if len(data) != 8 * int(np.prod(shape, dtype=np.int64)):
        return None
    return parts[0], np.frombuffer(data, dtype="<f8").reshape(shape).copy()


def _append_value(digest: str, array: np.ndarray) -> None:
    """One line, written by one ``write`` in append mode (lines of two processes do not
    interleave); nothing when no directory is named or it cannot be written."""
    if not _DIRECTORY:
        return
    folder = _DIRECTORY[0]
    shape = ",".join(str(n) for n in array.shape)
    payload = base64.b64encode(array.astype("<f8").tobytes()).decode()
    line = f"{digest} <f8 {shape} {payload}\n".encode()
    try:
        folder.mkdir(parents=True, exist_ok=True)
        fd = os.open(folder / VALUES_FILE, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, line)
        finally:
            os.close(fd)
    except OSError:
        pass
