"""How numbers and notes look, for every front end (the CLI's tables and the report's pages).

One place decides that 64.0 prints as ``64``, that a p-value below 0.001 prints as ``1.2e-05``,
that an interval prints as ``3.1 [2.9, 3.4]``, and how footnotes are numbered. Nothing here
computes or decides anything about the data.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterable
from typing import Any

import numpy as np

from perfkit.warning import Warn

#: environment variable that turns every progress bar off when set to anything but 0
PROGRESS_ENV = "PERFKIT_NO_PROGRESS"


def progress_disabled() -> bool:
    """True when ``PERFKIT_NO_PROGRESS`` is set (to anything but ``0``)."""
    return os.environ.get(PROGRESS_ENV, "") not in ("", "0")


def duration_text(seconds: float) -> str:
    """A wall time as a person reads it: ``12 s``, ``1 min 05 s``, ``2 h 03 min``."""
    total = max(0, round(seconds))
    hours, rest = divmod(total, 3600)
    minutes, sec = divmod(rest, 60)
    if hours:
        return f"{hours} h {minutes:02d} min"
    return f"{minutes} min {sec:02d} s" if minutes else f"{sec} s"


class Progress:
    """Progress of long work made of steps (the runs of a sweep, the pages of a report), told
    as each step ends: ``what done/planned units: name status (seconds); about T left``.

    On a terminal (``bar``) a tqdm bar counts the steps, with the lines above it; elsewhere
    (a CI log, a file) one line per step; nothing at all without a stream or when
    ``PERFKIT_NO_PROGRESS=1``. The time left is the mean time of the steps ended so far (in
    this invocation) times the steps still to go."""

    def __init__(self, stream: Any, what: str, planned: int, *, done: int = 0,
                 unit: str = "run", bar: bool = False):
        import time

        self.stream = None if progress_disabled() else stream
        self.what, self.planned, self.unit = what, planned, unit
        self.done = self.first = done
        self._clock = time.monotonic
        self.started = self._clock()
        self.bar = None
        if self.stream is not None and bar:
            from tqdm.auto import tqdm

            tqdm.monitor_interval = 0  # no monitor thread (a sweep forks load generators)
            self.bar = tqdm(total=planned, initial=done, desc=what, unit=unit, file=stream,
                            dynamic_ncols=True, leave=True)

    def line(self, name: str, status: str, seconds: float | None = None) -> str:
        """The line of the step that just ended (:attr:`done` counts it already)."""
        took = f" ({seconds:.1f} s)" if seconds is not None else ""
        elapsed = self._clock() - self.started
        if self.done >= self.planned:
            tail = f"all done in {duration_text(elapsed)}"
        else:
            each = elapsed / max(1, self.done - self.first)
            tail = f"about {duration_text(each * (self.planned - self.done))} left"
        return (f"{self.what}: {self.done}/{self.planned} {self.unit}s, {name} {status}{took}; "
                f"{tail}")

    def step(self, name: str, status: str, seconds: float | None = None) -> None:
        """One more step ended: ``name`` with its ``status`` after ``seconds``."""
        self.done += 1
        if self.stream is None:
            return
        text = self.line(name, str(status), seconds)
        if self.bar is not None:
            self.bar.write(text, file=self.stream)
            self.bar.update(1)
        else:
            print(text, file=self.stream, flush=True)

    def note(self, text: str) -> None:
        """What is going on now, beside the bar (nothing without one)."""
        if self.bar is not None:
            self.bar.set_postfix_str(text)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def is_missing(value: Any) -> bool:
    """None, NaN and pandas' NA are missing; 0 is a value."""
    if value is None:
        return True
    try:
        return bool(value != value)  # NaN and pd.NA
    except (TypeError, ValueError):
        return False


def plain(value: Any) -> Any:
    """A Python scalar for a numpy one, and an integral float as an int (64.0 -> 64)."""
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def level_text(value: Any) -> str:
    """A factor or load level as text: ``64`` for 64.0, ``tuned`` for tuned."""
    return str(plain(value))


