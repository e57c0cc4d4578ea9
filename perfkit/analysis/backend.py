"""What the server behind the load generator did with each request, from the run manifests.

A tuning effect is relative to the work behind it: a proxy cache that saves a 10 ms upstream
answer gains more than one that saves a static file read. The testbed records, in each run
manifest's ``server``, the template ``variables`` it rendered nginx.conf with: ``root_target``
(``static``: nginx serves a file; ``proxy``: nginx passes the request to the testbed's upstream)
and ``upstream_delay_ms`` (how long that upstream waits before it answers). The response size
is measured: bytes read per response (headers included), the runs' transfer rate over their
throughput.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

import numpy as np

from perfkit.analysis.experiment import Experiment
from perfkit.formatting import level_text


@dataclasses.dataclass(frozen=True)
class Backend:
    """The backend of an experiment: per description, the profiles that had it; the median
    bytes read per response (None: not measured)."""

    served: tuple[tuple[str, tuple[str, ...]], ...]
    response_bytes: float | None

    def text(self) -> str:
        """``"nginx passes each request to the testbed's upstream, which answers after 10 ms;
        about 1186 bytes per response (headers included)"`` (the runs' transfer rate over
        their throughput)."""
        if len(self.served) == 1:
            what = self.served[0][0]
        else:
            what = "; ".join(f"{d} (profile{'s' if len(p) > 1 else ''} {', '.join(p)})"
                             for d, p in self.served) or "not recorded"
        size = (f"; about {self.response_bytes:.0f} bytes per response (headers included)"
                if self.response_bytes else "")
        return what + size


def _served(server: Mapping) -> str:
    variables = server.get("variables")
    if not isinstance(variables, Mapping) or "root_target" not in variables:
        text = str(server.get("config_text") or "")
        if not text:
            return "not recorded"
        return ("nginx passes each request to an upstream (its delay not recorded)"
                if "proxy_pass" in text else "nginx serves a static file (nginx.conf as "
                "recorded; no template variables)")
    if variables.get("root_target") == "proxy":
        delay = variables.get("upstream_delay_ms")
        after = f", which answers after {level_text(delay)} ms" if delay is not None else ""
        return f"nginx passes each request to the testbed's upstream{after}"
    return "nginx serves a static file"


def backend(exp: Experiment) -> Backend:
    """The backend of ``exp`` as its run manifests record it (see the module docstring)."""
    by: dict[str, list[str]] = {}
    for run in exp.rows().runs:
        server = (run.manifest or {}).get("server") or {}
        what = _served(server)
        profile = str(server.get("profile") or "?")
        if profile not in by.setdefault(what, []):
            by[what].append(profile)
    frame = exp.rows().frame
    size = None
    if {"transfer_bytes_per_s", "throughput_rps"} <= set(frame.columns):
        per = (frame["transfer_bytes_per_s"] / frame["throughput_rps"]).replace(
            [np.inf, -np.inf], np.nan).dropna()
        size = float(per.median()) if len(per) else None
    return Backend(tuple((d, tuple(p)) for d, p in by.items()), size)
