"""What a run's output never prints: argv, tool version, factor levels, timestamps.

Two sidecar formats are read from a run directory:

- ``manifest.json``: perfkit's own (written by ``perfkit run`` / ``perfkit sweep``), with
  ``schema_version``, ``factors``, ``load``, ``repetition``, ``block``, ``order``, ...;
- ``meta.json``: the shared fixtures' format, with ``profile`` and ``params``.

:func:`apply_manifest` merges one into a parsed :class:`~perfkit.model.Run`. The parsers stay pure
``text -> Run``; only the loader calls this.
"""

from __future__ import annotations

import dataclasses
import functools
import os
import re
import typing
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from perfkit._fsutil import read_bytes
from perfkit.errors import ParseError
from perfkit.ingest.counters import manifest_values
from perfkit.ingest.lazymap import LazyJsonMap
from perfkit.model import FrozenMap, Run, replaced_run
from perfkit.model import _freeze as _freeze_value
from perfkit.store import manifest as schema
from perfkit.units import UnitError, parse_duration_arg
from perfkit.vocabulary import ManifestStatus
from perfkit.warning import Code, Warn

MANIFEST_NAMES = (schema.MANIFEST_NAME, schema.FIXTURE_META_NAME)
SCHEMA_VERSION = schema.SCHEMA_VERSION
_LOAD_KEYS = schema.LOAD_KEYS


@dataclasses.dataclass(frozen=True)
class ManifestInfo:
    """The parts of a manifest that enter a Run."""

    path: str
    tool: str | None = None
    tool_version: str | None = None
    argv: tuple[str, ...] | None = None
    factors: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    load: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    run_id: str | None = None
    repetition: int | None = None
    block: int | None = None
    order: int | None = None
    start_utc: str | None = None
    end_utc: str | None = None
    exit_code: int | None = None
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
    a newer perfkit SchemaVersionError (:mod:`perfkit.store.manifest` has the record)."""
    path = os.fspath(path)
    text, data = schema.decode(path, read_bytes(path))
    version = schema.version_of(path, data)
    _check_types(path, text, data, _TYPES[version])
    info = _info(path, schema.upgrade(path, data, version), data)
    # what a Run keeps as its manifest: decoded again, frozen, only when someone reads it
    object.__setattr__(info, "frozen", LazyJsonMap(text, first={"path": info.path}))
    # set now: functools.cached_property takes a lock on every first read (Python 3.11)
    factors = typing.cast(functools.cached_property, ManifestInfo.frozen_factors)
    object.__setattr__(info, "frozen_factors", factors.func(info))
    return info


_NUMBER_TYPES = (int, float)
#: key -> (accepted JSON types, what to say), from the records; None is always accepted (absent)
_TYPES = {version: schema.json_types(record) for version, record in schema.RECORDS.items()}
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


def _info(path: str, record: schema.RunManifest, raw: Mapping) -> ManifestInfo:
    """The parts of a (version-1) record that enter a Run; ``raw`` is the file as read."""
    fields = {
        "path": path,
        "tool": record.get("tool"),
        "tool_version": record.get("tool_version"),
        "argv": tuple(argv) if (argv := record.get("argv")) else None,
        "factors": record.get("factors") or {},  # fresh from the JSON (or the upgrade): not
        "load": record.get("load") or {},  # shared with anything that could change them
        "run_id": record.get("run_id") or os.path.basename(os.path.dirname(path)),
        "repetition": _int_or_none(record.get("repetition")),
        "block": _int_or_none(record.get("block")),
        "order": _int_or_none(record.get("order")),
        "start_utc": record.get("start_utc"),
        "end_utc": record.get("end_utc"),
        "exit_code": _int_or_none(record.get("exit_code")),
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
        changes.update((k, v) for k, v in manifest_values(info.raw).items() if v is not None)
    notes = list(run.notes)
    if info.status not in (None, ManifestStatus.COMPLETE):
        notes.append(Warn(Code.RUN_STATUS, status=info.status, exit_code=info.exit_code))
    # warnings perfkit run recorded while the run went (e.g. the generator was the bottleneck)
    for warning in schema.recorded_warnings(info.raw):
        if warning not in notes:
            notes.append(warning)
    changes["notes"] = tuple(notes)
    # every value is as a Run holds it (maps frozen, lists tuples): no checks to run again
    return replaced_run(run, changes)
