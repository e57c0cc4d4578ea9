"""A mutation fuzzer over the real fixtures, shared by tests/test_fuzz_ingest.py (a few thousand
inputs) and benchmarks/fuzz_ingest.py (>= 10**5).

Every input is a real tool output (tests/fixtures) damaged by one to three mutations: truncation
at a line or at a random byte, line deletion, duplication and swaps, byte flips, numbers
replaced by huge, negative, NaN, inf or empty values, unit swaps, CRLF or CR line ends, UTF-16,
a BOM, binary garbage, NUL bytes and very long lines. Each is fed to the parser of its kind and,
every ``load_every``-th input, written into a run directory (with its real manifest, mutated
sometimes) and read with :func:`perfkit.load`.

Outcomes: ``runs`` (a list of Run), ``parse_error`` (ParseError with a line inside the input, or
without one for a binary input), ``perfkit_error`` (another PerfkitError), and the failures:
``crash`` (any other exception), ``hang`` (over 1 s of CPU time, or 10 s of wall time),
``bad_error`` (a ParseError on a text input without a line, or with a line beyond its end).
Input ``i`` of a run with seed ``s`` is :func:`make_input` ``(seeds, s, i)``: replayable.
"""

from __future__ import annotations

import io
import random
import re
import shutil
import signal
import tempfile
import time
import traceback
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

import perfkit
from perfkit.errors import ParseError, PerfkitError
from perfkit.ingest import hlog, locust, wrk, wrk2
from perfkit.ingest.sniffer import sniff

FIXTURES = Path(__file__).resolve().parent / "fixtures"
HANG_S = 1.0
FAILURES = ("crash", "hang", "bad_error")

PARSERS: dict[str, Callable] = {
    "wrk": wrk.parse, "wrk2": wrk2.parse, "hlog": hlog.parse,
    "locust_stats": locust.parse_stats_csv, "locust_history": locust.parse_history_csv,
    "locust_failures": locust.parse_failures_csv,
    "locust_exceptions": locust.parse_exceptions_csv, "locust_json": locust.parse_json,
}
_NUMBER = re.compile(rb"\d+(?:\.\d+)?")
_UNITS = [b"us", b"ms", b"s", b"m", b"h", b"k", b"M", b"KB", b"MB", b"GB", b"B", b"%", b"xs",
          b""]
_REPLACEMENTS = [b"9" * 400, b"1e308", b"1e999", b"18446744073709551616", b"-1", b"-0.5",
                 b"nan", b"-nan", b"NaN", b"inf", b"-inf", b"Infinity", b"", b"0", b"0.000",
                 b"-nanus", b"N/A", b"1" * 25, b"3.", b".5", b"1e-400"]


@dataclass(frozen=True)
class Seed:
    kind: str
    name: str
    data: bytes
    manifest: bytes | None
    manifest_name: str | None


def _hlog_seed() -> bytes:
    """An interval log written by hdrh's own HistogramLogWriter (no hlog fixture exists)."""
    from hdrh.histogram import HdrHistogram
    from hdrh.log import HistogramLogWriter

    buf = io.StringIO()
    writer = HistogramLogWriter(buf)
    writer.output_log_format_version()
    writer.output_base_time(1795290763000)  # output_start_time is broken in hdrh 0.10
    writer.output_legend()
    rng = np.random.default_rng(7)
    for i in range(3):
        hist = HdrHistogram(1, 3_600_000_000, 3)
        for v in rng.lognormal(7, 1, 300).astype(int) + 1:
            hist.record_value(int(v))
        writer.output_interval_histogram(hist, 1795290763.0 + i, 1795290764.0 + i)
    return buf.getvalue().encode()


def load_seeds(root: Path = FIXTURES) -> list[Seed]:
    """Every tool output under ``root`` (sniffed as perfkit does), with its run manifest."""
    seeds = []
    for path in sorted(root.rglob("*")):
        if not path.is_file() or path.name in ("manifest.json", "meta.json"):
            continue
        data = path.read_bytes()
        if not data.strip() or b"\x00" in data[:4096]:
            continue
        try:
            kind = sniff(data[:16384].decode("utf-8"))
        except UnicodeDecodeError:
            continue
        if kind is None:
            continue
        manifest = next((path.parent / n for n in ("manifest.json", "meta.json")
                         if (path.parent / n).is_file()), None)
        seeds.append(Seed(kind, str(path.relative_to(root)), data,
                          manifest.read_bytes() if manifest else None,
                          manifest.name if manifest else None))
    seeds.append(Seed("hlog", "generated.hlog", _hlog_seed(), None, None))
    return seeds


