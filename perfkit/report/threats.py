"""Threats to validity as a page shows them: each said once, collapsed, linked where said.

The analysis words each threat of an experiment as one sentence that opens with the
experiment's name (``"demo-aa: load generator and server ran on the same host ..."``). A page
that shows several experiments would repeat the same sentence for each; here:

- :func:`merge`: threats that read alike but for the experiment are one item naming every
  experiment it holds for;
- a threat already given as a caveat of the page's answers is a link to that caveat;
- a threat common to every page of a report is said once, on the index (:func:`common`), and
  each page links to it (:func:`rerender`, at export, once every page is known).

The list sits in a collapsed ``<details>``: a reader opens it when they weigh the answers.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from perfkit.report.condense import escape as _e
from perfkit.report.condense import opening

#: metadata key (under the report's) of a page's threats output
META = "threats"
#: where the index lists the threats common to every page
INDEX_ANCHOR = "threats"
_PREFIX = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._+-]*): (.+)$", re.S)
#: words of a threat kept in the link that stands for it where it is not repeated
LINK_WORDS = 9


def split(text: str) -> tuple[str, str]:
    """``("demo-aa", "load generator ...")`` from ``"demo-aa: load generator ..."``; a threat
    of no experiment gives ``("", text)``."""
    m = _PREFIX.match(text)
    return (m.group(1), m.group(2)) if m else ("", text)


def merge(texts: Iterable[str]) -> list[dict[str, Any]]:
    """One record per distinct threat: ``{"experiments": [...], "text": ..., "full": [...]}``
    (``full``: the sentences as the analysis worded them), in order of first appearance."""
    out: dict[str, dict[str, Any]] = {}
    for text in texts:
        exp, rest = split(text)
        rec = out.setdefault(rest, {"experiments": [], "text": rest, "full": []})
        if exp and exp not in rec["experiments"]:
            rec["experiments"].append(exp)
        if text not in rec["full"]:
            rec["full"].append(text)
    return list(out.values())


def sentence(rec: Mapping[str, Any]) -> str:
    """A merged threat as one sentence: ``"a, b: text"``."""
    exps = rec.get("experiments") or []
    return f"{', '.join(exps)}: {rec['text']}" if exps else rec["text"]


def short(rec: Mapping[str, Any], n_words: int = LINK_WORDS, named: bool = True) -> str:
    """The opening ``n_words`` of a threat, for a link that stands for it (``named``: after
    the experiments it was said of)."""
    head = opening(rec["text"], n_words)
    exps = rec.get("experiments") or []
    return f"{', '.join(exps)}: {head}" if exps and named else head


def records_html(title: str, records: Sequence[Mapping[str, Any]],
                 said: Mapping[str, int] | None = None,
                 common: Mapping[str, int] | None = None) -> str:
    """The collapsed list of a page's threats. ``said``: full sentence -> the number of the
    answers' caveat that gives it; ``common``: threat text -> its number on the index."""
    said, common = said or {}, common or {}
    items = []
    for rec in records:
        caveat = next((said[t] for t in rec.get("full", ()) if t in said), None)
        if rec["text"] in common:
            k = common[rec["text"]]
            items.append(f'<li class="said">{_e(short(rec))} (common to every page: '
                         f'<a href="index.html#{INDEX_ANCHOR}-{k}">threat {k} on the '
                         "index</a>)</li>")
        elif caveat is not None:
            items.append(f'<li class="said">{_e(short(rec))} (<a href="#caveat-{caveat}">'
                         f"caveat {caveat}</a> of the answers)</li>")
        else:
            items.append(f"<li>{_e(rec.get('shown') or sentence(rec))}</li>")
    return (f'<details class="perfkit-warning perfkit-threats"><summary><h2>{_e(title)} '
            f"({len(items)})</h2></summary><ul>{''.join(items)}</ul></details>")


def common(pages: Iterable[Sequence[Mapping[str, Any]]]) -> list[dict[str, Any]]:
    """The threats on every page that has any (by their text without the experiment), each
    with every experiment it was said of, in the first page's order."""
    pages = [list(p) for p in pages if p]
    if len(pages) < 2:
        return []
    keys = set.intersection(*({r["text"] for r in p} for p in pages))
    out: dict[str, dict[str, Any]] = {}
    for page in pages:
        for rec in page:
            if rec["text"] in keys:
                got = out.setdefault(rec["text"], {"experiments": [], "text": rec["text"]})
                got["experiments"] += [e for e in rec.get("experiments", ())
                                       if e not in got["experiments"]]
    return list(out.values())


def rerender(nb: Any, common_texts: Mapping[str, int], meta_key: str) -> None:
    """Rewrite, in place, the HTML of every threats output of an executed notebook so that the
    threats common to every page link to the index instead of repeating it."""
    for cell in nb.cells:
        for output in cell.get("outputs", []):
            meta = (output.get("metadata") or {}).get(meta_key) or {}
            found = meta.get(META)
            if found and "text/html" in output.get("data", {}):
                output["data"]["text/html"] = records_html(
                    found["title"], found["records"], found.get("said"), common_texts)
