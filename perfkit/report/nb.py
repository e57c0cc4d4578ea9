"""What a report notebook calls to show and keep its results.

A notebook opens with::

    report = nb.setup("latency", output_dir)

and then shows everything through ``report``:

- :meth:`Report.figure`: display a figure (PNG) and, under ``perfkit report``, save it as SVG
  and PNG in ``<output_dir>/figures/<notebook>-<name>.{svg,png}``; the figure's text layout is
  checked (units in axis labels, no overlapping text) and the result is kept in the output's
  metadata for the tests;
- :meth:`Report.table`: display a frame, save it as
  ``<output_dir>/tables/<notebook>-<name>.csv``;
- :meth:`Report.findings`: the headline numbers, shown in the notebook and collected by the
  report's ``index.html`` from the executed notebook;
- :meth:`Report.note`: a caveat or warning, escaped.

All text that comes from data is escaped here with :func:`html.escape`.
"""

from __future__ import annotations

import dataclasses
import html
import io
import os
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from perfkit.formatting import PROGRESS_ENV, fmt_num

#: output metadata key under which the report finds figures and findings
META_KEY = "perfkit"
PNG_DPI = 200
#: on-screen width of a figure, in CSS pixels per inch of figure width
SCREEN_PX_PER_IN = 140


def _display(data: Mapping[str, Any], metadata: Mapping[str, Any] | None = None) -> None:
    from IPython.display import publish_display_data

    publish_display_data(data=dict(data), metadata=dict(metadata or {}))


def escape(value: Any) -> str:
    """``html.escape`` of ``str(value)`` (quotes included): the one way data text enters HTML."""
    return html.escape(str(value), quote=True)


def slug(name: str) -> str:
    """A file-name-safe figure or table name: ``"usl-none, ram"`` -> ``"usl-none-ram"``."""
    return re.sub(r"[^A-Za-z0-9._]+", "-", name).strip("-") or "unnamed"


def format_number(value: float, digits: int = 3) -> str:
    """A number for a table cell: :func:`perfkit.formatting.fmt_num`, missing as blank."""
    return "" if pd.isna(value) else fmt_num(value, digits)


def format_frame(frame: pd.DataFrame, digits: int = 3) -> pd.DataFrame:
    """A copy for display: floats to ``digits`` significant digits, missing shown as blank."""
    out = frame.copy()
    for col in out.columns:
        if pd.api.types.is_float_dtype(out[col]):
            out[col] = [format_number(v, digits) for v in out[col]]
    return out


@dataclasses.dataclass
class Report:
    """The output sink of one notebook (see the module docstring)."""

    name: str
    output_dir: Path | None = None
    figures: list[str] = dataclasses.field(default_factory=list)
    tables: list[str] = dataclasses.field(default_factory=list)

    def _path(self, kind: str, name: str, suffix: str) -> Path | None:
        if self.output_dir is None:
            return None
        folder = self.output_dir / kind
        folder.mkdir(parents=True, exist_ok=True)
        return folder / f"{self.name}-{slug(name)}{suffix}"

    def figure(self, fig, name: str, caption: str | None = None) -> None:
        """Show ``fig`` (a :class:`matplotlib.figure.Figure`) and save it as SVG and PNG."""
        from perfkit.plots import checks

        buf = io.BytesIO()
        fig.savefig(buf, format="png", dpi=PNG_DPI, metadata={"Software": None})
        png = buf.getvalue()
        svg_path = self._path("figures", name, ".svg")
        if svg_path is not None:
            fig.savefig(svg_path, format="svg", metadata={"Date": None, "Creator": None})
            svg_path.with_suffix(".png").write_bytes(png)
        problems = checks.check(fig)
        width_px = int(round(fig.get_figwidth() * SCREEN_PX_PER_IN))
        meta = {"image/png": {"width": width_px},
                META_KEY: {"figure": name, "notebook": self.name, **problems}}
        _display({"image/png": png, "text/plain": f"<figure {name}>"}, meta)
        if caption:
            _display({"text/html": f'<p class="perfkit-caption">{escape(caption)}</p>',
                      "text/plain": caption})
        self.figures.append(name)

    def table(self, frame: pd.DataFrame, name: str, caption: str | None = None,
              digits: int = 3, index: bool = False, hide: Iterable[str] = ("warnings",)
              ) -> None:
        """Show ``frame`` (values to ``digits`` significant digits, without the ``hide``
        columns); save it in full as CSV, exactly as ``perfkit ... --format csv`` prints it."""
        csv_path = self._path("tables", name, ".csv")
        if csv_path is not None:
            frame.to_csv(csv_path, index=index)
        shown = format_frame(frame.drop(columns=[c for c in hide if c in frame]), digits)
        body = shown.to_html(index=index, escape=True, border=0, na_rep="",
                             classes="perfkit-table")
        head = f"<p><b>{escape(caption)}</b></p>" if caption else ""
        _display({"text/html": head + body, "text/plain": shown.to_string(index=index)},
                 {META_KEY: {"table": name, "notebook": self.name}})
        self.tables.append(name)

    def findings(self, items: Mapping[str, Any] | Iterable[tuple[str, Any]]) -> None:
        """Show the headline results and mark them for the report index."""
        pairs = [(str(k), str(v)) for k, v in (items.items() if isinstance(items, Mapping)
                                              else items)]
        rows = "".join(f"<li><b>{escape(k)}</b>: {escape(v)}</li>" for k, v in pairs)
        _display({"text/html": f'<div class="perfkit-findings"><ul>{rows}</ul></div>',
                  "text/plain": "\n".join(f"{k}: {v}" for k, v in pairs)},
                 {META_KEY: {"findings": pairs, "notebook": self.name}})

    def note(self, text: str | Iterable[str], kind: str = "warning") -> None:
        """Show a caveat (one paragraph, or a list when several lines are given)."""
        lines = [text] if isinstance(text, str) else [str(t) for t in text]
        if not lines:
            return
        inner = (f"<p>{escape(lines[0])}</p>" if len(lines) == 1 else
                 "<ul>" + "".join(f"<li>{escape(t)}</li>" for t in lines) + "</ul>")
        css = "perfkit-warning" if kind == "warning" else "perfkit-findings"
        _display({"text/html": f'<div class="{css}">{inner}</div>', "text/plain": "\n".join(lines)})


def setup(name: str, output_dir: str | os.PathLike | None = "") -> Report:
    """Prepare a notebook: the figure style, quiet progress bars, and its :class:`Report`.

    Progress bars are off (``PERFKIT_NO_PROGRESS=1``) unless the environment says otherwise: they
    add volatile output, and their widgets load from a CDN.
    """
    from perfkit.plots import style

    os.environ.setdefault(PROGRESS_ENV, "1")
    style.use()
    pd.set_option("display.max_rows", 200)
    pd.set_option("display.max_columns", 50)
    out = Path(output_dir).resolve() if output_dir else None
    return Report(name=name, output_dir=out)


def collect(nb: Any) -> dict[str, list]:
    """Findings and figure checks recorded in an executed notebook's outputs."""
    found: dict[str, list] = {"findings": [], "figures": [], "tables": []}
    for cell in nb.cells:
        for output in cell.get("outputs", []):
            meta = output.get("metadata", {}).get(META_KEY)
            if not meta:
                continue
            if "findings" in meta:
                found["findings"].extend(tuple(p) for p in meta["findings"])
            if "figure" in meta:
                found["figures"].append(dict(meta))
            if "table" in meta:
                found["tables"].append(dict(meta))
    return found