# -- mutations --------------------------------------------------------------------------------
def _lines(data: bytes) -> list[bytes]:
    return data.split(b"\n")


def truncate_line(rng: random.Random, data: bytes) -> bytes:
    lines = _lines(data)
    return b"\n".join(lines[:rng.randrange(len(lines) + 1)]) + rng.choice([b"", b"\n"])


def truncate_byte(rng: random.Random, data: bytes) -> bytes:
    return data[:rng.randrange(len(data) + 1)]


def delete_line(rng: random.Random, data: bytes) -> bytes:
    lines = _lines(data)
    del lines[rng.randrange(len(lines))]
    return b"\n".join(lines)


def duplicate_line(rng: random.Random, data: bytes) -> bytes:
    lines = _lines(data)
    i = rng.randrange(len(lines))
    lines.insert(i, lines[i])
    return b"\n".join(lines)


def swap_lines(rng: random.Random, data: bytes) -> bytes:
    lines = _lines(data)
    i, j = rng.randrange(len(lines)), rng.randrange(len(lines))
    lines[i], lines[j] = lines[j], lines[i]
    return b"\n".join(lines)


def flip_bytes(rng: random.Random, data: bytes) -> bytes:
    out = bytearray(data)
    for _ in range(rng.choice([1, 1, 2, 5, 20])):
        if out:
            out[rng.randrange(len(out))] = rng.randrange(256)
    return bytes(out)


def replace_number(rng: random.Random, data: bytes) -> bytes:
    found = list(_NUMBER.finditer(data))
    if not found:
        return data
    out = data
    for m in sorted(rng.sample(found, min(len(found), rng.choice([1, 1, 3]))),
                    key=lambda m: -m.start()):
        out = out[:m.start()] + rng.choice(_REPLACEMENTS) + out[m.end():]
    return out


def swap_unit(rng: random.Random, data: bytes) -> bytes:
    found = list(re.finditer(rb"(?<=\d)(us|ms|s|m|KB|MB|GB|B|k|%)", data))
    if not found:
        return data
    m = rng.choice(found)
    return data[:m.start()] + rng.choice(_UNITS) + data[m.end():]


def line_ends(rng: random.Random, data: bytes) -> bytes:
    return data.replace(b"\n", rng.choice([b"\r\n", b"\r", b"\n\n", b"\r\r\n"]))


def utf16(rng: random.Random, data: bytes) -> bytes:
    return data.decode("utf-8", "replace").encode(rng.choice(["utf-16", "utf-16-le"]))


def bom(rng: random.Random, data: bytes) -> bytes:
    return b"\xef\xbb\xbf" + data


def binary(rng: random.Random, data: bytes) -> bytes:
    blob = bytes(rng.randrange(256) for _ in range(rng.choice([1, 64, 4096])))
    at = rng.randrange(len(data) + 1)
    return data[:at] + blob + data[at:]


def nul(rng: random.Random, data: bytes) -> bytes:
    at = rng.randrange(len(data) + 1)
    return data[:at] + b"\x00" + data[at:]


def long_line(rng: random.Random, data: bytes) -> bytes:
    lines = _lines(data)
    i = rng.randrange(len(lines))
    filler = rng.choice([b"9", b" ", b"x", b"1.0 ", b"a,"]) * rng.choice([10_000, 200_000])
    lines[i] = lines[i] + filler
    return b"\n".join(lines)


MUTATIONS = (truncate_line, truncate_byte, delete_line, duplicate_line, swap_lines, flip_bytes,
             replace_number, replace_number, swap_unit, line_ends, utf16, bom, binary, nul,
             long_line)


def mutate(rng: random.Random, data: bytes) -> tuple[bytes, str]:
    names = []
    for _ in range(rng.choice([1, 1, 1, 2, 3])):
        op = rng.choice(MUTATIONS)
        data = op(rng, data)
        names.append(op.__name__)
    return data, "+".join(names)


# -- running ----------------------------------------------------------------------------------
class _Timeout(Exception):
    pass


def _alarm(signum, frame):  # pragma: no cover - only on a real hang
    raise _Timeout()


@dataclass
class Report:
    counts: Counter = field(default_factory=Counter)
    examples: dict[str, list[str]] = field(default_factory=dict)
    slowest_s: float = 0.0

    def add(self, outcome: str, detail: str) -> None:
        self.counts[outcome] += 1
        if outcome in FAILURES and len(self.examples.setdefault(outcome, [])) < 10:
            self.examples[outcome].append(detail)

    @property
    def failures(self) -> int:
        return sum(self.counts[f] for f in FAILURES)


