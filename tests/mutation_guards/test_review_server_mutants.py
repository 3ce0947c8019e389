"""The review server's guards, checked in process against a real server on 127.0.0.1 in seconds.

``tide_core/review/server.py``: every request must carry exactly one ``Host`` naming the bound
address and port, and at most an ``Origin`` naming exactly this server; every API request must carry
the server's token or a session token in ``Authorization: Bearer|Token`` (compared in constant time;
a query or cookie never authenticates, and no cookie is ever set); ``POST /api/session`` swaps the
one-time login code for a session token, once; a refusal closes the connection without reading the
body; only the three packaged files are served, without a token, only by GET/HEAD; ``/api/`` gets
the body (at most ``MAX_BODY`` bytes, by ``Content-Length``), the query without ``token`` and
``GET`` for ``HEAD``; every response carries the security headers; the access log has the method,
the route template and the status of authenticated requests, and one rate-limited fixed line for
any other; idle connections are closed after ``idle_timeout`` and connections past
``max_connections`` are answered 503 without a thread.

One server (a real ``ReviewAPI`` over an in-memory DuckDB warehouse, wrapped only to record what
reaches it) serves the whole file; negative cases differ from positive ones in one property.
"""

from __future__ import annotations

import errno
import http.client
import io
import json
import logging
import socket
import threading
import time
from importlib import resources

import pyarrow as pa
import pytest

from tide_core.io.open import open_warehouse
from tide_core.review import server as srvmod
from tide_core.review.api import MAX_BODY, ReviewAPI, route_template
from tide_core.review.server import (
    SECURITY_HEADERS,
    STATIC_TYPES,
    ReviewHTTPServer,
    _host_names,
    _static,
    _token_bytes,
    is_loopback,
    make_server,
    start_in_thread,
)
from tide_core.review.store import ReviewStore

EMOJI_TEXT = "Patient \U0001f600 Anna Berg came back."
ADD = {"start": 0, "end": 4, "label": "OTHER"}


class RecordingAPI(ReviewAPI):
    """The real API; it also keeps what the server handed it (method, path, query, body, content type)."""

    def __init__(self, store: ReviewStore):
        super().__init__(store)
        self.calls: list[tuple] = []

    def handle(self, method, path, query, body=None, content_type=None):
        self.calls.append((method, path, {k: list(v) for k, v in query.items()}, body, content_type))
        return super().handle(method, path, query, body, content_type)


@pytest.fixture(scope="module")
def api():
    wh = open_warehouse("duckdb::memory:")
    rows = [
        {"note_id": "n1", "patient_id": "p1", "text": "Seen by Dr. Adams.", "note_type": "progress"},
        {"note_id": "n2", "patient_id": "p2", "text": EMOJI_TEXT, "note_type": "progress"},
    ]
    wh.replace_table("notes", pa.Table.from_pylist(rows))
    try:
        yield RecordingAPI(ReviewStore(wh, "s1", "k1", reviewer="alice"))
    finally:
        wh.close()


@pytest.fixture(scope="module")
def running(api):
    rs = start_in_thread(api, "127.0.0.1", 0)
    try:
        yield rs
    finally:
        rs.stop()


@pytest.fixture
def srv(running, api):
    api.calls.clear()
    return running


def _port(rs) -> int:
    return rs.server.server_address[1]


def _auth(rs) -> dict:
    return {"Authorization": f"Bearer {rs.token}"}


def _call(rs, method: str, path: str, headers: dict | None = None, body: bytes | None = None):
    """One request with http.client (it always sends Host: 127.0.0.1:PORT); status, headers, raw body."""
    con = http.client.HTTPConnection("127.0.0.1", _port(rs), timeout=5)
    try:
        con.request(method, path, body=body, headers=headers or {})
        resp = con.getresponse()
        data = resp.read()
        return resp.status, {k.lower(): v for k, v in resp.getheaders()}, data
    finally:
        con.close()


def _code(data: bytes) -> str:
    return json.loads(data)["error"]["code"]


def _read_response(f) -> tuple[int, dict, bytes]:
    status = int(f.readline().split()[1])
    headers = {}
    while (line := f.readline()) not in (b"\r\n", b"\n", b""):
        k, _, v = line.decode("latin-1").partition(":")
        headers[k.strip().lower()] = v.strip()
    return status, headers, f.read(int(headers.get("content-length", 0)))


def _raw(rs, request: bytes, timeout: float = 5) -> tuple[int, dict, bytes, bool]:
    """Send ``request`` byte for byte; the first response and whether the server closed the connection."""
    with socket.create_connection(("127.0.0.1", _port(rs)), timeout=timeout) as s:
        s.sendall(request)
        f = s.makefile("rb")
        status, headers, body = _read_response(f)
        try:
            closed = f.read(1) == b""
        except TimeoutError:
            closed = False
        return status, headers, body, closed


def _get(rs, path: str, host: str | None = None, extra: str = "", keep_alive: bool = False) -> bytes:
    h = f"Host: {host}\r\n" if host is not None else ""
    conn = "" if keep_alive else "Connection: close\r\n"
    return f"GET {path} HTTP/1.1\r\n{h}{extra}{conn}\r\n".encode("latin-1")


# -- pure helpers ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "host, expected",
    [
        ("localhost", True),
        ("LocalHost", True),
        ("[localhost]", True),
        ("127.0.0.1", True),
        ("127.8.9.10", True),
        ("::1", True),
        ("[::1]", True),
        ("10.0.0.1", False),
        ("0.0.0.0", False),
        ("::", False),
        ("[::]", False),
        ("127.0.0.1.evil.example", False),
        ("localhost.evil.example", False),
        ("", False),
        ("Xlocalhost", False),  # only brackets are stripped
        ("[::1]X", False),
    ],
)
def test_loopback_is_the_loopback_address_or_localhost(host, expected):
    assert is_loopback(host) is expected


