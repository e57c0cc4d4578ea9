"""The published nginx-tuning write-ups re-examined: their transcribed claims, the links to
our repeated experiments, the notes and the runs a decisive repeat would need. The top rank.

Internal: its modules are private (``_name.py``); this namespace is what the other
packages of perfkit use. Re-exports only.
"""

from perfkit.analysis.seeds._links import links_path, read_links
from perfkit.analysis.seeds._notes import cell_statuses, published_caps
from perfkit.analysis.seeds._power import Needed, for_decided
from perfkit.analysis.seeds._published import published_values
from perfkit.analysis.seeds._seeds import (
    ClaimResult,
    Replication,
    SeedsAnalysis,
    confounded,
    reanalyse,
)

__all__ = [
    "ClaimResult",
    "Needed",
    "Replication",
    "SeedsAnalysis",
    "cell_statuses",
    "confounded",
    "for_decided",
    "links_path",
    "published_caps",
    "published_values",
    "read_links",
    "reanalyse",
]
