"""perfkit.analysis.scaling._scaling: a claimed peak N* is qualified by the host's CPU (the whole
box's peak when client and server share saturated cores), on the closed-loop sweep recorded on
a busy shared VM (tests/fixtures/scaling)."""

from __future__ import annotations

from pathlib import Path

from perfkit.analysis import metric
from perfkit.analysis.core import load_experiment

DATA = Path(__file__).resolve().parents[1] / "data"
#: the closed-loop sweep recorded on a busy shared VM: its default profile has a claimed peak
SHARED_VM = (Path(__file__).resolve().parent / "fixtures" / "scaling"
             / "wrk-connections-shared-vm")



def test_n_star_says_it_is_the_whole_box_when_the_host_cpu_was_saturated():
    from perfkit.analysis.scaling import scaling_fits

    rows = load_experiment(SHARED_VM).rows()
    fits = scaling_fits(rows, metric("throughput_rps"), by=["profile"], n_resamples=50)
    default = next(r for r in fits.results if r.key == ("default",))
    assert default.fit.n_star is not None
    assert (default.host.known, default.host.busy, default.host.cpus) == (24, 23, 2)
    assert default.peak_scope == ("the whole box's peak, not the server's: client and server "
                                  "share 2 cores (host CPU >= 90% in 23 of 24 runs)")
    frame = fits.to_frame().set_index("profile")
    assert frame.loc["default", "peak_scope"] == default.peak_scope
    assert frame.loc["buffered-log", "peak_scope"] == ""  # no peak claimed, nothing to scope
