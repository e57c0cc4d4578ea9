"""Factorial tuning effects: the 2^k factorial fit, A/B tables of the same contrasts,
interactions and simple effects, and the multiplicity (Holm) families. Builds on compare.

Internal: its modules are private (``_name.py``); this namespace is what the other
packages of perfkit use. Re-exports only.
"""

from perfkit.analysis.effects._ab import ab_comparisons
from perfkit.analysis.effects._effects import FactorialResult, factorial_effects, parse_levels
from perfkit.analysis.effects._interactions import headline_effects, main_estimand
from perfkit.analysis.effects._multiplicity import adjusted_verdict, families, statement

__all__ = [
    "FactorialResult",
    "ab_comparisons",
    "adjusted_verdict",
    "factorial_effects",
    "families",
    "headline_effects",
    "main_estimand",
    "parse_levels",
    "statement",
]
