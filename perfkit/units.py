"""The only place where strings printed by load tools become numbers.

wrk and wrk2 print numbers with unit suffixes chosen per value (``574.78us``, ``1.32ms``,
``10.15s``, ``3.00m``; ``19.63k``; ``480.36MB``). Each function here returns the value in the unit
its name states. Conversion goes through :class:`decimal.Decimal`, so ``574.78us`` becomes exactly
the float nearest to 0.57478 ms: a number the tool printed comes out as printed.

``-nan`` / ``nan`` (printed by wrk/wrk2 when there is no data) becomes ``math.nan``, with or
without the unit the tool glues to it (wrk2 prints an empty histogram's mean as ``-nanus``);
``inf`` becomes ``math.inf`` the same way. :func:`is_placeholder` tells such a token apart from a
number; callers decide how to report it (never as 0).
"""

from __future__ import annotations

import math
import re
from decimal import Decimal, InvalidOperation
from typing import SupportsFloat

# wrk's units.c: time in microseconds scaled by 1000, 1000, 60, 60.
_TIME_TO_MS = {
    "us": Decimal("0.001"),
    "ms": Decimal(1),
    "s": Decimal(1000),
    "m": Decimal(60_000),
    "h": Decimal(3_600_000),
}
_METRIC = {"": Decimal(1), "k": Decimal(10) ** 3, "M": Decimal(10) ** 6, "G": Decimal(10) ** 9,
           "T": Decimal(10) ** 12}
# wrk's format_binary: powers of 1024, printed as KB, MB, GB, TB.
_BINARY = {"B": Decimal(1), "KB": Decimal(1024), "MB": Decimal(1024) ** 2,
           "GB": Decimal(1024) ** 3, "TB": Decimal(1024) ** 4}

# ASCII only (re.ASCII): \d would admit any Unicode digit and \s any Unicode space, which
# float() and Decimal() then read ("\u0663" is 3); with IGNORECASE, Unicode matching would
# also take a dotless "\u0131" for "i" ("\u0131nf"). No load tool prints them: refused.
_NUM = r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?"
_NAN = re.compile(r"^[-+]?nan$", re.IGNORECASE | re.ASCII)
#: a no-data token with an optional unit glued on: ``-nan``, ``nan%``, ``-nanus``, ``inf``
_PLACEHOLDER = re.compile(r"^[-+]?(nan|inf(?:inity)?)([A-Za-z%]*)$", re.IGNORECASE | re.ASCII)
_SUFFIXED = re.compile(rf"^({_NUM})\s*([A-Za-z%]*)$", re.ASCII)
#: what a token may be padded with (str.strip() alone would also drop Unicode spaces)
_SPACES = " \t\n\r\f\v"


class UnitError(ValueError):
    """A string is not a number with one of the expected unit suffixes."""


# Scalings by a power of ten or of two, as (decimal exponent, binary factor): the exact result
# is obtained without Decimal, since float() of "574.78e-3" is correctly rounded and
# multiplying by a power of two is exact. Other factors (60 s, 3600 s) go through Decimal.
_FAST_TIME_MS = {"us": ("e-3", 1), "ms": ("", 1), "s": ("e3", 1)}
_FAST_DURATION_S = {"us": ("e-6", 1), "ms": ("e-3", 1), "s": ("", 1)}
_FAST_METRIC = {"": ("", 1), "k": ("e3", 1), "M": ("e6", 1), "G": ("e9", 1), "T": ("e12", 1)}
_FAST_BINARY = {"B": ("", 1), "KB": ("", 1024), "MB": ("", 1024**2), "GB": ("", 1024**3),
                "TB": ("", 1024**4)}
_FAST_PLAIN = {"": ("", 1)}


_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
_PLAIN_NUMBER = re.compile(r"\d+(?:\.\d+)?$", re.ASCII)


def _fast(text: str, fast: dict[str, tuple[str, int]]) -> float | None:
    """The exact conversion for power-of-ten/two units; None to take the Decimal path.

    Only plain ``digits[.digits]`` with a known suffix is taken here; anything else (signs,
    exponents, nan, junk) goes to the careful path, which also produces the error messages.
    """
    token = text.strip(_SPACES)
    number_text = token.rstrip(_LETTERS)
    scale = fast.get(token[len(number_text):])
    if scale is None or not _PLAIN_NUMBER.match(number_text):
        return None
    exponent, factor = scale
    return float(number_text + exponent) * factor


def is_placeholder(text: str) -> bool:
    """True for a printed no-data token (``-nan``, ``nan%``, ``-nanus``, ``inf``), any unit."""
    return _PLACEHOLDER.match(text.strip(_SPACES)) is not None


def _split(text: str, units: dict[str, Decimal], what: str) -> Decimal | None:
    s = text.strip(_SPACES)
    if _NAN.match(s):
        return None
    m = _PLACEHOLDER.match(s)
    if m and m.group(2) in units:
        if m.group(1).lower() == "nan":
            return None
        return Decimal("-Infinity") if s.startswith("-") else Decimal("Infinity")
    m = _SUFFIXED.match(s)
    if not m or m.group(2) not in units:
        allowed = ", ".join(repr(u) for u in units)
        raise UnitError(f"{what} with a unit in {allowed}")
    try:
        return Decimal(m.group(1)) * units[m.group(2)]
    except InvalidOperation as exc:  # pragma: no cover - the regex admits only valid numbers
        raise UnitError(what) from exc


