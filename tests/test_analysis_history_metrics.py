"""Change points of several metrics of one history, Holm over the metrics
(perfkit.analysis.history._metrics; issue 34 item 5: each metric at alpha gave a flat history a
false change point somewhere on the page in 0.064-0.080 of simulated histories)."""

from __future__ import annotations

import numpy as np
import pytest

from perfkit.analysis import history as hist
from perfkit.analysis import metric
from perfkit.present import history as present_history
from perfkit.report.sections import history as hs
from perfkit.stats.changepoint import change_points
from perfkit.stats.multiple import adjust_pvalues
from perfkit.warning import Code


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


def test_the_pages_recent_steps_are_one_holm_family_per_load_level_and_say_so(history):
    """Issue 34: the newest labels of each metric were tested at alpha, unadjusted across the
    page's metrics; now Holm over them at each load level, the p and its adjustment on the
    rows (a coded note), the interval Bonferroni over the windows and the metrics."""
    names = ["latency_p99_ms", "throughput_rps"]
    together = hs.analyse(history, names, permutations=199, seed=1)
    steps = [a.series[0].recent for a in together]
    assert all(r is not None and r.tested and r.family == 2 for r in steps)
    assert [r.p_holm for r in steps if r] == pytest.approx(
        list(adjust_pvalues([r.p_value for r in steps if r], "holm")))
    for a, r in zip(together, steps, strict=True):
        assert r is not None and r.level == pytest.approx(1 - 0.05 / (2 * r.windows))
        row = a.recent_frame().iloc[0]
        assert row["holm_family"] == 2 and row["p_value_holm"] == pytest.approx(r.p_holm)
        assert row["adjustment"] == str(r.holm_note())
        (table,) = [t for t in present_history.series(a) if "recent step" in t.title]
        assert [c.name for c in table.columns][3:5] == ["p", "p Holm"]
        assert any(str(r.holm_note()) == str(n) for n in table.notes)
        answer = [x for x in hs.answers([a], {}) if "newest labels" in x.question]
        assert [w.code for w in answer[0].warnings][:1] == [Code.HOLM_OVER_METRICS]


def test_the_change_point_table_names_the_level_its_search_ran_at(history):
    """The table's title said "at alpha 0.05" while the search ran at its Holm level: the
    title and the search agree now (issue 34: every printed part of an answer agrees)."""
    together = hs.analyse(history, ["latency_p99_ms", "throughput_rps"], permutations=199)
    titles = {a.metric.name: present_history.series(a)[0].title for a in together}
    for a in together:
        level = a.series[0].change.alpha
        title = titles[a.metric.name]
        if level == a.alpha:
            assert "at alpha 0.05" in title and "Holm" not in title
        else:
            assert f"at alpha {level:.3g} (Holm over the metrics at alpha 0.05)" in title
    assert any(a.series[0].change.alpha < a.alpha for a in together)
