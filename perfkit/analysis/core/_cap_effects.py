"""What a run that waited for a known timeout does to a metric that is not a latency.

:mod:`perfkit.analysis.core._caps` finds the runs whose requests waited for a timeout (a latency on
a cap of :data:`perfkit.analysis.context._validity.KNOWN_CAPS_MS` with a fast median); this module
says what that wait does to each other metric (:func:`consequence`), or nothing where it
does not bear on it:

- a **rate** (``throughput_rps``, ``transfer_bytes_per_s``): connections that waited served
  nothing meanwhile, so it is throttled by the timeout as well as by the service;
- the **error ratio** and the **timeout count**: a generator gives up on a request that
  outlasts its own request timeout (:data:`GENERATOR_TIMEOUTS_MS`: wrk's 2 s) and counts it
  as a timeout error, so they count that timeout as well as the service's failures. A SYN
  retransmission (1 s, 3 s) adds no error (the retried connection is served) and does not
  throttle a share of attempts: nothing is said;
- any other **count** of a run (connect, read and write errors, non-2xx/3xx responses,
  Locust failures): connections that waited made no request meanwhile, so it counts fewer
  attempts than the service alone would have allowed.
"""

from __future__ import annotations

from perfkit.analysis.core._metrics import HIGHER, Metric

#: the caps (ms) that are a load generator's own request timeout: a request that outlasts it
#: is counted as a timeout error (wrk and wrk2: ``errors_timeout``), its latency not recorded
GENERATOR_TIMEOUTS_MS = (2000.0,)
#: metrics that count the generator's timeouts among their errors
COUNTS_TIMEOUTS = ("error_ratio", "errors_timeout")
#: metrics that are a share of attempts, not a count: fewer attempts do not lower them
SHARES = ("error_ratio",)


def consequence(metric: Metric, cap_ms: float) -> str:
    """What runs that waited for the ``cap_ms`` timeout do to ``metric`` (not a latency), as an
    identity worded by :data:`perfkit.wording.CAP_CONSEQUENCES`: ``throttled`` (a rate),
    ``timeout-errors`` (the generator counts the timeout among its errors), ``fewer-attempts``
    (a count); ``""`` when the wait does not bear on it (module docstring)."""
    name = metric.name
    if metric.better == HIGHER:
        return "throttled"
    if name in COUNTS_TIMEOUTS and cap_ms in GENERATOR_TIMEOUTS_MS:
        return "timeout-errors"
    if name in SHARES or name in COUNTS_TIMEOUTS:
        return ""
    return "fewer-attempts"


def affects(metric: Metric, cap_ms: float) -> bool:
    """Whether runs that waited for the ``cap_ms`` timeout bear on ``metric`` (a latency: see
    :mod:`perfkit.analysis.core._caps`; any other metric: :func:`consequence` is not empty)."""
    return metric.is_latency or bool(consequence(metric, cap_ms))
