"""A mutation fuzzer over real tool outputs, shared by tests/test_ingest_fuzz.py (a few thousand
inputs) and benchmarks/fuzz_ingest.py (>= 10**5).

Seeds are the real outputs under tests/fixtures and data/ (sniffed as perfkit does), three
hdrh-written interval logs, every Locust run directory as a whole (stats, history,
failures, exceptions and --json files together), and real counter snapshots (nginx's
stub_status, /proc/net/netstat and snmp). Every input is a seed damaged by one to three
mutations (tests/_fuzz_mutations.py). It is fed to the parser of its kind (a Locust directory:
to ``locust.parse_files``, which merges the files) and, every ``load_every``-th input, written
into a run directory (with its real manifest, mutated sometimes) and read with
:func:`perfkit.load`; when the run store is on, the directory is loaded a second time, from the
store, and must give the same runs, warnings and errors.

The contradiction checks (issue 30): every Run a parser gives is passed through
:func:`perfkit.consistency.kept_out`, as the loader does, and must then contradict itself
nowhere (:func:`_fuzz_checks.strict_problems`), every value it removed named in a note
(``kept_out`` counts the runs it changed); every Run :func:`perfkit.load` gives must already
be so. A counter snapshot read must hold counts in ASCII digits, none negative but MaxConn.

Outcomes: ``runs``, ``parse_error`` (ParseError with a line inside the input, or without one
for a binary input), ``perfkit_error`` (another PerfkitError). Failures: ``crash`` (any other
exception), ``hang`` (over 1 s of CPU time, or 10 s of wall time), ``bad_error`` (a ParseError
on a text input without a line, or with a line beyond its end), ``bad_value`` (a successful
parse whose values break an invariant, tests/_fuzz_checks.py), ``fast_mismatch`` (the fast
wrk2 path, ``perfkit.ingest.fastwrk2``, accepted an input and gave another Run than
``wrk2.parse``, which every input is also given), ``cache_mismatch`` (the run store changed a
load), ``swap_mismatch`` (two CSV columns swapped changed the parse of a reader by header name),
``kept_in`` (a contradiction left in a run after ``kept_out``, or in a loaded run), ``unnamed``
(``kept_out`` removed a value no note names).
Input ``i`` of a run with seed ``s`` is :func:`make_input` ``(seeds, s, i)``: replayable.
"""

from __future__ import annotations

import dataclasses
import random
import shutil
import signal
import tempfile
import time
import traceback
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from _fuzz_checks import counter_problems, problems, strict_problems
from _fuzz_mutations import MUTATIONS, mutate
from _fuzz_seeds import COUNTER_KINDS, LOCUST_KINDS, Seed, load_seeds

import perfkit
from perfkit.consistency import kept_out
from perfkit.errors import LoadError, ParseError, PerfkitError
from perfkit.ingest import counters, fastwrk2, locust, wrk, wrk2
from perfkit.ingest.locust_csv import History
from perfkit.ingest.sniffer import sniff
from perfkit.model import Run
from perfkit.store import hlog
from perfkit.warning import Code

__all__ = ["FAILURES", "HANG_S", "MUTATIONS", "Report", "Seed", "load_seeds", "make_input",
           "mutate", "run_fuzz"]

HANG_S = 1.0
FAILURES = ("crash", "hang", "bad_error", "bad_value", "fast_mismatch", "cache_mismatch",
            "swap_mismatch", "kept_in", "unnamed")
SOURCE = "fuzz.txt"

PARSERS: dict[str, Callable] = {
    "wrk": wrk.parse, "wrk2": wrk2.parse, "hlog": hlog.parse,
    "locust_stats": locust.parse_stats_csv, "locust_history": locust.parse_history_csv,
    "locust_distribution": locust.parse_distribution_csv,
    "locust_failures": locust.parse_failures_csv,
    "locust_exceptions": locust.parse_exceptions_csv, "locust_json": locust.parse_json,
    "stub_status": counters.parse_stub_status, "proc_net": counters.parse_proc_table,
}
COUNTER_SEED_KINDS = frozenset(COUNTER_KINDS.values())
#: how often an input comes from each pool of seeds
POOLS = (("fixtures", 0.5), ("data", 0.22), ("locust_dir", 0.2), ("counters", 0.08))


def _pool(seed: Seed) -> str:
    if seed.kind in COUNTER_SEED_KINDS:
        return "counters"
    return "locust_dir" if seed.kind == "locust_dir" else (
        "data" if seed.name.startswith("data/") else "fixtures")


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


def _line_ok(exc: ParseError, lines: dict[str, int | None]) -> bool:
    """A ParseError's line is >= 1 and, for a text file, at most one past its last line."""
    if Path(exc.path).name not in lines:  # a file the input did not give (a manifest)
        return exc.line is None or exc.line >= 1
    count = lines[Path(exc.path).name]
    if count is None:  # binary: a line is not required, but must be >= 1
        return exc.line is None or exc.line >= 1
    return exc.line is not None and 1 <= exc.line <= count + 1


