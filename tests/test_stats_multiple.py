"""adjust_pvalues: Holm and Benjamini-Hochberg against known values and scipy."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats as sps

from perfkit.stats import adjust_pvalues

P = [0.01, 0.04, 0.03, 0.005, 0.2]


def test_holm_known_values():
    # by hand: sorted 0.005*5, 0.01*4, 0.03*3, 0.04*2 -> running max, 0.2*1 -> 0.2
    assert adjust_pvalues(P, "holm") == pytest.approx([0.04, 0.09, 0.09, 0.025, 0.2])


def test_bh_known_values_and_scipy():
    assert adjust_pvalues(P, "bh") == pytest.approx([0.025, 0.05, 0.05, 0.025, 0.2])
    rng = np.random.default_rng(1)
    p = rng.uniform(0, 0.2, 40)
    assert adjust_pvalues(p, "bh") == pytest.approx(sps.false_discovery_control(p))


def test_adjusted_values_are_capped_at_one_and_nan_passes_through():
    got = adjust_pvalues([0.5, float("nan"), 0.6], "holm")
    assert got[0] == 1.0 and np.isnan(got[1]) and got[2] == 1.0


def test_unknown_method_is_refused():
    with pytest.raises(ValueError, match="holm"):
        adjust_pvalues(P, "bonferroni-ish")
