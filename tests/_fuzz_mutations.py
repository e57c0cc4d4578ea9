"""The mutations of the ingest fuzzer (tests/_fuzz.py): each takes a random generator and the
bytes of a real tool output and returns them damaged in one way.

- any file: truncation at a line or a byte, line deletion, duplication and swaps, byte flips,
  numbers replaced by huge/negative/NaN/inf/empty values, a number scaled (x10, x1000, /1000,
  negated: a value that contradicts the others), unit swaps, CRLF/CR line ends, a BOM,
  binary garbage, NUL bytes, lines up to 1 MB long; encodings (UTF-16 with and without a BOM,
  UTF-16-BE with a BOM, UTF-32, latin-1 with a non-ASCII character in it); non-ASCII digits
  (Arabic-Indic, Devanagari, fullwidth, mathematical) and spaces in place of ASCII ones;
- CSV files (Locust): a column dropped, renamed (to a duplicate, a percentile outside 0-100%,
  an empty or near-miss name), two columns swapped (header and rows: a reader by header name
  must give the same result) or two header cells swapped (names no longer match the values);
- JSON (Locust ``--json``): an object's key deleted or renamed, a value retyped (string, float,
  null, list, object, bool, negative, 2**64, NaN, inf).
"""

from __future__ import annotations

import csv
import io
import json
import math
import random
import re

_NUMBER = re.compile(rb"\d+(?:\.\d+)?")
_UNITS = [b"us", b"ms", b"s", b"m", b"h", b"k", b"M", b"KB", b"MB", b"GB", b"B", b"%", b"xs",
          b""]
_REPLACEMENTS = [b"9" * 400, b"1e308", b"1e999", b"18446744073709551616", b"-1", b"-0.5",
                 b"nan", b"-nan", b"NaN", b"inf", b"-inf", b"Infinity", b"", b"0", b"0.000",
                 b"-nanus", b"N/A", b"1" * 25, b"3.", b".5", b"1e-400"]
#: the zero of a few Unicode digit sets (each digit is zero + its value)
_DIGIT_ZEROS = (0x0660, 0x06F0, 0x0966, 0x09E6, 0xFF10, 0x1D7CE, 0x1D7F6)
_SPACES = ("\u00a0", "\u2003", "\u3000", "\u0085", "\x1c", "\u2028")


# -- any file ---------------------------------------------------------------------------------
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


def scale_number(rng: random.Random, data: bytes) -> bytes:
    """One number scaled (x10, x1000, /1000, negated): a value that contradicts its neighbours
    (a percentile above the max or below a lower one, min above max, failures above
    requests) rather than one that no longer parses."""
    found = list(re.finditer(rb"(?<![\d.])\d+(?:\.\d+)?(?![\d.])", data))
    if not found:
        return data
    m = rng.choice(found)
    if len(m.group()) > 30:  # a huge number (an earlier mutation): left as it is
        return data
    value = float(m.group())
    new = rng.choice([value * 10, value * 1000, value / 1000, -value, value + 1])
    text = (f"{new:.2f}" if b"." in m.group() else str(round(new))).encode()
    return data[:m.start()] + text + data[m.end():]


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


def utf16_be_bom(rng: random.Random, data: bytes) -> bytes:
    return b"\xfe\xff" + data.decode("utf-8", "replace").encode("utf-16-be")


def utf32(rng: random.Random, data: bytes) -> bytes:
    return data.decode("utf-8", "replace").encode(rng.choice(["utf-32", "utf-32-be"]))