def _classify(exc: BaseException | None, lines: dict[str, int | None]) -> str:
    if exc is None:
        return "runs"
    if isinstance(exc, ParseError):
        return "parse_error" if _line_ok(exc, lines) else "bad_error"
    if isinstance(exc, LoadError):
        bad = [e for e in exc.errors if isinstance(e, ParseError) and not _line_ok(e, lines)]
        return "bad_error" if bad else "perfkit_error"
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


def _detail(label: str, exc: BaseException | None, crash: bool) -> str:
    if exc is None:
        return label
    detail = label + ": " + "".join(traceback.format_exception_only(type(exc), exc)).strip()
    if crash:
        detail += "\n" + "".join(traceback.format_tb(exc.__traceback__)[-3:])
    return detail


def _record(report: Report, exc, result, elapsed: float, lines: dict[str, int | None],
            label: str, loaded: bool = False) -> None:
    """The outcome of one call, and the values of its result (or of a LoadError's runs):
    ``loaded``, runs :func:`perfkit.load` gave, which contradict themselves nowhere."""
    report.slowest_s = max(report.slowest_s, elapsed)
    if elapsed > HANG_S or isinstance(exc, _Timeout):
        report.add("hang", f"{label}: {elapsed:.2f} s")
        return
    outcome = _classify(exc, lines)
    report.add(outcome, _detail(label, exc, outcome == "crash"))
    checked = result if exc is None else (exc.runs if isinstance(exc, LoadError) else None)
    if checked is not None:
        found = problems(checked)
        report.counts["values_checked"] += 1
        if found:
            report.add("bad_value", f"{label}: {found[:3]}")
        if loaded:
            _strict(report, checked, label)
        elif isinstance(checked, list):
            _kept_out_check(report, checked, label)


def _strict(report: Report, runs, label: str) -> None:
    found = strict_problems(runs)
    report.counts["contradictions_checked"] += 1
    if found:
        report.add("kept_in", f"{label}: {found[:3]}")


_PCT_MAPS = ("percentiles_ms", "uncorrected_percentiles_ms")


def _removed(before: Run, after: Run) -> list[str]:
    """The values ``kept_out`` removed, named as its notes name them."""
    out = [f.name for f in dataclasses.fields(Run)
           if getattr(before, f.name) is not None and getattr(after, f.name) is None]
    out += [f.name for f in dataclasses.fields(before.counters)
            if getattr(before.counters, f.name) is not None
            and getattr(after.counters, f.name) is None]
    for name in _PCT_MAPS:
        out += [f"{name}[{q:g}]" for q in getattr(before, name)
                if q not in getattr(after, name)]
    return out


def _kept_out_check(report: Report, runs: list, label: str) -> None:
    """Each Run through ``kept_out`` (the loader's step): no contradiction left, and every
    value it removed named in a note."""
    cleaned = []
    for run in runs:
        if not isinstance(run, Run):
            return
        after = kept_out(run)
        if after is not run:
            report.counts["kept_out"] += 1
            named = {f for n in after.notes if n.code is Code.KEPT_OUT for f in n["fields"]}
            missing = [f for f in _removed(run, after) if f not in named]
            if missing:
                report.add("unnamed", f"{label}: {missing[:3]}")
        cleaned.append(after)
    _strict(report, cleaned, label)


# -- one input --------------------------------------------------------------------------------
def _runs(result) -> object:
    return [result] if isinstance(result, Run) else result


def _direct(seed: Seed, data) -> object:
    if seed.kind == "locust_dir":
        items = []
        for _, name, raw in data:
            text = raw.decode("utf-8", "replace")
            kind = sniff(text[:16384])
            if kind in LOCUST_KINDS:
                items.append((kind, name, text))
        return locust.parse_files(items)
    return _runs(PARSERS[seed.kind](data.decode("utf-8", "replace"), SOURCE))


def _same(a, b) -> bool:
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(x.same_as(y) for x, y in zip(a, b, strict=True))
    if isinstance(a, History) and isinstance(b, History):
        return (a.rows, a.cumulative_percentiles, a.notes) == (b.rows, b.cumulative_percentiles,
                                                               b.notes)
    return a == b


def _loaded_same(first: tuple, second: tuple) -> bool:
    """Two ``perfkit.load`` outcomes agree: the same runs and warnings, or the same error."""
    (e1, r1, _), (e2, r2, _) = first, second
    if (e1 is None) != (e2 is None) or (e1 is not None and str(e1) != str(e2)):
        return False
    r1 = r1 if e1 is None else getattr(e1, "runs", [])
    r2 = r2 if e2 is None else getattr(e2, "runs", [])
    return _same(r1, r2) and [r.warnings for r in r1] == [r.warnings for r in r2]


def _through_load(report: Report, seed: Seed, data, work: Path, n: int, rng: random.Random,
                  lines: dict[str, int | None], label: str) -> None:
    run_dir = work / f"run{n}"
    run_dir.mkdir()
    if seed.kind == "locust_dir":
        for _, name, raw in data:
            (run_dir / name).write_bytes(raw)
        name = data[0][1] if data else "missing"
    else:
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

        def load():
            return perfkit.load(target, strict=strict, cache=cache)

        first = _timed(load)
        _record(report, *first, lines, "load " + label, loaded=True)
        if cache and target == run_dir:  # again, from the run store
            second = _timed(load)
            if not _loaded_same(first, second):
                report.add("cache_mismatch", f"load {label}: {first[:2]} vs {second[:2]}")
    finally:
        shutil.rmtree(run_dir)


