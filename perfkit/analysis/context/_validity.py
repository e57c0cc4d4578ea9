"""Threats to validity, stated from the manifests and the analysis (never typed by hand).

:func:`threats` lists, for one experiment, what a reviewer must weigh before trusting its
numbers: client and server sharing a host, a load generator busy enough to be the thing
measured, generator CPU not recorded, the conditions of :mod:`perfkit.analysis.context._conditions`
(host CPU saturated by client and server together, the listen backlog in effect, testbed
restarts with cold caches, the short window wrk2 measures after its calibration, Locust's
think time), the server and workload as recorded (nginx version,
profiles, URL, response size), how the profiles' recorded configurations differ
(:mod:`perfkit.analysis.context._configs`), blocks that differ while an analysis ignores them, and
:func:`value_caps`: latencies sitting on a known timeout (a retransmission or the tool's
timeout, not service time) under the one rule of :mod:`perfkit.analysis.core._caps`. Each threat is
one sentence that names its evidence; one about some runs names them (:attr:`Threat.runs`).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from perfkit.analysis.context._conditions import conditions, threat_texts
from perfkit.analysis.context._configs import config_diffs, diffs_text
from perfkit.analysis.context._provenance import Provenance, provenance
from perfkit.analysis.core import (
    CAP_TOLERANCE,
    GENERATOR_BUSY,
    KNOWN_CAPS_MS,
    MAX_ABOVE_CAP,
    MAX_COLUMN,
    RULE_TEXT,
    Experiment,
    RunSet,
    cap_hits,
    kernel_evidence,
)
from perfkit.formatting import fmt_ci, fmt_sig
from perfkit.stats.anova import oneway_p

#: the per-run metrics whose drift over the run order is reported as a threat
DRIFT_METRICS = ("latency_p50_ms", "throughput_rps")

#: the kinds of threat that bear on every number of the metrics they name (an answer about
#: such a number carries them, :func:`threats_for`)
NUMBER_THREATS = ("drift", "blocks")


@dataclasses.dataclass(frozen=True)
class Threat:
    """One threat to validity: ``kind`` (a short key), the sentence that states it, the
    metrics whose numbers it bears on (none: the experiment as a whole) and the runs it is
    about (none: every run; :func:`concerning` keeps the threats of some runs)."""

    kind: str
    text: str
    metrics: tuple[str, ...] = ()
    runs: tuple[str, ...] = ()


def threats(exp: Experiment, p: Provenance | None = None,
            analyses: Sequence[Any] = ()) -> list[Threat]:
    """The threats to validity of ``exp`` (see the module docstring); ``analyses`` are the
    results of the analyses run on ``exp`` where these threats are shown (the block threat
    names those that ignore blocks, :func:`block_treatment`)."""
    p = p or provenance(exp)
    out: list[Threat] = []
    if p.same_host:
        cpus = p.host.get("cpus", "?")
        out.append(Threat("same-host", f"{exp.name}: load generator and server ran on the same "
                          f"host ({cpus} CPUs) over loopback: they compete for the same cores, "
                          "so absolute numbers are this box's, not the server's alone."))
    if p.generator_busy:
        out.append(Threat("generator-busy", f"{exp.name}: the load generator used >= "
                          f"{GENERATOR_BUSY:.0%} of its cores in {p.generator_busy} of "
                          f"{p.generator_cpu_known} runs: those runs measure the generator as "
                          "much as the server."))
    if not p.generator_cpu_known:
        out.append(Threat("generator-unknown", f"{exp.name}: generator CPU was not recorded "
                          "for any run: a generator bottleneck cannot be ruled out."))
    out += [Threat(kind, text) for kind, text in threat_texts(
        p.conditions if p.conditions is not None else conditions(exp))]
    if p.durations_s and max(p.durations_s) < 10:
        out.append(Threat("short-runs", f"{exp.name}: runs of {_span(p.durations_s)} s: slow "
                          "effects (caches warming, log flushes, GC) may not show."))
    out.append(Threat("workload", f"{exp.name}: server {_server(p)}; workload "
                      f"{', '.join(p.urls) or 'URL not recorded'}{_body(exp)}."))
    diffs = config_diffs(exp)
    if diffs:
        out.append(Threat("configs", f"{exp.name}: how the server configurations differ, pair "
                          "by pair, as the manifests record them (each line named by the "
                          "profile that has it): " + diffs_text(diffs) + "."))
    cells = [c for c in (*exp.factors, "connections", "users", "target_rate_rps")
             if c in exp.frame]
    effect = block_effect(exp.rows(), "throughput_rps", cells)
    if effect is not None and effect[1] < 0.05:
        out.append(Threat("blocks", f"{exp.name}: throughput differs between blocks (run "
                          f"order) by up to {effect[0]:.0%} after removing the cells' means "
                          f"(p = {effect[1]:.2g}): {_blocks_use(analyses)}.",
                          ("throughput_rps",)))
    out += [Threat("value-cap", t, runs=runs) for t, runs in _value_caps(exp.rows(), exp.name,
                                                                           None)]
    out += _drift(exp)
    return out


def block_treatment(result: Any) -> tuple[str, str, bool] | None:
    """How an analysis result treats an experiment's blocks: ``(what it is, of what, whether
    it models them)``; None for a result that is not about runs in blocks. A Mann-Whitney
    comparison, the A/A splits, the SLO bracket, the across-run percentile intervals and the
    scalability fit pool the runs of all blocks; the factorial analysis fits block as a
    nuisance term when the design has blocks. Each result type says so itself (its
    ``block_treatment()``), so the threats need not know the features above them."""
    treat = getattr(result, "block_treatment", None)
    return treat() if callable(treat) else None


def _blocks_use(analyses: Sequence[Any]) -> str:
    """What the block difference means for the analyses given (see :func:`threats`)."""
    found = [t for t in map(block_treatment, analyses) if t is not None]
    if not found:
        return ("an analysis of these runs that ignores blocks (a Mann-Whitney comparison, a "
                "model fitted to every run) counts this drift as noise; one with block as a "
                "nuisance term (the factorial analysis) does not")
    parts = []
    for models, words in ((False, "ignoring blocks, so counting this drift as noise (wider "
                                  "intervals)"),
                          (True, "modelling blocks as a nuisance term, so the shift "
                                 "between blocks leaves their error")):
        kinds: dict[str, list[str]] = {}
        for kind, of, m in found:
            if m == models:
                kinds.setdefault(kind, [])
                if of and of not in kinds[kind]:
                    kinds[kind].append(of)
        if kinds:
            names = [k + (f" ({', '.join(of)})" if of else "") for k, of in kinds.items()]
            parts.append(f"{words}: {'; '.join(names)}")
    return "analyses here " + "; analyses ".join(parts)


def _drift(exp: Experiment) -> list[Threat]:
    """A significant trend of the runs over their order
    (:func:`perfkit.analysis.context._drift.check`: Theil-Sen on the within-cell log residuals,
    failed and saturated runs left out)."""
    from perfkit.analysis.context._drift import check_drift
    from perfkit.vocabulary import DriftVerdict

    found, drifted = [], []
    for metric in DRIFT_METRICS:
        d = check_drift(exp, metric)
        if d is not None and d.verdict == DriftVerdict.DRIFT:
            drifted.append(metric)
            # the form of the overview's drift answer (2 significant digits): one number,
            # one text, wherever it is read
            found.append(f"{metric} {fmt_ci(d.change_pct, d.ci_low_pct, d.ci_high_pct, '%', 2)}"
                         " from the first run to the last (Theil-Sen, "
                         f"Kendall p = {d.p_value:.2g}{_left_out(d)})")
    if not found:
        return []
    # what a drift does, a threat of its own: the same words for every drifting experiment
    # are one threat on a page, said once
    return [Threat("drift", f"{exp.name}: the system drifted during the experiment: "
                   + "; ".join(found) + ".", tuple(drifted)),
            Threat("drift", f"{exp.name}: randomized order keeps drift from biasing the "
                   "comparisons, but it widens every interval; unrandomized comparisons "
                   "(history, gates) would mistake it for a change.", tuple(drifted))]


def _left_out(d) -> str:
    return (f"; {d.left_out} failed or saturated run(s) left out" if d.left_out else "")


def threats_for(exp: Experiment, metric: str, analyses: Sequence[Any] = ()) -> tuple[str, ...]:
    """The threats of ``exp`` that bear on its numbers of ``metric`` (:data:`NUMBER_THREATS`:
    a drift over the run order, blocks that differ), matched by family: a drift of any latency
    percentile bears on every latency. What an answer about such a number carries."""
    family = _family(metric)
    return tuple(t.text for t in threats(exp, analyses=analyses) if t.kind in NUMBER_THREATS
                 and family in {_family(m) for m in t.metrics})


def _family(metric: str) -> str:
    return "latency" if metric.startswith("latency_") else metric


def _span(values) -> str:
    lo, hi = min(values), max(values)
    return f"{lo:.3g}" if f"{lo:.3g}" == f"{hi:.3g}" else f"{lo:.3g}-{hi:.3g}"


def _server(p: Provenance) -> str:
    version = f"nginx {', '.join(p.nginx_versions)}" if p.nginx_versions else \
        "version not recorded"
    profiles = f" (profiles {', '.join(p.profiles)})" if p.profiles else ""
    return version + profiles


def _body(exp: Experiment) -> str:
    frame = exp.rows().frame
    if "transfer_bytes_per_s" not in frame or "throughput_rps" not in frame:
        return ""
    per = (frame["transfer_bytes_per_s"] / frame["throughput_rps"]).replace(
        [np.inf, -np.inf], np.nan).dropna()
    return f"; about {per.median():.0f} bytes read per response (headers included)" \
        if len(per) else ""


def value_caps(rows: RunSet, name: str = "", columns: list[str] | None = None) -> list[str]:
    """Runs whose latencies (percentiles, or ``columns``; the max) sit on a known timeout
    (:data:`KNOWN_CAPS_MS`) under the one rule, :func:`perfkit.analysis.core._caps.cap_hits` (in
    the cap's window, standing out from the run's own latencies, the run neither failed nor
    saturated): one sentence per cap and kind (percentiles, maxima)."""
    return [text for text, _ in _value_caps(rows, name, columns)]


def _value_caps(rows: RunSet, name: str, columns: list[str] | None
                ) -> list[tuple[str, tuple[str, ...]]]:
    """:func:`value_caps` with the runs each sentence names."""
    out = []
    hits = cap_hits(rows, columns)
    head = f"{name}: " if name else ""
    runs = {str(r.run_id): r for r in rows.runs if r is not None}
    for cap, why in KNOWN_CAPS_MS.items():
        at = [h for h in hits if h.cap_ms == cap and h.column != MAX_COLUMN]
        # with the kernel's count of the retries, condition 2 is that count (caps.py)
        rule = RULE_TEXT + ("; or, where the kernel counted the retries in the run's "
                            "namespace, up to the run's median above the window"
                            if any(kernel_evidence(runs.get(h.run_id), cap) is not None
                                   for h in hits if h.cap_ms == cap) else "")
        if at:
            shown = ", ".join(f"{h.run_id} {h.column}" for h in at)
            out.append((f"{head}{len(at)} latency value(s) sit on {cap:g} ms (within "
                        f"{CAP_TOLERANCE:.0%}, {rule}), {why} ({shown}): they measure the "
                        "timeout, not the service; effects computed from them are artefacts "
                        "of it.", _runs(at)))
        tops = [h for h in hits if h.cap_ms == cap and h.column == MAX_COLUMN]
        if tops:
            shown = ", ".join(f"{h.run_id} {fmt_sig(h.value_ms)} ms" for h in tops)
            out.append((f"{head}{len(tops)} run(s) have a max latency on {cap:g} ms (from "
                        f"{1 - CAP_TOLERANCE:.0%} to {1 + MAX_ABOVE_CAP:.0%} of it: the "
                        f"timeout plus the request's own latency; {rule}), {why} "
                        f"({shown}): requests of these runs waited for the timeout, so their "
                        "tail latencies (from the highest percentile below the cap up, the "
                        "max, the mean) measure it as well as the service, and their "
                        "throughput is throttled by it.", _runs(tops)))
    return out


def _runs(hits) -> tuple[str, ...]:
    return tuple(dict.fromkeys(h.run_id for h in hits))


def concerning(found: Sequence[Threat], run_ids: Sequence[str]) -> list[Threat]:
    """The threats of ``found`` that bear on the runs ``run_ids``: those about the experiment
    as a whole (no :attr:`Threat.runs`) and those naming one of these runs (values on a
    timeout cap): what a comparison of these runs carries."""
    ids = {str(r) for r in run_ids}
    return [t for t in found if not t.runs or ids & set(t.runs)]


def block_effect(rows: RunSet, metric: str, cells: list[str]) -> tuple[float, float] | None:
    """How much blocks differ after removing the cells' means: the block's largest relative
    deviation of the geometric mean (e.g. 0.4 = 40% slower) and the p-value of the block term
    (one-way ANOVA of the log residuals); None without blocks."""
    f = rows.frame
    if "block" not in f or f["block"].nunique() < 2 or metric not in f:
        return None
    values = pd.to_numeric(f[metric], errors="coerce")
    y = np.log(values.where(values > 0))  # a zero (a run that served nothing) has no log
    keep = np.isfinite(y)
    f, y = f[keep], y[keep]
    keys = [f[c].astype(object).map(str) for c in cells]
    resid = y - (y.groupby(keys).transform("mean") if cells else y.mean())
    groups = [g.to_numpy() for _, g in resid.groupby(f["block"])]
    if len(groups) < 2 or min(len(g) for g in groups) < 2:
        return None

    p = oneway_p(groups)
    worst = max(abs(math.expm1(float(np.mean(g)))) for g in groups)
    return worst, p

