"""The published nginx-tuning write-ups (``data/seeds/``) as tidy frames, and what they support.

Each folder under ``data/seeds/`` transcribes one published write-up (``data/seeds/sources.csv``
names them):

- ``raw/<run>/stdout.txt`` + ``meta.json``: a tool output the write-up printed, byte for byte,
  with what the write-up says about it (tool, argv, configuration, ``source`` lines);
- ``tables/*.csv``: a published table, after one ``#`` line ``file | lines A-B | section | ...``;
- ``charts.csv``: what the text says about each chart (words, never values read off a picture);
- ``claims.csv``: one row per claim about a setting or a comparison.

:func:`assess` derives the first-pass verdict of every claim from these files alone: runs per
configuration, runs in which every response failed, closed-loop latency, confounding.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
from pathlib import Path
from typing import Any

import pandas as pd

from perfkit.frames import runs_frame
from perfkit.ingest import scan
from perfkit.model import every_response_failed

_KEEP_TEXT: dict[str, Any] = {"dtype": str, "keep_default_na": False}


@dataclasses.dataclass(frozen=True)
class SeedTable:
    """One published table: the frame and where it was printed."""

    seed: str
    name: str
    frame: pd.DataFrame
    source_file: str
    first_line: int
    last_line: int
    section: str
    note: str


def seeds_root(root: str | os.PathLike | None = None) -> Path:
    """``root`` if given, else ``<data>/seeds`` (``$PERFKIT_DATA`` or the repository ``data/``)."""
    if root is not None:
        return Path(root)
    from perfkit.paths import data_root  # paths only; keeps the import cheap

    return data_root() / "seeds"


def seed_names(root: str | os.PathLike | None = None) -> list[str]:
    """The transcribed write-ups: folder names under :func:`seeds_root`."""
    base = seeds_root(root)
    return sorted(p.name for p in base.iterdir() if p.is_dir() and not p.name.startswith("."))


def _concat(root: str | os.PathLike | None, filename: str) -> pd.DataFrame:
    frames = []
    for seed in seed_names(root):
        path = seeds_root(root) / seed / filename
        if path.is_file():
            frames.append(pd.read_csv(path, **_KEEP_TEXT).assign(seed=seed))
    frame = pd.concat(frames, ignore_index=True)
    return frame[["seed"] + [c for c in frame.columns if c != "seed"]]


def claims(root: str | os.PathLike | None = None) -> pd.DataFrame:
    """Every ``claims.csv``, one row per claim, text as transcribed (empty is ``""``)."""
    return _concat(root, "claims.csv").sort_values("claim_id", ignore_index=True)


def charts(root: str | os.PathLike | None = None) -> pd.DataFrame:
    """Every ``charts.csv``: the words each write-up prints about its charts."""
    return _concat(root, "charts.csv")


_HEAD = re.compile(r"^# (?P<file>\S+) \| lines (?P<a>\d+)-(?P<b>\d+) \| (?P<section>[^|]+?)"
                   r"(?: \| (?P<note>.*))?$")


def read_table(path: str | os.PathLike) -> SeedTable:
    """One ``tables/*.csv``; its first line must name the seed file, lines and section."""
    path = Path(path)
    with path.open(encoding="utf-8") as fh:
        head = fh.readline().rstrip("\n")
    m = _HEAD.match(head)
    if m is None:
        raise ValueError(f"{path}:1: expected '# FILE | lines A-B | SECTION | ...', found {head!r}")
    frame = pd.read_csv(path, skiprows=1)
    return SeedTable(seed=path.parent.parent.name, name=path.stem, frame=frame,
                     source_file=m["file"], first_line=int(m["a"]), last_line=int(m["b"]),
                     section=m["section"], note=m["note"] or "")


def tables(root: str | os.PathLike | None = None) -> dict[str, SeedTable]:
    """Every published table, keyed ``"<seed>/<table>"``."""
    out = {}
    for seed in seed_names(root):
        for path in sorted((seeds_root(root) / seed / "tables").glob("*.csv")):
            table = read_table(path)
            out[f"{seed}/{table.name}"] = table
    return out


def raw_dirs(root: str | os.PathLike | None = None) -> list[Path]:
    """Every ``raw/<run>`` folder (one printed tool output and its ``meta.json``)."""
    base = seeds_root(root)
    return sorted(p.parent for p in base.glob("*/raw/*/meta.json"))


def _raw_row(directory: Path) -> pd.DataFrame:
    meta = json.loads((directory / "meta.json").read_text(encoding="utf-8"))
    src = meta.get("source") or {}
    lines = src.get("lines") or [None, None]
    result = scan(directory)
    row = pd.DataFrame([{
        "seed": directory.parent.parent.name, "run_dir": f"raw/{directory.name}",
        "configuration": meta.get("profile"), "source_file": src.get("file"),
        "first_line": lines[0], "last_line": lines[1], "meta_note": meta.get("note"),
        "parse_error": "; ".join(str(e) for e in result.errors) or None}])
    if not result.runs:
        return row.assign(tool=meta.get("tool"), tool_version=meta.get("version"))
    record = runs_frame(result.runs).rename(columns={"source": "output_file"})
    record["every_response_failed"] = [every_response_failed(r) for r in result.runs]
    return pd.concat([row, record.drop(columns=["profile"], errors="ignore")], axis=1)


def raw_runs(root: str | os.PathLike | None = None) -> pd.DataFrame:
    """One row per printed tool output: perfkit's run record merged with its ``meta.json``.

    ``configuration`` is the meta.json ``profile``; ``every_response_failed`` is the model's
    rule (:func:`perfkit.model.every_response_failed`). A printed output perfkit cannot parse
    (e.g. truncated by the author) keeps its row, with the loader's message in ``parse_error``
    and the record columns missing.
    """
    return pd.concat([_raw_row(d) for d in raw_dirs(root)], ignore_index=True)


def _items(cell: str) -> list[str]:
    return [s.strip() for s in cell.split(";") if s.strip()]


def _configurations(cell: str) -> list[str]:
    """The label of each configuration: ``"a (detail) | b"`` -> ``["a", "b"]``."""
    return [c.strip().split(" ")[0] for c in cell.split("|") if c.strip()]


def published_values(root: str | os.PathLike | None = None) -> pd.DataFrame:
    """Tidy: one row per claim and configuration with the value the write-up gives for it
    (``claim_id, configuration, published_value``): a claim's ``published_values`` cell holds
    several configurations (``suite-1-default: ...; suite-3-somaxconn: ...``); a part naming
    no configuration of the claim (``'almost 19x'``, a graph-only remark) is a row with an
    empty configuration: the claim as a whole."""
    rows = []
    for _, c in claims(root).iterrows():
        configs = _configurations(c["configurations"])
        current = None
        for part in _items(str(c["published_values"] or "")):
            label, sep, value = part.partition(":")
            if sep and label.strip() in configs:
                current = {"claim_id": c["claim_id"], "configuration": label.strip(),
                           "published_value": value.strip()}
                rows.append(current)
            elif current is not None and not sep and "'" not in part[:1]:
                current["published_value"] += f"; {part}"  # a value's own clause
            else:
                rows.append({"claim_id": c["claim_id"], "configuration": "",
                             "published_value": part})
    return pd.DataFrame(rows, columns=["claim_id", "configuration", "published_value"])


def _stated_n(text: str) -> int | None:
    m = re.match(r"\s*(\d+)\b", text)
    return int(m.group(1)) if m else None


def _failed(runs: pd.DataFrame) -> list[str]:
    if "every_response_failed" not in runs:
        return []
    return list(runs.loc[runs["every_response_failed"].fillna(False).astype(bool), "run_dir"])


def _assess_claim(claim: pd.Series, runs: pd.DataFrame) -> dict:
    evidence = runs[(runs["seed"] == claim["seed"])
                    & runs["run_dir"].isin(_items(claim["evidence_raw"]))]
    measured = not claim["metric"].startswith("none")
    n = (int(evidence.groupby("configuration").size().min()) if len(evidence)
         else _stated_n(claim["runs_per_configuration"]))
    failed = _failed(evidence)
    closed = claim["loop"].startswith("closed")
    verdict = []
    if not measured:
        verdict.append("a recommendation without a measurement: nothing to test")
    elif n is None:
        verdict.append("runs per configuration not stated: no test possible")
    elif n < 2:
        verdict.append(f"n = {n} per configuration: no test possible")
    if measured and evidence.empty:
        sources = " and ".join(sorted({t.split("/")[0].split("#")[0].replace(".csv", "")
                                       for t in _items(claim["evidence_tables"])}))
        verdict.append(f"no raw output published: only {sources or 'words'}")
    if failed:
        verdict.append(f"the published numbers of {', '.join(failed)} come from runs where "
                       "every response failed")
    if measured and closed and "latency" in claim["metric"]:
        verdict.append("closed-loop latency (tail understated)")
    if claim["also_changed"].startswith("possibly"):
        what = claim["also_changed"].removeprefix("possibly").lstrip(": ")
        verdict.append(f"possibly confounded: {what}")
    elif claim["also_changed"]:
        verdict.append("confounded: more than the named setting differs between the configurations")
    ratio = float("nan")
    configs = _configurations(claim["configurations"])
    if claim["metric"].startswith("throughput_rps") and len(configs) == 2 and len(evidence):
        by = evidence.groupby("configuration")["throughput_rps"].mean()
        if set(configs) <= set(by.index):
            ratio = float(by[configs[1]] / by[configs[0]])
    return {"claim_id": claim["claim_id"], "seed": claim["seed"], "setting": claim["setting"],
            "configurations": " vs ".join(configs), "n_per_configuration": n,
            "raw_runs": len(evidence), "runs_every_response_failed": failed,
            "loop": "closed" if closed else ("open" if claim["loop"] else ""),
            "throughput_ratio": ratio, "assessment": "; ".join(verdict)}


def assess(root: str | os.PathLike | None = None) -> pd.DataFrame:
    """First-pass verdict per claim, computed from the transcribed files only.

    ``n_per_configuration`` counts the printed outputs per configuration among the claim's raw
    evidence (else the number the write-up states, else missing); ``throughput_ratio`` is the
    second configuration's Requests/sec over the first's (two configurations with raw output);
    a run "failed every response" by the model's one rule
    (:func:`perfkit.model.every_response_failed`: the rule the comparisons' run statuses use).
    """
    runs = raw_runs(root)
    rows = [_assess_claim(c, runs) for _, c in claims(root).iterrows()]
    frame = pd.DataFrame(rows)
    frame["n_per_configuration"] = frame["n_per_configuration"].astype("Int64")
    return frame


def assessment_markdown(root: str | os.PathLike | None = None) -> str:
    """The assessment as the Markdown table kept in ``data/seeds/README.md``."""
    lines = ["| claim | setting | configurations | n per config. | ratio | assessment |",
             "|---|---|---|---|---|---|"]
    for _, r in assess(root).iterrows():
        n = "not stated" if pd.isna(r["n_per_configuration"]) else str(r["n_per_configuration"])
        ratio = "" if pd.isna(r["throughput_ratio"]) else f"{r['throughput_ratio']:.2f}"
        lines.append(f"| {r['claim_id']} | {r['setting']} | {r['configurations']} | {n} | "
                     f"{ratio} | {r['assessment']} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":  # pragma: no cover - prints the table for the README
    print(assessment_markdown(), end="")