def test_host_names_of_one_address_are_that_address_and_localhost_if_loopback():
    assert _host_names("127.0.0.1") == {"127.0.0.1", "localhost"}
    assert _host_names("localhost") == {"localhost"}
    assert _host_names("LOCALHOST") == {"localhost"}
    assert _host_names("::1") == {"[::1]", "localhost"}
    assert _host_names("[::1]") == {"[::1]", "localhost"}
    assert _host_names("10.1.2.3") == {"10.1.2.3"}
    assert _host_names("fd00::7") == {"[fd00::7]"}
    assert _host_names("Review.Example") == {"review.example"}
    assert _host_names("X127.0.0.1") == {"x127.0.0.1"}


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "[::]", ""])
def test_host_names_of_every_interface_are_loopback_and_this_machines_names(host, monkeypatch):
    monkeypatch.setattr(socket, "gethostname", lambda: "Review-Box")
    monkeypatch.setattr(socket, "getfqdn", lambda *a: "Review-Box.Example.ORG")
    assert _host_names(host) == {"127.0.0.1", "localhost", "[::1]", "review-box", "review-box.example.org"}


def test_token_bytes_keep_every_character():
    assert _token_bytes("abc-_") == b"abc-_"
    assert _token_bytes("\u00e9") == "\u00e9".encode()
    assert _token_bytes("a\udcffb") == b"a\xffb"  # a lone surrogate is not an error


def test_only_the_three_packaged_files_are_static():
    for name in STATIC_TYPES:
        assert _static(name) == (resources.files("tide_core.review") / "static" / name).read_bytes()
        assert len(_static(name)) > 100
    for name in ["", "x.html", "../api.py", "review.js/", "REVIEW.JS", "static/review.js"]:
        assert _static(name) is None, name


# -- the server object -----------------------------------------------------------------------------


def test_a_server_on_127_0_0_1_answers_to_that_address_and_localhost_with_its_port(api):
    s = ReviewHTTPServer(("127.0.0.1", 0), api)
    try:
        p = s.server_address[1]
        assert s.address_family == socket.AF_INET and s.api is api
        assert s.allowed_hosts == {f"127.0.0.1:{p}", f"localhost:{p}"}
        assert s.allowed_origins == {f"http://127.0.0.1:{p}", f"http://localhost:{p}"}
        assert s.url == f"http://127.0.0.1:{p}/"
        assert s.login_url == f"http://127.0.0.1:{p}/#login={s.login_code}"
        alphabet = set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
        assert len(s.token) == 43 and set(s.token) <= alphabet
        assert len(s.login_code) == 43 and set(s.login_code) <= alphabet and s.login_code != s.token
        assert (s.idle_timeout, s.max_connections, s.open_connections) == (30.0, 32, 0)
    finally:
        s.server_close()


def test_each_server_has_its_own_token_unless_given_one(api):
    a, b = ReviewHTTPServer(("127.0.0.1", 0), api), ReviewHTTPServer(("127.0.0.1", 0), api, "given-token")
    c = ReviewHTTPServer(("127.0.0.1", 0), api)
    try:
        assert b.token == "given-token" and a.token != c.token
        assert a.token_ok(a.token) and not a.token_ok(c.token)
        assert b.token_ok("given-token")
        for wrong in ["", "given-toke", "given-tokenx", "GIVEN-TOKEN", "given-token ", "given-tok\udcffn"]:
            assert not b.token_ok(wrong), wrong
    finally:
        for s in (a, b, c):
            s.server_close()


def test_a_server_on_localhost_also_answers_to_the_address_it_bound():
    s = ReviewHTTPServer(("localhost", 0), None)
    try:
        p = s.server_address[1]
        assert s.server_address[0] == "127.0.0.1"
        assert s.allowed_hosts == {f"localhost:{p}", f"127.0.0.1:{p}"}
    finally:
        s.server_close()


def test_an_ipv6_server_binds_ipv6_and_brackets_its_address():
    s = ReviewHTTPServer(("::1", 0), None)
    try:
        p = s.server_address[1]
        assert s.address_family == socket.AF_INET6
        assert s.allowed_hosts == {f"[::1]:{p}", f"localhost:{p}"}
        assert s.url == f"http://[::1]:{p}/"
    finally:
        s.server_close()


@pytest.mark.parametrize("host, family", [("0.0.0.0", socket.AF_INET), ("::", socket.AF_INET6)])
def test_a_server_on_every_interface_prints_the_loopback_url(host, family):
    s = ReviewHTTPServer((host, 0), None)
    try:
        p = s.server_address[1]
        assert s.address_family == family
        assert s.url == f"http://127.0.0.1:{p}/"
        assert {f"127.0.0.1:{p}", f"localhost:{p}", f"[::1]:{p}"} <= s.allowed_hosts
        assert f"{socket.gethostname().lower()}:{p}" in s.allowed_hosts
    finally:
        s.server_close()


def test_a_failed_request_logs_the_exception_type_only(api, caplog, capsys):
    s = ReviewHTTPServer(("127.0.0.1", 0), api)
    try:
        with caplog.at_level(logging.DEBUG, logger="tide.review"):
            try:
                raise ValueError("Mary Lee, MRN 12345678")
            except ValueError:
                s.handle_error(None, ("127.0.0.1", 1))
    finally:
        s.server_close()
    assert [(r.levelno, r.getMessage()) for r in caplog.records] == [
        (logging.WARNING, "review request failed: ValueError")
    ]
    assert capsys.readouterr().err == ""


def test_make_server_binds_127_0_0_1_port_8765_by_default(api):
    try:
        s = make_server(api)
    except OSError as exc:  # only a busy port excuses it: a bad default address fails
        if exc.errno != errno.EADDRINUSE:
            raise
        pytest.skip("port 8765 is in use on this machine")
    try:
        assert s.server_address == ("127.0.0.1", 8765) and s.api is api and len(s.token) == 43
        t = make_server(api, "127.0.0.1", 0, "tok")
        assert t.token == "tok" and t.server_address[1] not in (0, 8765)
        t.server_close()
    finally:
        s.server_close()