def fmt_num(value: Any, digits: int = 4) -> str:
    """Compact human form: integers as is, floats to ``digits`` significant digits (from
    10^digits up, rounded to a whole number), missing as ``-``, booleans as yes/no."""
    if is_missing(value):
        return "-"
    value = plain(value)
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if value == 0:
            return "0"
        if abs(value) >= 10 ** digits:
            return f"{value:.0f}"
        return f"{value:.{digits}g}"
    return str(value)


def fmt_p(p: Any) -> str:
    """A p-value: three decimals, or two significant digits in exponent form below 0.001."""
    if is_missing(p):
        return "-"
    p = float(p)
    return f"{p:.3f}" if p >= 0.001 else f"{p:.1e}"


def pct(fraction: float) -> str:
    """``0.95`` -> ``"95%"``."""
    return f"{fraction * 100:g}%"


def fmt_sig(value: Any, digits: int = 3) -> str:
    """An estimate or an interval bound: ``digits`` significant digits and no more, whatever
    its size (239.5 -> ``240``, 32817.4 -> ``32800``, 0.0006195 -> ``0.00062``); integers
    (counts, rates, levels) as they are; missing as ``-``; infinite as ``inf`` / ``-inf``."""
    if is_missing(value):
        return "-"
    value = plain(value)
    if isinstance(value, bool | int | str):
        return fmt_num(value)
    value = float(value)
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    if value == 0:
        return "0"
    rounded = float(f"{value:.{digits}g}")
    return f"{rounded:.0f}" if abs(rounded) >= 10 ** (digits - 1) else f"{value:.{digits}g}"


def fmt_pct_change(change_pct: Any, digits: int = 3) -> str:
    """A change in percent, signed, to ``digits`` significant digits: ``+49%`` (digits 2),
    ``-18.3%``, ``+3690%``; missing as ``-``."""
    if is_missing(change_pct):
        return "-"
    text = fmt_sig(float(change_pct), digits)
    return text + "%" if text.startswith("-") else f"+{text}%"


#: a ratio below this prints as the ratio, not as a change in percent: one decimal of percent
#: cannot tell x0.000501 from x0.000341 (both "-99.9%" or "-100.0%")
RATIO_BELOW = 0.01


def pct_change(ratio: float) -> str:
    """A ratio as a signed change: 1.031 -> ``"+3.1%"`` (one decimal), and from +-100% on to
    3 significant digits (37.872 -> ``"+3690%"``); a ratio above 0 and below
    :data:`RATIO_BELOW` as the ratio (0.000501 -> ``"x0.000501"``: no change near -100% rounds
    to it); infinite -> ``"+inf"``."""
    if is_missing(ratio):
        return "-"
    if math.isinf(ratio):
        return "+inf"
    if 0 < ratio < RATIO_BELOW:
        return f"x{fmt_sig(ratio)}"
    change = (ratio - 1) * 100
    return fmt_pct_change(change, 3) if abs(change) >= 100 else f"{change:+.1f}%"


#: a change of exactly 1 with the interval [1, 1]: equal runs either side
NO_CHANGE_TEXT = "no change"


def change_ci(ratio: float, low: float, high: float) -> str:
    """A ratio with its interval as a change: ``"+3.1% [+1.0%, +5.2%]"`` (:func:`pct_change`),
    ``"+3.1% [no CI]"`` without bounds; when any of the three lies above 0 and below
    :data:`RATIO_BELOW`, all three as ratios: ``"x0.000501 [0.000341, 0.000595]"``; a ratio
    of exactly 1 whose interval is exactly [1, 1] (runs without a spread, all equal) as
    ``"no change"``."""
    if is_missing(ratio):
        return "-"
    if ratio == low == high == 1:
        return NO_CHANGE_TEXT
    if is_missing(low) or is_missing(high):
        return f"{pct_change(ratio)} [no CI]"
    if any(0 < float(v) < RATIO_BELOW for v in (ratio, low, high)):
        return f"x{fmt_ci(ratio, low, high)}"
    lo = UNBOUNDED_BELOW if float(low) <= 0 else pct_change(low)
    return f"{pct_change(ratio)} [{lo}, {pct_change(high)}]"


#: the low end of a change's interval at -100% or below (a ratio of 0: the interval bounds
#: nothing below, "-100%" would read as a measured fall to zero)
UNBOUNDED_BELOW = "unbounded below"


