"""The saved files of a figure drawn before, kept by what they draw.

Under ``perfkit report`` every figure is shown as a PNG and saved as SVG, PDF and a 300 dpi
PNG: about 0.5 s of CPU a figure for the PDF and the PNGs, 10 of a demo build's 33 s. A figure
that draws exactly what it drew in an earlier build needs none drawn again: they are kept,
with what the page says of the figure (its checks, alt text and colours), in
``FOLDER/.perfkit/cache/figures`` (FOLDER: the page's first experiment, beside its run store
and its power simulations, :func:`perfkit.report.sections.common.remember_simulations`), and
copied from there.

What a figure draws is read from its SVG, written first (the report keeps it anyway): with
text as paths, it holds every path, glyph outline, colour, clip, image and position. The key
adds what an SVG leaves out and a PDF or a PNG shows: each artist's antialiasing, snapping,
rasterization, sketch, filter and image resampling; matplotlib's settings (``rcParams``); the
versions of matplotlib, Pillow and fontTools; and :data:`FORMATS`. Two figures of one key
give byte-identical files (tests/test_report_figcache.py checks it against a fresh draw).

The cache holds at most :data:`KEEP` figures (the least recently used go first); a file that
is not a whole PDF, PNG or JSON text is drawn again. ``PERFKIT_CACHE=0`` turns it off with
the run store.
"""

from __future__ import annotations

import hashlib
import io
import os
from collections.abc import Callable, Mapping
from pathlib import Path

from perfkit._fsutil import write_bytes_atomic

#: the figures a cache folder keeps (each a PDF of about 30 kB and PNGs of about 200 kB)
KEEP = 400
#: the files kept of each figure
KINDS = ("look.json", "screen.png", "pdf", "png")
#: what the saved files depend on besides the figure: bump when a save's arguments change
FORMATS = ("look.json: checks, alt text, colours; screen.png: 150 dpi, 256 colours; pdf: no "
           "dates or creator; png: 300 dpi; v3")
#: a whole file of each kind starts and ends so
_WHOLE = {".pdf": (b"%PDF", b"%%EOF"), ".png": (b"\x89PNG\r\n\x1a\n", b"IEND\xaeB`\x82"),
          ".json": (b"{", b"}")}

#: the folder this process keeps figures in (set once per page; None: none kept)
_FOLDER: list[Path] = []


def keep_in(folder: str | os.PathLike | None) -> None:
    """Keep this process's figures in ``folder`` (the first call wins; None keeps none)."""
    if folder is not None and not _FOLDER:
        _FOLDER.append(Path(folder))


def folder() -> Path | None:
    return _FOLDER[0] if _FOLDER else None


def key(fig, svg: bytes) -> str:
    """The hex digest of what ``fig``'s files show (``svg``: the figure as SVG)."""
    import fontTools  # type: ignore[import-untyped]
    import matplotlib as mpl
    import PIL

    digest = hashlib.sha256(svg)
    head = (FORMATS, mpl.__version__, PIL.__version__, fontTools.version,
            repr(sorted((k, repr(v)) for k, v in mpl.rcParams.items())))
    digest.update(repr(head).encode())
    for artist in fig.findobj():
        digest.update(repr(_unseen(artist)).encode())
    return digest.hexdigest()


def _unseen(artist) -> tuple:
    """What ``artist`` draws differently in a PDF or a PNG without changing the SVG."""
    def get(name: str):
        method = getattr(artist, name, None)
        return method() if callable(method) else None

    return (type(artist).__name__, get("get_antialiased"), get("get_snap"),
            get("get_rasterized"), get("get_sketch_params"), get("get_agg_filter") is not None,
            get("get_interpolation"), get("get_interpolation_stage"), get("get_resample"))


def files(fig, svg: bytes, draws: Mapping[str, Callable[[], bytes]]) -> dict[str, bytes]:
    """The bytes of each of ``draws``' files (named by kind, :data:`KINDS`) of ``fig``, drawn
    as ``svg``: as kept for a figure that drew the same, else drawn (each ``draws[kind]()``)
    and kept."""
    where = folder()
    name = key(fig, svg) if where is not None else ""
    out, kept = {}, False
    for kind, draw in draws.items():
        data = _read(where / f"{name}.{kind}") if where is not None else None
        if data is None:
            data = draw()
            if where is not None:
                kept = _keep(where, f"{name}.{kind}", data) or kept
        out[kind] = data
    if kept and where is not None:
        _prune(where)
    return out


def _read(path: Path) -> bytes | None:
    try:
        data = path.read_bytes()
    except OSError:
        return None
    start, end = _WHOLE[path.suffix]
    if not (data.startswith(start) and data.rstrip().endswith(end)):
        return None
    try:
        os.utime(path)  # recently used: kept longer
    except OSError:
        pass
    return data


def _keep(where: Path, name: str, data: bytes) -> bool:
    """Whether ``data`` is now kept as ``where/name``."""
    try:
        where.mkdir(parents=True, exist_ok=True)
        write_bytes_atomic(where / name, data)
    except OSError:
        return False  # no cache then: the report's files are written all the same
    return True


def _prune(where: Path) -> None:
    """Keep the newest :data:`KEEP` figures' files (once per figure kept, not per file)."""
    try:
        files = [(entry.stat().st_mtime_ns, entry.path) for entry in os.scandir(where)
                 if entry.is_file() and not entry.name.startswith(".")]
    except OSError:
        return
    for _, path in sorted(files)[:max(0, len(files) - KEEP * len(KINDS))]:
        try:
            os.remove(path)
        except OSError:
            pass


def svg_bytes(fig) -> bytes:
    """``fig`` as the report's SVG file: no date, no creator (the same figure, the same bytes)."""
    buf = io.BytesIO()
    fig.savefig(buf, format="svg", metadata={"Date": None, "Creator": None})
    return buf.getvalue()