def test_start_in_thread_serves_a_free_loopback_port_on_a_daemon_thread_and_stops_at_once(api):
    rs = start_in_thread(api, token="tok-1")
    try:
        host, port = rs.server.server_address
        assert host == "127.0.0.1" and port >= 1024 and port != 8765
        assert rs.thread.daemon and rs.thread.name == "tide-review" and rs.thread.is_alive()
        assert rs.token == "tok-1" == rs.server.token
        assert rs.url == rs.server.url == f"http://127.0.0.1:{port}/"
        assert rs.login_url == rs.server.login_url == f"http://127.0.0.1:{port}/#login={rs.server.login_code}"
        status, _, _ = _call(rs, "GET", "/api/meta", {"Authorization": "Bearer tok-1"})
        assert status == 200
    finally:
        t0 = time.monotonic()
        rs.stop()
        took = time.monotonic() - t0
    assert not rs.thread.is_alive()
    assert took < 0.3  # the serving loop polls every 0.05 s
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", port), timeout=2).close()


# -- Host, Origin, token ---------------------------------------------------------------------------


def test_host_must_be_exactly_the_bound_address_and_port(srv, api):
    p = _port(srv)
    auth = f"Authorization: Bearer {srv.token}\r\n"
    status, h, body, closed = _raw(srv, f"GET /api/meta HTTP/1.0\r\n{auth}\r\n".encode())
    assert (status, _code(body), closed) == (403, "E870", True)
    assert h["cache-control"] == "no-store"
    for host in [
        "evil.example",
        f"evil.example:{p}",
        "127.0.0.1",
        f"127.0.0.1:{p + 1}",
        f"127.0.0.1.evil.example:{p}",
        f"localhost.evil.example:{p}",
        f"[::1]:{p}",
        f"0.0.0.0:{p}",
        f"127.0.0.1:{p}.evil.example",
        "",
    ]:
        status, _, body, _ = _raw(srv, _get(srv, "/api/meta", host, auth))
        assert (status, _code(body)) == (403, "E870"), host
    two = f"GET /api/meta HTTP/1.1\r\nHost: 127.0.0.1:{p}\r\nHost: 127.0.0.1:{p}\r\n{auth}Connection: close\r\n\r\n"
    status, _, body, _ = _raw(srv, two.encode())
    assert (status, _code(body)) == (403, "E870")
    assert api.calls == []
    for host in (f"127.0.0.1:{p}", f"localhost:{p}", f"LOCALHOST:{p}", f"localhost:{p}\t"):
        status, _, _, _ = _raw(srv, _get(srv, "/api/meta", host, auth))
        assert status == 200, host


def test_a_refusal_closes_the_connection_even_when_the_client_keeps_it_alive(srv):
    p = _port(srv)
    auth = f"Authorization: Bearer {srv.token}\r\n"
    # a refused request is answered and the connection closed, even if the client wants to keep it
    for host, extra, code in [
        ("evil.example", auth, "E870"),
        (f"127.0.0.1:{p}", auth + "Origin: http://evil.example\r\n", "E871"),
        (f"127.0.0.1:{p}", "", "E875"),
        (f"127.0.0.1:{p}", "Authorization: Bearer nope\r\n", "E876"),
    ]:
        status, _, body, closed = _raw(srv, _get(srv, "/api/meta", host, extra, keep_alive=True), timeout=2)
        assert (_code(body), closed) == (code, True)


def test_origin_must_name_exactly_this_server(srv, api):
    p = _port(srv)
    for origin in [
        "http://127.0.0.1.evil.example",
        f"http://127.0.0.1:{p}.evil.example",
        f"http://127.0.0.1:{p}@evil.example",
        f"http://localhost:{p}.evil.example",
        f"http://127.0.0.1:{p}/",
        f"https://127.0.0.1:{p}",
        f"http://127.0.0.1:{p + 1}",
        "http://127.0.0.1",
        f"127.0.0.1:{p}",
        "null",
        "",
    ]:
        for method, body in (("POST", json.dumps(ADD).encode()), ("GET", None)):
            path = "/api/notes/n1/add" if method == "POST" else "/api/notes/n1"
            hdrs = {**_auth(srv), "Origin": origin, "Content-Type": "application/json"}
            status, _, data = _call(srv, method, path, hdrs, body)
            assert (status, _code(data)) == (403, "E871"), (origin, method)
    two = f"Origin: http://127.0.0.1:{p}\r\nOrigin: http://127.0.0.1:{p}\r\nAuthorization: Bearer {srv.token}\r\n"
    status, _, data, _ = _raw(srv, _get(srv, "/api/meta", f"127.0.0.1:{p}", two))
    assert (status, _code(data)) == (403, "E871")
    assert api.calls == []
    for origin in (f"http://127.0.0.1:{p}", f"http://localhost:{p}", f"HTTP://LOCALHOST:{p}"):
        status, _, _ = _call(srv, "GET", "/api/notes/n1", {**_auth(srv), "Origin": origin})
        assert status == 200, origin


def test_the_checks_run_in_order_host_origin_token(srv):
    p = _port(srv)
    bad_origin = "Origin: http://evil.example\r\n"
    assert _code(_raw(srv, _get(srv, "/api/meta", "evil.example", bad_origin))[2]) == "E870"
    assert _code(_raw(srv, _get(srv, "/api/meta", f"127.0.0.1:{p}", bad_origin))[2]) == "E871"
    wrong = bad_origin + "Authorization: Bearer nope\r\n"
    assert _code(_raw(srv, _get(srv, "/api/meta", f"127.0.0.1:{p}", wrong))[2]) == "E871"


@pytest.mark.parametrize(
    "method, path",
    [
        ("GET", "/api/meta"),
        ("GET", "/api/notes/n2"),
        ("HEAD", "/api/notes/n2"),
        ("POST", "/api/reload"),
        ("GET", "/api/nope"),
        ("GET", "/nope"),
    ],
)
def test_no_token_is_refused_on_the_api_and_any_other_path(srv, api, method, path):
    status, h, data = _call(srv, method, path)
    assert status == 401
    if method != "HEAD":
        assert _code(data) == "E875" and b"Anna" not in data and h["content-type"].startswith("application/json")
    assert api.calls == []


@pytest.mark.parametrize(
    "path, name", [("/", "index.html"), ("/index.html", "index.html"), ("/static/review.js", "review.js")]
)
def test_the_page_and_its_assets_need_no_token_and_hold_no_data(srv, api, path, name):
    """A page load cannot send a header (and no cookie is used): the packaged files are public."""
    status, h, data = _call(srv, "GET", path)
    assert status == 200 and data == _static(name) and "set-cookie" not in h
    assert b"Adams" not in data and b"Anna" not in data and srv.token.encode() not in data
    assert api.calls == []


