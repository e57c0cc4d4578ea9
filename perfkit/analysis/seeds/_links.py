"""``data/seeds/replications.csv``: which runs of our testbed bear on each published claim.

One row per linked claim (``#`` lines are comments). ``kind``:

- ``repeat``: a ``data/seeds-*`` experiment re-does the claim; ``base``/``new`` select its two
  arms (``column=value,...``, the CLI's selection syntax after ``PATH::``; the arms differ in
  one column and hold at most one other), ``at`` pins the load level of the claim (one
  column), ``direction`` is what the claim says of NEW against BASE in ``metric``
  (``better``, ``worse`` or ``same``);
- ``spread``: nothing here re-does the claim, but the runs ``base`` + ``at`` select measure a
  comparable metric on a comparable set-up: their run-to-run spread sizes a repeat;
- ``published``: nothing on our testbed is comparable (``experiment`` empty); the row only
  names the published configurations, and ``note`` says what a comparable experiment would
  need. No spread is borrowed from an unrelated experiment.

``published_base``/``published_new`` name the claim's configurations whose printed outputs
give the **published ratio** new/base of ``metric``; ``published_ratio`` is filled only where
no printed output gives it (its source in ``note``). ``quote_base`` names the configuration
the write-up's own quoted figure is relative to when that is not ``published_base`` (the
write-up of 004 quotes every step against its first run). ``published_change`` says what the
write-up changed between its two configurations, in the setting's terms, and ``contrast``
whether the repeat's arms make that change (``same``) or another change of the same setting
(``differs``: 004-4's write-up turned a log that was off into a buffered one, the repeat a
plain log into a buffered one). :func:`published_values` reads
those configurations' printed values from the claim's raw outputs, :func:`published_ratio`
divides them.
"""

from __future__ import annotations

import csv
import dataclasses
import math
import os
from pathlib import Path
from typing import Any

import pandas as pd

from perfkit.analysis.core import Selection
from perfkit.analysis.seeds import _published as seedfiles
from perfkit.errors import DataError, UsageError
from perfkit.vocabulary import Verdict

KINDS = ("repeat", "spread", "published")
#: a claim's direction: the comparison verdict it claims, or no change of practical size
SAME = "same"
DIRECTIONS = (Verdict.BETTER, Verdict.WORSE, SAME)
COLUMNS = ("claim_id", "kind", "experiment", "base", "new", "at", "metric", "direction",
           "published_base", "published_new", "published_ratio", "quote_base", "note",
           "published_change", "contrast")
#: whether a repeat's arms make the write-up's change (``contrast``; empty: not stated)
CONTRASTS = ("same", "differs", "")


@dataclasses.dataclass(frozen=True)
class Link:
    """One row of ``replications.csv`` (see the module docstring); ``line`` is its line."""

    claim_id: str
    kind: str
    experiment: str
    base: str
    new: str
    at: str
    metric: str
    direction: str
    published_base: str
    published_new: str
    published_ratio: float
    quote_base: str
    note: str
    line: int
    #: what the write-up changed, in the setting's terms, and whether the repeat makes the
    #: same change (``same``), another change of the setting (``differs``) or not stated
    published_change: str = ""
    contrast: str = ""

    def where(self, which: str) -> dict[str, list[str]]:
        """The column values ``base``, ``new`` or ``at`` selects (empty when not given)."""
        text = getattr(self, which)
        return Selection.parse(f"x::{text}").where if text else {}

    @property
    def factor(self) -> str:
        """The column in which a repeat's two arms differ (empty for other kinds)."""
        base, new = self.where("base"), self.where("new")
        return next((k for k in base if base[k] != new.get(k)), "") if self.new else ""

    def columns(self) -> dict[str, Any]:
        """The selections one variable per column: ``factor``, ``base_level``,
        ``new_level``, ``held_column``, ``held_value``, ``at_column``, ``at_value`` (a number
        when it reads as one), empty where the link has none."""
        base, new, at = self.where("base"), self.where("new"), self.where("at")
        factor = self.factor
        held = [k for k in base if k != factor]
        (at_column, at_values), = at.items() if at else (("", [""]),)
        return {"factor": factor,
                "base_level": "|".join(base.get(factor, [])) if factor else "",
                "new_level": "|".join(new.get(factor, [])) if factor else "",
                "held_column": held[0] if held else "",
                "held_value": "|".join(base[held[0]]) if held else "",
                "at_column": at_column, "at_value": _number("|".join(at_values))}


