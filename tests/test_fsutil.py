"""perfkit._fsutil: every file perfkit writes is created as ``open()`` creates one, with the
user's umask (a temporary file renamed into place was 0600 whatever the umask); the testbed
asks for its own mode (nginx's workers read its files). read_bytes, the reader of every input
file: only regular files are read (a FIFO or a device is refused at once, before a byte is
read: reading one could block forever or never end), and a file above a stated size is refused
from its size, naming it."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from _unblocked import unblocked

from perfkit._fsutil import (
    FILE_MODE,
    FileTooLargeError,
    NotRegularFileError,
    flock,
    read_bytes,
    replacing,
    write_bytes_atomic,
    write_json_atomic,
)

REAL = Path(__file__).parent / "fixtures" / "wrk" / "single" / "latency_default_c50"


def _output(folder: Path) -> Path:
    return next(p for p in sorted(folder.iterdir()) if p.name.endswith("stdout"))


def test_a_regular_file_is_read_whole():
    path = _output(REAL)
    assert read_bytes(path) == path.read_bytes()
    assert read_bytes(path, limit_bytes=path.stat().st_size) == path.read_bytes()


def test_a_fifo_without_a_writer_is_refused_at_once(tmp_path):
    """open() of a FIFO waits for a writer: without one, a blocking read hangs for ever."""
    fifo = tmp_path / "run.stdout"
    os.mkfifo(fifo)
    with unblocked(), pytest.raises(NotRegularFileError) as info:
        read_bytes(fifo)
    assert info.value.filename == str(fifo) and "a FIFO" in info.value.strerror


def test_a_device_is_refused_before_it_is_read():
    with pytest.raises(NotRegularFileError, match="a character device"):
        read_bytes("/dev/zero")  # would never end


def test_a_folder_is_refused_as_open_refuses_it(tmp_path):
    with pytest.raises(IsADirectoryError):
        read_bytes(tmp_path)


def test_a_file_above_the_limit_is_refused_from_its_size(tmp_path):
    path = tmp_path / "big"
    path.write_bytes(b"x" * 3_000_000)
    with pytest.raises(FileTooLargeError) as info:
        read_bytes(path, limit_bytes=2**20)
    assert "3,000,000 bytes (2.9 MiB), more than the 1,048,576 bytes (1.0 MiB)" in str(
        info.value.strerror)


def test_perfkit_parse_of_a_fifo_is_an_error_not_a_hang(tmp_path):
    """The command as a user runs it: ``perfkit parse FIFO`` blocked for ever. The subprocess
    timeout is a guard so that the old behaviour fails the test, not a measure of speed."""
    fifo = tmp_path / "run.stdout"
    os.mkfifo(fifo)
    proc = subprocess.run([sys.executable, "-m", "perfkit", "parse", str(fifo)],
                          capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 2
    assert proc.stderr.splitlines() == [
        f"perfkit: error: {fifo}: not a regular file but a FIFO (named pipe): perfkit reads "
        "only regular files"]


@pytest.mark.parametrize("umask", [0o022, 0o077, 0o002])
def test_files_are_created_with_the_users_umask_unless_a_mode_is_asked(tmp_path, umask):
    old = os.umask(umask)
    try:
        write_bytes_atomic(tmp_path / "bytes", b"x")
        write_json_atomic(tmp_path / "json", {"a": 1})
        with replacing(tmp_path / "replaced.csv", suffix=".csv") as tmp:
            with open(tmp, "w", encoding="utf-8") as fh:
                fh.write("a\n")
        with flock(tmp_path / "lock"):
            pass
        write_bytes_atomic(tmp_path / "testbed", b"x", mode=FILE_MODE)
    finally:
        os.umask(old)
    modes = {p.name: stat.S_IMODE(p.stat().st_mode) for p in tmp_path.iterdir()}
    assert modes == {"bytes": 0o666 & ~umask, "json": 0o666 & ~umask,
                     "replaced.csv": 0o666 & ~umask, "lock": 0o666 & ~umask,
                     "testbed": FILE_MODE}  # and no temporary file is left