@pytest.mark.parametrize(
    "auth",
    ["Bearer {t}", "bearer {t}", "BEARER {t}", "Token {t}", "token {t}", "  Bearer   {t}  ", "Bearer {t}\t"],
)
def test_the_token_in_the_authorization_header_is_accepted_with_either_scheme(srv, auth):
    status, _, data = _call(srv, "GET", "/api/meta", {"Authorization": auth.format(t=srv.token)})
    assert status == 200 and json.loads(data)["study"] == "s1"


@pytest.mark.parametrize(
    "auth", ["Basic {t}", "{t}", "Bearer", "Bearer ", "Bearer {t}x", "Bearer x{t}", "Bearer {u}", "Bearer: {t}"]
)
def test_a_wrong_authorization_header_is_refused_whatever_the_query_or_cookie(srv, api, auth):
    hdr = auth.format(t=srv.token, u=srv.token.upper())
    p = _port(srv)
    cookie = f"tide_review_{p}={srv.token}; token={srv.token}"
    status, _, data = _call(srv, "GET", f"/api/meta?token={srv.token}", {"Authorization": hdr, "Cookie": cookie})
    assert (status, _code(data)) == (403, "E876")
    assert srv.token not in data.decode()
    assert api.calls == []


def test_a_right_authorization_header_is_enough_whatever_the_query_and_cookie(srv):
    status, _, _ = _call(srv, "GET", "/api/meta?token=nope", {**_auth(srv), "Cookie": "tide_review=nope"})
    assert status == 200


@pytest.mark.parametrize(
    "where", ["query", "cookie", "port-cookie", "quoted-cookie", "login-query", "login-cookie", "session-query"]
)
def test_a_query_or_cookie_never_authenticates(api, where):
    """Browsers send 127.0.0.1's cookies to every port: a credential there would reach other servers."""
    rs = start_in_thread(api)
    try:
        p, t = _port(rs), rs.token
        session = rs.server.exchange(rs.server.login_code)
        assert session is not None and _call(rs, "GET", "/api/meta", {"Authorization": f"Bearer {session}"})[0] == 200
        path, hdrs = "/api/meta", {}
        if where == "query":
            path += f"?token={t}"
        elif where == "cookie":
            hdrs["Cookie"] = f"token={t}; session={session}"
        elif where == "port-cookie":
            hdrs["Cookie"] = f"tide_review_{p}={t}"
        elif where == "quoted-cookie":
            hdrs["Cookie"] = f'tide_review_{p}="{t}"'
        elif where == "login-query":
            path += f"?login={rs.server.login_code}"
        elif where == "login-cookie":
            hdrs["Cookie"] = f"login={rs.server.login_code}"
        else:
            path += f"?session={session}&token={session}"
        status, h, data = _call(rs, "GET", path, hdrs)
        assert (status, _code(data)) == (401, "E875") and "set-cookie" not in h
    finally:
        rs.stop()


# -- login: one-time code -> session token -----------------------------------------------------------


def _login(rs, body: bytes, ctype: str = "application/json", method: str = "POST", extra: dict | None = None):
    return _call(rs, method, "/api/session", {"Content-Type": ctype, **(extra or {})}, body)


def test_the_login_code_is_swapped_once_for_a_session_token_that_authenticates(api):
    rs = start_in_thread(api)
    try:
        code = rs.server.login_code
        status, h, data = _login(rs, json.dumps({"login": code}).encode())
        assert status == 201 and "set-cookie" not in h
        session = json.loads(data)["session"]
        assert len(session) == 43 and session not in (code, rs.token)
        for k, v in SECURITY_HEADERS.items():
            assert h[k.lower()] == v
        assert _call(rs, "GET", "/api/meta", {"Authorization": f"Bearer {session}"})[0] == 200
        # the code itself never authenticates, and works once only
        status, _, data = _call(rs, "GET", "/api/meta", {"Authorization": f"Bearer {code}"})
        assert (status, _code(data)) == (403, "E876")
        status, _, data = _login(rs, json.dumps({"login": code}).encode())
        assert (status, _code(data)) == (403, "E877") and session not in data.decode()
        assert rs.server.exchange(code) is None
        # the session is this server's only: another server refuses it
        other = start_in_thread(api)
        try:
            assert _call(other, "GET", "/api/meta", {"Authorization": f"Bearer {session}"})[0] == 403
        finally:
            other.stop()
    finally:
        rs.stop()


@pytest.mark.parametrize(
    "body",
    [
        b"",
        b"{}",
        b"[]",
        b"not json",
        b"\xff",
        b'{"login": null}',
        b'{"login": 1}',
        b'{"login": ["CODE"]}',
        b'{"login": "CODEx"}',
        b'{"login": "ODE"}',
        b'{"token": "CODE"}',
    ],
)
def test_a_wrong_login_body_gets_no_session_and_leaves_the_code_usable(api, body):
    rs = start_in_thread(api)
    try:
        code = rs.server.login_code
        status, _, data, closed = _raw(
            rs,
            f"POST /api/session HTTP/1.1\r\nHost: 127.0.0.1:{_port(rs)}\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\n\r\n".encode()
            + body.replace(b"CODE", code.encode()),
        )
        assert (status, _code(data), closed) == (403, "E877", True)
        assert code not in data.decode()
        assert rs.server.exchange(code) is not None  # a wrong try does not use the code up
    finally:
        rs.stop()


def test_the_login_route_takes_only_a_small_json_post(api):
    rs = start_in_thread(api)
    try:
        good = json.dumps({"login": rs.server.login_code}).encode()
        for method in ("GET", "PUT", "DELETE"):
            status, _, data = _login(rs, good, method=method)
            assert (status, _code(data)) == (405, "E865"), method
        status, _, data = _login(rs, good, ctype="text/plain")
        assert (status, _code(data)) == (415, "E866")
        status, _, data = _login(rs, good + b" " * 1024)
        assert (status, _code(data)) == (413, "E867")
        assert "send at most 1024 bytes" in json.loads(data)["error"]["hint"]
        status, _, data = _login(rs, good, extra={"Origin": "http://evil.example"})
        assert (status, _code(data)) == (403, "E871")
        status, _, _ = _login(rs, good + b" " * (1024 - len(good)))  # exactly the limit: read and accepted
        assert status == 201
    finally:
        rs.stop()


