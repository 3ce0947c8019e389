"""Review API against the real server on 127.0.0.1 with a real DuckDB warehouse.

``populate`` (also used by test_review_browser.py) writes a notes table, recognizes it into the
span cache with ``SpanCache.store`` and releases one note under key ``k1``.
"""

from __future__ import annotations

import datetime as dt
import http.client
import json
import logging
import urllib.parse
from dataclasses import dataclass

import pyarrow as pa
import pytest

from tide_core.io.open import open_warehouse
from tide_core.review.api import ReviewAPI
from tide_core.review.server import start_in_thread
from tide_core.review.store import ReviewStore
from tide_core.spans import Note, Span
from tide_core.store import tables
from tide_core.store.span_cache import REVIEWER, SpanCache

STUDY = "s1"
KEY = "k1"

T1 = "Seen by Dr. Adams on 3/4/2021. Pt Mary Lee, MRN 12345678, lives in Springfield."
T2 = "Call 555-123-4567 re: John Smith."
T3 = "Patient 😀 Anna Berg came back."  # an astral character before a span: code-point offsets
T4 = "Not yet recognized: Bob Stone."


def _at(text: str, sub: str) -> tuple[int, int]:
    i = text.index(sub)
    return i, i + len(sub)


def _span(nid: str, text: str, sub: str, label: str, rec: str = "tide.regex@1", score: float = 0.9) -> Span:
    a, b = _at(text, sub)
    return Span(nid, a, b, label, score, rec)


@dataclass
class Populated:
    path: str
    notes: dict[str, Note]
    spans: dict[str, list[Span]]


def populate(path) -> Populated:
    """A DuckDB warehouse with 4 notes (3 recognized) and n1 released under KEY."""
    notes = {
        n.note_id: n
        for n in [
            Note("n1", "p1", T1, {"note_date": "2021-03-04", "note_type": "progress"}),
            Note("n2", "p2", T2, {"note_date": "2021-05-01", "note_type": "phone"}),
            Note("n3", "p3", T3, {"note_date": None, "note_type": "progress"}),
            Note("n4", "p4", T4, {"note_date": None, "note_type": "progress"}),
        ]
    }
    spans = {
        "n1": [
            _span("n1", T1, "Adams", "DOCTOR", "tide.gazetteer@1"),
            _span("n1", T1, "3/4/2021", "DATE"),
            _span("n1", T1, "Mary Lee", "PATIENT", "tide.known_phi@1"),
            _span("n1", T1, "12345678", "ID"),
        ],
        "n2": [_span("n2", T2, "555-123-4567", "PHONE")],
        "n3": [_span("n3", T3, "Anna Berg", "PATIENT", "tide.known_phi@1")],
    }
    wh = open_warehouse(f"duckdb:{path}")
    try:
        rows = [
            {
                "note_id": n.note_id,
                "patient_id": n.patient_id,
                "text": n.text,
                "note_date": n.metadata.get("note_date"),
                "note_type": n.metadata.get("note_type"),
                "source": "ehr",
                "site": "A",
            }
            for n in notes.values()
        ]
        wh.replace_table("notes", pa.Table.from_pylist(rows))
        recognized = {k: v for k, v in spans.items()}
        statuses = {k: ("ok", None) for k in spans}
        SpanCache(wh).store(STUDY, "fp-test", [notes[k] for k in ("n1", "n2", "n3")], recognized, statuses, keep=set())
        # released output of n1 under KEY (what anonymize_study would write: surrogates, no originals)
        out = "Seen by Dr. Baker on 4/9/2021. Pt Jane Doe, MRN 87654321, lives in Springfield."
        now = dt.datetime.now(dt.UTC)
        wh.replace_partition(
            "tide_deid_notes",
            tables.to_table(
                "deid_notes",
                [
                    {
                        "study": STUDY,
                        "key": KEY,
                        "note_id": "n1",
                        "note_ref": "ref-1",
                        "patient_ref": "pref-1",
                        "text": out,
                        "note_date": "2021-03-09",
                        "anonymizer": "tide.anonymizer@4",
                        "fingerprint": "fp-test",
                        "released_at": now,
                    }
                ],
            ),
            {"study": STUDY, "key": KEY},
        )
        rel = []
        for s, sub in zip(spans["n1"], ("Baker", "4/9/2021", "Jane Doe", "87654321"), strict=True):
            a, b = _at(out, sub)
            rel.append(
                {
                    "study": STUDY,
                    "key": KEY,
                    "note_id": "n1",
                    "start": s.start,
                    "end": s.end,
                    "out_start": a,
                    "out_end": b,
                    "label": s.label,
                    "operator": "surrogate",
                    "recognizer": s.recognizer,
                }
            )
        wh.replace_partition(
            "tide_released_spans", tables.to_table("released_spans", rel), {"study": STUDY, "key": KEY}
        )
        wh.replace_partition(
            "tide_quarantine",
            tables.to_table(
                "quarantine",
                [
                    {
                        "study": STUDY,
                        "key": KEY,
                        "note_id": "n2",
                        "patient_id": "p2",
                        "stage": "anonymization",
                        "code": "E410",
                        "reason": "note n2: span could not be replaced",
                        "row_number": 1,
                        "quarantined_at": now,
                    }
                ],
            ),
            {"study": STUDY, "key": KEY},
        )
    finally:
        wh.close()
    return Populated(str(path), notes, spans)


