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

:func:`read_manifest` reads either into a :class:`ManifestInfo`, and :func:`apply_manifest`
merges it into a parsed :class:`~perfkit.model.Run`. The parsers stay pure ``text -> Run``;
only the loader calls this.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import os
import re
import types
import typing
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, TypedDict

from perfkit._fsutil import read_bytes, write_json_atomic
from perfkit.counters import NGINX_DEFAULT_BACKLOG as NGINX_DEFAULT_BACKLOG
from perfkit.counters import manifest_counters
from perfkit.errors import ParseError
from perfkit.model import FrozenMap, Provenance, Run, replaced_run
from perfkit.model import _freeze as _freeze_value
from perfkit.store.lazymap import LazyJsonMap
from perfkit.store.version import check_version
from perfkit.units import UnitError, parse_duration_arg
from perfkit.vocabulary import ManifestStatus
from perfkit.warning import Code, Warn

SCHEMA_VERSION = 2
MANIFEST_NAME = "manifest.json"
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
    than this perfkit. (:func:`read_manifest` reads the same way and
    also checks each key's type, for the loader.)"""
    p = Path(path)
    _, data = decode(p, read_bytes(p))
    return upgrade(p, data, version_of(p, data))


def write_manifest(path: str | os.PathLike, manifest: RunManifest) -> None:
    """Write ``manifest`` atomically (a reader never sees half of it), stamped with the
    version when the writer left it out."""
    data = manifest if "schema_version" in manifest else {"schema_version": SCHEMA_VERSION,
                                                           **manifest}
    write_json_atomic(path, data)


MANIFEST_NAMES = (MANIFEST_NAME, FIXTURE_META_NAME)
_LOAD_KEYS = LOAD_KEYS


@dataclasses.dataclass(frozen=True)
class ManifestInfo(Provenance):
    """The parts of a manifest that enter a Run: its :class:`~perfkit.model.Provenance`
    (run id, tool version, argv, factors, repetition, block, order, times, exit code: the
    Run's own fields, declared once), and the file's path, tool, load, status and contents."""

    path: str
    tool: str | None = None
    load: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    status: str | None = None
    raw: Mapping[str, Any] = dataclasses.field(default_factory=dict)

    @functools.cached_property
    def frozen(self) -> FrozenMap:
        """What a Run keeps as its ``manifest``: the path, then every key as read (frozen).

        :func:`read_manifest` sets it to a map decoded from the file's text on first use."""
        return FrozenMap({"path": self.path, **_freeze_value(dict(self.raw))})

    @functools.cached_property
    def frozen_factors(self) -> FrozenMap:
        """``factors`` as a Run holds them (frozen once, shared by the runs of a directory)."""
        return _freeze_value(dict(self.factors))


def find_manifest(directory: Path) -> Path | None:
    for name in MANIFEST_NAMES:
        candidate = directory / name
        if candidate.is_file():
            return candidate
    return None


def read_manifest(path: str | os.PathLike) -> ManifestInfo:
    """Read ``manifest.json`` or ``meta.json``: a malformed one raises ParseError, one written by
    a newer perfkit SchemaVersionError."""
    path = os.fspath(path)
    text, data = decode(path, read_bytes(path))
    version = version_of(path, data)
    _check_types(path, text, data, _TYPES[version])
    info = _info(path, upgrade(path, data, version), data)
    # what a Run keeps as its manifest: decoded again, frozen, only when someone reads it
    object.__setattr__(info, "frozen", LazyJsonMap(text, first={"path": info.path}))
    # set now: functools.cached_property takes a lock on every first read (Python 3.11)
    factors = typing.cast(functools.cached_property, ManifestInfo.frozen_factors)
    object.__setattr__(info, "frozen_factors", factors.func(info))
    return info


_NUMBER_TYPES = (int, float)
#: key -> (accepted JSON types, what to say), from the records; None is always accepted (absent)
_TYPES = {version: json_types(record) for version, record in RECORDS.items()}
_INT_KEYS = ("repetition", "block", "order", "exit_code", "rep")  # meta.json: params.rep


def _key_line(text: str, key: str) -> int:
    at = text.find(f'"{key}"')
    return text.count("\n", 0, at) + 1 if at >= 0 else 1


_STR = frozenset({str})
_INT_OR_NONE = frozenset({int, type(None)})
#: types a load level may have in "load"/"params" (a number, or text such as "15s")
_LOAD_LEVEL_TYPES = frozenset({int, float, str, type(None)})
_SANE_INT = 2**62


def _check_types(path: str, text: str, data: Mapping,
                 types_of: Mapping[str, tuple[tuple[type, ...], str]]) -> None:
    """Every key the record lists has its type (``types_of``); else a ParseError at the key's
    line. (Thousands of manifests are read per load: each test first asks, in one C-level
    pass, whether all is well, and looks closer only when not.)"""

    def fail(key: str, what: str, value: Any) -> None:
        raise ParseError(path, _key_line(text, key), f'"{key}" to be {what}',
                         repr(value)[:80])

    for key in [k for k, v in data.items() if v is not None and k in types_of
                and type(v) not in types_of[k][0]]:
        value = data[key]
        types, what = types_of[key]
        if isinstance(value, bool) or not isinstance(value, types):
            fail(key, what, value)
    for key in ("argv", "command"):
        values = data.get(key)
        if values is not None and (type(values) is not list
                                   or not _STR.issuperset(map(type, values))):
            fail(key, "a list of strings", values)
    values = data.get("warnings")  # version 1: sentences; 2: {"code": ..., "fields": ...}
    if values is not None and (type(values) is not list or not all(
            type(v) is str or (type(v) is dict and type(v.get("code")) is str) for v in values)):
        fail("warnings", 'a list of sentences or of coded warnings ({"code": ...})', values)
    params = data.get("params")
    if type(params) is not dict:
        params = {}
    values = [*map(data.get, _INT_KEYS), *map(params.get, _INT_KEYS)]
    if not _INT_OR_NONE.issuperset(map(type, values)) or (
            max(map(abs, filter(None, values)), default=0) > _SANE_INT):
        _check_integers(data, params, fail)
    for section in (data.get("load"), params):
        if type(section) is dict and not _LOAD_LEVEL_TYPES.issuperset(
                map(type, section.values())):
            for key, value in section.items():
                if key in _LOAD_KEYS and value is not None and (
                        isinstance(value, bool) or not isinstance(value, _NUMBER_TYPES + (str,))):
                    fail(key, "a number", value)


def _check_integers(data: Mapping, params: Mapping, fail: Callable[[str, str, Any], None]
                    ) -> None:
    """The bookkeeping integers (repetition, block, order, exit code; params.rep), one by one:
    an integer, a float with no fraction or digits as text, of a sane size; else ``fail``."""
    for key in _INT_KEYS:
        for value in (data.get(key), params.get(key)):
            if value is None or value == "":
                continue
            if isinstance(value, float) and value.is_integer():
                value = int(value)
            if isinstance(value, str) and re.fullmatch(r"\s*-?\d+\s*", value, re.ASCII):
                value = int(value) if len(value) < 19 else 2**63
            if isinstance(value, bool) or not isinstance(value, int):
                fail(key, "an integer", value)
            if abs(value) > _SANE_INT:
                fail(key, "an integer of a sane size", value)


def _int_or_none(value: Any) -> int | None:
    if value is None or value == "":
        return None
    return int(value)


def _info(path: str, record: RunManifest, raw: Mapping) -> ManifestInfo:
    """The parts of a (version-1) record that enter a Run; ``raw`` is the file as read."""
    fields = {  # in the dataclass's field order: Provenance's, then ManifestInfo's own
        "run_id": record.get("run_id") or os.path.basename(os.path.dirname(path)),
        "tool_version": record.get("tool_version"),
        "argv": tuple(argv) if (argv := record.get("argv")) else None,
        "factors": record.get("factors") or {},  # fresh from the JSON (or the upgrade): not
        "repetition": _int_or_none(record.get("repetition")),
        "block": _int_or_none(record.get("block")),
        "order": _int_or_none(record.get("order")),
        "start_utc": record.get("start_utc"),
        "end_utc": record.get("end_utc"),
        "exit_code": _int_or_none(record.get("exit_code")),
        "path": path,
        "tool": record.get("tool"),
        "load": record.get("load") or {},  # shared with anything that could change them
        "status": record.get("status"),
        "raw": raw,
    }
    # every field given: the frozen dataclass's __init__ (a checked setattr per field, a fifth
    # of reading a manifest) has nothing to add
    info = object.__new__(ManifestInfo)
    object.__setattr__(info, "__dict__", fields)
    return info


# -- argv -----------------------------------------------------------------------------------
_WRK_OPTS = {
    "-t": "threads", "--threads": "threads",
    "-c": "connections", "--connections": "connections",
    "-d": "duration", "--duration": "duration",
    "-R": "rate", "--rate": "rate",
    "-s": "script", "--script": "script",
    "-H": "header", "--header": "header",
    "--timeout": "timeout", "-T": "timeout",
}
_WRK_FLAGS = {"--latency", "-L", "-U", "--u_latency", "-v", "--version", "-B", "--batch_latency"}

_LOCUST_OPTS = {
    "-u": "users", "--users": "users",
    "-r": "spawn_rate", "--spawn-rate": "spawn_rate",
    "-t": "run_time", "--run-time": "run_time",
    "-H": "host", "--host": "host",
    "--processes": "processes",
}


def parse_wrk_argv(argv: Sequence[str]) -> dict[str, Any]:
    """Options of a wrk/wrk2 command line: threads, connections, duration_s, rate, url, ..."""
    return dict(_parse_wrk_argv(tuple(argv)))


@functools.lru_cache(maxsize=4096)
def _parse_wrk_argv(argv: tuple[str, ...]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    args = list(argv[1:])
    i = 0
    while i < len(args):
        arg = args[i]
        name, value = arg, None
        if arg.startswith("--") and "=" in arg:
            name, value = arg.split("=", 1)
        elif arg[:2] in {"-t", "-c", "-d", "-R", "-s", "-H", "-T"} and len(arg) > 2:
            name, value = arg[:2], arg[2:]
        if name in _WRK_OPTS:
            if value is None:
                i += 1
                value = args[i] if i < len(args) else None
            out[_WRK_OPTS[name]] = value
        elif name in _WRK_FLAGS:
            out[name.lstrip("-")] = True
        elif not arg.startswith("-"):
            out["url"] = arg
        i += 1
    return _typed(out)


def parse_locust_argv(argv: Sequence[str]) -> dict[str, Any]:
    """Options of a locust command line: users, spawn_rate, run_time_s, host, processes."""
    return dict(_parse_locust_argv(tuple(argv)))


@functools.lru_cache(maxsize=4096)
def _parse_locust_argv(argv: tuple[str, ...]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    args = list(argv[1:])
    i = 0
    while i < len(args):
        arg = args[i]
        name, value = (arg.split("=", 1) + [None])[:2] if arg.startswith("--") else (arg, None)
        if name in _LOCUST_OPTS:
            if value is None:
                i += 1
                value = args[i] if i < len(args) else None
            out[_LOCUST_OPTS[name]] = value
        i += 1
    return _typed(out)


def _typed(opts: dict[str, Any]) -> dict[str, Any]:
    out = dict(opts)
    for key in ("threads", "connections", "users", "processes"):
        if key in out:
            try:
                out[key] = int(out[key])
            except (TypeError, ValueError):
                out.pop(key)
    for key in ("rate", "spawn_rate"):
        if key in out:
            try:
                out[key] = float(str(out[key]).replace("k", "e3"))
            except (TypeError, ValueError):
                out.pop(key)
    for key, dest in (("duration", "duration_s"), ("run_time", "run_time_s")):
        if key in out:
            try:
                out[dest] = parse_duration_arg(str(out.pop(key)))
            except UnitError:
                pass
    return out


def _positive(value: Any, kind: type) -> Any:
    """A load level as ``kind`` (int or float), or None when it is not a finite number > 0."""
    try:
        number = float(value)
    except (TypeError, ValueError, OverflowError):
        return None
    if not 0 < number < float("inf"):
        return None
    return int(number) if kind is int else number


def apply_manifest(run: Run, info: ManifestInfo) -> Run:
    """Fill what the output does not print from the manifest; never overwrite printed values."""
    tool = run.tool
    opts: dict[str, Any] = {}
    if info.argv:
        # read only: the options come from a cache shared by every run with this argv
        opts = (_parse_locust_argv(tuple(info.argv)) if tool == "locust"
                else _parse_wrk_argv(tuple(info.argv)))
    load = info.load
    changes: dict[str, Any] = {
        "run_id": run.run_id or info.run_id,
        "tool_version": run.tool_version or info.tool_version,
        "argv": run.argv or info.argv,
        "factors": (_freeze_value({**dict(info.factors), **dict(run.factors)}) if run.factors
                    else info.frozen_factors),
        "repetition": info.repetition if run.repetition is None else run.repetition,
        "block": info.block if run.block is None else run.block,
        "order": info.order if run.order is None else run.order,
        "start_utc": run.start_utc or info.start_utc,
        "end_utc": run.end_utc or info.end_utc,
        "exit_code": info.exit_code if run.exit_code is None else run.exit_code,
        "manifest": info.frozen,
    }
    if tool == "wrk2" and run.target_rate_rps is None:
        rate = opts.get("rate", load.get("rate_rps", load.get("rate")))
        changes["target_rate_rps"] = _positive(rate, float)
    if run.threads is None:
        changes["threads"] = _positive(opts.get("threads", load.get("threads")), int)
    if run.connections is None and tool != "locust":
        changes["connections"] = _positive(opts.get("connections", load.get("connections")),
                                           int)
    if tool == "locust" and run.users is None:
        changes["users"] = _positive(opts.get("users", load.get("users")), int)
    if run.url is None:
        changes["url"] = opts.get("url") or opts.get("host")
    # what the server and the kernel counted (None: not recorded), a whole run's: a Locust
    # run's Aggregated row carries them, its endpoint rows do not
    if "counters" in info.raw and (tool != "locust" or run.is_aggregate):
        changes["counters"] = manifest_counters(info.raw)
    notes = list(run.notes)
    if info.status not in (None, ManifestStatus.COMPLETE):
        notes.append(Warn(Code.RUN_STATUS, status=info.status, exit_code=info.exit_code))
    # warnings perfkit run recorded while the run went (e.g. the generator was the bottleneck)
    for warning in recorded_warnings(info.raw):
        if warning not in notes:
            notes.append(warning)
    changes["notes"] = tuple(notes)
    # every value is as a Run holds it (maps frozen, lists tuples): no checks to run again
    return replaced_run(run, changes)
