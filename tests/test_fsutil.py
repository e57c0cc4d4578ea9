"""perfkit._fsutil: every file perfkit writes is created as ``open()`` creates one, with the
user's umask (a temporary file renamed into place was 0600 whatever the umask); the testbed
asks for its own mode (nginx's workers read its files)."""

from __future__ import annotations

import os
import stat

import pytest

from perfkit._fsutil import FILE_MODE, flock, replacing, write_bytes_atomic, write_json_atomic


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
