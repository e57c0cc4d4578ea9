"""Change points of several metrics of one history, Holm over the metrics
(perfkit.analysis.history._metrics; issue 34 item 5: each metric at alpha gave a flat history a
false change point somewhere on the page in 0.064-0.080 of simulated histories)."""

from __future__ import annotations

import numpy as np
import pytest

from perfkit.analysis import history as hist
from perfkit.analysis import metric
from perfkit.report.sections import history as hs
from perfkit.stats.changepoint import change_points


def test_holm_levels_step_down_and_stop_at_the_first_not_rejected():
    assert hist.holm_levels([0.01, 0.03, 0.2], 0.05) == pytest.approx([0.05 / 3, 0.025, 0.025])
    assert hist.holm_levels([0.03, 0.01], 0.05) == pytest.approx([0.05, 0.025])
    assert hist.holm_levels([0.04, 0.03], 0.05) == pytest.approx([0.025, 0.025])
    assert hist.holm_levels([0.2], 0.05) == [0.05]


@pytest.fixture(scope="module")
def history():
    return hs.load("demo-history")


def test_each_load_levels_change_points_are_searched_at_the_metrics_holm_level(history):
    names = ["latency_p99_ms", "throughput_rps"]
    metrics = [metric(m, history.frame.columns) for m in names]
    alone = [hist.analyse(history, m, permutations=199) for m in metrics]
    together = hs.analyse(history, names, permutations=199)
    firsts = [hist.first_p(a.series[0].change) for a in alone]
    levels = hist.holm_levels(firsts, 0.05)
    assert [a.series[0].change.alpha for a in together] == pytest.approx(levels)
    assert min(levels) == pytest.approx(0.025)
    # the two real changes of the demo (v08 slower upstream, v13 keepalive) are still found
    p99 = {c.label for c in together[0].series[0].change.change_points}
    assert {"v08", "v13"} <= p99
    said = " ".join(hs.describe(together, 0.1, 0.05))
    assert "Holm over the metrics" in said and "no adjustment across metrics" not in said


def _flat(seed: int) -> list[list[list[float]]]:
    rng = np.random.default_rng(seed)
    logs = 0.05 * rng.standard_normal((12, 3, 2)) @ np.linalg.cholesky(
        np.array([[1.0, 0.5], [0.5, 1.0]])).T
    return [[list(np.exp(logs[i, :, m])) for i in range(12)] for m in range(2)]


def test_a_flat_historys_lone_change_point_needs_the_holm_level():
    """Among seeded flat two-metric histories, one where a metric alone shows a change point at
    alpha whose first p lies between alpha / 2 and alpha: Holm over the two removes it."""
    for seed in range(400):
        series = _flat(seed)
        each = [change_points(s, seed=0) for s in series]
        firsts = [hist.first_p(c) for c in each]
        if sum(bool(c.change_points) for c in each) == 1 and 0.025 < min(firsts) <= 0.05:
            break
    else:
        pytest.fail("no such history among 400 seeds")
    levels = hist.holm_levels(firsts, 0.05)
    again = [change_points(s, alpha=lv, seed=0) for s, lv in zip(series, levels, strict=True)]
    assert not any(c.change_points for c in again)
