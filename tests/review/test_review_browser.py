"""The review page in real headless Chromium (Debian's /usr/bin/chromium), driven by Playwright.

Needs the Debian packages ``chromium`` and ``chromium-driver`` (``apt-get install -y chromium
chromium-driver``) and the PyPI package ``playwright`` (its driver only: never run
``playwright install``).  Without them the test skips and says how to install them.
"""

from __future__ import annotations

import http.client
import importlib.util
import io
import os
import shutil
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from tide_core.io.open import open_warehouse
from tide_core.review.api import ReviewAPI
from tide_core.review.server import start_in_thread
from tide_core.review.store import ReviewStore
from tide_core.spans import Span
from tide_core.store.span_cache import REVIEWER, SpanCache

CHROMIUM = os.environ.get("TIDE_CHROMIUM", "/usr/bin/chromium")
# Flags for this sandbox: root (no sandbox), no GPU, and no background network traffic to
# Google's hosts, which the closed network refuses (see docs/review.md).
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
]

_spec = importlib.util.spec_from_file_location("_review_fixtures", Path(__file__).with_name("test_review_api.py"))
fx = sys.modules.setdefault("_review_fixtures", importlib.util.module_from_spec(_spec))
if not hasattr(fx, "populate"):
    _spec.loader.exec_module(fx)


def _require_browser():
    if not (Path(CHROMIUM).exists() or shutil.which("chromium")):
        pytest.skip(
            "headless Chromium not installed: run `apt-get install -y chromium chromium-driver` "
            "(as root; or set TIDE_CHROMIUM to a Chromium binary)"
        )
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.skip(
            "Playwright for Python not installed: `pip install playwright` "
            "(the driver only; never run `playwright install`, the browser is Debian's chromium)"
        )
    return sync_playwright, CHROMIUM if Path(CHROMIUM).exists() else shutil.which("chromium")


@pytest.fixture
def browser_page(tmp_path):
    sync_playwright, exe = _require_browser()
    pop = fx.populate(tmp_path / "wh.duckdb")
    wh = open_warehouse(f"duckdb:{pop.path}")
    running = start_in_thread(ReviewAPI(ReviewStore(wh, fx.STUDY, fx.KEY, reviewer="alice")), "127.0.0.1", 0)
    problems: list[str] = []
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=exe, args=FLAGS, env={**os.environ, "HOME": str(tmp_path)})
            try:
                page = browser.new_context(viewport={"width": 1400, "height": 900}).new_page()
                page.on("pageerror", lambda e: problems.append(f"pageerror: {e}"))
                page.on(
                    "console", lambda m: problems.append(f"console {m.type}: {m.text}") if m.type == "error" else None
                )
                page.on("requestfailed", lambda r: problems.append(f"request failed: {r.url}"))
                yield page, running, pop, wh, problems
            finally:
                browser.close()
    finally:
        running.stop()
        wh.close()


def _select_in_original(page, word: str, occurrence: int = 0) -> None:
    """Select ``word`` in the original pane with a DOM Range, as a mouse drag would."""
    page.evaluate(
        """([word, occurrence]) => {
        const pane = document.getElementById("orig-text");
        const walker = document.createTreeWalker(pane, NodeFilter.SHOW_TEXT);
        let node, seen = 0;
        while ((node = walker.nextNode())) {
            let i = node.data.indexOf(word);
            while (i >= 0) {
                if (seen++ === occurrence) {
                    const r = document.createRange();
                    r.setStart(node, i); r.setEnd(node, i + word.length);
                    const sel = window.getSelection(); sel.removeAllRanges(); sel.addRange(r);
                    return;
                }
                i = node.data.indexOf(word, i + 1);
            }
        }
        throw new Error("word not found in the original pane");
    }""",
        [word, occurrence],
    )


