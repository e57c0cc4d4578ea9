"""Loading an experiment for a notebook, and the labels and text the sections share.

The experiment, its analysis rows and every rule about them come from
:mod:`perfkit.analysis`; this module resolves a notebook's experiment *name* to its folder and
turns configurations into legend labels.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from perfkit import paths
from perfkit.analysis import Experiment
from perfkit.analysis import load_experiment as _load
from perfkit.formatting import LOAD_WORDS, fmt_ci, fmt_num, level_text

__all__ = ["Experiment", "config_labels", "config_text", "fmt_ci", "load_experiment",
           "text_table"]



def load_experiment(name: str, data_root: str | None = None) -> Experiment:
    """Load ``<data_root>/<name>`` (see :func:`perfkit.paths.data_dir`).

    Files that cannot be parsed do not stop the notebook: their errors are kept in ``errors``
    for the data-quality section. An experiment without a single run raises.
    """
    folder = paths.data_dir(name, data_root or None)
    exp = _load(folder, name=name)
    remember_simulations(folder)
    return exp


def remember_simulations(folder: str | os.PathLike) -> None:
    """Under ``perfkit report`` (a kernel of one page: :data:`perfkit.report.order.PAGE_ENV`),
    keep the page's power simulations beside the run store of ``folder``
    (:func:`perfkit.store.runcache.power_dir`), unless an experiment loaded before named
    another (every notebook loads its own experiment first). They are keyed by their inputs
    (:mod:`perfkit.stats._simcache`), so the next build of the report, or a ``perfkit gate``
    on the same runs, simulates none of them again. The page's saved figures are kept beside
    them (:mod:`perfkit.report.figcache`): a figure that draws what it drew in the last build
    is copied, not drawn again, as PDF and PNG. Elsewhere (JupyterLab, nbval, a test process)
    simulations are kept in the process only, as before, and no figure is kept."""
    from perfkit.analysis.compare import remember_simulations_in
    from perfkit.report import figcache
    from perfkit.report.order import PAGE_ENV
    from perfkit.store.runcache import power_dir

    if _REMEMBERING or not os.environ.get(PAGE_ENV):
        return
    _REMEMBERING.append(folder)
    power = power_dir(folder)
    remember_simulations_in(power)
    figcache.keep_in(None if power is None else Path(power).parent / "figures")


#: the folder :func:`remember_simulations` chose in this process (at most one)
_REMEMBERING: list = []


def config_labels(frame: pd.DataFrame, columns: Sequence[str]) -> pd.Series:
    """One legend label per row: the values of ``columns`` joined, ``"tuned, 64"``.

    Legends name the columns (``"profile, connections"``) once, so the labels stay short; no
    column gives ``"all runs"``. Tables keep the columns apart instead.
    """
    columns = [c for c in columns if c in frame]
    if not columns:
        return pd.Series("all runs", index=frame.index)
    return frame[columns].apply(
        lambda row: ", ".join(level_text(row[c]) for c in columns), axis=1).astype(str)


def config_text(columns: Sequence[str], values: Sequence) -> str:
    """A configuration in words, each value with its column: ``"profile default, 16
    connections"`` (what a question names; legends keep the short ``"default, 16"``)."""
    parts = [f"{level_text(v)} {LOAD_WORDS[c]}" if c in LOAD_WORDS else f"{c} {level_text(v)}"
             for c, v in zip(columns, values, strict=True)]
    return ", ".join(parts) or "all runs"


def text_table(frame: pd.DataFrame, digits: int = 3) -> str:
    """A plain-text table of ``frame`` with floats to ``digits`` significant digits (stable text
    for output-checked cells: 30000 prints as ``30000``, missing as ``nan``)."""
    shown = frame.copy()
    for col in shown.columns:
        if pd.api.types.is_float_dtype(shown[col]):
            shown[col] = [("nan" if pd.isna(v) else fmt_num(v, digits)) for v in shown[col]]
    return shown.to_string(index=False)


def methods(experiments: Sequence[Experiment], analyses: Sequence[str] = ()) -> dict:
    """The Methods record of each experiment (:func:`perfkit.report.methods.record`) with the
    ``describe()`` sentences of the analyses this notebook ran on it."""
    from perfkit.analysis.context import backend, provenance
    from perfkit.report.methods import record

    return {exp.name: record(provenance(exp), analyses, backend(exp).text())
            for exp in experiments}


def threats(experiments: Sequence[Experiment],
            analyses: Mapping[str, Sequence[Any]] | None = None) -> list[str]:
    """Threats to validity of the experiments shown, one sentence each, from their manifests;
    ``analyses``: per experiment name, the results of the analyses the page ran on it (the
    threats name those that ignore blocks)."""
    from perfkit.analysis.context import threats as _threats

    seen: dict[str, None] = {}
    for exp in experiments:
        for t in _threats(exp, analyses=(analyses or {}).get(exp.name, ())):
            seen.setdefault(t.text, None)
    return list(seen)


def calibration_threats(calibration: Any) -> list[str]:
    """The threats of a page's A/A experiment (an object with ``experiment`` and ``result``,
    :class:`perfkit.report.sections.aa.Calibration`), naming its analysis; none without one."""
    if calibration is None:
        return []
    exp = calibration.experiment
    return threats([exp], {exp.name: [calibration.result]})


def runs_table(rows) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Per run: every metric (tidy, no lists in cells), and its warnings one per row.

    Each run carries its ``status`` and ``status_reason`` under the run-status rule every
    page uses (:func:`perfkit.analysis.core._runstatus.percentile_statuses` on p99 among its peers:
    the status the data-quality table and the Methods give). The model's raw flag (achieved
    below 0.99 x the target rate, whatever the cause) is kept as ``below_target``: a run below
    its target can be ``short`` (a generator shortfall in doubt), not ``saturated``."""
    from perfkit.analysis.core import peer_columns, percentile_statuses

    frame = rows.frame.drop(columns=["warnings"], errors="ignore")
    statuses = percentile_statuses(rows, 99.0, peer_columns(rows)) if len(rows) else []
    at = frame.columns.get_loc("below_target") + 1 if "below_target" in frame else len(
        frame.columns)
    frame.insert(at, "status", [s.status for s in statuses])
    frame.insert(at + 1, "status_reason", [s.reason for s in statuses])
    warnings = pd.DataFrame([{"run_id": r.run_id or r.source, "warning": w.text}
                             for r in rows.runs for w in r.warnings],
                            columns=["run_id", "warning"])
    return frame, warnings
