"""Access control of the review page, against the real server on 127.0.0.1 (no mocks).

Every API request needs the per-start token or a session token (from the one-time login code)
in an ``Authorization`` header, never a cookie; the Host header must be exactly the bound
address; an Origin must match exactly; each decision records who made it.  A second OS user who
can reach the port, but not the token, is refused (run as ``nobody`` when the tests run as root).
"""

from __future__ import annotations

import getpass
import http.client
import importlib.util
import json
import logging
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from tide_core.io.open import open_warehouse
from tide_core.review.api import ReviewAPI
from tide_core.review.server import start_in_thread
from tide_core.review.store import ReviewStore
from tide_core.store.span_cache import SpanCache

_spec = importlib.util.spec_from_file_location("_review_fixtures", Path(__file__).with_name("test_review_api.py"))
fx = sys.modules.setdefault("_review_fixtures", importlib.util.module_from_spec(_spec))
if not hasattr(fx, "populate"):
    _spec.loader.exec_module(fx)

ADD = {"start": 0, "end": 4, "label": "OTHER"}


def _raw(port: int, request: bytes) -> tuple[int, dict, bytes]:
    """Send ``request`` byte for byte (http.client always adds a Host header)."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        s.sendall(request)
        data = b""
        while chunk := s.recv(65536):
            data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    headers = {k.strip().lower(): v.strip() for k, _, v in (ln.partition(":") for ln in lines[1:])}
    return status, headers, body


def _call(port: int, method: str, path: str, headers: dict, body: dict | None = None):
    con = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    data = None
    hdrs = dict(headers)
    if body is not None:
        data = json.dumps(body).encode()
        hdrs.setdefault("Content-Type", "application/json")
    con.request(method, path, body=data, headers=hdrs)
    resp = con.getresponse()
    payload = resp.read()
    con.close()
    ctype = resp.getheader("Content-Type") or ""
    if method == "HEAD" or not ctype.startswith("application/json"):
        return resp.status, payload, resp
    return resp.status, json.loads(payload), resp


@pytest.fixture
def server(tmp_path):
    pop = fx.populate(tmp_path / "wh.duckdb")
    wh = open_warehouse(f"duckdb:{pop.path}")
    running = start_in_thread(ReviewAPI(ReviewStore(wh, fx.STUDY, fx.KEY, reviewer="alice")), "127.0.0.1", 0)
    try:
        yield running, running.server.server_address[1], wh
    finally:
        running.stop()
        wh.close()


def _code(body) -> str:
    return body["error"]["code"]


def test_no_token_is_refused_on_every_api_route(server):
    running, port, wh = server
    for method, path in [
        ("GET", "/api/meta"),
        ("GET", "/api/pile"),
        ("GET", "/api/notes"),
        ("GET", "/api/notes/n1"),
        ("HEAD", "/api/notes/n1"),
        ("POST", "/api/reload"),
    ]:
        status, body, _ = _call(port, method, path, {})
        assert status == 401, (method, path)
        if method != "HEAD":
            assert _code(body) == "E875" and "Adams" not in json.dumps(body)
    status, body, _ = _call(port, "POST", "/api/notes/n1/add", {}, ADD)
    assert status == 401 and _code(body) == "E875"
    assert SpanCache(wh).review_rows(fx.STUDY) == []


@pytest.mark.parametrize("where", ["header", "bearer-empty", "other-scheme"])
def test_wrong_token_is_refused(server, where):
    running, port, wh = server
    t = running.token
    wrong = t[:-1] + ("A" if t[-1] != "A" else "B")  # same length, one character off
    headers, path = {}, "/api/notes/n1"
    if where == "header":
        headers["Authorization"] = f"Bearer {wrong}"
    elif where == "bearer-empty":
        headers["Authorization"] = "Bearer "
    else:
        headers["Authorization"] = f"Basic {t}"
    status, body, _ = _call(port, "GET", path, headers)
    assert status == 403 and _code(body) == "E876"
    assert "text" not in body and t not in json.dumps(body)
    status, body, _ = _call(port, "POST", path, headers, ADD)
    assert status == 403 and SpanCache(wh).review_rows(fx.STUDY) == []


def test_another_servers_token_or_session_is_refused(server, tmp_path):
    running, port, wh = server
    other = start_in_thread(ReviewAPI(ReviewStore(wh, fx.STUDY, fx.KEY)), "127.0.0.1", 0)
    try:
        assert other.token != running.token and other.server.login_code != running.server.login_code
        status, body, _ = _call(port, "GET", "/api/meta", {"Authorization": f"Bearer {other.token}"})
        assert status == 403 and _code(body) == "E876"
        _, body, _ = _call(
            other.server.server_address[1], "POST", "/api/session", {}, {"login": other.server.login_code}
        )
        status, body, _ = _call(port, "GET", "/api/meta", {"Authorization": f"Bearer {body['session']}"})
        assert status == 403 and _code(body) == "E876"
        status, body, _ = _call(port, "POST", "/api/session", {}, {"login": other.server.login_code})
        assert status == 403 and _code(body) == "E877"
    finally:
        other.stop()


def test_the_login_url_gives_one_session_and_no_cookie(server):
    running, port, wh = server
    code = running.server.login_code
    assert re.fullmatch(rf"http://127\.0\.0\.1:{port}/#login=[A-Za-z0-9_-]{{43}}", running.login_url)
    assert running.login_url.endswith(code)
    # the page (package files, no data) loads without a token and sets no cookie
    status, html, resp = _call(port, "GET", "/", {})
    assert status == 200 and b"/static/review.js" in html and resp.getheader("Set-Cookie") is None
    status, js, _ = _call(port, "GET", "/static/review.js", {})
    assert status == 200 and b"/api/session" in js and b"sessionStorage" in js and b"document.cookie" not in js
    # the code is swapped for a session token, once
    status, body, resp = _call(port, "POST", "/api/session", {}, {"login": code})
    assert status == 201 and resp.getheader("Set-Cookie") is None
    session = body["session"]
    status, body, _ = _call(port, "POST", "/api/session", {}, {"login": code})
    assert status == 403 and _code(body) == "E877"
    auth = {"Authorization": f"Bearer {session}"}
    status, meta, _ = _call(port, "GET", "/api/meta", auth)
    assert status == 200 and meta["study"] == fx.STUDY
    status, body, _ = _call(port, "POST", "/api/notes/n1/add", auth, ADD)
    assert status == 201 and body["reviewer"] == "alice"
    # neither the code nor the token authenticates in the query or a cookie
    for path, hdrs in [
        (f"/api/meta?token={running.token}", {}),
        (f"/api/meta?token={session}", {}),
        ("/api/meta", {"Cookie": f"tide_review_{port}={running.token}"}),
        ("/api/meta", {"Cookie": f"session={session}"}),
    ]:
        status, body, _ = _call(port, "GET", path, hdrs)
        assert status == 401 and _code(body) == "E875", (path, hdrs)


def test_host_must_be_exactly_the_bound_address(server):
    running, port, wh = server
    auth = f"Authorization: Bearer {running.token}\r\n"
    # HTTP/1.0 allows leaving Host out: refused, even with the right token
    status, _, body = _raw(port, f"GET /api/meta HTTP/1.0\r\n{auth}\r\n".encode())
    assert status == 403 and json.loads(body)["error"]["code"] == "E870"
    for host in [
        "evil.example",
        f"evil.example:{port}",
        "127.0.0.1",  # no port
        f"127.0.0.1:{port + 1}",
        f"127.0.0.1.evil.example:{port}",
        f"[::1]:{port}",  # not bound
        f"0.0.0.0:{port}",
        "",
    ]:
        status, _, body = _raw(
            port, f"GET /api/meta HTTP/1.1\r\nHost: {host}\r\n{auth}Connection: close\r\n\r\n".encode()
        )
        assert status == 403 and json.loads(body)["error"]["code"] == "E870", host
    two = f"GET /api/meta HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nHost: evil.example\r\n{auth}Connection: close\r\n\r\n"
    status, _, _ = _raw(port, two.encode())
    assert status == 403
    for host in (f"127.0.0.1:{port}", f"localhost:{port}", f"LOCALHOST:{port}"):
        req = f"GET /api/meta HTTP/1.1\r\nHost: {host}\r\n{auth}Connection: close\r\n\r\n"
        status, _, _ = _raw(port, req.encode())
        assert status == 200, host


def test_origin_must_match_exactly(server):
    running, port, wh = server
    auth = {"Authorization": f"Bearer {running.token}"}
    for origin in [
        "http://127.0.0.1.evil.example",
        f"http://127.0.0.1:{port}.evil.example",
        f"http://127.0.0.1:{port}@evil.example",
        f"http://127.0.0.1:{port}/",
        f"https://127.0.0.1:{port}",
        f"http://127.0.0.1:{port + 1}",
        "null",
    ]:
        for method, body in (("POST", ADD), ("GET", None)):
            path = "/api/notes/n1/add" if method == "POST" else "/api/notes/n1"
            status, data, _ = _call(port, method, path, {**auth, "Origin": origin}, body)
            assert status == 403 and _code(data) == "E871", (origin, method)
    assert SpanCache(wh).review_rows(fx.STUDY) == []
    for origin in (f"http://127.0.0.1:{port}", f"http://localhost:{port}"):
        status, _, _ = _call(port, "GET", "/api/notes/n1", {**auth, "Origin": origin})
        assert status == 200


def test_token_and_note_ids_never_logged(server, caplog):
    running, port, wh = server
    with caplog.at_level(logging.DEBUG):
        _call(port, "GET", f"/?token={running.token}", {})
        _, body, _ = _call(port, "POST", "/api/session", {}, {"login": running.server.login_code})
        _call(port, "GET", "/api/notes/n1", {"Authorization": f"Bearer {body['session']}"})
        _call(port, "GET", f"/api/meta?token={running.token}", {})
        _call(port, "GET", "/api/meta", {"Authorization": f"Bearer {running.token}x"})
    text = "\n".join(r.getMessage() for r in caplog.records)
    assert [r.getMessage() for r in caplog.records if r.name == "tide.review"] == [
        "unauthenticated request: GET 200",
        "POST /api/session 201",
        "GET /api/notes/{id} 200",
        "unauthenticated request: GET 401",
        "unauthenticated request: GET 403",
    ]
    for secret in (running.token, running.server.login_code, body["session"], "token=", "n1", "Adams"):
        assert secret not in text, secret


def test_decisions_record_the_reviewer(server):
    running, port, wh = server
    auth = {"Authorization": f"Bearer {running.token}"}
    adams = fx._span("n1", fx.T1, "Adams", "DOCTOR")
    status, _, _ = _call(
        port, "POST", "/api/notes/n1/reject", auth, {"start": adams.start, "end": adams.end, "label": "DOCTOR"}
    )
    assert status == 201
    status, _, _ = _call(port, "POST", "/api/notes/n1/add", auth, ADD)
    assert status == 201
    rows = SpanCache(wh).review_rows(fx.STUDY, "n1")
    assert sorted((r["decision"], r["reviewer"]) for r in rows) == [("add", "alice"), ("reject", "alice")]
    assert all(r["text_sha256"] and r["decided_at"] for r in rows)
    _, view, _ = _call(port, "GET", "/api/notes/n1", auth)
    assert {s["reviewer"] for s in view["spans"] if s["status"] in ("added", "rejected")} == {"alice"}
    # the default reviewer is the OS user
    assert ReviewStore(wh, fx.STUDY).reviewer == getpass.getuser()


def test_cli_records_the_reviewer_and_refuses_a_bad_name(tmp_path):
    from tide_core.cli.main import main

    pop = fx.populate(tmp_path / "wh.duckdb")
    assert main(["review", "--warehouse", f"duckdb:{pop.path}", "--study", fx.STUDY, "--reviewer", " "]) == 2
    proc = subprocess.Popen(
        [sys.executable, "-m", "tide_core.cli.main", "review", "--warehouse", f"duckdb:{pop.path}"]
        + ["--study", fx.STUDY, "--port", "0", "--reviewer", "bob"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        line = proc.stdout.readline()
        m = re.search(r"as bob: .* open http://127\.0\.0\.1:(\d+)/#login=([A-Za-z0-9_-]+)\s", line)
        assert m, line
        port = int(m.group(1))
        status, body, _ = _call(port, "POST", "/api/session", {}, {"login": m.group(2)})
        assert status == 201
        status, body, _ = _call(port, "POST", "/api/notes/n1/add", {"Authorization": f"Bearer {body['session']}"}, ADD)
        assert status == 201 and body["reviewer"] == "bob"
    finally:
        proc.send_signal(signal.SIGINT)
        proc.communicate(timeout=60)
    wh = open_warehouse(f"duckdb:{pop.path}")
    try:
        assert [r["reviewer"] for r in SpanCache(wh).review_rows(fx.STUDY)] == ["bob"]
    finally:
        wh.close()


_AS_OTHER_USER = r"""
import http.client, json, os, sys
port = int(sys.argv[1])
out = {"uid": os.getuid()}
for path in ("/api/meta", "/api/notes/n1"):
    con = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    con.request("GET", path)
    r = con.getresponse()
    out[path] = [r.status, json.loads(r.read())["error"]["code"]]
con = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
con.request("POST", "/api/notes/n1/add", body=json.dumps({"start": 0, "end": 4, "label": "OTHER"}),
            headers={"Content-Type": "application/json"})
r = con.getresponse()
out["post"] = [r.status, json.loads(r.read())["error"]["code"]]
print(json.dumps(out))
"""


def _other_user() -> int | None:
    """A second OS user's uid, where the environment allows running a process as one."""
    if os.geteuid() != 0:
        return None
    try:
        import pwd

        return pwd.getpwnam("nobody").pw_uid
    except KeyError:
        return None


def test_second_os_user_without_the_token_is_refused(server):
    running, port, wh = server
    uid = _other_user()
    if uid is None:
        pytest.skip(
            "needs a second OS user: the tests run unprivileged (not root, so they cannot start a process "
            "as `nobody`); run them as root in a container to exercise this"
        )
    python = shutil.which("python3", path="/usr/bin:/usr/local/bin") or sys.executable
    proc = subprocess.run(
        [python, "-I", "-c", _AS_OTHER_USER, str(port)],
        user=uid,
        group=uid,
        extra_groups=[],
        cwd="/",
        env={"PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    out = json.loads(proc.stdout)
    assert out["uid"] == uid != os.getuid()
    # the other user reaches the port (an HTTP answer, not a refused connection) and gets nothing
    assert out["/api/meta"] == [401, "E875"] and out["/api/notes/n1"] == [401, "E875"] and out["post"] == [401, "E875"]
    assert SpanCache(wh).review_rows(fx.STUDY) == []
