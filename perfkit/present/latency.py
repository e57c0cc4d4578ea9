"""The latency page's percentile table as a paper table: the estimand said once.

Every row of the percentiles-across-runs frame names its estimand (``median run's p99,
estimated as the geometric mean of 3 runs (log-normal)``); in a column, that sentence made
each row six lines tall. When the rows' estimands differ only by their percentile, the table
says it once, in its title, with the percentile as ``pXX``; the CSV keeps the column.
"""

from __future__ import annotations

import re

import pandas as pd

from perfkit.present import frame as present_frame
from perfkit.present.tables import Table

_PERCENTILE = re.compile(r"\bp\d+(?:\.\d+)?\b")


def percentiles(table: pd.DataFrame, title: str) -> Table:
    """``table`` (:meth:`perfkit.analysis.latency.LatencyTable.to_frame`) as shown: the
    ``estimand`` and ``method`` columns in the title when one sentence states every row's
    (``estimand: the median run's pXX, ...``), else as columns."""
    if "estimand" not in table or not len(table):
        return present_frame.frame(table, title)
    said = {_PERCENTILE.sub("pXX", str(e)) for e in table["estimand"]}
    if len(said) != 1:
        return present_frame.frame(table, title)
    return present_frame.frame(table, f"{title}\nestimand: the {said.pop()}",
                               hide=("warnings", "estimand", "method"))
