"""Files that are never seen half-written, and locks that die with their process.

- :func:`write_bytes_atomic` / :func:`write_json_atomic`: write a temporary file beside the
  target, then rename it over (or hard-link it, so an existing target is never replaced);
  :func:`replacing` does the same for writers that want a file name;
- :func:`flock`: an exclusive ``flock(2)`` on a lock file, released by the kernel when the
  holder dies (even ``kill -9``);
- :func:`read_bytes`: a whole regular file in the fewest system calls (the loader reads
  thousands); a FIFO, socket or device is refused at once (:class:`NotRegularFileError`), as is
  a file above a stated size (:class:`FileTooLargeError`), before any byte is read.

Temporary files are named ``.<name>.<random>.part`` in the target's folder: hidden, and with
the ``.part`` suffix that the run manifest's file list skips. They are created as ``open()``
creates a file, with the user's umask (``tempfile.mkstemp`` would make them 0600 whatever the
umask), unless a caller asks for a mode of its own.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import os
import secrets
import stat
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
# O_NONBLOCK: opening a FIFO for reading would wait for a writer; with it the open returns at
# once, and the fstat that follows refuses it (on a regular file the flag changes nothing)
_O_READ = os.O_RDONLY | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NONBLOCK", 0)
#: what each kind of file that is not a regular one is called in a refusal
_KINDS = ((stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))


class NotRegularFileError(OSError):
    """A path that is no regular file (a FIFO, a device, a socket): never read, as reading it
    could block forever or never end. ``strerror`` says what it is."""


class FileTooLargeError(OSError):
    """A file larger than its reader accepts, refused from its size before it is read."""


def size_text(n_bytes: int) -> str:
    """``52,428,800 bytes (50.0 MiB)``: a size as a refusal names it."""
    mib = f" ({n_bytes / 2**20:.1f} MiB)" if n_bytes >= 2**20 else ""
    return f"{n_bytes:,} bytes{mib}"


def _kind(mode: int) -> str:
    return next((name for test, name in _KINDS if test(mode)), "not a regular file")


def read_bytes(path: str | os.PathLike, limit_bytes: int | None = None) -> bytes:
    """The whole file, as ``open(path, "rb").read()`` gives it (OSError the same way), if it
    is a regular file (else :class:`NotRegularFileError`) of at most ``limit_bytes`` (else
    :class:`FileTooLargeError`, naming both sizes), both judged before a byte is read.

    ``open()`` builds a buffered file object and asks for the file's size and type (two
    ``fstat``) before reading; here a tool output of a few kilobytes takes one ``open``, one
    ``fstat``, one ``read`` of up to 64 KiB, one more that sees the end (of up to 1 MiB: a
    large file, such as a long Locust history, is read in few calls) and one ``close``."""
    fd = os.open(path, _O_READ)
    try:
        st = os.fstat(fd)
        if stat.S_ISDIR(st.st_mode):  # as open() says it
            raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), os.fspath(path))
        if not stat.S_ISREG(st.st_mode):
            raise NotRegularFileError(errno.EINVAL, f"not a regular file but {_kind(st.st_mode)}"
                                      ": perfkit reads only regular files", os.fspath(path))
        if limit_bytes is not None and st.st_size > limit_bytes:
            raise FileTooLargeError(errno.EFBIG, f"{size_text(st.st_size)}, more than the "
                                    f"{size_text(limit_bytes)} such a file may have",
                                    os.fspath(path))
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