@dataclass
class Client:
    base: str
    token: str | None = None  # sent as "Authorization: Bearer TOKEN" (every request needs it)

    def request(self, method: str, path: str, body=None, headers=None, raw: bytes | None = None):
        u = urllib.parse.urlsplit(self.base)
        con = http.client.HTTPConnection(u.hostname, u.port, timeout=10)
        hdrs = dict(headers or {})
        if self.token is not None:
            hdrs.setdefault("Authorization", f"Bearer {self.token}")
        data = raw
        if body is not None:
            data = json.dumps(body).encode()
            hdrs.setdefault("Content-Type", "application/json")
        con.request(method, path, body=data, headers=hdrs)
        resp = con.getresponse()
        payload = resp.read()
        con.close()
        ctype = resp.getheader("Content-Type") or ""
        return resp.status, (json.loads(payload) if ctype.startswith("application/json") else payload), resp

    def get(self, path):
        status, body, _ = self.request("GET", path)
        return status, body

    def post(self, path, body, **kw):
        status, data, _ = self.request("POST", path, body, **kw)
        return status, data


@pytest.fixture
def served(tmp_path):
    pop = populate(tmp_path / "wh.duckdb")
    wh = open_warehouse(f"duckdb:{pop.path}")
    store = ReviewStore(wh, STUDY, KEY)
    running = start_in_thread(ReviewAPI(store), "127.0.0.1", 0)
    try:
        yield pop, Client(running.url.rstrip("/"), running.token), wh
    finally:
        running.stop()
        wh.close()


def test_meta_lists_labels_keys_and_notes(served):
    pop, c, _ = served
    status, meta = c.get("/api/meta")
    assert status == 200
    assert meta["study"] == STUDY and meta["key"] == KEY and meta["keys"] == [KEY]
    assert [x["label"] for x in meta["labels"]][:3] == ["PATIENT", "DOCTOR", "DATE"]
    assert all(x["colour"].startswith("#") for x in meta["labels"])
    status, page = c.get("/api/notes?limit=2")
    assert status == 200 and page["total"] == 4 and [n["note_id"] for n in page["notes"]] == ["n1", "n2"]
    status, page = c.get("/api/notes?q=N4")
    assert page["total"] == 1 and page["notes"][0]["recognized"] is False
    assert "text" not in page["notes"][0]  # the list carries no note text
    status, body = c.get("/api/notes?limit=0")
    assert status == 400 and body["error"]["code"] == "E862"


def test_note_view_original_and_released(served):
    pop, c, _ = served
    status, v = c.get("/api/notes/n1")
    assert status == 200
    assert v["text"] == T1
    assert [(s["start"], s["end"], s["label"], s["status"]) for s in v["spans"]] == sorted(
        (s.start, s.end, s.label, "active") for s in pop.spans["n1"]
    )
    d = v["deid"]
    assert d["status"] == "released" and d["key"] == KEY and "Adams" not in d["text"]
    for s in d["spans"]:
        assert d["text"][s["out_start"] : s["out_end"]] in ("Baker", "4/9/2021", "Jane Doe", "87654321")
    # n2 is not released under KEY: the server says so (with the quarantine code) and anonymizes nothing
    status, v2 = c.get("/api/notes/n2")
    assert v2["deid"]["status"] == "not_released" and "text" not in v2["deid"]
    assert v2["deid"]["message"] == "not released under this key"
    assert [q["code"] for q in v2["deid"]["quarantine"]] == ["E410"]
    status, v3 = c.get("/api/notes/n1?key=other")
    assert v3["deid"]["status"] == "not_released" and v3["deid"]["key"] == "other"
    status, v4 = c.get("/api/notes/n4")
    assert v4["recognition"] is None and v4["spans"] == []
    status, body = c.get("/api/notes/nope")
    assert status == 404 and body["error"]["code"] == "E851"


