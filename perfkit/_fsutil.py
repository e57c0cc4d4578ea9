"""Files that are never seen half-written, and locks that die with their process.

- :func:`write_bytes_atomic` / :func:`write_json_atomic`: write a temporary file beside the
  target, then rename it over (or hard-link it, so an existing target is never replaced);
  :func:`replacing` does the same for writers that want a file name;
- :func:`flock`: an exclusive ``flock(2)`` on a lock file, released by the kernel when the
  holder dies (even ``kill -9``);
- :func:`read_bytes`: a whole file in the fewest system calls (the loader reads thousands).

Temporary files are named ``.<name>.<random>.part`` in the target's folder: hidden, and with
the ``.part`` suffix that the run manifest's file list skips. They are created as ``open()``
creates a file, with the user's umask (``tempfile.mkstemp`` would make them 0600 whatever the
umask), unless a caller asks for a mode of its own.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import secrets
from collections.abc import Iterator
from typing import Any

FILE_MODE = 0o644
#: a new file's mode before the umask, as ``open()`` creates it
_NEW_FILE_MODE = 0o666
_O_NEW = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)


def _create_beside(target: str, suffix: str) -> tuple[int, str]:
    """A new, empty, hidden file beside ``target`` (``.<name>.<random><suffix>``), created as
    ``open()`` creates one (mode 0666 less the umask): its descriptor and path."""
    folder = os.path.dirname(os.path.abspath(target))
    while True:
        tmp = os.path.join(folder, f".{os.path.basename(target)}.{secrets.token_hex(4)}{suffix}")
        try:
            return os.open(tmp, _O_NEW, _NEW_FILE_MODE), tmp
        except FileExistsError:
            continue


_READ_CHUNK = 1 << 16
_O_READ = os.O_RDONLY | getattr(os, "O_CLOEXEC", 0)


def read_bytes(path: str | os.PathLike) -> bytes:
    """The whole file, as ``open(path, "rb").read()`` gives it (OSError the same way).

    ``open()`` builds a buffered file object and asks for the file's size and type (two
    ``fstat``) before reading; here a tool output of a few kilobytes takes one ``open``, one
    ``read`` of up to 64 KiB, one more that sees the end (of up to 1 MiB: a large file, such
    as a long Locust history, is read in few calls) and one ``close``."""
    fd = os.open(path, _O_READ)
    try:
        chunks: list[bytes] = []
        while chunk := os.read(fd, _READ_CHUNK if not chunks else 1 << 20):
            chunks.append(chunk)
    finally:
        os.close(fd)
    return chunks[0] if len(chunks) == 1 else b"".join(chunks)


def write_bytes_atomic(path: str | os.PathLike, data: bytes, *, mode: int | None = None,
                       durable: bool = False, exclusive: bool = False) -> bool:
    """Write ``data`` to ``path`` so that a reader sees the old file or the new, never a part.

    Parameters
    ----------
    path : path
        The target; its folder must exist.
    data : bytes
        The whole content.
    mode : int, optional
        Permission bits of the new file (:data:`FILE_MODE` where other users and nginx's
        workers must read it); default: as ``open()`` creates a file, with the user's umask.
    durable : bool
        fsync the file and its folder, so the write survives a power cut.
    exclusive : bool
        Never replace an existing ``path``: link the new file into place instead of renaming.

    Returns
    -------
    bool
        False only when ``exclusive`` and ``path`` already existed (nothing written).
    """
    target = os.fspath(path)
    folder = os.path.dirname(os.path.abspath(target))
    fd, tmp = _create_beside(target, ".part")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            if mode is not None:
                os.fchmod(fh.fileno(), mode)
            if durable:
                fh.flush()
                os.fsync(fh.fileno())
        if exclusive:
            try:
                os.link(tmp, target)
            except FileExistsError:
                return False
        else:
            os.replace(tmp, target)
        if durable:
            fsync_dir(folder)
        return True
    finally:
        if os.path.lexists(tmp):
            os.unlink(tmp)


def write_json_atomic(path: str | os.PathLike, data: Any, *, indent: int = 2,
                      sort_keys: bool = False, mode: int | None = None,
                      durable: bool = False) -> None:
    """``data`` as indented JSON and a final newline, written by :func:`write_bytes_atomic`
    (values JSON does not know are written as their ``str``)."""
    text = json.dumps(data, indent=indent, sort_keys=sort_keys, default=str) + "\n"
    write_bytes_atomic(path, text.encode("utf-8"), mode=mode, durable=durable)


@contextlib.contextmanager
def replacing(path: str | os.PathLike, suffix: str = ".part") -> Iterator[str]:
    """A temporary file name beside ``path`` for a writer that takes a path (pandas, pyarrow);
    renamed over ``path`` when the block ends without an error, removed otherwise. The file is
    created with the user's umask, as ``open()`` creates one."""
    target = os.fspath(path)
    fd, tmp = _create_beside(target, suffix)
    os.close(fd)
    try:
        yield tmp
        os.replace(tmp, target)
    finally:
        if os.path.lexists(tmp):
            os.unlink(tmp)


def fsync_dir(path: str | os.PathLike) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


@contextlib.contextmanager
def flock(path: str | os.PathLike, *, blocking: bool = True,
          mode: int | None = None) -> Iterator[None]:
    """Hold an exclusive lock on the file ``path`` (created when missing, with the user's
    umask unless ``mode`` is given) while in the block.

    Raises BlockingIOError at once when ``blocking`` is False and another process holds it."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT, _NEW_FILE_MODE if mode is None else mode)
    try:
        if mode is not None and os.fstat(fd).st_uid == os.geteuid():
            os.fchmod(fd, mode)
        fcntl.flock(fd, fcntl.LOCK_EX | (0 if blocking else fcntl.LOCK_NB))
        yield
    finally:
        os.close(fd)