def _number(text: str) -> Any:
    try:
        return float(text) if text else math.nan
    except ValueError:
        return text


def links_path(root: str | os.PathLike | None = None) -> Path:
    return seedfiles.seeds_root(root) / "replications.csv"


def read_links(path: str | os.PathLike) -> list[Link]:
    """The rows of a replications file (``#`` lines are comments); a bad row raises
    :class:`DataError` as ``path:line: expected ..., found ...``."""
    path = Path(path)
    lines = path.read_text(encoding="utf-8").splitlines()
    numbered = [(i, ln) for i, ln in enumerate(lines, start=1) if not ln.startswith("#")]
    reader = csv.reader([ln for _, ln in numbered])
    header = next(reader, None)
    if header is None or tuple(header) != COLUMNS:
        where = numbered[0][0] if numbered else 1
        raise DataError(f"{path}:{where}: expected header {','.join(COLUMNS)}, found "
                        f"{','.join(header or [])!r}")
    out = []
    for (lineno, _), cells in zip(numbered[1:], reader, strict=True):
        out.append(_link(path, lineno, cells))
    return out


def _link(path: Path, line: int, cells: list[str]) -> Link:
    def bad(expected: str, found: Any) -> DataError:
        return DataError(f"{path}:{line}: expected {expected}, found {found!r}")

    if len(cells) != len(COLUMNS):
        raise bad(f"{len(COLUMNS)} fields", len(cells))
    row = dict(zip(COLUMNS, cells, strict=True))
    if row["kind"] not in KINDS:
        raise bad(f"kind {', '.join(KINDS[:-1])} or {KINDS[-1]}", row["kind"])
    if row["direction"] not in DIRECTIONS:
        raise bad(f"direction {', '.join(DIRECTIONS)}", row["direction"])
    if row["contrast"] not in CONTRASTS:
        raise bad("contrast same, differs or nothing", row["contrast"])
    if row["kind"] == "repeat" and not row["new"]:
        raise bad("a NEW selection for a repeat", row["new"])
    if (row["kind"] == "published") != (not row["experiment"]):
        raise bad("an experiment for a repeat or a spread, and none for a published-only "
                  "link", row["experiment"])
    try:
        ratio = float(row["published_ratio"]) if row["published_ratio"] else math.nan
    except ValueError:
        raise bad("a number or nothing in published_ratio", row["published_ratio"]) from None
    fields: dict[str, Any] = {**row, "published_ratio": ratio, "line": line}
    link = Link(**fields)
    try:
        sides = [link.where(w) for w in ("base", "new", "at")]
    except UsageError as e:
        raise bad("column=value selections in base, new and at", str(e)) from None
    differ = [k for k in sides[0] if sides[0][k] != sides[1].get(k)] if link.new else []
    if link.new and (len(differ) != 1 or set(sides[0]) != set(sides[1])):
        raise bad("arms that select the same columns and differ in one", differ)
    if len(sides[0]) - len(differ) > 1 or len(sides[2]) > 1:
        raise bad("at most one held column and one load column",
                  f"base {link.base!r}, at {link.at!r}")
    return link


def printed_values(link: Link, raw: pd.DataFrame, claim: pd.Series,
                     base: str | None = None) -> tuple[float, ...]:
    """The printed ``link.metric`` of the claim's raw outputs of ``published_base`` (or
    ``base``) and ``published_new`` (means when a configuration printed several); empty when
    not printed."""
    base = base or link.published_base
    if not base or not link.published_new:
        return ()
    evidence = raw[(raw["seed"] == claim["seed"])
                   & raw["run_dir"].isin(seedfiles._items(claim["evidence_raw"]))]
    if base != link.published_base:  # a quote against an earlier step of the same write-up
        evidence = raw[raw["seed"] == claim["seed"]]
    if link.metric not in evidence:
        return ()
    by = pd.to_numeric(evidence[link.metric], errors="coerce").groupby(
        evidence["configuration"]).mean()
    if not {base, link.published_new} <= set(by.index):
        raise DataError(f"replications.csv:{link.line}: expected configurations of "
                        f"{claim['claim_id']}'s raw outputs ({', '.join(map(str, by.index))}), "
                        f"found {base!r}, {link.published_new!r}")
    return float(by[base]), float(by[link.published_new])


def published_ratio(link: Link, values: tuple[float, ...]) -> float:
    """new/base of the printed values, else the link's ``published_ratio``, else NaN."""
    return values[1] / values[0] if len(values) == 2 else link.published_ratio