def test_the_login_code_is_compared_whole():
    s = ReviewHTTPServer(("127.0.0.1", 0), None)
    try:
        code = s.login_code
        for wrong in ["", code[:-1], code + "x", code.upper(), " " + code, code[:-1] + "\udcff"]:
            assert s.exchange(wrong) is None, wrong
        session = s.exchange(code)
        assert session and s.token_ok(session) and s.token_ok(s.token)
        assert not s.token_ok(code) and not s.token_ok(session[:-1]) and not s.token_ok("")
        assert s.exchange(code) is None
    finally:
        s.server_close()


# -- static files, API ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "path, name",
    [("/", "index.html"), ("/index.html", "index.html"), ("/static/index.html", "index.html")]
    + [(f"/static/{n}", n) for n in ("review.js", "review.css")],
)
def test_the_packaged_files_are_served_by_get_and_head(srv, api, path, name):
    status, h, data = _call(srv, "GET", path, _auth(srv))
    assert status == 200 and data == _static(name)
    assert h["content-type"] == STATIC_TYPES[name] and h["content-length"] == str(len(data))
    for k, v in SECURITY_HEADERS.items():
        assert h[k.lower()] == v
    status, h, data = _call(srv, "HEAD", path, _auth(srv))
    assert status == 200 and data == b"" and h["content-length"] == str(len(_static(name)))
    assert h["content-type"] == STATIC_TYPES[name]
    assert api.calls == []


@pytest.mark.parametrize("path", ["/static/", "/static/nope.js", "/static/../api.py", "/static/REVIEW.JS"])
def test_no_other_static_file_is_served(srv, path):
    status, _, data = _call(srv, "GET", path, _auth(srv))
    assert (status, _code(data)) == (404, "E863")
    assert json.loads(data)["error"]["message"] == "no such file"


@pytest.mark.parametrize("method", ["POST", "PUT", "DELETE", "PATCH"])
@pytest.mark.parametrize("path", ["/", "/index.html", "/static/review.js"])
def test_the_page_and_static_files_refuse_writes(srv, api, method, path):
    status, _, data = _call(srv, method, path, {**_auth(srv), "Content-Type": "application/json"}, b"{}")
    err = json.loads(data)["error"]
    assert (status, err["code"]) == (405, "E865")
    assert err["message"] == f"method {method} not allowed here" and err["hint"] == "use GET"
    assert api.calls == []


@pytest.mark.parametrize("path", ["/nope", "/api", "/apix/meta", "/static", "/index.htm"])
def test_any_other_path_is_no_page(srv, api, path):
    status, h, data = _call(srv, "GET", path, _auth(srv))
    err = json.loads(data)["error"]
    assert (status, err["code"], err["message"]) == (404, "E863", "no such page")
    assert err["hint"] == "open / for the review page"
    assert h["content-type"] == "application/json; charset=utf-8"
    assert api.calls == []


def test_the_api_gets_the_method_path_and_query_without_the_token(srv, api):
    status, h, data = _call(srv, "GET", f"/api/notes?limit=1&token={srv.token}&q=", _auth(srv))
    assert status == 200 and len(json.loads(data)["notes"]) == 1
    assert api.calls == [("GET", "/api/notes", {"limit": ["1"]}, None, None)]
    api.calls.clear()
    status, h, data = _call(srv, "DELETE", "/api/meta", _auth(srv))
    assert (status, _code(data)) == (405, "E865")
    assert api.calls == [("DELETE", "/api/meta", {}, None, None)]


def test_head_on_the_api_is_a_get_without_body(srv, api):
    status, h, data = _call(srv, "GET", "/api/meta", _auth(srv))
    assert status == 200
    status, hh, empty = _call(srv, "HEAD", "/api/meta", _auth(srv))
    assert status == 200 and empty == b"" and hh["content-length"] == str(len(data))
    assert [c[0] for c in api.calls] == ["GET", "GET"]


def test_json_answers_are_utf_8_not_escaped(srv):
    status, h, data = _call(srv, "GET", "/api/notes/n2", _auth(srv))
    assert status == 200 and h["content-type"] == "application/json; charset=utf-8"
    assert EMOJI_TEXT.encode("utf-8") in data and json.loads(data)["text"] == EMOJI_TEXT
    assert h["content-length"] == str(len(data))
    for k, v in SECURITY_HEADERS.items():
        assert h[k.lower()] == v


@pytest.mark.parametrize("method", ["POST", "PUT", "PATCH"])
def test_writes_hand_the_body_and_its_type_to_the_api(srv, api, method):
    body = json.dumps(ADD).encode()
    status, _, data = _call(srv, method, "/api/notes/n1/add", {**_auth(srv), "Content-Type": "application/json"}, body)
    # n1 is not recognized (E855) or the method is wrong (E865): either way the API read this body
    assert (status, _code(data)) == ((409, "E855") if method == "POST" else (405, "E865"))
    assert api.calls == [(method, "/api/notes/n1/add", {}, body, "application/json")]


def test_a_write_without_content_length_has_an_empty_body(srv, api):
    p = _port(srv)
    req = (
        f"POST /api/notes/n1/add HTTP/1.1\r\nHost: 127.0.0.1:{p}\r\nAuthorization: Bearer {srv.token}\r\n"
        "Content-Type: application/json\r\nConnection: close\r\n\r\n"
    )
    status, _, data, _ = _raw(srv, req.encode(), timeout=3)
    assert (status, _code(data)) == (400, "E868")  # an empty body is not JSON (E867 would be no body at all)
    assert api.calls == [("POST", "/api/notes/n1/add", {}, b"", "application/json")]
    api.calls.clear()
    status, _, data = _call(srv, "POST", "/api/reload", {**_auth(srv), "Content-Length": "0"})
    assert status == 200 and json.loads(data)["notes"] == 2
    assert api.calls == [("POST", "/api/reload", {}, b"", None)]


