"""Measure a report page as a reader sees it (stdlib ``html.parser`` only).

- :func:`visible_text`: the text shown without opening anything: not inside a collapsed
  ``<details>`` (its ``<summary>`` is shown), ``<script>``, ``<style>``, ``<head>`` or
  ``<template>``; whitespace collapsed, one space between blocks.
- :func:`page_text`: every text of the page, collapsed details included (what a reader finds
  by opening everything).
- :func:`share`: the share of the visible text inside the elements a CSS-class test picks
  (the answers table).
- :func:`repeated_sentences`: sentences of ``min_chars`` or more that occur more than once.
- :func:`absolute_paths`: machine paths (``/home/...``, ``/tmp/...``, ``C:\\...``).
- :func:`interval_ratios`: each printed interval ``[a, b]`` with both ends positive, and
  the ratio of its ends.

``python tests/_pagetext.py REPORT_DIR`` prints the measures of every page of a report.
"""

from __future__ import annotations

import re
import sys
from collections import Counter
from html.parser import HTMLParser
from pathlib import Path

#: elements whose content is never shown
HIDDEN = {"script", "style", "head", "template", "noscript"}
#: elements that start a new block of text (a sentence never runs across them)
BLOCKS = {"p", "div", "li", "ul", "ol", "table", "tr", "td", "th", "h1", "h2", "h3", "h4",
          "h5", "h6", "section", "header", "footer", "main", "nav", "figure", "figcaption",
          "details", "summary", "br", "pre", "blockquote", "dd", "dt", "dl", "caption",
          "thead", "tbody", "body", "article", "aside"}
VOID = {"br", "img", "meta", "link", "input", "hr", "col", "wbr", "source", "area", "base"}


class _Walker(HTMLParser):
    """Collects text blocks, each with whether it is visible and the classes around it."""

    def __init__(self, mark: str | None) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[tuple[str, dict]] = []
        self.blocks: list[tuple[bool, bool, list[str]]] = []  # (visible, marked, parts)
        self.mark = mark
        self._new_block()

    def _new_block(self) -> None:
        self.blocks.append((self._visible(), self._marked(), []))

    def _visible(self) -> bool:
        for i, (tag, attrs) in enumerate(self.stack):
            if tag in HIDDEN:
                return False
            if tag == "details" and "open" not in attrs:
                # inside a collapsed details only its own summary shows
                rest = self.stack[i + 1:]
                if not (rest and rest[0][0] == "summary"):
                    return False
        return True

    def _marked(self) -> bool:
        if self.mark is None:
            return False
        return any(self.mark in (attrs.get("class") or "").split() for _, attrs in self.stack)

    def handle_starttag(self, tag, attrs):
        if tag in VOID:
            if tag in BLOCKS:
                self._new_block()
            return
        self.stack.append((tag, dict(attrs)))
        if tag in BLOCKS or tag in HIDDEN or tag == "details":
            self._new_block()

    def handle_startendtag(self, tag, attrs):
        if tag in BLOCKS:
            self._new_block()

    def handle_endtag(self, tag):
        if tag in VOID:
            return
        for i in range(len(self.stack) - 1, -1, -1):
            if self.stack[i][0] == tag:
                del self.stack[i:]
                break
        if tag in BLOCKS or tag in HIDDEN or tag == "details":
            self._new_block()

    def handle_data(self, data):
        visible, marked, parts = self.blocks[-1]
        if (visible, marked) != (self._visible(), self._marked()):
            self._new_block()
            parts = self.blocks[-1][2]
        parts.append(data)


