"""HTTP plumbing of the review UI: stdlib ``ThreadingHTTPServer``, static files, JSON API.

The page shows PHI, so the server is built to stay on the reviewer's machine and with the
reviewer who started it:

- it binds 127.0.0.1 unless told otherwise (``tide review`` refuses a non-loopback address
  without ``--allow-non-loopback``);
- every API request must carry a token in an ``Authorization: Bearer TOKEN`` header, compared in
  constant time; no cookie is ever set or read, because browsers send the cookies of
  127.0.0.1 to every port of 127.0.0.1 (any other local server the browser visits would get
  them).  The URL printed once, ``http://127.0.0.1:PORT/#login=CODE``, carries a one-time login
  code in its fragment (never sent in a request line): the page swaps it, by
  ``POST /api/session``, for a session token that it keeps in ``sessionStorage`` (scoped to
  this scheme, host and port) and sends as that header.  Scripts and notebooks send the
  server's own ``token``.  The page itself and its script and style sheet (package files, no
  data) are served without a token;
- it answers only requests whose ``Host`` header is exactly the bound address and port
  (``127.0.0.1:PORT`` or ``localhost:PORT``; a missing ``Host`` is refused), so a page on
  another site cannot reach it through DNS rebinding; a request carrying an ``Origin`` must
  name exactly this server (no prefix match: ``http://127.0.0.1:PORT.evil.example`` is
  another site), and writes only accept JSON bodies (no simple cross-site form post);
- responses are ``no-store`` with a strict Content-Security-Policy; every asset is served from
  the package (no CDN);
- the access log has the method, the route template (``GET /api/notes/{id} 200``: never a
  note id, never a query) and the status of authenticated requests; any other request is one
  fixed line, ``unauthenticated request: METHOD STATUS``, at most ``LOG_BURST`` of them per
  ``LOG_WINDOW`` seconds (the rest are counted); the stdlib's default log lines (which quote
  the request line) are switched off;
- an idle connection is closed after ``idle_timeout`` seconds (30 by default) and at most
  ``max_connections`` (32) are served at once, one thread each: a connection beyond that is
  answered 503 (``E878``) and closed without a thread.
"""

from __future__ import annotations

import hmac
import ipaddress
import json
import logging
import secrets
import socket
import sys
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from typing import Any
from urllib.parse import parse_qs, urlsplit

from tide_core.review.api import MAX_BODY, Response, ReviewAPI, error, route_template

log = logging.getLogger("tide.review")

STATIC_TYPES = {
    "index.html": "text/html; charset=utf-8",
    "review.css": "text/css; charset=utf-8",
    "review.js": "text/javascript; charset=utf-8",
}

SECURITY_HEADERS = {
    "Cache-Control": "no-store",
    "Pragma": "no-cache",
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",
    "Cross-Origin-Resource-Policy": "same-origin",
    "Content-Security-Policy": (
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
        "connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'"
    ),
}

#: The route that swaps the one-time login code for a session token (no token needed).
SESSION_ROUTE = "/api/session"
#: Largest body ``POST /api/session`` reads (``{"login": CODE}`` is about 60 bytes).
MAX_LOGIN_BODY = 1024
#: Methods named in the access log; any other request line logs ``-``.
LOGGED_METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS"})
#: Unauthenticated requests (and refused connections) logged per window; the rest are counted.
LOG_BURST = 20
LOG_WINDOW = 60.0
IDLE_TIMEOUT = 30.0
MAX_CONNECTIONS = 32


def is_loopback(host: str) -> bool:
    if host.strip("[]").lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _static(name: str) -> bytes | None:
    if name not in STATIC_TYPES:
        return None
    return (resources.files("tide_core.review") / "static" / name).read_bytes()


def _host_names(host: str) -> set[str]:
    """Host names (without port) a request may carry for a server bound to ``host``."""
    h = host.strip("[]").lower()
    if h in ("0.0.0.0", "::", ""):  # every interface (only with --allow-non-loopback)
        return {"127.0.0.1", "localhost", "[::1]", socket.gethostname().lower(), socket.getfqdn().lower()}
    names = {f"[{h}]" if ":" in h else h}
    if is_loopback(h):
        names.add("localhost")
    return names


def _token_bytes(value: str) -> bytes:
    return value.encode("utf-8", "surrogateescape")