def test_a_body_of_max_body_bytes_reaches_the_api(srv, api):
    body = json.dumps({**ADD, "x": 1}).encode()
    body += b" " * (MAX_BODY - len(body))
    status, _, data = _call(srv, "POST", "/api/notes/n1/add", {**_auth(srv), "Content-Type": "application/json"}, body)
    assert (status, _code(data)) == (400, "E864")  # parsed by the API: the extra field is named
    assert len(api.calls) == 1 and api.calls[0][3] == body


@pytest.mark.parametrize("length", [str(MAX_BODY + 1), "-1", "abc", "1e3"])
def test_a_bad_or_too_large_content_length_is_refused_unread_and_closed(srv, api, length):
    p = _port(srv)
    # the body is never sent: a server that tried to read it would wait (and time out here)
    req = (
        f"POST /api/reload HTTP/1.1\r\nHost: 127.0.0.1:{p}\r\nAuthorization: Bearer {srv.token}\r\n"
        f"Content-Type: application/json\r\nContent-Length: {length}\r\n\r\n"
    )
    status, h, data, closed = _raw(srv, req.encode(), timeout=3)
    err = json.loads(data)["error"]
    assert (status, err["code"], closed) == (413, "E867", True)
    assert err["message"] == "request body missing or too large" and err["hint"] == f"send at most {MAX_BODY} bytes"
    assert h["cache-control"] == "no-store"
    assert api.calls == []


# -- access log ------------------------------------------------------------------------------------


def test_the_access_log_has_route_templates_of_authenticated_requests_only(api, caplog):
    """Note ids and typed-in paths never reach the log: authenticated requests log their route
    template; any other request logs one fixed line with its method and status."""
    rs = start_in_thread(api)
    p, t = _port(rs), rs.token
    long = "/api/" + "Mary" * 100
    try:
        with caplog.at_level(logging.INFO, logger="tide.review"):
            _call(rs, "GET", "/api/meta?q=Mary", _auth(rs))
            _call(rs, "GET", "/api/notes/n1?key=k1", _auth(rs))
            _call(rs, "GET", "/api/notes/MRN84736251-Mary", _auth(rs))
            _call(rs, "HEAD", "/api/notes/n2", _auth(rs))
            _call(rs, "POST", "/api/notes/n1/add", {**_auth(rs), "Content-Type": "application/json"}, b"{}")
            _call(rs, "POST", "/api/notes/Mary%20Lee/undo", {**_auth(rs), "Content-Type": "application/json"}, b"{}")
            _call(rs, "GET", "/api/notes/n1/Mary-Lee", _auth(rs))
            _call(rs, "GET", "/api/notes%2FMary", _auth(rs))
            _call(rs, "GET", "/api/notes?limit=1&q=Mary", _auth(rs))
            _call(rs, "GET", "/Mary-Lee?x=1", _auth(rs))
            _call(rs, "GET", long, _auth(rs))
            _call(rs, "POST", "/api/session", {"Content-Type": "application/json"},
                  json.dumps({"login": rs.server.login_code}).encode())  # fmt: skip
            # unauthenticated: whatever the path, one fixed line
            _call(rs, "GET", f"/api/notes/MRN84736251?token={t}")
            _call(rs, "GET", "/Mary-Lee")
            _call(rs, "GET", "/static/review.js?Mary")
            _call(rs, "POST", "/api/session", {"Content-Type": "application/json"}, b'{"login": "Mary"}')
            _call(rs, "GET", "/api/notes/n1", {"Authorization": "Bearer Mary"})
            for request in (b"GARBAGE Mary\r\n\r\n", b"MARY /api/notes/Mary HTTP/1.1\r\n\r\n"):
                with socket.create_connection(("127.0.0.1", p), timeout=5) as s:
                    s.sendall(request)  # not a request line (400) / not a method (501)
                    assert s.recv(65536)  # an answer (HTTP/0.9 style for the first: a body without headers)
            _raw(rs, _get(rs, "/api/notes/Mary", "mary.example", f"Authorization: Bearer {t}\r\n"))
    finally:
        rs.stop()
    lines = [r.getMessage() for r in caplog.records if r.name == "tide.review"]
    assert lines == [
        "GET /api/meta 200",
        "GET /api/notes/{id} 200",
        "GET /api/notes/{id} 404",
        "HEAD /api/notes/{id} 200",
        "POST /api/notes/{id}/add 400",
        "POST /api/notes/{id}/undo 400",
        "GET /api/(other) 404",
        "GET /api/(other) 404",
        "GET /api/notes 200",
        "GET (other path) 404",
        "GET /api/(other) 404",
        "POST /api/session 201",
        "unauthenticated request: GET 401",
        "unauthenticated request: GET 401",
        "unauthenticated request: GET 200",
        "unauthenticated request: POST 403",
        "unauthenticated request: GET 403",
        "unauthenticated request: - 400",
        "unauthenticated request: - 501",
        "unauthenticated request: GET 403",
    ]
    text = "\n".join(r.getMessage() for r in caplog.records)
    assert t not in text and "Mary" not in text and "MRN" not in text and "n1" not in text


def test_unauthenticated_lines_are_rate_limited_and_counted(api, caplog):
    rs = start_in_thread(api)
    rs.server.log_limit = srvmod.LogLimiter(burst=3, window=0.5)
    try:
        with caplog.at_level(logging.INFO, logger="tide.review"):
            for i in range(10):
                _call(rs, "GET", f"/api/flood-{i}")
            _call(rs, "GET", "/api/meta", _auth(rs))  # authenticated lines are never held back
            time.sleep(0.6)
            _call(rs, "GET", "/api/again")
    finally:
        rs.stop()
    lines = [r.getMessage() for r in caplog.records if r.name == "tide.review"]
    assert lines == ["unauthenticated request: GET 401"] * 3 + [
        "GET /api/meta 200",
        "unauthenticated request: GET 401 (7 more not logged)",
    ]
    assert rs.server.log_limit.total == 11 and rs.server.log_limit.suppressed == 0


