"""The demo report renders in a real browser: headless Chromium (Debian's ``chromium``) opens
index.html and every page it links, and every image loads, nothing errors, and nothing is
fetched from the network.

Chromium is driven through the Chrome DevTools Protocol over ``--remote-debugging-pipe``
(JSON messages separated by NUL on file descriptors 3 and 4): no extra package, no port.
"""

from __future__ import annotations

import json
import os
import select
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run",
         "--disable-dev-shm-usage", "--remote-debugging-pipe")
TIMEOUT_S = 60.0

IMAGES_JS = """JSON.stringify(Array.from(document.images).map(i => ({
  src: i.currentSrc.slice(0, 80), complete: i.complete, width: i.naturalWidth})))"""
HEADINGS_JS = """JSON.stringify(Array.from(document.querySelectorAll('h1, h2')).map(h => ({
  text: h.textContent.trim().slice(0, 60), visible: h.getClientRects().length > 0})))"""
LINKS_JS = """JSON.stringify(Array.from(document.querySelectorAll('a[href$=".html"]'))
  .map(a => a.href))"""

#: the answers tables (the index's, and each page's under its "Answers" heading): each
#: one's width against the width its container gives it, and the cells whose content is wider
#: than the cell
ANSWERS_FIT_JS = """JSON.stringify(Array.from(document.querySelectorAll(
    'table.answers, .perfkit-answers table')).map(t => ({
  width: t.getBoundingClientRect().width, room: t.parentElement.clientWidth,
  right: t.getBoundingClientRect().right, viewport: document.documentElement.clientWidth,
  overflowing: Array.from(t.querySelectorAll('td, th')).filter(
    c => c.scrollWidth > c.clientWidth).map(c => c.textContent.trim().slice(0, 60))})))"""
#: per table row: its height against the tallest content of the cells a reader sees (those
#: inside the table's scroll box): a row made tall by a cell scrolled out of view shows a
#: blank gap
ROW_GAPS_JS = """JSON.stringify(Array.from(document.querySelectorAll('table')).flatMap(t => {
  const box = (t.closest('.perfkit-scroll, .scroll') || t.parentElement).getBoundingClientRect();
  const tall = c => { const r = document.createRange(); r.selectNodeContents(c);
                      return r.getBoundingClientRect().height; };
  return Array.from(t.rows).map(row => {
    const seen = Array.from(row.cells).filter(c => {
      const b = c.getBoundingClientRect(); return b.left < box.right && b.right > box.left; });
    return {row: row.textContent.trim().slice(0, 60), height: row.getBoundingClientRect().height,
            content: Math.max(0, ...seen.map(tall)),
            line: parseFloat(getComputedStyle(row).lineHeight) || 20};
  });
}))"""
#: the most blank height a table row may show below its visible content, in lines
MAX_ROW_GAP_LINES = 2

pytestmark = [pytest.mark.slow,  # a browser, and most of them read a full report
              pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="chromium not installed")]


