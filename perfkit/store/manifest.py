"""The run manifest: what a run's output never prints, as perfkit writes and reads it.

Three shapes are read, one is written:

- version 2, ``manifest.json``: written by ``perfkit run`` / ``perfkit sweep``
  (:class:`RunManifest`, :func:`write_manifest`); its ``warnings`` are coded warnings, each
  ``{"code", "text", "fields"}`` (:meth:`perfkit.warning.Warn.to_dict`);
- version 1, ``manifest.json`` of earlier perfkits: the same keys, its ``warnings`` sentences,
  which a Run reads as warnings coded ``recorded`` (:attr:`perfkit.warning.Code.RECORDED`, the
  sentence its field): nothing on disk needs rewriting;
- version 0, ``meta.json``: the sidecar of the shared fixtures, older than perfkit's manifest
  (:class:`FixtureMeta`: ``profile``, ``params``, ``version``, no ``schema_version``). It is
  read, and :func:`upgrade` turns it into the fields a Run takes; it is never written.

A ``manifest.json`` with a ``schema_version`` newer than :data:`SCHEMA_VERSION` is refused
(:class:`~perfkit.store.version.SchemaVersionError`). Keys the record does not list (a newer
perfkit's, or a script's) are kept as read: a Run's ``manifest`` holds the file's every key, and
nothing warns about them, since bookkeeping differs between the tools that write manifests.

The key lists (:data:`MANIFEST_KEYS`, the type checks of :func:`json_types`) come from the two
TypedDicts below; nothing else lists the keys again.
"""

from __future__ import annotations

import json
import os
import re
import types
import typing
from collections.abc import Mapping
from pathlib import Path
from typing import Any, TypedDict

from perfkit._fsutil import write_json_atomic
from perfkit.errors import ParseError
from perfkit.store.version import check_version
from perfkit.vocabulary import ManifestStatus
from perfkit.warning import Code, Warn

SCHEMA_VERSION = 2
MANIFEST_NAME = "manifest.json"
#: nginx's listen backlog on Linux when ``listen`` sets none (NGX_LISTEN_BACKLOG; nginx docs,
#: ``listen``): the testbed records it in the runs' manifests, the analysis reads it from the
#: recorded nginx.conf
NGINX_DEFAULT_BACKLOG = 511
FIXTURE_META_NAME = "meta.json"


class RunManifest(TypedDict, total=False):
    """``manifest.json``, schema version 2 (and 1), in the order perfkit writes its keys.

    Units are in the names (``_s``, ``_utc`` ISO 8601 text); ``load`` holds ``duration_s``,
    ``connections``, ``threads``, ``rate_rps`` (wrk/wrk2) or ``users``, ``spawn_rate``,
    ``processes``, ``ramp_s``, ``run_time_s`` (Locust). The keys from ``position_in_block`` to
    ``imported_from`` are bookkeeping that only some writers add. ``tool``, ``argv``,
    ``start_utc``, ``end_utc`` and ``status`` are None in a record upgraded from a fixture
    ``meta.json`` that lacks them.
    """

    schema_version: int
    perfkit_version: str | None
    run_id: str
    tool: str | None
    tool_version: str | None
    tool_path: str
    argv: list[str] | None
    command: list[str]
    url: str
    factors: dict[str, Any]
    load: dict[str, Any]
    experiment: str | None
    repetition: int | None
    block: int | None
    order: int | None
    position_in_block: int
    cell: int
    plan_sha256: str
    server_runs_since_start: int
    warmup: dict[str, Any]
    warmup_run: bool
    imported_by: str
    imported_from: dict[str, Any]
    status: str | None
    host: dict[str, Any]
    sysctls: dict[str, Any]
    server: dict[str, Any] | None
    locust: dict[str, Any] | None
    taskset: dict[str, Any] | None
    start_utc: str | None
    end_utc: str | None
    disturbance: dict[str, Any] | None
    exit_code: int | None
    status_reason: str | None
    wall_s: float
    cpu: dict[str, Any]
    counters: dict[str, Any] | None
    #: version 2: coded warnings (``{"code", "text", "fields"}``); version 1: sentences
    warnings: list[Any]
    files: dict[str, Any]


class FixtureMeta(TypedDict, total=False):
    """``meta.json`` of the shared fixtures (version 0): load levels and factors in ``params``."""

    tool: str
    version: str
    argv: list[str]
    profile: str
    params: dict[str, Any]
    start_utc: str
    end_utc: str
    wall_seconds: float
    exit_code: int | None


MANIFEST_KEYS: tuple[str, ...] = tuple(RunManifest.__annotations__)

#: keys of meta.json "params" / manifest "load" that are load levels, not factors
LOAD_KEYS = frozenset({"connections", "threads", "rate", "rate_rps", "target_rate_rps", "users",
                       "duration", "duration_s", "spawn_rate"})
BOOKKEEPING_KEYS = frozenset({"rep", "repetition", "order", "block"})

_WORDS = {str: "a string", dict: "an object", list: "a list", int: "an integer",
          float: "a number", bool: "true or false"}


