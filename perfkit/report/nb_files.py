"""The parts of a page that hold files and folded blocks: per-run data, per-run histograms,
and :meth:`Files.collapsed`, a block of outputs shown inside one collapsed ``<details>``.

A mixin of :class:`perfkit.report.nb.Report` (kept apart to keep each module small).
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from perfkit.report.condense import escape

#: output metadata key under which the report finds figures, tables, answers and methods
META_KEY = "perfkit"


def slug(name: str) -> str:
    """A file-name-safe figure or table name: ``"usl-none, ram"`` -> ``"usl-none-ram"``."""
    return re.sub(r"[^A-Za-z0-9._]+", "-", name).strip("-") or "unnamed"


class Files:
    """Per-run files and folded blocks of a :class:`perfkit.report.nb.Report`."""

    if TYPE_CHECKING:  # given by the Report this is mixed into
        name: str
        output_dir: Path | None
        _gather: list[list[tuple[dict, dict]]]

        def _show(self, data: Mapping[str, Any],
                  metadata: Mapping[str, Any] | None = None) -> None: ...

        table: Any  # Report.table

    def runs(self, rows: Any, name: str, where: str = "") -> None:
        """Save the per-run metrics and the per-run warnings of ``rows`` (a
        :class:`perfkit.analysis.RunSet`) as CSV, so every figure can be rebuilt from the
        report's files; show links only, collapsed, named by the load point ``where``."""
        from perfkit.report.sections.common import runs_table

        frame, warnings = runs_table(rows)
        if "source" in frame:  # no path of this machine in a report's files
            frame = frame.assign(source=[source_in(v, name) for v in frame["source"]])
        if "tool_version" in frame:  # 'locust 2.47.0 from /home/me/.venv/.../locust'
            from perfkit.report.methods import relative

            frame = frame.assign(tool_version=[relative(v) if isinstance(v, str) else v
                                               for v in frame["tool_version"]])
        at = f" at {where}" if where else ""
        with self.collapsed(f"Per-run data of {name}{at}"):
            self.table(frame, f"runs-{name}", caption=f"Per-run metrics of {name}{at}",
                       show=False)
            self.table(warnings, f"warnings-{name}", caption=f"Per-run warnings of {name}{at}",
                       show=False)

    def histograms(self, groups: Mapping[str, Sequence[Any]], name: str,
                   where: str = "") -> None:
        """Save each run's latency histogram (``groups``: configuration -> its runs) as an
        HdrHistogram interval log under ``histograms/``, one file per configuration and one
        tagged line per run (:func:`perfkit.store.hlog.write_run_logs`), so that every figure
        drawn from per-run percentiles can be rebuilt from the report's files; link them."""
        from perfkit.store.hlog import write_run_logs

        if self.output_dir is None:
            return
        stems = {label: "-".join(slug(p) for p in (self.name, name, str(label), where) if p)
                 for label in groups}
        links = write_run_logs(self.output_dir / "histograms", groups, stems,
                               f"{name}" + (f" at {where}" if where else ""))
        if links:
            from perfkit.wording import HLOG_FROM_WRK2

            at = f" at {where}" if where else ""
            # how the files were made, where a reader takes them (issue 29: "the page says
            # how the file was made")
            how = (f"; {HLOG_FROM_WRK2}" if any(getattr(r, "tool", None) == "wrk2"
                                                for runs in groups.values() for r in runs)
                   else "")
            body = ", ".join(f'<a href="histograms/{escape(path.name)}">{escape(label)}</a>'
                             for label, path in links)
            self._show({"text/html": f'<p class="perfkit-link">Per-run latency histograms{at} '
                                     "(HdrHistogram interval logs, one line per run, values in "
                                     f"us; to rebuild the figures above{escape(how)}): "
                                     f"{body}</p>",
                        "text/plain": f"Per-run latency histograms{at}: "
                                      + ", ".join(f"histograms/{p.name}" for _, p in links)})

    @contextlib.contextmanager
    def collapsed(self, summary: str):
        """Show what the block displays inside one collapsed ``<details>`` headed ``summary``
        (the outputs in between are gathered, not shown, then shown together)."""
        gathered: list[tuple[dict, dict]] = []
        self._gather.append(gathered)
        try:
            yield
        finally:
            self._gather.pop()
            if gathered:
                inner = "".join(d.get("text/html", "") for d, _ in gathered)
                meta = [m[META_KEY] for _, m in gathered if m.get(META_KEY)]
                self._show({"text/html": f'<details class="perfkit-more"><summary>'
                                       f"{escape(summary)}</summary>{inner}</details>",
                          "text/plain": "\n".join(d.get("text/plain", "") for d, _ in gathered)},
                         {META_KEY: {"gathered": meta}} if meta else None)


def source_in(source: Any, name: str) -> Any:
    """A run's ``source`` from its experiment's folder on: ``/home/me/data/demo-aa/runs/0001/
    stdout.txt`` -> ``demo-aa/runs/0001/stdout.txt`` (the last ``/<name>/`` in the path);
    a path without it as its file name alone."""
    text = str(source)
    if not text.startswith("/") and ":\\" not in text[:3]:
        return source
    cut = text.rfind(f"/{name}/")
    return text[cut + 1:] if cut >= 0 else text.rsplit("/", 1)[-1]