def test_reject_add_undo_land_in_span_cache(served):
    pop, c, wh = served
    cache = SpanCache(wh)
    adams = next(s for s in pop.spans["n1"] if s.label == "DOCTOR")
    status, body = c.post("/api/notes/n1/reject", {"start": adams.start, "end": adams.end, "label": "DOCTOR"})
    assert status == 201 and body["decision"] == "reject"
    assert adams not in cache.spans(STUDY, ["n1"])["n1"]
    assert adams in cache.spans(STUDY, ["n1"], apply_review=False)["n1"]
    a, b = _at(T1, "Springfield")
    status, body = c.post("/api/notes/n1/add", {"start": a, "end": b, "label": "LOCATION"})
    assert status == 201
    effective = cache.spans(STUDY, ["n1"])["n1"]
    assert Span("n1", a, b, "LOCATION", 1.0, REVIEWER) in effective
    rows = cache.review_rows(STUDY, "n1")
    assert sorted((r["decision"], r["label"]) for r in rows) == [("add", "LOCATION"), ("reject", "DOCTOR")]
    # the view shows both decisions distinctly
    _, v = c.get("/api/notes/n1")
    by = {(s["start"], s["label"]): s for s in v["spans"]}
    assert by[(adams.start, "DOCTOR")]["status"] == "rejected"
    assert by[(a, "LOCATION")]["status"] == "added" and by[(a, "LOCATION")]["origin"] == "reviewer"
    assert v["deid"]["outdated"] is True  # released before these decisions
    _, page = c.get("/api/notes?q=n1")
    assert page["notes"][0]["n_review"] == 2
    # duplicates are refused
    status, body = c.post("/api/notes/n1/reject", {"start": adams.start, "end": adams.end, "label": "DOCTOR"})
    assert status == 409 and body["error"]["code"] == "E858"
    status, body = c.post("/api/notes/n1/add", {"start": a, "end": b, "label": "LOCATION"})
    assert status == 409 and body["error"]["code"] == "E860"
    # undo restores the recognizer span and removes the addition
    status, body = c.post("/api/notes/n1/undo", {"start": adams.start, "end": adams.end, "label": "DOCTOR"})
    assert status == 200 and body["undone"] == 1
    status, _ = c.post("/api/notes/n1/undo", {"start": a, "end": b, "label": "LOCATION"})
    assert status == 200
    assert cache.spans(STUDY, ["n1"])["n1"] == sorted(pop.spans["n1"])
    assert cache.review_rows(STUDY, "n1") == []
    status, body = c.post("/api/notes/n1/undo", {"start": a, "end": b, "label": "LOCATION"})
    assert status == 404 and body["error"]["code"] == "E861"


def test_code_point_offsets(served):
    pop, c, wh = served
    a, b = _at(T3, "Anna Berg")  # code points, as Python counts
    _, v = c.get("/api/notes/n3")
    assert [(s["start"], s["end"]) for s in v["spans"]] == [(a, b)]
    status, _ = c.post("/api/notes/n3/reject", {"start": a, "end": b, "label": "PATIENT"})
    assert status == 201
    assert SpanCache(wh).spans(STUDY, ["n3"])["n3"] == []


