"""The report's Methods page: ``methods.md``, and ``methods.html`` rendered from it.

One section per experiment, with what is shared said once: a sentence that two or more
experiments' paragraphs hold alike (the host, the kernel settings, the run as the unit) moves
to the opening section "Shared by several experiments", naming the experiments it holds for,
and each experiment's section keeps its own sentences. Every page links here
(:data:`perfkit.report.methods.PAGE`, an anchor per experiment: :func:`anchor`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path

from perfkit.report.methods import SHARED, anchor, merge_alike, paragraph

#: a sentence ends at a full stop followed by a space and a capital (not inside `code`)
_END = re.compile(r"(?<=[.])\s+(?=[A-Z])")


def sentences(text: str) -> list[str]:
    """``text`` split into sentences, never inside a backquoted span."""
    out, start = [], 0
    for m in _END.finditer(text):
        if text[:m.start()].count("`") % 2 == 0:
            out.append(text[start:m.start()].strip())
            start = m.end()
    out.append(text[start:].strip())
    return [s for s in out if s]


def _named(names: list[str], every: int) -> str:
    return "Every experiment" if len(names) == every else "Experiments " + ", ".join(names)


def methods_markdown(records: Mapping[str, Mapping[str, list[str]]], title: str) -> str:
    """``methods.md``: the sentences shared by several experiments once, then one section per
    experiment (a record that is no experiment's, :func:`perfkit.report.methods.shared`,
    under its own heading)."""
    own = {n: sentences(paragraph(r)) for n, r in records.items() if SHARED not in
           r.get("scope", ())}
    holders: dict[str, list[str]] = {}
    for name, said in own.items():
        for s in dict.fromkeys(said):
            holders.setdefault(s, []).append(name)
    shared = {s: names for s, names in holders.items() if len(names) > 1}
    out = [f"# Methods: {title}", ""]
    if shared:
        out += ["## Shared by several experiments", ""]
        by: dict[tuple[str, ...], list[str]] = {}
        for s, names in shared.items():
            by.setdefault(tuple(names), []).append(s)
        for holder_names, sentences_of in by.items():
            out += [f"{_named(list(holder_names), len(own))}: " + " ".join(sentences_of), ""]
    for name, rec in records.items():
        if SHARED in rec.get("scope", ()):
            out += [f"## {name}", "",
                    " ".join(merge_alike(rec["analyses"])), ""]
            continue
        kept = [s for s in dict.fromkeys(own[name]) if s not in shared]
        out += [f"## {name}", "", " ".join(kept) or "(every sentence is shared, above)", ""]
    return "\n".join(out)


def methods_html(markdown: str, title: str, css: str = "") -> str:
    """The Methods page: ``markdown`` (from :func:`methods_markdown`) as HTML, each section's
    heading with its :func:`anchor`, and a link back to the index. Nothing is loaded from the
    network."""
    import html

    import mistune

    body = str(mistune.create_markdown(escape=True)(markdown))
    body = re.sub(r"<h2>(.*?)</h2>",
                  lambda m: f'<h2 id="{anchor(html.unescape(m.group(1)))}">{m.group(1)}</h2>',
                  body)
    return ("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
            '<meta name="viewport" content="width=device-width, initial-scale=1.0">\n'
            f"<title>Methods: {html.escape(title)}</title>\n<style>{css}</style>\n</head>\n"
            '<body>\n<nav class="perfkit-nav"><a href="index.html">&larr; report index</a> '
            '&middot; <a href="methods.md">methods.md</a></nav>\n'
            f"<main>\n{body}\n</main>\n</body>\n</html>\n")


def write(out_dir: Path, records: Mapping[str, Mapping[str, list[str]]], title: str,
          css: str = "") -> Path:
    """Write ``methods.md`` and ``methods.html`` into ``out_dir``; return the HTML page."""
    text = methods_markdown(records, title)
    (out_dir / "methods.md").write_text(text, encoding="utf-8")
    page = out_dir / "methods.html"
    page.write_text(methods_html(text, title, css), encoding="utf-8")
    return page
