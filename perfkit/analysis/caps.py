"""Effects and changes computed from values on a known timeout cap: artefacts, not ratios.

A latency that sits on a known timeout (:data:`perfkit.analysis.validity.KNOWN_CAPS_MS`,
within :data:`~perfkit.analysis.validity.CAP_TOLERANCE`: the rule of
:func:`~perfkit.analysis.validity.value_caps`) measures the timeout, not the service. An
effect or a change computed from such values is an artefact of the cap whatever its p-value:
its verdict is :func:`artefact` (``"artefact: values on the 1000 ms cap"``).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from perfkit.analysis.experiment import RunSet
from perfkit.analysis.metrics import Metric
from perfkit.analysis.validity import CAP_TOLERANCE, KNOWN_CAPS_MS

#: the start of every artefact verdict
ARTEFACT = "artefact"


def caps_hit(rows: RunSet, metric: Metric) -> tuple[float, ...]:
    """The known caps (ms) that some value of ``metric`` in ``rows`` sits on; none for a metric
    that is not a latency."""
    if not metric.is_latency or metric.name not in rows.frame:
        return ()
    v = pd.to_numeric(rows.frame[metric.name], errors="coerce").to_numpy(dtype=float)
    return tuple(cap for cap in KNOWN_CAPS_MS
                 if (np.abs(v - cap) <= CAP_TOLERANCE * cap).any())


def artefact(caps: Sequence[float]) -> str:
    """The verdict of an effect computed from values on ``caps`` (ms)."""
    names = " and ".join(f"{c:g}" for c in sorted(caps))
    return f"{ARTEFACT}: values on the {names} ms cap{'s' if len(caps) > 1 else ''}"


def is_artefact(verdict: str) -> bool:
    return verdict.startswith(ARTEFACT)