def fmt_ci(estimate: Any, low: Any, high: Any, unit: str = "", digits: int = 3) -> str:
    """The one form of an estimate with its interval, on every page and in the CLI:
    ``"1.23 ms [1.1, 1.41]"``, each number to ``digits`` significant digits
    (:func:`fmt_sig`); a change in percent (``unit="%"``) signed on every number, as
    :func:`pct_change` writes it: ``"+49% [+24%, +80%]"``. An infinite side prints as
    ``inf``, a missing one as ``-``; without either end, ``"1.23 ms [no CI]"``."""
    if is_missing(low) and is_missing(high) and not is_missing(estimate):
        # no interval at all (not estimable, or none exists): never "[-, -]"
        e = (fmt_pct_change(estimate, digits) if unit == "%"
             else f"{fmt_sig(estimate, digits)}{f' {unit}' if unit else ''}")
        return f"{e} [no CI]"
    if unit == "%":
        e, lo, hi = (fmt_pct_change(v, digits) for v in (estimate, low, high))
        if not is_missing(low) and float(low) <= -100:  # a value of 0 or less: no bound
            lo = UNBOUNDED_BELOW
        return f"{e} [{lo}, {hi}]"
    suffix = f" {unit}" if unit else ""
    return (f"{fmt_sig(estimate, digits)}{suffix} [{fmt_sig(low, digits)}, "
            f"{fmt_sig(high, digits)}]")


def interval_text(est: float, low: float, high: float, digits: int = 3) -> str:
    """``3.1 [2.9, 3.4]``; ``3.1 (no CI)`` when too few runs bound the interval (a footnote
    says how many it needs); ``-`` without an estimate; ``failed run`` when the median is a
    run ranked worst (failed: no value)."""
    if est != est:
        return "-"
    if math.isinf(est):
        return "failed run"
    if math.isinf(low) or math.isinf(high):
        return f"{fmt_sig(est, digits)} (no CI)"
    return fmt_ci(est, low, high, digits=digits)



#: how a load column reads after its value, in :func:`load_text`
LOAD_WORDS = {"target_rate_rps": "req/s offered", "connections": "connections", "users": "users",
              "threads": "threads"}


def load_text(where: Any) -> str:
    """A load point in words: ``{"target_rate_rps": 30000, "connections": 64}`` ->
    ``"30000 req/s offered, 64 connections"`` (columns without words, e.g. ``endpoint``, left
    out); none: ``"all load levels together"``."""
    items = where.items() if hasattr(where, "items") else (where or ())
    parts = [f"{level_text(v)} {LOAD_WORDS[k]}" for k, v in items if k in LOAD_WORDS]
    return ", ".join(parts) or "all load levels together"


class Footnotes:
    """Numbered, de-duplicated notes: ``mark`` returns ``"[1][2]"``, ``render`` the list.

    A note is a coded warning (:class:`perfkit.warning.Warn`: one note per code and fields) or
    a text; ``items`` keeps them as given, to be worded where they are shown."""

    def __init__(self) -> None:
        self.items: list[Warn | str] = []

    def numbers(self, notes: Warn | str | Iterable[Warn | str]) -> list[int]:
        """The note number of each of ``notes`` (1-based), a new one numbered next."""
        out = []
        for note in [notes] if isinstance(notes, str | Warn) else notes:
            if note not in self.items:
                self.items.append(note)
            out.append(self.items.index(note) + 1)
        return out

    def mark(self, notes: Warn | str | Iterable[Warn | str]) -> str:
        return "".join(f"[{n}]" for n in self.numbers(notes))

    def render(self) -> str:
        return "".join(f"[{i}] {t}\n" for i, t in enumerate(self.items, 1))


def consecutive_runs(positions: Iterable[int]) -> list[tuple[int, int]]:
    """Sorted ``positions`` as ``(first, last)`` runs of consecutive integers:
    ``[1, 2, 3, 7]`` -> ``[(1, 3), (7, 7)]`` (for "rows 1-3, 7", "v01-v07, v10")."""
    runs: list[tuple[int, int]] = []
    for p in sorted(positions):
        if runs and p == runs[-1][1] + 1:
            runs[-1] = (runs[-1][0], p)
        else:
            runs.append((p, p))
    return runs
