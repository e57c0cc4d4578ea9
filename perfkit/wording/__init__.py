"""The words of every warning, given once: a code's wording is a template over its fields.

:data:`WORDING` maps each :class:`perfkit.warning.Code` to its wording: a :meth:`str.format`
template over the warning's fields (``"{ratio:.1%} of requests failed ..."``), or, where the
words depend on a value (a plural, a clause said only when a field is given), a function of
the fields. :func:`text` is the one way a warning becomes words: ``str(w)``, ``f"{w}"`` and
``w.text`` call it, and so does everything that shows a warning (tables and CSV through
``to_frame``, ``perfkit show``, :mod:`perfkit.present`, the report's pages).
``tests/test_wording.py`` checks that every code has a wording.

Converting a sentence into a coded warning (the recipe)
--------------------------------------------------------
Where a result still appends a sentence, ``warnings.append(f"{n} run(s) failed: {why}")``:

1. add a member to :class:`perfkit.warning.Code` under its family, named for what it says,
   its value a short identity: ``RUNS_FAILED = "runs-failed"``;
2. add its wording in the table of its family, the f-string's text with its fields as
   template fields (``_run.RUN``: what a run's parser read and whether it is a measurement;
   ``_statistics.STATISTICS``: intervals, tests, power, fits, factorial effects, histories;
   ``_analysis.ANALYSIS``: a comparison's sides, caps, drift and counters):
   ``Code.RUNS_FAILED: "{n} run(s) failed: {why}"`` (the format specs as they were:
   ``{ratio:.1%}``; a function of the fields, ``lambda f: ...``, for a plural or an optional
   clause);
3. append the value where the sentence was: ``warnings.append(Warn(Code.RUNS_FAILED, n=n,
   why=why))``. A field is a number, a name or run id, a :class:`~perfkit.warning.Warn` (a
   warning within another) or a tuple of these. A decision that read the sentence
   (``w.startswith("3 run(s)")``) reads the code (``w.code is Code.RUNS_FAILED``).

The words come out as before, so the pages and tables do not change.

The vocabulary's identities (:mod:`perfkit.vocabulary`) have their wording here too, where it
is more than the identity: :func:`verdict_words` (``stable`` -> ``no drift beyond ±10%``, with
the tunable :data:`DRIFT_TOLERANCE_PCT`; a claim's verdict; :data:`NoteKind.ON_CAP`), and so do
the composed verdicts of a value on a timeout cap (:func:`artefact_words`,
:func:`affected_words`).
"""

from __future__ import annotations

from perfkit.warning import Code, Warn
from perfkit.wording._analysis import ANALYSIS, CAP_CONSEQUENCES, CAP_EFFECTS, NOT_FINITE_REASONS
from perfkit.wording._common import (
    CAP_NAMES,
    DRIFT_FIX,
    DRIFT_TOLERANCE_PCT,
    VERDICT_WORDS,
    WRK_LATENCY,
    Wording,
    affected_words,
    artefact_words,
    at_words,
    fmt_p,
    labels_words,
    need_words,
    pct,
    runs_text,
    stall_words,
    the_caps,
    verdict_words,
)
from perfkit.wording._run import HLOG_FROM_WRK2, NOT_FINITE_WHY, NOTHING_MEASURED, RUN
from perfkit.wording._statistics import NSTAR_COVERAGE, STATISTICS

__all__ = [
    "CAP_CONSEQUENCES", "CAP_EFFECTS", "CAP_NAMES", "DRIFT_FIX", "DRIFT_TOLERANCE_PCT",
    "HLOG_FROM_WRK2", "NOTHING_MEASURED", "NOT_FINITE_REASONS", "NOT_FINITE_WHY", "NSTAR_COVERAGE",
    "VERDICT_WORDS", "WORDING", "WRK_LATENCY", "Wording", "affected_words", "artefact_words",
    "at_words", "fmt_p", "labels_words", "need_words", "pct", "runs_text", "stall_words", "text",
    "the_caps", "verdict_words",
]

#: every code's wording: the families' tables, one code in one family
WORDING: dict[Code, Wording] = {**RUN, **STATISTICS, **ANALYSIS}


def text(warning: Warn) -> str:
    """``warning`` in words: its code's wording over its fields."""
    how = WORDING[warning.code]
    fields = dict(warning.fields)
    return how.format(**fields) if isinstance(how, str) else how(fields)