def latin1(rng: random.Random, data: bytes) -> bytes:
    """The text in latin-1, with a non-ASCII character (which UTF-8 cannot read) put in."""
    text = data.decode("utf-8", "replace")
    at = rng.randrange(len(text) + 1)
    text = text[:at] + rng.choice(["\u00b5", "\u00e9", "\u00a0", "\u00b0"]) + text[at:]
    return text.encode("latin-1", "replace")


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
    """A line made 10 kB to 1 MB longer (digits, spaces, letters, numbers, CSV cells)."""
    lines = _lines(data)
    i = rng.randrange(len(lines))
    filler = rng.choice([b"9", b" ", b"x", b"1.0 ", b"a,"])
    lines[i] = lines[i] + filler * (rng.choice([10_000, 200_000, 1_000_000]) // len(filler))
    return b"\n".join(lines)


def unicode_digit(rng: random.Random, data: bytes) -> bytes:
    """One to three ASCII digits replaced by the same digit of another script (UTF-8)."""
    text = data.decode("utf-8", "replace")
    at = [m.start() for m in re.finditer(r"[0-9]", text)]
    if not at:
        return data
    chars = list(text)
    for i in rng.sample(at, min(len(at), rng.choice([1, 1, 3]))):
        chars[i] = chr(rng.choice(_DIGIT_ZEROS) + int(chars[i]))
    return "".join(chars).encode("utf-8")


def unicode_space(rng: random.Random, data: bytes) -> bytes:
    """One ASCII space replaced by a Unicode space or separator (UTF-8)."""
    text = data.decode("utf-8", "replace")
    at = [m.start() for m in re.finditer(" ", text)]
    if not at:
        return data
    i = rng.choice(at)
    return (text[:i] + rng.choice(_SPACES) + text[i + 1:]).encode("utf-8")


GENERIC = (truncate_line, truncate_byte, delete_line, duplicate_line, swap_lines, flip_bytes,
           replace_number, replace_number, scale_number, swap_unit, line_ends, utf16,
           utf16_be_bom, utf32, latin1, bom, binary, nul, long_line, unicode_digit,
           unicode_digit, unicode_space)


# -- CSV --------------------------------------------------------------------------------------
def _csv_rows(data: bytes) -> tuple[list[list[str]], str] | None:
    text = data.decode("utf-8", "replace")
    try:
        rows = list(csv.reader(io.StringIO(text, newline="")))
    except csv.Error:
        return None
    return (rows, "\r\n" if "\r\n" in text else "\n") if rows and rows[0] else None


def _csv_bytes(rows: list[list[str]], end: str) -> bytes:
    out = io.StringIO(newline="")
    csv.writer(out, lineterminator=end).writerows(rows)
    return out.getvalue().encode("utf-8")


def drop_column(rng: random.Random, data: bytes) -> bytes:
    parsed = _csv_rows(data)
    if parsed is None:
        return data
    rows, end = parsed
    j = rng.randrange(len(rows[0]))
    return _csv_bytes([r[:j] + r[j + 1:] for r in rows], end)


def rename_column(rng: random.Random, data: bytes) -> bytes:
    parsed = _csv_rows(data)
    if parsed is None:
        return data
    rows, end = parsed
    header = rows[0]
    j = rng.randrange(len(header))
    header[j] = rng.choice(["", " ", header[j] + " x", header[j].lower(), header[j].upper(),
                            "900%", "50.0%", "100.5%", "-5%", "1e3%", "\u0665\u0660%",
                            rng.choice(header), "Request Count", "Name", "Type"])
    return _csv_bytes(rows, end)


def swap_columns(rng: random.Random, data: bytes) -> bytes:
    """Two whole columns swapped: a reader by header name must give the same result. The file
    keeps its style (Locust up to 1.0 quoted its fields and wrote no final newline)."""
    parsed = _csv_rows(data)
    if parsed is None or len(parsed[0][0]) < 2 or b"\r\r\n" in data:
        return data  # "\r\r\n" (Windows text mode): the csv module sees an empty row each
    rows, end = parsed
    i, j = rng.sample(range(len(rows[0])), 2)
    for r in rows:
        if len(r) > max(i, j):
            r[i], r[j] = r[j], r[i]
    if not data.startswith(b'"'):
        return _csv_bytes(rows, end)
    out = io.StringIO(newline="")
    csv.writer(out, lineterminator=end, quoting=csv.QUOTE_ALL).writerows(rows)
    text = out.getvalue().encode("utf-8")
    return text if data.endswith(b"\n") else text[:-len(end)]


def swap_header_cells(rng: random.Random, data: bytes) -> bytes:
    parsed = _csv_rows(data)
    if parsed is None or len(parsed[0][0]) < 2:
        return data
    rows, end = parsed
    i, j = rng.sample(range(len(rows[0])), 2)
    rows[0][i], rows[0][j] = rows[0][j], rows[0][i]
    return _csv_bytes(rows, end)


CSV = (drop_column, rename_column, swap_columns, swap_header_cells)


# -- JSON -------------------------------------------------------------------------------------
def _documents(data: bytes) -> list | None:
    text = data.decode("utf-8", "replace")
    decoder, docs, pos = json.JSONDecoder(), [], 0
    try:
        while True:
            while pos < len(text) and text[pos].isspace():
                pos += 1
            if pos >= len(text):
                return docs
            doc, pos = decoder.raw_decode(text, pos)
            docs.append(doc)
    except ValueError:
        return None


def _objects(value, out: list) -> list:
    if isinstance(value, dict):
        out.append(value)
        for v in value.values():
            _objects(v, out)
    elif isinstance(value, list):
        for v in value:
            _objects(v, out)
    return out


def _with_object(rng: random.Random, data: bytes, change) -> bytes:
    docs = _documents(data)
    objects = _objects(docs, []) if docs else []
    objects = [o for o in objects if o]
    if not objects:
        return data
    change(rng, rng.choice(objects))
    return "\n".join(json.dumps(d, indent=4) for d in docs).encode("utf-8") + b"\n"


def _retyped(rng: random.Random, value):
    options = [str(value), None, [], {}, True, -1, 2**64, 1e308, math.nan, math.inf, "", 0,
               [value], {"x": value}]
    if isinstance(value, int | float) and not isinstance(value, bool):
        options += [float(value), -value, value * 10**6]
    return rng.choice(options)


def delete_key(rng: random.Random, data: bytes) -> bytes:
    def change(rng, obj):
        del obj[rng.choice(list(obj))]
    return _with_object(rng, data, change)


def retype_value(rng: random.Random, data: bytes) -> bytes:
    def change(rng, obj):
        key = rng.choice(list(obj))
        obj[key] = _retyped(rng, obj[key])
    return _with_object(rng, data, change)


def rename_key(rng: random.Random, data: bytes) -> bytes:
    def change(rng, obj):
        key = rng.choice(list(obj))
        new = rng.choice(["", "x", "-1", "1e400", "\u0661\u0662", key.upper(), "NaN", " 12",
                          "1_000", key + " "])
        obj[new] = obj.pop(key)
    return _with_object(rng, data, change)


JSON = (delete_key, retype_value, rename_key)

#: every mutation (the fuzzer picks the CSV and JSON ones only for files of that format)
MUTATIONS = GENERIC + CSV + JSON
_CSV_KINDS = {"locust_stats", "locust_history", "locust_failures", "locust_exceptions"}


def mutations_for(kind: str) -> tuple:
    """The mutations that fit a file of ``kind`` (CSV and JSON ones weighted up)."""
    if kind in _CSV_KINDS:
        return GENERIC + CSV * 3
    if kind == "locust_json":
        return GENERIC + JSON * 4
    return GENERIC


def mutate(rng: random.Random, data: bytes, kind: str | None = None) -> tuple[bytes, str]:
    """``data`` after one to three mutations fit for ``kind``, and their names."""
    ops = mutations_for(kind) if kind else GENERIC
    names = []
    for _ in range(rng.choice([1, 1, 1, 2, 3])):
        op = rng.choice(ops)
        data = op(rng, data)
        names.append(op.__name__)
    return data, "+".join(names)