def _same(a: str, b: str) -> bool:
    return hmac.compare_digest(_token_bytes(a), _token_bytes(b))


def _busy_response() -> bytes:
    """The whole 503 answer sent to a connection beyond ``max_connections`` (no thread reads it)."""
    body = json.dumps(
        error(503, "E878", "too many open connections to the review server", "close other tabs or clients; retry").body
    ).encode("utf-8")
    head = [
        "HTTP/1.0 503 Service Unavailable",
        "Content-Type: application/json; charset=utf-8",
        f"Content-Length: {len(body)}",
        "Connection: close",
        "Retry-After: 1",
        *(f"{k}: {v}" for k, v in SECURITY_HEADERS.items()),
    ]
    return ("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + body


class LogLimiter:
    """At most ``burst`` lines per ``window`` seconds; the lines left out are counted."""

    def __init__(self, burst: int = LOG_BURST, window: float = LOG_WINDOW):
        self.burst = burst
        self.window = window
        self._lock = threading.Lock()
        self._start = time.monotonic()
        self._logged = 0
        self.suppressed = 0  # left out since the last line logged
        self.total = 0  # every event, logged or not

    def take(self) -> int | None:
        """``None``: leave this line out; else log it, with the number left out before it."""
        with self._lock:
            self.total += 1
            now = time.monotonic()
            if now - self._start >= self.window:
                self._start, self._logged = now, 0
            if self._logged >= self.burst:
                self.suppressed += 1
                return None
            self._logged += 1
            left_out, self.suppressed = self.suppressed, 0
            return left_out


class ReviewHTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 128  # a burst of connections is accepted (and refused past the cap) quickly

    def __init__(
        self,
        address: tuple[str, int],
        api: ReviewAPI,
        token: str | None = None,
        *,
        idle_timeout: float = IDLE_TIMEOUT,
        max_connections: int = MAX_CONNECTIONS,
    ):
        if ":" in address[0]:
            self.address_family = socket.AF_INET6
        self.api = api
        self.idle_timeout = idle_timeout
        self.max_connections = max_connections
        self.open_connections = 0
        self.refused_connections = 0
        self.log_limit = LogLimiter()
        self._lock = threading.Lock()
        super().__init__(address, ReviewHandler)
        port = self.server_address[1]
        names = _host_names(address[0]) | _host_names(str(self.server_address[0]))
        self.allowed_hosts = frozenset(f"{n}:{port}" for n in names)
        self.allowed_origins = frozenset(f"http://{h}" for h in self.allowed_hosts)
        self.token = token or secrets.token_urlsafe(32)
        self.login_code = secrets.token_urlsafe(32)  # one-time: see exchange()
        self._login_used = False
        self._sessions: list[str] = []

    # -- credentials -----------------------------------------------------------------------
    def token_ok(self, candidate: str) -> bool:
        """``candidate`` is the server's token or a session token (each compared in constant time)."""
        with self._lock:
            known = [self.token, *self._sessions]
        return any([_same(candidate, t) for t in known])

    def exchange(self, code: str) -> str | None:
        """A new session token for the login code, once; ``None`` for a wrong or used code."""
        with self._lock:
            if self._login_used or not _same(code, self.login_code):
                return None
            self._login_used = True
            session = secrets.token_urlsafe(32)
            self._sessions.append(session)
            return session

    # -- connections -----------------------------------------------------------------------
    def process_request(self, request: Any, client_address: Any) -> None:
        with self._lock:
            full = self.open_connections >= self.max_connections
            if full:
                self.refused_connections += 1
            else:
                self.open_connections += 1
        if full:
            self._refuse_connection(request)
            return
        try:
            super().process_request(request, client_address)
        except BaseException:
            self._release()  # no thread started: nothing else gives the place back
            raise

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self._release()

    def _release(self) -> None:
        with self._lock:
            self.open_connections -= 1

    def _refuse_connection(self, request: Any) -> None:
        """Answer 503 without a thread: a non-blocking send of a few hundred bytes, then close."""
        try:
            request.setblocking(False)
            request.send(_busy_response())
            request.recv(65536)  # what the client sent already: closing with it unread would reset the answer
        except OSError:
            pass
        self.shutdown_request(request)
        left_out = self.log_limit.take()
        if left_out is not None:
            log.warning("connection refused: %d connections open, the limit%s", self.max_connections, _more(left_out))

    def handle_error(self, request: Any, client_address: Any) -> None:
        """Log the exception type only: the stdlib prints a traceback whose message may quote a request."""
        log.warning("review request failed: %s", type(sys.exc_info()[1]).__name__)

    @property
    def url(self) -> str:
        host, port = str(self.server_address[0]), self.server_address[1]
        if host in ("0.0.0.0", "::"):
            host = "127.0.0.1"
        return f"http://{'[' + host + ']' if ':' in host else host}:{port}/"

    @property
    def login_url(self) -> str:
        """The URL to open once (its one-time login code; print it only to the reviewer)."""
        return f"{self.url}#login={self.login_code}"


def _more(left_out: int) -> str:
    return f" ({left_out} more not logged)" if left_out else ""


class ReviewHandler(BaseHTTPRequestHandler):
    server: ReviewHTTPServer
    server_version = "tide-review/1"
    sys_version = ""
    authenticated = False
    route = "(other path)"

    def setup(self) -> None:
        super().setup()
        self.connection.settimeout(self.server.idle_timeout)  # an idle connection is closed after it

    def handle_one_request(self) -> None:
        self.authenticated, self.route = False, "(other path)"  # per request on a kept-alive connection
        super().handle_one_request()

    # -- logging: route template and status of authenticated requests; nothing else ----------
    def log_request(self, code: int | str = "-", size: int | str = "-") -> None:
        command = getattr(self, "command", None)
        method = command if command in LOGGED_METHODS else "-"
        if self.authenticated:
            log.info("%s %s %s", method, self.route, code)
            return
        left_out = self.server.log_limit.take()
        if left_out is not None:
            log.info("unauthenticated request: %s %s%s", method, code, _more(left_out))

    def log_message(self, format: str, *args: Any) -> None:  # stdlib signature
        """Silenced: the stdlib's lines quote the raw request line (query strings, bodies of bad requests)."""

    # -- verbs -----------------------------------------------------------------------------
    def do_GET(self) -> None:
        self._handle("GET")

    def do_HEAD(self) -> None:
        self._handle("HEAD")

    def do_POST(self) -> None:
        self._handle("POST")

    def do_PUT(self) -> None:
        self._handle("PUT")

    def do_DELETE(self) -> None:
        self._handle("DELETE")

    def do_PATCH(self) -> None:
        self._handle("PATCH")

    # -- dispatch --------------------------------------------------------------------------
    def _token(self) -> str | None:
        """The token of the ``Authorization`` header (``Bearer`` or ``Token`` scheme); ``""`` for another scheme."""
        auth = self.headers.get("Authorization")
        if auth is None:
            return None
        scheme, _, value = auth.strip().partition(" ")
        return value.strip() if scheme.lower() in ("bearer", "token") else ""

    def _handle(self, method: str) -> None:
        url = urlsplit(self.path)
        hosts = self.headers.get_all("Host") or []
        if len(hosts) != 1 or hosts[0].strip().lower() not in self.server.allowed_hosts:
            return self._refuse(
                error(
                    403,
                    "E870",
                    "request without the expected Host header",
                    "open the page at the address `tide review` printed (127.0.0.1 or localhost and its port)",
                )
            )
        origins = self.headers.get_all("Origin") or []
        if origins and (len(origins) != 1 or origins[0].strip().lower() not in self.server.allowed_origins):
            return self._refuse(
                error(403, "E871", "cross-origin request refused", "use the review page served by this server")
            )
        path = url.path
        if path in ("/", "/index.html") or path.startswith("/static/"):
            # the page and its two assets: package files, no data, so no token (a page load
            # cannot send a header, and no cookie is used)
            if method not in ("GET", "HEAD"):
                return self._json(error(405, "E865", f"method {method} not allowed here", "use GET"))
            name = "index.html" if path in ("/", "/index.html") else path[len("/static/") :]
            data = _static(name)
            if data is None:
                return self._json(error(404, "E863", "no such file"), head=method == "HEAD")
            return self._send(200, data, STATIC_TYPES[name], head=method == "HEAD")
        if path == SESSION_ROUTE:
            return self._login(method)
        token = self._token()
        if token is None:
            return self._refuse(
                error(
                    401,
                    "E875",
                    "this review page needs its access token",
                    "open the URL `tide review` printed (it ends in #login=...); scripts send "
                    "'Authorization: Bearer TOKEN'",
                )
            )
        if not self.server.token_ok(token):
            return self._refuse(
                error(
                    403,
                    "E876",
                    "wrong access token",
                    "open the URL the running `tide review` printed; a restarted server has a new token",
                )
            )
        self.authenticated = True
        if not path.startswith("/api/"):
            return self._json(error(404, "E863", "no such page", "open / for the review page"), head=method == "HEAD")
        self.route = route_template(path)
        body = None
        if method in ("POST", "PUT", "PATCH"):
            body = self._body(MAX_BODY)
            if body is None:
                return None
        api_query = parse_qs(url.query)
        api_query.pop("token", None)
        resp = self.server.api.handle(
            "GET" if method == "HEAD" else method, path, api_query, body, self.headers.get("Content-Type")
        )
        return self._json(resp, head=method == "HEAD")

    def _body(self, limit: int) -> bytes | None:
        """The request body by ``Content-Length`` (at most ``limit`` bytes); ``None`` once refused (413)."""
        try:
            length = int(self.headers.get("Content-Length") or 0)
        except ValueError:
            length = -1
        if length < 0 or length > limit:
            self.close_connection = True
            self._json(error(413, "E867", "request body missing or too large", f"send at most {limit} bytes"))
            return None
        return self.rfile.read(length) if length else b""

    def _login(self, method: str) -> None:
        """``POST /api/session`` with ``{"login": CODE}``: a session token, for the first right code only."""
        if method != "POST":
            return self._refuse(error(405, "E865", f"method {method} not allowed here", "use POST"))
        if (self.headers.get("Content-Type") or "").split(";")[0].strip().lower() != "application/json":
            return self._refuse(error(415, "E866", "request body must be JSON", "send Content-Type: application/json"))
        body = self._body(MAX_LOGIN_BODY)
        if body is None:
            return None
        try:
            data = json.loads(body.decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            data = None
        code = data.get("login") if isinstance(data, dict) else None
        session = self.server.exchange(code) if isinstance(code, str) else None
        if session is None:
            return self._refuse(
                error(
                    403,
                    "E877",
                    "login link already used or wrong",
                    "each login URL works once, in one browser tab (reloading that tab keeps the session); "
                    "restart `tide review` for a new URL",
                )
            )
        self.authenticated, self.route = True, SESSION_ROUTE
        return self._json(Response(201, {"session": session}))

    def _refuse(self, resp: Response) -> None:
        """Answer a refused request and close the connection (its body, if any, is never read)."""
        self.close_connection = True
        self._json(resp)

    def _json(self, resp: Response, head: bool = False) -> None:
        data = json.dumps(resp.body, ensure_ascii=False).encode("utf-8")
        self._send(resp.status, data, "application/json; charset=utf-8", head=head)

    def _send(self, status: int, data: bytes, ctype: str, head: bool = False) -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        for k, v in SECURITY_HEADERS.items():
            self.send_header(k, v)
        self.end_headers()
        if not head:
            self.wfile.write(data)


@dataclass
class RunningServer:
    """A server started on a background thread (tests, notebooks)."""

    server: ReviewHTTPServer
    thread: threading.Thread

    @property
    def url(self) -> str:
        return self.server.url

    @property
    def login_url(self) -> str:
        return self.server.login_url

    @property
    def token(self) -> str:
        return self.server.token

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(timeout=10)


def make_server(
    api: ReviewAPI,
    host: str = "127.0.0.1",
    port: int = 8765,
    token: str | None = None,
    *,
    idle_timeout: float = IDLE_TIMEOUT,
    max_connections: int = MAX_CONNECTIONS,
) -> ReviewHTTPServer:
    """A review server; ``token`` defaults to a fresh ``secrets.token_urlsafe(32)``."""
    return ReviewHTTPServer((host, port), api, token, idle_timeout=idle_timeout, max_connections=max_connections)


def start_in_thread(
    api: ReviewAPI,
    host: str = "127.0.0.1",
    port: int = 0,
    token: str | None = None,
    *,
    idle_timeout: float = IDLE_TIMEOUT,
    max_connections: int = MAX_CONNECTIONS,
) -> RunningServer:
    """Serve ``api`` on a daemon thread; ``port=0`` picks a free port (see ``.login_url``)."""
    server = make_server(api, host, port, token, idle_timeout=idle_timeout, max_connections=max_connections)
    t = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, name="tide-review", daemon=True)
    t.start()
    return RunningServer(server, t)
