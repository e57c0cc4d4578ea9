"""``schema_version`` of perfkit's own files: an older one is read, a newer one refused."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from perfkit.errors import DataError, ParseError

KEY = "schema_version"


class SchemaVersionError(DataError):
    """A file written by a newer perfkit than this one (exit status 1: upgrade perfkit)."""


def check_version(path: str | os.PathLike, data: Mapping[str, Any], current: int,
                  what: str, default: int | None = None) -> int:
    """The ``schema_version`` of ``data`` (a JSON object read from ``path``), checked.

    Parameters
    ----------
    path : path
        The file, for the message.
    data : mapping
        The decoded object.
    current : int
        The newest version this perfkit writes and reads.
    what : str
        What the file is, in words ("a run manifest").
    default : int, optional
        The version of a file without the key; None: the key is required.

    Returns
    -------
    int
        The version, ``1 <= version <= current`` (or ``default``).

    Raises
    ------
    SchemaVersionError
        ``path: schema_version N is newer than this perfkit reads (M); upgrade perfkit``.
    ParseError
        The key is missing (and no default) or not a positive integer.
    """
    version = data.get(KEY, default)
    if version is None or isinstance(version, bool) or not isinstance(version, int) \
            or version < 1:
        raise ParseError(str(path), None, f'"{KEY}" to be a positive integer ({what})',
                         repr(version))
    if version > current:
        raise SchemaVersionError(f"{path}: {KEY} {version} is newer than this perfkit reads "
                                 f"({current}); upgrade perfkit")
    return version