def ascii_number(text: str, kind: type[float] | type[int] = float) -> float | int:
    """``float(text)`` or ``int(text)`` for a number written with ASCII characters only: both
    also read any Unicode digit (``float("\u0665")`` is 5.0) and underscores (``int("1_0")``
    is 10), which a user meant as no number; such a text raises ValueError, as does one
    neither reads. ``nan`` and ``inf`` still read as float does (the option's own check then
    refuses them by name)."""
    if not text.isascii() or "_" in text:
        raise ValueError(f"not an ASCII number: {text!r}")
    return kind(text)


def to_float(value: SupportsFloat | None) -> float:
    """``value`` as a float, missing (None) as NaN: the one None -> NaN conversion of perfkit
    (a huge Decimal becomes inf)."""
    return math.nan if value is None else float(value)


def time_ms(text: str) -> float:
    """``'574.78us'`` -> 0.57478, ``'10.15s'`` -> 10150.0; suffixes us, ms, s, m, h."""
    fast = _fast(text, _FAST_TIME_MS)
    return fast if fast is not None else to_float(_split(text, _TIME_TO_MS, "a time"))


#: wrk2's first releases printed the calibration line as ``mean lat.: 9747 usec, rate sampling
#: interval: 21 msec`` (its README still shows it)
_EARLY_WRK2_TO_MS = {**_TIME_TO_MS, "usec": Decimal("0.001"), "msec": Decimal(1)}


def calibration_ms(text: str) -> float:
    """A wrk2 calibration time: :func:`time_ms`, plus the early spellings ``'9747 usec'`` and
    ``'21 msec'`` (a space before the unit)."""
    fast = _fast(text, _FAST_TIME_MS)
    return fast if fast is not None else to_float(_split(text, _EARLY_WRK2_TO_MS, "a time"))


def duration_s(text: str) -> float:
    """``'20.00s'`` -> 20.0, ``'3.00m'`` -> 180.0; suffixes us, ms, s, m, h."""
    fast = _fast(text, _FAST_DURATION_S)
    if fast is not None:
        return fast
    value = _split(text, _TIME_TO_MS, "a duration")
    return to_float(None if value is None else value / 1000)


def count(text: str) -> float:
    """``'19.63k'`` -> 19630.0, ``'158.13'`` -> 158.13; metric suffixes k, M, G, T (base 1000)."""
    fast = _fast(text, _FAST_METRIC)
    return fast if fast is not None else to_float(_split(text, _METRIC, "a count"))


def bytes_(text: str) -> float:
    """``'480.36MB'`` -> 480.36 * 1024**2; suffixes B, KB, MB, GB, TB (base 1024, as wrk)."""
    fast = _fast(text, _FAST_BINARY)
    return fast if fast is not None else to_float(_split(text, _BINARY, "a byte count"))


def percent(text: str) -> float:
    """``'68.33%'`` -> 68.33, ``'-nan%'`` -> nan."""
    s = text.strip(_SPACES)
    if not s.endswith("%"):
        raise UnitError("a percentage ending in '%'")
    return to_float(_split(s[:-1], {"": Decimal(1)}, "a percentage"))


def number(text: str) -> float:
    """A plain decimal number; ``-nan`` -> nan."""
    fast = _fast(text, _FAST_PLAIN)
    return fast if fast is not None else to_float(_split(text, {"": Decimal(1)}, "a number"))


def parse_duration_arg(text: str) -> float:
    """A wrk/Locust command-line duration (``'10s'``, ``'2m'``, ``'1h30m'``) in seconds."""
    s = text.strip(_SPACES)
    if _PLAIN_NUMBER.match(s):
        return float(s)
    parts = re.findall(r"(\d+(?:\.\d+)?)(ms|us|h|m|s)", s, re.ASCII)
    if not parts or "".join(a + b for a, b in parts) != s:
        raise UnitError(f"a duration such as 10s, 2m or 1h30m, not {text!r}")
    return float(sum(Decimal(v) * _TIME_TO_MS[u] for v, u in parts) / 1000)


_FRACTION = re.compile(r"\s*([-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?)\s*(%?)\s*",
                       re.ASCII)
FRACTION_WORDS = "a percentage such as 5% or a fraction such as 0.05, above 0 and below 100%"


def fraction(value: str | float) -> float:
    """A share in (0, 1) written as a percentage or a fraction: ``'5%'`` and ``'0.05'`` (and
    the number 0.05, as a YAML file gives it) -> 0.05.

    The one parser of thresholds, on the command line (``--max-regression 5%``) and in the
    report's parameter files (``max_regression: 0.05`` or ``"5%"``). A bare number of 1 or more
    is refused rather than guessed (``5`` is not 5%)."""
    if isinstance(value, bool):
        raise UnitError(FRACTION_WORDS)
    if isinstance(value, int | float):
        number, pct = float(value), ""
    else:
        m = _FRACTION.fullmatch(str(value))
        if not m:
            raise UnitError(FRACTION_WORDS)
        number, pct = float(m.group(1)), m.group(2)
    share = number / 100 if pct else number
    if not (math.isfinite(share) and 0 < share < 1):
        hint = (f" ({number:g} would be {share:.0%}: write {number:g}% or {number / 100:g})"
                if not pct and 1 <= share < 100 else "")
        raise UnitError(f"{FRACTION_WORDS}{hint}")
    return share
