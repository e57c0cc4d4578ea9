"""Write the golden values of every wrk / wrk2 fixture, independently of perfkit.

Run once from the repository root: ``python tests/golden/make_golden_wrk.py``; review the JSON
against the raw files by eye and commit both. This reader shares no code with perfkit: it finds
lines by their fixed text, splits them with ``str.split`` and converts the printed numbers with
:class:`fractions.Fraction` (exact), so a parser bug cannot leak into its own expected values.

Conventions (the contract of issue 2, applied here by hand):

- a number is converted to the field's unit and rounded once to the nearest float;
- wrk's ``0.00us`` Latency row (no samples) and its ``0.00us`` percentiles become null;
- a ``-nan`` Req/Sec row becomes null in all four columns;
- absent ``Socket errors`` / ``Non-2xx`` lines mean 0;
- (issue 10, the wild fixtures) wrk2's empty-histogram Latency row ``-nanus -nanus 0.00us
  0.00%`` is null in all four columns, a spectrum whose footer says ``Total count = 0`` has
  null percentiles and a null mean/stdev (printed ``-nan``), and a calibration mean beyond
  wrk2's 24 h range (``9223372036854776.000ms``: NaN cast to an integer) is null.

The wild fixtures (``fixtures/wild/{wrk,wrk2}/*/stdout.txt``, written by ``perfkit run``) go to
``golden/wild/``; a run that printed nothing (refused to start) has no golden file.
"""

from __future__ import annotations

import json
import sys
from fractions import Fraction
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent / "fixtures"
OUT = Path(__file__).resolve().parent

TIME_MS = {"us": Fraction(1, 1000), "ms": Fraction(1), "s": Fraction(1000),
           "m": Fraction(60_000), "h": Fraction(3_600_000)}
METRIC = {"k": 10**3, "M": 10**6, "G": 10**9}
BINARY = {"B": 1, "KB": 1024, "MB": 1024**2, "GB": 1024**3, "TB": 1024**4}