def _fast_check(report: Report, text: str, careful: tuple | None, label: str) -> None:
    """fastwrk2 on the input; whatever it accepts, ``wrk2.parse`` must give the same Run."""
    exc, fast, elapsed = _timed(lambda: fastwrk2.parse_many([(text, SOURCE)])[0])
    if exc is not None or elapsed > HANG_S:
        report.add("crash" if exc is not None else "hang", _detail("fastwrk2 " + label, exc,
                                                                  True))
        return
    if fast is None:
        return
    report.counts["fast_taken"] += 1
    if careful is None:
        careful = _timed(lambda: wrk2.parse(text, SOURCE))
    exc, run, _ = careful
    run = run[0] if isinstance(run, list) and len(run) == 1 else run
    if exc is not None or not fast.same_as(run):
        report.add("fast_mismatch", _detail(f"{label}: fastwrk2 took it", exc, False))


def make_input(seeds: list[Seed], seed: int, i: int) -> tuple[random.Random, Seed, object, str]:
    """Input number ``i`` of a fuzz run: its own generator, so any input can be replayed.

    The damaged input is bytes, or for a Locust directory a tuple of (kind, name, bytes)."""
    rng = random.Random(f"{seed}/{i}")
    x, pool = rng.random(), POOLS[-1][0]
    for name, share in POOLS:
        if x < share:
            pool = name
            break
        x -= share
    choices = [s for s in seeds if _pool(s) == pool] or seeds
    s = rng.choice(choices)
    if s.kind != "locust_dir":
        data, how = mutate(rng, s.data, s.kind)
        return rng, s, data, how
    files, how = list(s.files), []
    for _ in range(rng.choice([1, 1, 2])):
        k = rng.randrange(len(files))
        kind, name, raw = files[k]
        if rng.random() < 0.1 and len(files) > 1:  # a file of the run missing
            del files[k]
            how.append(f"without {name}")
            continue
        raw, ops = mutate(rng, raw, kind)
        files[k] = (kind, name, raw)
        how.append(f"{name}: {ops}")
    return rng, s, tuple(files), "; ".join(how)


_CLEAN: dict[str, object] = {}


def _swap_check(report: Report, seed: Seed, result, label: str) -> None:
    """Two whole CSV columns swapped: a reader by header name gives the unmutated result."""
    if seed.name not in _CLEAN:
        _CLEAN[seed.name] = _timed(lambda: _direct(seed, seed.data))
    exc, clean, _ = _CLEAN[seed.name]
    if exc is None and not _same(result, clean):
        report.add("swap_mismatch", label)


def _counter_check(report: Report, seed: Seed, data: bytes, lines: dict[str, int | None],
                   label: str) -> None:
    """A counter snapshot to its reader: counts in ASCII digits, none negative, or a
    ParseError at a line of the input."""
    text = data.decode("utf-8", "replace")
    exc, result, elapsed = _timed(lambda: PARSERS[seed.kind](text, SOURCE))
    report.slowest_s = max(report.slowest_s, elapsed)
    if elapsed > HANG_S or isinstance(exc, _Timeout):
        report.add("hang", f"{label}: {elapsed:.2f} s")
        return
    outcome = _classify(exc, {SOURCE: lines[SOURCE] if b"\x00" not in data else None})
    report.add(outcome, _detail(label, exc, outcome == "crash"))
    report.counts["counter_inputs"] += 1
    if exc is None:
        found = counter_problems(seed.kind, text, result)
        report.counts["counters_checked"] += 1
        if found:
            report.add("bad_value", f"{label}: {found[:3]}")


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
                if s.kind == "locust_dir":
                    lines = {name: _text_lines(raw) for _, name, raw in data}
                else:
                    lines = {SOURCE: _text_lines(data), Path(s.name).name: _text_lines(data)}
                if progress and i % 10_000 == 0:
                    progress(i)
                direct = None
                if s.kind in COUNTER_SEED_KINDS:  # no tool output: its reader, directly
                    _counter_check(report, s, data, lines, label)
                    continue
                if load_every and i % load_every == 0:
                    _through_load(report, s, data, work, i, rng, lines, label)
                else:
                    direct = _timed(lambda s=s, d=data: _direct(s, d))
                    _record(report, *direct, lines, label)
                if s.kind == "locust_dir":
                    continue
                # every input goes to the fast wrk2 path too
                careful = direct if s.kind == "wrk2" else None
                _fast_check(report, data.decode("utf-8", "replace"), careful, label)
                if how == "swap_columns" and direct is not None and direct[0] is None:
                    _swap_check(report, s, direct[1], label)
    finally:
        signal.signal(signal.SIGALRM, previous)
    report.counts["inputs"] = n
    return report