def json_types(record: type) -> dict[str, tuple[tuple[type, ...], str]]:
    """key -> (accepted JSON types, what to say), from a record's annotations.

    Integers may also be written as text (``"3"``: the reader checks the digits); numbers accept
    integers; ``list[str]`` reads as "a list of strings". None is always accepted (absent)."""
    out: dict[str, tuple[tuple[type, ...], str]] = {}
    for key, hint in typing.get_type_hints(record).items():
        if isinstance(hint, types.UnionType):  # X | None
            hint = next(a for a in typing.get_args(hint) if a is not type(None))
        base = typing.get_origin(hint) or hint
        if base is typing.Any:
            continue
        words = _WORDS[base]
        if base is list and typing.get_args(hint) == (str,):
            words = "a list of strings"
        accepted = {int: (int, str), float: (int, float)}.get(base, (base,))
        out[key] = (accepted, words)
    return out


#: version -> the record of that version's shape
RECORDS: dict[int, type] = {0: FixtureMeta, 1: RunManifest, SCHEMA_VERSION: RunManifest}


def decode(path: str | os.PathLike, raw: bytes,
           what: str = "a JSON object (run manifest)") -> tuple[str, dict]:
    """The text and the object of a JSON file's bytes; ParseError (``path:line``) otherwise."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        raise ParseError(str(path), line, f"UTF-8 text: {what}",
                         f"the byte {raw[exc.start:exc.start + 1]!r}") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ParseError(str(path), exc.lineno, what, exc.msg) from exc
    except ValueError as exc:  # e.g. an integer of more than 4300 digits
        m = re.search(r"\d{1000,}", text)
        line = text.count("\n", 0, m.start()) + 1 if m else 1
        raise ParseError(str(path), line, what, str(exc)) from None
    if not isinstance(data, dict):
        raise ParseError(str(path), 1, what, type(data).__name__)
    return text, data


def version_of(path: str | os.PathLike, data: Mapping[str, Any]) -> int:
    """0 for a fixture ``meta.json``; else the checked ``schema_version`` (newer: refused)."""
    if os.path.basename(path) == FIXTURE_META_NAME:
        return 0
    return check_version(path, data, SCHEMA_VERSION, "a run manifest", default=SCHEMA_VERSION)


def upgrade(path: str | os.PathLike, data: Mapping[str, Any], version: int) -> RunManifest:
    """The fields of a manifest read at ``version`` (the object itself from version 1 on: the
    versions differ only in how ``warnings`` are written, which their reader tells apart)."""
    if version >= 1:
        return typing.cast(RunManifest, data)
    params = dict(data.get("params") or {})
    factors: dict[str, Any] = {}
    if data.get("profile") is not None:
        factors["profile"] = data["profile"]
    for key, value in params.items():
        if key not in LOAD_KEYS and key not in BOOKKEEPING_KEYS:
            factors[key] = value
    exit_code = data.get("exit_code")
    return RunManifest(
        run_id=os.path.basename(os.path.dirname(path)), tool=data.get("tool"),
        tool_version=data.get("version"), argv=data.get("argv"), factors=factors,
        load={k: v for k, v in params.items() if k in LOAD_KEYS},
        repetition=params.get("rep"), block=params.get("block"), order=params.get("order"),
        start_utc=data.get("start_utc"), end_utc=data.get("end_utc"), exit_code=exit_code,
        status=None if exit_code in (None, "") else ManifestStatus.COMPLETE)


def recorded_warnings(data: Mapping[str, Any]) -> list[Warn]:
    """The warnings a manifest recorded while its run went (``warnings``), but the run's end,
    which a Run says from the manifest's status itself (:attr:`Code.RUN_ENDED`).

    Version 2 writes each as :meth:`Warn.to_dict`: read back as that warning (one of a code
    this perfkit does not know, as :attr:`Code.RECORDED` with its text). Version 1 wrote
    sentences: each is :attr:`Code.RECORDED` with the sentence as its ``text``, as written
    (its run's end was the sentence ``run <status>: <reason>``)."""
    out: list[Warn] = []
    for item in data.get("warnings") or ():
        if isinstance(item, str):
            if not item.startswith("run "):  # version 1's run-end sentence
                out.append(Warn(Code.RECORDED, text=item))
        elif isinstance(item, Mapping) and isinstance(item.get("code"), str):
            if item["code"] == Code.RUN_ENDED:
                continue
            try:
                out.append(Warn.decode(item))
            except (ValueError, TypeError, KeyError):
                out.append(Warn(Code.RECORDED, text=str(item.get("text", item["code"]))))
    return out


def read_run_manifest(path: str | os.PathLike) -> RunManifest:
    """A ``manifest.json`` (or fixture ``meta.json``) as a :class:`RunManifest`.

    Raises ParseError for a file that is not a JSON object, SchemaVersionError for one newer
    than this perfkit. (:func:`perfkit.ingest.manifest.read_manifest` reads the same way and
    also checks each key's type, for the loader.)"""
    p = Path(path)
    _, data = decode(p, p.read_bytes())
    return upgrade(p, data, version_of(p, data))


def write_manifest(path: str | os.PathLike, manifest: RunManifest) -> None:
    """Write ``manifest`` atomically (a reader never sees half of it), stamped with the
    version when the writer left it out."""
    data = manifest if "schema_version" in manifest else {"schema_version": SCHEMA_VERSION,
                                                           **manifest}
    write_json_atomic(path, data)
