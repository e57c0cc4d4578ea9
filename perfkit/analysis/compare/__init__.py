"""Run-vs-run comparison (benchstat-like), its notes, the CI regression gate, the runs-needed
plan and the A/A calibration. Builds on core and context.

Internal: its modules are private (``_name.py``); this namespace is what the other
packages of perfkit use. Re-exports only.
"""

from perfkit.analysis.compare._aa import AAResult, aa_calibration
from perfkit.analysis.compare._compare import (
    BETTER,
    NO_CHANGE,
    NO_MDE,
    NOT_TESTABLE,
    POWER,
    WORSE,
    Cell,
    ComparisonRow,
    ComparisonTable,
    cell_runs,
    compare_cells,
    compare_runs,
    detectable_df,
    interval_words,
    runs_per_arm_needed,
    verdict,
)
from perfkit.analysis.compare._gate import (
    ERROR,
    INCONCLUSIVE,
    NO_DATA_GATE,
    PASS,
    REGRESSION,
    GateResult,
    GateRow,
    RunsNeeded,
    classify,
    gate_runs,
    parse_percent,
    remember_simulations_in,
    threshold_ratio,
)
from perfkit.analysis.compare._notes import need_text, ranked_worst, status_notes, untestable_text
from perfkit.analysis.compare._plan import PowerPlan, plan_runs

__all__ = [
    "remember_simulations_in",
    "AAResult",
    "BETTER",
    "Cell",
    "ComparisonRow",
    "ComparisonTable",
    "ERROR",
    "GateResult",
    "GateRow",
    "INCONCLUSIVE",
    "NOT_TESTABLE",
    "NO_CHANGE",
    "NO_DATA_GATE",
    "NO_MDE",
    "PASS",
    "POWER",
    "PowerPlan",
    "REGRESSION",
    "RunsNeeded",
    "WORSE",
    "aa_calibration",
    "cell_runs",
    "classify",
    "compare_cells",
    "compare_runs",
    "detectable_df",
    "gate_runs",
    "interval_words",
    "need_text",
    "parse_percent",
    "plan_runs",
    "ranked_worst",
    "runs_per_arm_needed",
    "status_notes",
    "threshold_ratio",
    "untestable_text",
    "verdict",
]