def test_the_log_limiter_counts_what_it_leaves_out(monkeypatch):
    now = [100.0]
    monkeypatch.setattr(srvmod.time, "monotonic", lambda: now[0])
    lim = srvmod.LogLimiter(burst=2, window=10.0)
    assert (lim.burst, lim.window) == (2, 10.0)
    assert [lim.take() for _ in range(5)] == [0, 0, None, None, None]
    assert (lim.suppressed, lim.total) == (3, 5)
    now[0] = 109.99  # still the same window
    assert lim.take() is None and lim.suppressed == 4
    now[0] = 110.0  # a new window: the count of the lines left out comes with the next line
    assert lim.take() == 4 and lim.suppressed == 0
    assert lim.take() == 0 and lim.take() is None
    now[0] = 120.0
    assert lim.take() == 1
    default = srvmod.LogLimiter()
    assert (default.burst, default.window) == (srvmod.LOG_BURST, srvmod.LOG_WINDOW) == (20, 60.0)


@pytest.mark.parametrize(
    "path, template",
    [
        ("/api/meta", "/api/meta"),
        ("/api/notes", "/api/notes"),
        ("/api/pile?key=k1", "/api/pile"),
        ("/api/reload", "/api/reload"),
        ("/api/session", "/api/session"),
        ("/api/notes/MRN8473", "/api/notes/{id}"),
        ("/api/notes/a%2Fb", "/api/notes/{id}"),
        ("/api/notes/x/reject", "/api/notes/{id}/reject"),
        ("/api/notes/x/add", "/api/notes/{id}/add"),
        ("/api/notes/x/undo?y=1", "/api/notes/{id}/undo"),
        ("/api/notes/x/y", "/api/(other)"),
        ("/api/notes/x/add/z", "/api/(other)"),
        ("/api/meta/x", "/api/(other)"),
        ("/api/Mary", "/api/(other)"),
        ("/api", "/api/(other)"),
        ("/api/", "/api/(other)"),
        ("/apix/meta", "(other path)"),
        ("/", "(other path)"),
        ("/Mary/api/meta", "(other path)"),
        ("", "(other path)"),
    ],
)
def test_the_route_template_never_carries_a_path_segment(path, template):
    assert route_template(path) == template