class Browser:
    """A headless Chromium and one tab, spoken to over the DevTools pipe."""

    def __init__(self, profile: str):
        r3, self._w = os.pipe()  # we write, the browser reads fd 3
        self._r, w4 = os.pipe()  # the browser writes fd 4, we read

        def wire():  # runs in the child before exec
            os.dup2(r3, 3)
            os.dup2(w4, 4)

        self.proc = subprocess.Popen(  # noqa: S603 - fixed argv, no shell
            [CHROMIUM, *FLAGS, f"--user-data-dir={profile}", "about:blank"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            preexec_fn=wire, close_fds=False)
        os.close(r3)
        os.close(w4)
        self._buf = b""
        self._id = 0
        self.events: list[dict] = []
        target = self.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        self.session = self.call("Target.attachToTarget",
                                 {"targetId": target, "flatten": True})["sessionId"]
        for domain in ("Page", "Runtime", "Log", "Network"):
            self.call(f"{domain}.enable", session=True)

    def _send(self, message: dict) -> None:
        os.write(self._w, json.dumps(message).encode() + b"\0")

    def _next(self, deadline: float) -> dict:
        while b"\0" not in self._buf:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("chromium did not answer in time")
            ready, _, _ = select.select([self._r], [], [], left)
            if ready:
                chunk = os.read(self._r, 1 << 16)
                if not chunk:
                    raise ConnectionError("chromium closed the DevTools pipe")
                self._buf += chunk
        raw, self._buf = self._buf.split(b"\0", 1)
        return json.loads(raw)

    def call(self, method: str, params: dict | None = None, session: bool = False) -> dict:
        self._id += 1
        message = {"id": self._id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = self.session
        self._send(message)
        deadline = time.monotonic() + TIMEOUT_S
        while True:
            reply = self._next(deadline)
            if reply.get("id") == self._id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            self.events.append(reply)

    def wait_for(self, method: str) -> dict:
        deadline = time.monotonic() + TIMEOUT_S
        while True:
            event = self._next(deadline)
            self.events.append(event)
            if event.get("method") == method:
                return event

    def open(self, url: str) -> None:
        self.events.clear()
        self.call("Page.navigate", {"url": url}, session=True)
        self.wait_for("Page.loadEventFired")

    def width(self, px: int | None) -> None:
        """Lay pages out in a window ``px`` CSS pixels wide (None: the default window)."""
        if px is None:
            self.call("Emulation.clearDeviceMetricsOverride", session=True)
        else:
            self.call("Emulation.setDeviceMetricsOverride", {
                "width": px, "height": 900, "deviceScaleFactor": 1, "mobile": False},
                session=True)

    def evaluate(self, expression: str):
        result = self.call("Runtime.evaluate", {"expression": expression,
                                                "returnByValue": True}, session=True)
        return json.loads(result["result"]["value"])

    def close(self) -> None:
        try:
            self._send({"id": self._id + 1, "method": "Browser.close"})
            self.proc.wait(timeout=10)
        except (OSError, subprocess.TimeoutExpired):
            self.proc.kill()
            self.proc.wait(timeout=10)
        finally:
            os.close(self._w)
            os.close(self._r)


def problems(events: list[dict]) -> list[str]:
    """Console errors, uncaught exceptions, failed loads and any request off the machine."""
    found = []
    for e in events:
        method, params = e.get("method"), e.get("params", {})
        if method == "Runtime.exceptionThrown":
            found.append(f"exception: {params['exceptionDetails'].get('text')}")
        elif method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
            found.append(f"console.{params['type']}: {params.get('args')}")
        elif method == "Log.entryAdded" and params["entry"].get("level") == "error":
            found.append(f"log: {params['entry'].get('text')} {params['entry'].get('url', '')}")
        elif method == "Network.loadingFailed":
            found.append(f"failed load: {params.get('errorText')}")
        elif method == "Network.requestWillBeSent":
            url = params["request"]["url"]
            if not url.startswith(("file:", "data:", "about:")):
                found.append(f"network request: {url}")
    return found


@pytest.fixture(scope="module")
def browser():
    profile = tempfile.mkdtemp(prefix="perfkit-chromium-")
    b = Browser(profile)
    try:
        yield b
    finally:
        b.close()
        shutil.rmtree(profile, ignore_errors=True)


def test_index_and_every_page_render_offline_with_all_images(browser, demo_report):
    out = demo_report
    browser.open((out / "index.html").as_uri())
    assert problems(browser.events) == []
    images = browser.evaluate(IMAGES_JS)
    assert images, "the index shows the figures"
    assert [i for i in images if not (i["complete"] and i["width"] > 0)] == []
    pages = browser.evaluate(LINKS_JS)
    assert len(pages) >= 4
    for page in sorted(set(pages)):
        browser.open(page)
        assert problems(browser.events) == [], page
        images = browser.evaluate(IMAGES_JS)
        assert images or page.endswith("/methods.html"), f"{page} has figures"
        broken = [i for i in images if not (i["complete"] and i["width"] > 0)]
        assert broken == [], page
        headings = browser.evaluate(HEADINGS_JS)
        assert headings, f"{page} has headings"
        assert [h["text"] for h in headings if not h["visible"]] == [], page


def test_a_broken_image_is_detected(browser, tmp_path):
    page = tmp_path / "broken.html"
    page.write_text('<html><body><img src="missing.png"><img src="data:image/png;base64,'
                    'iVBORw0KGgo="></body></html>')
    browser.open(page.as_uri())
    images = browser.evaluate(IMAGES_JS)
    assert [i["width"] for i in images] == [0, 0]
    assert any("failed load" in p for p in problems(browser.events))


@pytest.mark.parametrize("width_px", [1280, 800])
def test_the_answers_tables_wrap_inside_the_page(browser, width_px, seeds_report):
    out = seeds_report  # the longest unbroken words: config strings, run ids, footnote marks
    try:
        browser.width(width_px)
        for page in ("index.html", "seeds.html"):
            browser.open((out / page).as_uri())
            tables = browser.evaluate(ANSWERS_FIT_JS)
            assert tables, f"{page} has an answers table"
            for t in tables:
                assert t["overflowing"] == [], page
                assert t["width"] <= t["room"] + 1, (page, t["width"], t["room"])
                assert t["right"] <= t["viewport"] + 1, page
    finally:
        browser.width(None)


def test_no_table_row_is_made_tall_by_a_cell_out_of_view(browser, demo_report):
    out = demo_report
    try:
        browser.width(1280)
        for page in sorted(out.glob("*.html")):
            browser.open(page.as_uri())
            gaps = [(r["row"], round(r["height"]), round(r["content"]))
                    for r in browser.evaluate(ROW_GAPS_JS)
                    if r["height"] - r["content"] > MAX_ROW_GAP_LINES * r["line"]]
            assert gaps == [], page.name
    finally:
        browser.width(None)


def test_a_row_made_tall_out_of_view_is_detected(browser, tmp_path):
    page = tmp_path / "gap.html"
    page.write_text('<html><body style="width:400px"><div class="scroll" style="overflow-x:auto">'
                    '<table><tr><td style="white-space:nowrap">' + "x" * 120 + "</td><td>"
                    + "a sentence " * 40 + "</td></tr></table></div></body></html>")
    browser.open(page.as_uri())
    (row,) = browser.evaluate(ROW_GAPS_JS)
    assert row["height"] - row["content"] > MAX_ROW_GAP_LINES * row["line"]


ANSWERS_JS = """JSON.stringify(Array.from(document.querySelectorAll('.perfkit-answers table'))
  .map(t => ({table: t.scrollWidth, column: t.parentElement.clientWidth})))"""


THUMBS_JS = """JSON.stringify(Array.from(document.querySelectorAll('.figures img'))
  .map(i => [i.getAttribute('src'), i.clientWidth]))"""


def test_pages_fit_their_answers_and_carry_no_pygments_css(demo_report, browser):
    try:
        browser.width(1400)
        for page in ("overview", "latency", "scaling", "tuning-effects", "history"):
            text = (demo_report / f"{page}.html").read_text(encoding="utf-8")
            head = text[:text.index("</head>")]
            assert ".highlight" not in head and "linenos" not in head, page
            browser.open((demo_report / f"{page}.html").as_uri())
            (fit,) = browser.evaluate(ANSWERS_JS)
            assert fit["table"] <= fit["column"] + 1, (page, fit)
        browser.open((demo_report / "index.html").as_uri())
        widths = browser.evaluate(THUMBS_JS)
    finally:
        browser.width(None)
    history = [w for src, w in widths if "history-series" in src]
    others = [w for src, w in widths if "history-series" not in src]
    # the history figures span the index (as every wide figure does); the others are thumbnails
    assert history and min(history) == max(w for _, w in widths) > 2 * min(others), widths
