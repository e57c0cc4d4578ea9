"""The one rule for a 0 printed where nothing was measured.

Load tools print a number even for a value they never measured: Locust writes 0 for the mean,
min, max and median of a request name without requests (and ``N/A`` for its percentiles), wrk
prints ``0.00us`` for every latency when it recorded none, wrk2's empty histogram prints
``Max = 0.000``. A 0 can also reach a placeholder's place by hand: ``N/A`` or ``-nan`` edited
into ``0``. Either way it is not a measurement.

**Rule.** When the output itself shows that no request was measured for a value (Locust: 0
requests; wrk and wrk2: a Latency row that recorded no sample, a histogram whose ``Total
count`` is 0), a 0 printed for that value is missing (None), and the run carries a note naming
the field; never a 0. Values other than 0 are left as printed, with a note where they
contradict "nothing measured" (wrk) or for :mod:`perfkit.consistency` to judge. The parsers
apply the rule through :func:`zeros_missing`, so the wording and the test of "0" are the same
everywhere. Where a whole block is known to be no measurement, a parser drops it outright, which
is stricter: wrk's Latency row without samples (``_wrkcommon.read_thread_stats``), wrk2's
percentiles and footer of an empty histogram, the ``Total ...`` latencies of a Locust history
row with 0 requests.
"""

from __future__ import annotations

from collections.abc import Mapping

from perfkit.warning import Code, Warn


def zeros_missing(values: Mapping[str, float | None], why: str, where: str | None = None
                  ) -> tuple[dict[str, float | None], Warn | None]:
    """``values`` with every 0 made None, and the note naming those fields (None if none):
    :attr:`perfkit.warning.Code.PRINTED_ZERO_PLACEHOLDER`.

    Parameters
    ----------
    values : mapping of str to float or None
        Field name (as a reader sees it: ``latency_max_ms``, ``percentiles_ms[99]``) to the
        value printed for it, in a run or row where nothing was measured.
    why : str
        What in the output shows that nothing was measured: a key of
        :data:`perfkit.wording.NOTHING_MEASURED` (``"no-request"``).
    where : str, optional
        The row the values are in (``"'/' (line 3)"``), named first in the note.
    """
    zeros = [name for name, value in values.items() if value == 0]
    if not zeros:
        return dict(values), None
    out = {name: (None if value == 0 else value) for name, value in values.items()}
    return out, Warn(Code.PRINTED_ZERO_PLACEHOLDER, fields=", ".join(zeros), because=why,
                     where=where)
