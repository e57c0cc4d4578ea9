"""perfkit.stats.anova: one-way ANOVA's p, checked against scipy.stats.f_oneway."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from scipy import stats

from perfkit.stats.anova import oneway_p


def test_the_p_is_scipys_f_oneway_on_random_designs_and_its_degenerate_cases():
    rng = np.random.default_rng(7)
    for _ in range(500):
        groups = [rng.normal(rng.normal(0, 0.3), rng.uniform(0.01, 1), rng.integers(2, 12))
                  for _ in range(rng.integers(2, 7))]
        assert oneway_p(groups) == pytest.approx(stats.f_oneway(*groups).pvalue, rel=1e-9)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # scipy warns on constant groups
        for a, b in (([1.0, 1.0], [2.0, 2.0]), ([1.0, 1.0], [1.0, 1.0])):
            want = stats.f_oneway(np.array(a), np.array(b)).pvalue
            got = oneway_p([np.array(a), np.array(b)])
            assert got == want or (np.isnan(got) and np.isnan(want))