def split_unit(token: str) -> tuple[str, str]:
    digits = token.rstrip("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
    return digits, token[len(digits):]


MAX_LATENCY_MS = 24 * 3600 * 1000  # wrk2's MAX_LATENCY


def number(token: str) -> float | None:
    return None if "nan" in token else float(Fraction(token))


def ms(token: str) -> float:
    num, unit = split_unit(token)
    return float(Fraction(num) * TIME_MS[unit])


def seconds(token: str) -> float:
    num, unit = split_unit(token)
    return float(Fraction(num) * TIME_MS[unit] / 1000)


def metric(token: str) -> float | None:
    if "nan" in token:
        return None
    num, unit = split_unit(token)
    return float(Fraction(num) * METRIC.get(unit, 1))


def binary(token: str) -> float:
    num, unit = split_unit(token)
    return float(Fraction(num) * BINARY[unit])


def pct(token: str) -> float | None:
    return None if "nan" in token else float(Fraction(token.rstrip("%")))


def hdr_footer(lines: list[str], start: int) -> tuple[dict, int]:
    """The three '#[' footer lines from ``start`` on."""
    i = start
    while not lines[i].startswith("#[Mean"):
        i += 1
    mean = lines[i].replace(",", " ").replace("]", " ").split()
    mx = lines[i + 1].replace(",", " ").replace("]", " ").split()
    bk = lines[i + 2].replace(",", " ").replace("]", " ").split()
    footer = {"mean_ms": number(mean[2]), "stdev_ms": number(mean[5]),
              "max_ms": number(mx[2]), "total_count": int(mx[6]),
              "buckets": int(bk[2]), "sub_buckets": int(bk[5])}
    if footer["total_count"] == 0:  # an empty histogram's "Max = 0.000" is a placeholder
        footer["max_ms"] = None
    return footer, i


def read(path: Path) -> dict:
    lines = path.read_text().split("\n")
    if lines[-1] == "":
        lines.pop()
    head = lines[0].split()
    out: dict = {"url": head[4], "requested_duration_s": seconds(head[1])}
    t = lines[1].split()
    out["threads"], out["connections"] = int(t[0]), int(t[3])
    out["calibration"] = [
        [ms(ln.split()[4].rstrip(",")), ms(ln.split()[8])]
        for ln in lines if ln.strip().startswith("Thread calibration:")]
    for row in out["calibration"]:
        if row[0] > MAX_LATENCY_MS:
            row[0] = None
    lat = next(ln.split() for ln in lines if ln.split()[:1] == ["Latency"]
               and ln.split()[1] != "Distribution")
    no_samples = lat[3] == "0.00us" or "nan" in lat[3]
    out["latency_mean_ms"] = None if no_samples else ms(lat[1])
    out["latency_stdev_ms"] = None if no_samples else ms(lat[2])
    out["latency_max_ms"] = None if no_samples else ms(lat[3])
    out["latency_within_stdev_pct"] = None if no_samples else pct(lat[4])
    rq = next(ln.split() for ln in lines if ln.strip().startswith("Req/Sec"))
    nan = "nan" in rq[1]
    out["req_per_thread"] = [None if nan else metric(x) for x in rq[1:4]] + [
        None if nan else pct(rq[4])]
    out["percentiles_ms"] = {}
    out["uncorrected_percentiles_ms"] = {}
    out["hdr"] = out["hdr_uncorrected"] = None
    for i, ln in enumerate(lines):
        if ln.strip() == "Latency Distribution":  # wrk
            for row in lines[i + 1:i + 5]:
                q, v = row.split()
                out["percentiles_ms"][str(float(q.rstrip("%")))] = (
                    None if no_samples else ms(v))
        if ln.strip().startswith("Latency Distribution (HdrHistogram"):  # wrk2
            key = "uncorrected_" if "Uncorrected" in ln else ""
            footer, _ = hdr_footer(lines, i)
            for row in lines[i + 1:i + 9]:
                q, v = row.split()
                out[key + "percentiles_ms"][str(float(q.rstrip("%")))] = (
                    None if footer["total_count"] == 0 else ms(v))
            out["hdr_uncorrected" if key else "hdr"] = footer
    totals = next(ln.split() for ln in lines if " requests in " in ln)
    out["requests"] = int(totals[0])
    out["duration_s"] = seconds(totals[3].rstrip(","))
    out["bytes_read"] = binary(totals[4])
    sock = [ln.split() for ln in lines if ln.strip().startswith("Socket errors:")]
    out["errors"] = ([int(sock[0][i].rstrip(",")) for i in (3, 5, 7, 9)] if sock
                     else [0, 0, 0, 0])
    non2xx = [ln.split() for ln in lines if ln.strip().startswith("Non-2xx or 3xx")]
    out["non_2xx_3xx"] = int(non2xx[0][-1]) if non2xx else 0
    rps_at = next(i for i, ln in enumerate(lines) if ln.startswith("Requests/sec:"))
    out["throughput_rps"] = float(Fraction(lines[rps_at].split()[1]))
    out["transfer_bytes_per_s"] = binary(lines[rps_at + 1].split()[1])
    out["script_output"] = lines[rps_at + 2:]
    return out


def main() -> int:
    written = 0
    for tool in ("wrk", "wrk2"):
        for stdout in sorted((ROOT / tool).glob("*/*/run.stdout")):
            rel = stdout.parent.relative_to(ROOT)
            golden = {"tool": tool, **read(stdout)}
            target = OUT / rel.parent / f"{rel.name}.json"
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(json.dumps(golden, indent=1, sort_keys=True) + "\n")
            written += 1
        for stdout in sorted((ROOT / "wild" / tool).glob("*/stdout.txt")):
            if not stdout.read_text().strip():
                continue
            golden = {"tool": tool, **read(stdout)}
            target = OUT / "wild" / tool / f"{stdout.parent.name}.json"
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(json.dumps(golden, indent=1, sort_keys=True) + "\n")
            written += 1
    print(f"wrote {written} golden files under {OUT}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