def test_page_renders_highlights_and_records_decisions(browser_page, tmp_path):
    from playwright.sync_api import expect

    page, running, pop, wh, problems = browser_page
    cache = SpanCache(wh)
    # without the login URL the page loads (package files) but shows no data
    resp = page.goto(running.url)
    assert resp.status == 200
    expect(page.locator("#message")).to_contain_text("E875")
    assert "Adams" not in page.content() and page.locator("#note-list li").count() == 0
    page.goto("about:blank")  # a new document: the login URL below differs from this one by its fragment
    # the URL `tide review` prints: its one-time code (in the fragment) is swapped for a session
    # token the page keeps in sessionStorage and sends as an Authorization header; no cookie
    page.goto(running.login_url)
    page.wait_for_selector("#orig-text mark.tide-span")
    assert page.url == running.url  # the code left the address bar
    assert page.context.cookies() == [] and page.evaluate("document.cookie") == ""
    session = page.evaluate("sessionStorage.getItem('tide-review-session')")
    assert len(session) == 43 and session not in (running.token, running.server.login_code)
    assert running.server.exchange(running.server.login_code) is None  # the code is used up
    page.reload()  # the session survives a reload of the tab
    page.wait_for_selector("#orig-text mark.tide-span")
    page.wait_for_selector("#deid-text mark.tide-span")

    # highlights: exactly the recognized spans of n1, coloured by label; released output beside it
    marks = page.eval_on_selector_all(
        "#orig-text mark.tide-span", "ms => ms.map(m => [m.textContent, m.dataset.label])"
    )
    assert sorted(map(tuple, marks)) == sorted((fx.T1[s.start : s.end], s.label) for s in pop.spans["n1"])
    assert page.inner_text("#orig-text") == fx.T1
    deid = page.eval_on_selector_all("#deid-text mark.tide-span", "ms => ms.map(m => m.textContent)")
    assert sorted(deid) == sorted(["Baker", "4/9/2021", "Jane Doe", "87654321"])
    colour = page.eval_on_selector('#orig-text mark[data-label="PATIENT"]', "m => getComputedStyle(m).backgroundColor")
    assert colour == "rgb(255, 179, 179)"  # LABEL_COLOURS["PATIENT"]
    assert page.locator("#label-boxes label").count() == 11  # legend: one entry per label

    shot = tmp_path / "review.png"
    page.screenshot(path=str(shot), full_page=True)
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 20_000
    from PIL import Image

    img = Image.open(io.BytesIO(data)).convert("RGB")
    assert img.width >= 1400 and img.height >= 900
    pink = sum(1 for px in img.getdata() if px == (255, 179, 179))
    assert pink > 200, f"PATIENT highlight not visible in the screenshot ({pink} px)"

    # "wrong" on the DOCTOR span -> a reviewer reject row in the span cache, shown distinctly
    adams = next(s for s in pop.spans["n1"] if s.label == "DOCTOR")
    page.click('#span-table tr[data-label="DOCTOR"] button.act-reject')
    page.wait_for_selector('#span-table tr[data-label="DOCTOR"][data-status="rejected"]')
    assert adams not in cache.spans(fx.STUDY, ["n1"])["n1"]
    assert [(r["decision"], r["start"], r["end"], r["reviewer"]) for r in cache.review_rows(fx.STUDY, "n1")] == [
        ("reject", adams.start, adams.end, "alice")
    ]
    assert page.get_attribute('#orig-text mark[data-label="DOCTOR"]', "data-status") == "rejected"
    assert "re-run anonymization" in page.inner_text("#deid-status")

    # a missed span: select it in the original, pick a label, add
    _select_in_original(page, "Springfield")
    page.wait_for_selector("#add-span:not([disabled])")
    page.select_option("#add-label", "LOCATION")
    page.click("#add-span")
    page.wait_for_selector('#span-table tr[data-label="LOCATION"][data-status="added"]')
    a, b = fx._at(fx.T1, "Springfield")
    assert Span("n1", a, b, "LOCATION", 1.0, REVIEWER) in cache.spans(fx.STUDY, ["n1"])["n1"]
    assert page.get_attribute('#orig-text mark[data-label="LOCATION"]', "data-status") == "added"

    # undo last removes the addition again
    page.click("#undo-last")
    page.wait_for_selector('#span-table tr[data-label="LOCATION"]', state="detached")
    assert [r["decision"] for r in cache.review_rows(fx.STUDY, "n1")] == ["reject"]

    # filters: hiding a category removes its highlight, not the text
    page.uncheck('#label-boxes input[data-label="DATE"]')
    assert page.locator('#orig-text mark[data-label="DATE"]').count() == 0
    assert page.inner_text("#orig-text") == fx.T1
    page.uncheck('#recognizer-boxes input[data-recognizer="tide.known_phi@1"]')
    assert page.locator('#orig-text mark[data-label="PATIENT"]').count() == 0
    page.check('#recognizer-boxes input[data-recognizer="tide.known_phi@1"]')
    page.check('#label-boxes input[data-label="DATE"]')

    # an astral character before the span: highlight and selection offsets stay in code points
    page.click('#note-list li[data-note-id="n3"]')
    expect(page.locator("#note-title")).to_have_text("Note n3")
    assert page.inner_text('#orig-text mark[data-label="PATIENT"]') == "Anna Berg"
    _select_in_original(page, "came")
    page.wait_for_selector("#add-span:not([disabled])")
    page.select_option("#add-label", "OTHER")
    page.click("#add-span")
    page.wait_for_selector('#span-table tr[data-label="OTHER"][data-status="added"]')
    a, b = fx._at(fx.T3, "came")
    assert [(r["start"], r["end"], r["label"]) for r in cache.review_rows(fx.STUDY, "n3")] == [(a, b, "OTHER")]

    # a note with no release under the key says so
    page.click('#note-list li[data-note-id="n2"]')
    expect(page.locator("#note-title")).to_have_text("Note n2")
    assert page.get_attribute("#deid-status", "data-status") == "not_released"
    assert "not released under this key" in page.inner_text("#deid-status")
    assert page.locator("#deid-text mark").count() == 0
    assert problems == []