@pytest.mark.parametrize(
    "path,body,status,code",
    [
        ("/api/notes/n1/add", {"start": 5, "end": 999, "label": "DATE"}, 400, "E853"),
        ("/api/notes/n1/add", {"start": -1, "end": 3, "label": "DATE"}, 400, "E853"),
        ("/api/notes/n1/add", {"start": 9, "end": 9, "label": "DATE"}, 400, "E853"),
        ("/api/notes/n1/add", {"start": "1", "end": 3, "label": "DATE"}, 400, "E852"),
        ("/api/notes/n1/add", {"start": True, "end": 3, "label": "DATE"}, 400, "E852"),
        ("/api/notes/n1/add", {"start": 1, "end": 3, "label": "NAME"}, 400, "E854"),
        ("/api/notes/n1/add", {"start": 1, "end": 3}, 400, "E864"),
        ("/api/notes/n1/add", {"start": 1, "end": 3, "label": "DATE", "text": "x"}, 400, "E864"),
        ("/api/notes/n1/add", {"start": 4, "end": 5, "label": "DATE"}, 400, "E859"),  # a blank
        ("/api/notes/n1/reject", {"start": 0, "end": 4, "label": "DATE"}, 404, "E857"),  # no such span
        ("/api/notes/n4/add", {"start": 20, "end": 23, "label": "PATIENT"}, 409, "E855"),  # not recognized
        ("/api/notes/zz/add", {"start": 1, "end": 2, "label": "DATE"}, 404, "E851"),
        ("/api/notes/n1/frobnicate", {"start": 1, "end": 2, "label": "DATE"}, 404, "E863"),
        ("/api/notes/n1/add", [1, 2], 400, "E868"),
    ],
)
def test_validation_errors(served, path, body, status, code):
    pop, c, wh = served
    got, data = c.post(path, body)
    assert (got, data["error"]["code"]) == (status, code)
    assert data["error"]["message"] and "Adams" not in json.dumps(data)
    assert SpanCache(wh).review_rows(STUDY) == []


def test_transport_rules(served):
    pop, c, wh = served
    ok = {"start": 0, "end": 4, "label": "OTHER"}
    status, data, _ = c.request(
        "POST", "/api/notes/n1/add", raw=json.dumps(ok).encode(), headers={"Content-Type": "text/plain"}
    )
    assert status == 415 and data["error"]["code"] == "E866"  # no simple cross-site form post
    status, data, _ = c.request(
        "POST", "/api/notes/n1/add", raw=b"{not json", headers={"Content-Type": "application/json"}
    )
    assert status == 400 and data["error"]["code"] == "E868"
    status, data, _ = c.request(
        "POST", "/api/notes/n1/add", raw=b"x" * (70 * 1024), headers={"Content-Type": "application/json"}
    )
    assert status == 413
    status, data, _ = c.request("POST", "/api/notes/n1/add", ok, headers={"Origin": "http://evil.example"})
    assert status == 403 and data["error"]["code"] == "E871"
    status, data, _ = c.request("GET", "/api/notes/n1", headers={"Host": "evil.example:80"})
    assert status == 403 and data["error"]["code"] == "E870"  # DNS rebinding
    status, data, _ = c.request("DELETE", "/api/notes/n1")
    assert status == 405
    status, data = c.get("/api/meta/../../etc/passwd")
    assert status == 404
    status, data = c.get("/static/../store.py")
    assert status == 404
    assert SpanCache(wh).review_rows(STUDY) == []
    u = urllib.parse.urlsplit(c.base)
    status, data, _ = c.request("POST", "/api/notes/n1/add", ok, headers={"Origin": f"http://127.0.0.1:{u.port}"})
    assert status == 201


def test_static_page_is_local_and_locked_down(served):
    pop, c, _ = served
    status, html, resp = c.request("GET", "/")
    assert status == 200 and b"/static/review.js" in html and b"http" not in html.replace(b"http-equiv", b"")
    csp = resp.getheader("Content-Security-Policy")
    assert "default-src 'none'" in csp and "script-src 'self'" in csp
    assert resp.getheader("Cache-Control") == "no-store"
    for name in ("review.js", "review.css"):
        status, data, resp = c.request("GET", f"/static/{name}")
        assert status == 200 and len(data) > 1000
        assert b"https://" not in data and b"http://" not in data  # nothing from a CDN


def test_access_log_has_no_phi_or_query(served, caplog):
    pop, c, _ = served
    with caplog.at_level(logging.DEBUG):
        c.get("/api/notes?q=Mary%20Lee")
        c.get("/api/notes/n1?key=k1")
        c.post("/api/notes/n1/add", {"start": 1, "end": 2000, "label": "DATE"})
        c.request("GET", "/Mary-Lee?Mary=Lee")
    lines = [r.getMessage() for r in caplog.records if r.name == "tide.review"]
    assert lines == [
        "GET /api/notes 200",
        "GET /api/notes/{id} 200",
        "POST /api/notes/{id}/add 400",
        "GET (other path) 404",
    ]
    text = "\n".join(lines)
    assert "Mary" not in text and "q=" not in text and "key=" not in text and "Adams" not in text and "n1" not in text