def test_the_server_thread_answers_concurrent_requests(srv):
    got: list[int] = []

    def one() -> None:
        got.append(_call(srv, "GET", "/api/meta", _auth(srv))[0])

    threads = [threading.Thread(target=one) for _ in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join(timeout=10)
    assert got == [200] * 4


def test_the_module_logger_is_tide_review():
    assert srvmod.log.name == "tide.review"


def test_another_scheme_never_authenticates_whatever_its_value(api):
    rs = start_in_thread(api, token="XXXX")
    try:
        for auth, status in [("Bearer XXXX", 200), ("Basic XXXX", 403), ("XXXX", 403)]:
            assert _call(rs, "GET", "/api/meta", {"Authorization": auth})[0] == status, auth
    finally:
        rs.stop()


@pytest.mark.parametrize(
    "code, status, message, hint",
    [
        (
            "E870",
            403,
            "request without the expected Host header",
            "open the page at the address `tide review` printed (127.0.0.1 or localhost and its port)",
        ),
        ("E871", 403, "cross-origin request refused", "use the review page served by this server"),
        (
            "E875",
            401,
            "this review page needs its access token",
            "open the URL `tide review` printed (it ends in #login=...); scripts send 'Authorization: Bearer TOKEN'",
        ),
        (
            "E876",
            403,
            "wrong access token",
            "open the URL the running `tide review` printed; a restarted server has a new token",
        ),
    ],
)
def test_each_refusal_names_its_cause_and_what_to_do(srv, code, status, message, hint):
    p = _port(srv)
    host, extra = f"127.0.0.1:{p}", f"Authorization: Bearer {srv.token}\r\n"
    if code == "E870":
        host = "evil.example"
    elif code == "E871":
        extra += "Origin: http://evil.example\r\n"
    elif code == "E875":
        extra = ""
    else:
        extra = "Authorization: Bearer nope\r\n"
    got, h, data, _ = _raw(srv, _get(srv, "/api/meta", host, extra))
    err = json.loads(data)["error"]
    assert (got, err["code"], err["message"], err["hint"]) == (status, code, message, hint)
    assert h["content-type"] == "application/json; charset=utf-8"
    for k, v in SECURITY_HEADERS.items():
        assert h[k.lower()] == v


@pytest.mark.parametrize("path", ["/api/meta", "/static/review.js", "/", "/static/nope.js", "/nowhere"])
def test_head_sends_headers_only(srv, path):
    """On the wire, not through http.client (which never reads a body after HEAD)."""
    p = _port(srv)
    req = (
        f"HEAD {path} HTTP/1.1\r\nHost: 127.0.0.1:{p}\r\nAuthorization: Bearer {srv.token}\r\nConnection: close\r\n\r\n"
    )
    with socket.create_connection(("127.0.0.1", p), timeout=5) as s:
        s.sendall(req.encode())
        data = b""
        while chunk := s.recv(65536):
            data += chunk
    head, _, rest = data.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.0 ") and b"content-length: " in head.lower()
    assert rest == b""


# -- idle timeout and connection cap ---------------------------------------------------------------


def _drain(s: socket.socket) -> bytes:
    data = b""
    while chunk := s.recv(65536):
        data += chunk
    return data


def test_400_connections_hold_at_most_the_cap_of_threads_and_idle_ones_are_closed(api):
    cap, idle = 8, 2.0
    rs = start_in_thread(api, idle_timeout=idle, max_connections=cap)
    p = _port(rs)
    base = threading.active_count()
    socks: list[tuple[socket.socket, float]] = []
    peak = base
    try:
        for i in range(400):
            s = socket.create_connection(("127.0.0.1", p), timeout=15)
            if i % 50 == 0:  # a request started and never finished is idle too
                s.sendall(b"GET /api/meta HTTP/1.1\r\n")
            socks.append((s, time.monotonic()))
            peak = max(peak, threading.active_count())
        busy, idle_closed = 0, []
        for s, opened in socks:
            data = _drain(s)
            if data:
                status, headers, body = _read_response(io.BytesIO(data))
                assert (status, _code(body)) == (503, "E878")
                assert headers["connection"] == "close" and headers["cache-control"] == "no-store"
                busy += 1
            else:  # held by a thread until the idle timeout, then closed without an answer
                idle_closed.append(time.monotonic() - opened)
            peak = max(peak, threading.active_count())
        assert peak - base <= cap, (peak, base)
        assert busy + len(idle_closed) == 400 and busy >= 300
        assert rs.server.refused_connections == busy
        assert min(idle_closed) >= idle - 0.2 and max(idle_closed) <= idle + 10
        deadline = time.monotonic() + 5
        while (threading.active_count() > base or rs.server.open_connections) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert threading.active_count() == base and rs.server.open_connections == 0
        assert _call(rs, "GET", "/api/meta", _auth(rs))[0] == 200  # served again once the places are free
    finally:
        for s, _ in socks:
            s.close()
        rs.stop()


def _wait(cond, seconds: float = 5) -> None:
    deadline = time.monotonic() + seconds
    while not cond() and time.monotonic() < deadline:
        time.sleep(0.02)


def test_a_connection_past_the_cap_is_refused_until_a_place_is_free(api):
    rs = start_in_thread(api, idle_timeout=5.0, max_connections=1)
    p = _port(rs)
    try:
        hold = socket.create_connection(("127.0.0.1", p), timeout=5)  # holds the only place
        _wait(lambda: rs.server.open_connections == 1)
        assert rs.server.open_connections == 1
        with socket.create_connection(("127.0.0.1", p), timeout=5) as s:
            s.sendall(_get(rs, "/api/meta", f"127.0.0.1:{p}", f"Authorization: Bearer {rs.token}\r\n"))
            data = _drain(s)
        assert data.startswith(b"HTTP/1.0 503 ") and b'"E878"' in data and b"s1" not in data
        # the held connection is still served
        hold.sendall(_get(rs, "/api/meta", f"127.0.0.1:{p}", f"Authorization: Bearer {rs.token}\r\n"))
        assert _drain(hold).startswith(b"HTTP/1.0 200 ")
        hold.close()
        _wait(lambda: rs.server.open_connections == 0)
        assert rs.server.open_connections == 0 and rs.server.refused_connections == 1
        assert _call(rs, "GET", "/api/meta", _auth(rs))[0] == 200
    finally:
        rs.stop()


def test_a_refused_connection_is_logged_rate_limited(api, caplog):
    rs = start_in_thread(api, max_connections=0)
    rs.server.log_limit = srvmod.LogLimiter(burst=2, window=60)
    try:
        with caplog.at_level(logging.INFO, logger="tide.review"):
            for _ in range(5):
                with socket.create_connection(("127.0.0.1", _port(rs)), timeout=5) as s:
                    assert _drain(s).startswith(b"HTTP/1.0 503 ")
    finally:
        rs.stop()
    assert [r.getMessage() for r in caplog.records] == ["connection refused: 0 connections open, the limit"] * 2
    assert rs.server.refused_connections == 5 and rs.server.log_limit.suppressed == 3


def test_the_busy_answer_is_a_complete_503_with_the_security_headers():
    raw = srvmod._busy_response()
    head, _, body = raw.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    assert lines[:5] == [
        "HTTP/1.0 503 Service Unavailable",
        "Content-Type: application/json; charset=utf-8",
        f"Content-Length: {len(body)}",
        "Connection: close",
        "Retry-After: 1",
    ]
    assert lines[5:] == [f"{k}: {v}" for k, v in SECURITY_HEADERS.items()]
    assert json.loads(body) == {
        "error": {
            "code": "E878",
            "message": "too many open connections to the review server",
            "hint": "close other tabs or clients; retry",
        }
    }


def test_a_refused_connection_after_a_quiet_spell_says_how_many_were_left_out(api, caplog):
    rs = start_in_thread(api, max_connections=0)
    rs.server.log_limit = srvmod.LogLimiter(burst=1, window=0.3)
    try:
        with caplog.at_level(logging.INFO, logger="tide.review"):
            for i in range(4):
                if i == 3:
                    time.sleep(0.35)
                with socket.create_connection(("127.0.0.1", _port(rs)), timeout=5) as s:
                    _drain(s)
    finally:
        rs.stop()
    assert [r.getMessage() for r in caplog.records] == [
        "connection refused: 0 connections open, the limit",
        "connection refused: 0 connections open, the limit (2 more not logged)",
    ]


@pytest.mark.parametrize(
    "method, ctype, body, status, error",
    [
        ("GET", "application/json", b"{}", 405, ("E865", "method GET not allowed here", "use POST")),
        ("PUT", "application/json", b"{}", 405, ("E865", "method PUT not allowed here", "use POST")),
        (
            "POST",
            "text/plain",
            b"{}",
            415,
            ("E866", "request body must be JSON", "send Content-Type: application/json"),
        ),
        ("POST", None, b"{}", 415, ("E866", "request body must be JSON", "send Content-Type: application/json")),
        (
            "POST",
            "application/json",
            b'{"login": "nope"}',
            403,
            (
                "E877",
                "login link already used or wrong",
                "each login URL works once, in one browser tab (reloading that tab keeps the session); "
                "restart `tide review` for a new URL",
            ),
        ),
    ],
)
def test_each_login_refusal_says_what_and_what_to_do_and_closes(srv, method, ctype, body, status, error):
    hdrs = f"Content-Type: {ctype}\r\n" if ctype else ""
    req = (
        f"{method} /api/session HTTP/1.1\r\nHost: 127.0.0.1:{_port(srv)}\r\n{hdrs}Content-Length: {len(body)}\r\n\r\n"
    ).encode() + body
    got, h, data, closed = _raw(srv, req, timeout=3)
    assert (got, closed) == (status, True)
    assert json.loads(data)["error"] == dict(zip(("code", "message", "hint"), error, strict=True))
    assert h["content-type"] == "application/json; charset=utf-8"


@pytest.mark.parametrize("ctype", ["application/json; charset=utf-8", "Application/JSON", " application/json ;x=1"])
def test_the_login_route_takes_json_with_parameters_or_in_any_case(api, ctype):
    rs = start_in_thread(api)
    try:
        status, _, data = _login(rs, json.dumps({"login": rs.server.login_code}).encode(), ctype=ctype)
        assert status == 201 and len(json.loads(data)["session"]) == 43
    finally:
        rs.stop()