def test_missing_browser_skips_with_install_hint(monkeypatch):
    monkeypatch.setattr(sys.modules[__name__], "CHROMIUM", "/nonexistent/chromium")
    monkeypatch.setattr(shutil, "which", lambda name: None)
    with pytest.raises(pytest.skip.Exception, match=r"apt-get install -y chromium chromium-driver"):
        _require_browser()


class _Recorder(BaseHTTPRequestHandler):
    """Another local web server on another port: it keeps every request's headers."""

    seen: list[list[tuple[str, str]]] = []

    def do_GET(self) -> None:
        type(self).seen.append(list(self.headers.items()))
        data = b"<!doctype html><title>other</title><p>another local server</p><img src='/pixel.png'>"
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format, *args):
        pass


def test_another_local_port_gets_no_credential_and_no_cookie_replays(browser_page):
    """Browsers send 127.0.0.1's cookies to every port: after logging in to the review page, a
    second real server on another 127.0.0.1 port, visited by the same browser, must see no token,
    no login code and no session token in any header; and no cookie the browser holds opens the API."""
    from playwright.sync_api import expect

    page, running, pop, wh, problems = browser_page
    _Recorder.seen = []
    other = ThreadingHTTPServer(("127.0.0.1", 0), _Recorder)
    threading.Thread(target=other.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    try:
        page.goto(running.login_url)
        page.wait_for_selector("#orig-text mark.tide-span")
        session = page.evaluate("sessionStorage.getItem('tide-review-session')")
        assert session and page.url == running.url
        other_url = f"http://127.0.0.1:{other.server_address[1]}/"
        # the same tab and a second tab of the same browser context visit the other port
        second = page.context.new_page()
        second.goto(other_url)
        expect(second.locator("p")).to_have_text("another local server")
        assert second.evaluate("sessionStorage.length") == 0 and second.evaluate("document.cookie") == ""
        page.goto(other_url)
        page.go_back()  # and back to the review page: its tab still has the session
        page.wait_for_selector("#orig-text mark.tide-span")
        assert len(_Recorder.seen) >= 4  # two pages and their images at least
        secrets_ = (running.token, running.server.login_code, session)
        for headers in _Recorder.seen:
            assert "cookie" not in {k.lower() for k, _ in headers}, headers
            for k, v in headers:
                assert not any(x in v for x in secrets_), k
        # replay: every cookie the browser holds (none), and every header the other port got
        cookies = page.context.cookies()
        assert cookies == []
        port = running.server.server_address[1]
        replays = [{"Cookie": f"{c['name']}={c['value']}"} for c in cookies] + [
            {k: v for k, v in h if k.lower() not in ("host", "connection")} for h in _Recorder.seen
        ]
        for hdrs in replays:
            con = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
            con.request("GET", "/api/notes/n1", headers=hdrs)
            resp = con.getresponse()
            body = resp.read()
            con.close()
            assert resp.status == 401 and b"Adams" not in body, hdrs
    finally:
        other.shutdown()
        other.server_close()
    assert [p for p in problems if "pixel.png" not in p] == []