def test_concurrent_decisions_are_serialised(served):
    import threading

    pop, c, wh = served
    t1 = pop.notes["n1"].text
    words = [(i, i + 2) for i in range(0, 40, 3) if t1[i : i + 2].strip() == t1[i : i + 2]]
    errors = []

    def add(a, b):
        status, body = c.post("/api/notes/n1/add", {"start": a, "end": b, "label": "OTHER"})
        if status != 201:
            errors.append((status, body))

    threads = [threading.Thread(target=add, args=w) for w in words]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert len(SpanCache(wh).review_rows(STUDY, "n1")) == len(words)


def test_cli_registers_and_refuses_public_bind(tmp_path):
    from tide_core.cli.main import build_parser, main

    args = build_parser().parse_args(["review", "--warehouse", "duckdb:x.duckdb", "--study", "s"])
    assert (args.host, args.port, args.key) == ("127.0.0.1", 8765, None)
    pop = populate(tmp_path / "wh.duckdb")
    assert main(["review", "--warehouse", f"duckdb:{pop.path}", "--study", STUDY, "--host", "0.0.0.0"]) == 2


def test_cli_serves_the_study(tmp_path):
    """`tide review` end to end in a subprocess: prints the URL, serves the API, stops on Ctrl-C."""
    import re
    import signal
    import subprocess
    import sys

    pop = populate(tmp_path / "wh.duckdb")
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "tide_core.cli.main",
            "review",
            "--warehouse",
            f"duckdb:{pop.path}",
            "--study",
            STUDY,
            "--key",
            KEY,
            "--port",
            "0",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        line = proc.stdout.readline()
        m = re.search(r"open (http://127\.0\.0\.1:\d+)/#login=([A-Za-z0-9_-]{40,})\s", line)
        assert m, line
        assert "4 note(s)" in line
        status, body = Client(m.group(1)).get("/api/meta")
        assert status == 401 and body["error"]["code"] == "E875"  # a token is required
        status, body = Client(m.group(1)).post("/api/session", {"login": m.group(2)})  # as the page does
        assert status == 201
        session = body["session"]
        c = Client(m.group(1), session)
        status, meta = c.get("/api/meta")
        assert status == 200 and meta["study"] == STUDY
        status, v = c.get("/api/notes/n1")
        assert status == 200 and v["deid"]["status"] == "released"
    finally:
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0
    assert "GET /api/notes/{id} 200" in err and "Adams" not in err and "Mary" not in err and "n1" not in err
    assert m.group(2) not in err and session not in err  # the code is printed once, to stdout, never logged


def test_stale_note_after_text_change_and_reload(served):
    pop, c, wh = served
    rows = wh.read_table("notes").to_pylist()
    for r in rows:
        if r["note_id"] == "n2":
            r["text"] = "Call back."  # shorter than the cached PHONE span
    wh.replace_table("notes", pa.Table.from_pylist(rows))
    status, body = c.post("/api/reload", None)
    assert status == 200 and body["notes"] == 4
    _, v = c.get("/api/notes/n2")
    assert v["recognition"]["stale"] is True
    assert [s["in_text"] for s in v["spans"]] == [False]  # not highlighted, still listed
    status, body = c.post("/api/notes/n2/add", {"start": 0, "end": 4, "label": "OTHER"})
    assert status == 409 and body["error"]["code"] == "E855"
    _, page = c.get("/api/notes?q=n2")
    assert page["notes"][0]["stale"] is True


@pytest.mark.parametrize("sig", ["SIGINT", "SIGTERM"])
def test_cli_stops_on_ctrl_c_and_term_even_when_started_with_sigint_ignored(tmp_path, sig):
    """A parent that ignores SIGINT (test runners, some process managers) passes that on to its
    children; the review server must still stop on Ctrl-C or SIGTERM, not only on SIGKILL."""
    import re
    import signal
    import subprocess
    import sys

    pop = populate(tmp_path / "wh.duckdb")
    cmd = [sys.executable, "-m", "tide_core.cli.main", "review", "--warehouse", f"duckdb:{pop.path}"]
    proc = subprocess.Popen(
        [*cmd, "--study", STUDY, "--key", KEY, "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN),  # the point of the test
    )
    try:
        line = proc.stdout.readline()
        m = re.search(r"open (http://127\.0\.0\.1:\d+)/#login=([A-Za-z0-9_-]{40,})\s", line)
        assert m, line
        status, body = Client(m.group(1)).post("/api/session", {"login": m.group(2)})
        assert status == 201 and Client(m.group(1), body["session"]).get("/api/meta")[0] == 200
        proc.send_signal(getattr(signal, sig))
        proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 0