def _classify(exc: BaseException | None, result, text_lines: int | None) -> str:
    if exc is None:
        return "runs"
    if isinstance(exc, ParseError):
        if text_lines is None:  # binary: a line is not required, but must be >= 1
            return "parse_error" if exc.line is None or exc.line >= 1 else "bad_error"
        if exc.line is None:
            return "bad_error"
        return "parse_error" if 1 <= exc.line <= text_lines + 1 else "bad_error"
    if isinstance(exc, PerfkitError):
        return "perfkit_error"
    return "crash"


def _text_lines(data: bytes) -> int | None:
    """Line count of a text input; None for binary (NUL or not UTF-8)."""
    if b"\x00" in data:
        return None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    return text.count("\n") + text.count("\r") + 1


def _timed(fn: Callable[[], object]) -> tuple[BaseException | None, object, float]:
    """(exception, result, CPU seconds). CPU time, not wall time: the machine is shared and a
    busy neighbour must not turn a 50 ms input into a "hang"; a runaway input is stopped
    after 10 s of wall time all the same."""
    start = time.process_time()
    signal.setitimer(signal.ITIMER_REAL, 10.0)
    try:
        return None, fn(), time.process_time() - start
    except _Timeout as exc:
        return exc, None, time.process_time() - start
    except Exception as exc:  # noqa: BLE001 - the point is to catch everything
        return exc, None, time.process_time() - start
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)


def _record(report: Report, exc, result, elapsed: float, lines: int | None,
            label: str) -> None:
    report.slowest_s = max(report.slowest_s, elapsed)
    if elapsed > HANG_S or isinstance(exc, _Timeout):
        report.add("hang", f"{label}: {elapsed:.2f} s")
        return
    outcome = _classify(exc, result, lines)
    detail = label
    if exc is not None:
        detail += ": " + "".join(traceback.format_exception_only(type(exc), exc)).strip()
        if outcome == "crash":
            detail += "\n" + "".join(traceback.format_tb(exc.__traceback__)[-3:])
    report.add(outcome, detail)


def _direct(seed: Seed, data: bytes):
    text = data.decode("utf-8", "replace")
    return PARSERS[seed.kind](text, "fuzz.txt")


def _through_load(seed: Seed, data: bytes, work: Path, n: int, rng: random.Random):
    run_dir = work / f"run{n}"
    run_dir.mkdir()
    name = Path(seed.name).name
    (run_dir / name).write_bytes(data)
    if seed.manifest is not None:
        manifest = seed.manifest
        if rng.random() < 0.2:
            manifest, _ = mutate(rng, manifest)
        (run_dir / seed.manifest_name).write_bytes(manifest)
    try:
        target = run_dir if rng.random() < 0.5 else run_dir / name
        strict, cache = rng.random() < 0.5, rng.random() < 0.3  # the run store too
        return _timed(lambda: perfkit.load(target, strict=strict, cache=cache))
    finally:
        shutil.rmtree(run_dir)


def make_input(seeds: list[Seed], seed: int, i: int) -> tuple[random.Random, Seed, bytes, str]:
    """Input number ``i`` of a fuzz run: its own generator, so any input can be replayed."""
    rng = random.Random(f"{seed}/{i}")
    s = rng.choice(seeds)
    data, how = mutate(rng, s.data)
    return rng, s, data, how


def run_fuzz(n: int, seed: int = 0, load_every: int = 5, seeds: list[Seed] | None = None,
             progress: Callable[[int], None] | None = None) -> Report:
    """Fuzz ``n`` mutated inputs (deterministic for a given ``seed``); return the counts."""
    seeds = seeds or load_seeds()
    report = Report()
    previous = signal.signal(signal.SIGALRM, _alarm)
    try:
        with tempfile.TemporaryDirectory(prefix="perfkit-fuzz-") as tmp:
            work = Path(tmp)
            for i in range(n):
                rng, s, data, how = make_input(seeds, seed, i)
                label = f"#{i} {s.name} [{how}]"
                lines = _text_lines(data)
                if load_every and i % load_every == 0:
                    exc, result, elapsed = _through_load(s, data, work, i, rng)
                    label = "load " + label
                else:
                    exc, result, elapsed = _timed(lambda s=s, d=data: _direct(s, d))
                _record(report, exc, result, elapsed, lines, label)
                if progress and i % 10_000 == 0:
                    progress(i)
    finally:
        signal.signal(signal.SIGALRM, previous)
    return report
