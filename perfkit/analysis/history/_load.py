"""Reading a performance history: a history store or a folder of CI jobs with ``labels.csv``
(see :mod:`perfkit.analysis.history._history`), as an
:class:`~perfkit.analysis.core._experiment.Experiment` with the label columns, and the runs each
label holds.
"""

from __future__ import annotations

import csv
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from perfkit.analysis.core import Experiment, RunSet, load_experiment
from perfkit.errors import DataError, PerfkitError
from perfkit.frames import runs_frame
from perfkit.store import history as store
from perfkit.warning import Code, Warn

LABELS_CSV = "labels.csv"
LABEL_COLUMNS = ("label", "time_utc", "label_index", "labels_ago")


def is_history(path: str | Path) -> bool:
    """True for a history store, or a folder of jobs with a ``labels.csv``."""
    p = Path(path)
    return store.is_store(p) or (p / LABELS_CSV).is_file()


def load_history(path: str | Path, name: str | None = None) -> Experiment:
    """Every run of the history at ``path``, with the label columns (see
    :mod:`perfkit.analysis.history._history`).

    Runs that cannot be read are kept as ``errors`` (jobs folder), as ``load_experiment`` does.
    """
    p = Path(path)
    notes: list[Warn]
    if store.is_store(p):
        files, notes = store.label_files(p)
        notes = [*notes, *(Warn(Code.LABEL_ADDED_WITHOUT, label=f.label, errors=f.left_out)
                           for f in files if f.left_out)]
        parts = [(f.label, f.time_utc, store.read_label(f)) for f in files]
        designs: Sequence[Mapping[str, Any]] = [f.design for f in files]
        errors: list[PerfkitError] = []
    elif (p / LABELS_CSV).is_file():
        parts, errors, designs = _read_jobs(p)
        notes = []
    else:
        raise DataError(f"no history at {p}: expected a history store ({store.MARKER}) or a "
                        f"folder of jobs with {LABELS_CSV}")
    parts = [x for x in parts if x[2]]
    if not parts:
        raise DataError(f"the history at {p} holds no runs")
    order = sorted(range(len(parts)), key=lambda i: (parts[i][1], i))
    runs: list = []
    columns: dict[str, list] = {c: [] for c in LABEL_COLUMNS}
    for rank, i in enumerate(order):
        label, time_utc, label_runs = parts[i]
        runs.extend(label_runs)
        for col, value in zip(LABEL_COLUMNS, (label, time_utc, rank, len(parts) - 1 - rank),
                              strict=True):
            columns[col].extend([value] * len(label_runs))
    frame = runs_frame(runs)
    for col in LABEL_COLUMNS:
        frame[col] = columns[col]
    design = _common_design(designs)
    design["history"] = {"labels": [parts[i][0] for i in order], "warnings": notes}
    return Experiment(name or p.name, p, tuple(runs), frame, design, tuple(errors))


def _common_design(designs: Sequence[Mapping[str, Any]]) -> dict:
    """The design entries every job shares (repetitions, warm-up, ...), for the Methods."""
    if not designs:
        return {}
    keys = set.intersection(*(set(d) for d in designs))
    return {k: designs[0][k] for k in sorted(keys)
            if k not in ("name", "description", "history")
            and all(d[k] == designs[0][k] for d in designs)}


def _read_jobs(folder: Path) -> tuple[list[tuple[str, str, list]], list[PerfkitError],
                                      list[dict]]:
    path = folder / LABELS_CSV
    with path.open(newline="", encoding="utf-8") as fh:
        reader = csv.DictReader(fh)
        missing = [c for c in ("label", "time_utc", "job_dir") if c not in (reader.fieldnames
                                                                            or [])]
        if missing:
            raise DataError(f"{path}:1: expected columns label, time_utc, job_dir, found "
                            f"{', '.join(reader.fieldnames or []) or 'none'}")
        rows = list(reader)
    parts: list[tuple[str, str, list]] = []
    errors: list[PerfkitError] = []
    designs: list[dict] = []
    seen: set[str] = set()
    for line, row in enumerate(rows, start=2):
        label, job = (row.get("label") or "").strip(), (row.get("job_dir") or "").strip()
        if not label or label in seen:
            raise DataError(f"{path}:{line}: expected a new label, found {label!r}")
        seen.add(label)
        job_path = folder / job
        if not job or not job_path.is_dir():
            raise DataError(f"{path}:{line}: expected a job folder, found {job!r}")
        try:
            when = store.utc_text(row.get("time_utc"), "time_utc")
        except PerfkitError:
            raise DataError(f"{path}:{line}: expected an ISO 8601 time_utc, found "
                            f"{row.get('time_utc')!r}") from None
        exp = load_experiment(job_path)
        errors.extend(exp.errors)
        designs.append(dict(exp.design or {}))
        parts.append((label, when, list(exp.runs)))
    return parts, errors, designs


def job_dirs(folder: str | Path) -> list[Path]:
    """The job folders a folder of jobs names in its ``labels.csv`` (those that exist), in its
    rows' order; none for any other folder or a ``labels.csv`` that cannot be read (then
    :func:`load_history` says why)."""
    path = Path(folder) / LABELS_CSV
    try:
        with path.open(newline="", encoding="utf-8") as fh:
            jobs = [(row.get("job_dir") or "").strip() for row in csv.DictReader(fh)]
    except (OSError, UnicodeDecodeError, csv.Error):
        return []
    return [Path(folder) / job for job in jobs if job and (Path(folder) / job).is_dir()]


def labels_of(history: Experiment) -> list[str]:
    """The labels of a history in series order."""
    return list(history.design["history"]["labels"])


def history_rows(history: Experiment, where: dict | None = None) -> RunSet:
    """The analysis rows (one per run; Locust: its Aggregated row) matching ``where``."""
    return history.rows(where)


def labels_frame(history: Experiment, where: dict | None = None) -> pd.DataFrame:
    """One row per label, in series order: its time, the runs it holds (its analysis rows:
    one per run, a Locust run by its Aggregated row, as every series point counts them) and
    the tools that ran them."""
    f = history_rows(history, where).frame
    out = (f.groupby("label", sort=False)
           .agg(time_utc=("time_utc", "first"), runs=("label", "size"),
                tool=("tool", lambda s: ", ".join(sorted(set(map(str, s))))))
           .reindex([x for x in labels_of(history) if x in set(f["label"])]))
    return out.reset_index()