def _clean(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def blocks(html: str, mark: str | None = None) -> list[tuple[bool, bool, str]]:
    """Every text block of ``html``: (visible, inside an element of class ``mark``, text)."""
    w = _Walker(mark)
    w.feed(html)
    w.close()
    out = []
    for visible, marked, parts in w.blocks:
        text = _clean("".join(parts))
        if text:
            out.append((visible, marked, text))
    return out




def visible_text(html: str) -> str:
    """The text shown without opening anything, blocks joined by one space."""
    return " ".join(t for v, _, t in blocks(html) if v)








def share(html: str, css_class: str) -> tuple[int, int]:
    """(visible characters inside elements of class ``css_class``, all visible characters),
    counted as :func:`visible_text` joins them."""
    parts = [(m, t) for v, m, t in blocks(html, css_class) if v]
    total = len(" ".join(t for _, t in parts))
    inside = sum(len(t) for m, t in parts if m) + max(0, sum(1 for m, _ in parts if m) - 1)
    return inside, total


#: a sentence ends at . ! ? followed by a space and a letter, digit or quote (a sentence may
#: open with a tool's name in lower case: "wrk is closed-loop: ...")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Za-z0-9\"'(*])")
#: a word ending in a full stop that ends no sentence
_ABBREVIATIONS = ("e.g.", "i.e.", "vs.", "cf.", "etc.", "et al.", "approx.", "no.", "p.")


def sentences(text: str) -> list[str]:
    out: list[str] = []
    for part in _SENTENCE_END.split(text):
        part = part.strip()
        if not part:
            continue
        if out and out[-1].lower().endswith(_ABBREVIATIONS):  # "e.g. the" goes on
            out[-1] = f"{out[-1]} {part}"
        else:
            out.append(part)
    return out


def _all_blocks(html: str) -> list[str]:
    """Text of every block outside script, style and head (collapsed details included)."""
    class _All(_Walker):
        def _visible(self) -> bool:  # only the never-shown elements count as hidden
            return not any(tag in HIDDEN for tag, _ in self.stack)

    w = _All(None)
    w.feed(html)
    w.close()
    return [t for v, _, p in w.blocks if v for t in [_clean("".join(p))] if t]


def page_text(html: str) -> str:
    """Every text of the page a reader can reach (collapsed details included)."""
    return " ".join(_all_blocks(html))


def repeated_sentences(html: str, min_chars: int = 80, visible_only: bool = False
                       ) -> dict[str, int]:
    """Sentences of ``min_chars`` or more that occur more than once on the page (collapsed
    details included unless ``visible_only``), with their counts."""
    texts = [t for v, _, t in blocks(html) if v] if visible_only else _all_blocks(html)
    counts = Counter(s for t in texts for s in sentences(t) if len(s) >= min_chars)
    return {s: n for s, n in counts.items() if n > 1}


_ABS_PATH = re.compile(
    r"(?:(?<=^)|(?<=[\s\"'(=`:,\[]))(/(?:home|root|tmp|work|usr|opt|var|srv|mnt|media|Users|"
    r"private|nix|run|data|builds|github|runner|proc|etc)/[^\s\"'<>`)]*)"
    r"|(?<![\w])([A-Za-z]:\\[^\s\"'<>]+)|(file://[^\s\"'<>]+)")


def absolute_paths(text: str) -> list[str]:
    """Machine paths in ``text`` (absolute POSIX paths under a system folder, drive paths,
    ``file://`` URLs)."""
    return [next(g for g in m.groups() if g) for m in _ABS_PATH.finditer(text)]


_NUMBER = r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:e[+-]?\d+)?"
_INTERVAL = re.compile(rf"\[\s*(?:x)?({_NUMBER})\s*(%|[a-zµ/]*)\s*,\s*(?:x)?({_NUMBER})\s*"
                       rf"(%|[a-zµ/]*)\s*\]")


def interval_ratios(text: str) -> list[tuple[str, float]]:
    """Each printed interval ``[a, b]`` whose ends are both positive numbers (no percent
    change: those are signed), with the ratio of its larger end to its smaller."""
    out = []
    for m in _INTERVAL.finditer(text):
        a, ua, b, ub = m.groups()
        if "%" in (ua, ub) or a.startswith(("+", "-")) or b.startswith(("+", "-")):
            continue
        lo, hi = float(a), float(b)
        if lo > 0 and hi > 0:
            out.append((m.group(0), max(lo, hi) / min(lo, hi)))
    return out


def measure(folder: Path) -> dict[str, dict]:
    """Per page of a report folder: visible characters, the answers table's visible share,
    repeated sentences, absolute paths, the widest interval."""
    out = {}
    for page in sorted(folder.glob("*.html")):
        html = page.read_text(encoding="utf-8")
        inside, total = share(html, "answers")
        every = page_text(html)
        widest = max((r for _, r in interval_ratios(every)), default=float("nan"))
        out[page.name] = {"visible_chars": total, "answers_chars": inside,
                          "repeated": repeated_sentences(html),
                          "absolute_paths": absolute_paths(every), "widest_interval": widest}
    md = folder / "methods.md"
    if md.exists():
        out["methods.md"] = {"absolute_paths": absolute_paths(md.read_text(encoding="utf-8"))}
    return out


def main(argv: list[str]) -> int:
    for folder in argv:
        print(f"# {folder}")
        for name, m in measure(Path(folder)).items():
            if "visible_chars" not in m:
                print(f"{name}: absolute paths {len(m['absolute_paths'])} "
                      f"{m['absolute_paths'][:3]}")
                continue
            print(f"{name}: visible {m['visible_chars']} chars, answers {m['answers_chars']} "
                  f"({m['answers_chars'] / max(1, m['visible_chars']):.0%}); repeated >=80: "
                  f"{len(m['repeated'])} sentences ({sum(m['repeated'].values())} occurrences); "
                  f"absolute paths {len(m['absolute_paths'])}; widest interval "
                  f"{m['widest_interval']:.3g}x")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
