"""HTTP plumbing of the review UI: stdlib ``ThreadingHTTPServer``, static files, JSON API.

The page shows PHI, so the server is built to stay on the reviewer's machine and with the
reviewer who started it:

- it binds 127.0.0.1 unless told otherwise (``tide review`` refuses a non-loopback address
  without ``--allow-non-loopback``);
- every request (page, static files, API) must carry the random token made at start
  (``secrets.token_urlsafe``), compared in constant time: the URL printed once,
  ``http://127.0.0.1:PORT/?token=...``, sets it as an ``HttpOnly; SameSite=Strict`` cookie
  and redirects to ``/``; scripts send ``Authorization: Bearer TOKEN``.  Another local user
  (or a page in the reviewer's own browser) who can reach the port but not the token gets
  401/403 and nothing else;
- it answers only requests whose ``Host`` header is exactly the bound address and port
  (``127.0.0.1:PORT`` or ``localhost:PORT``; a missing ``Host`` is refused), so a page on
  another site cannot reach it through DNS rebinding; a request carrying an ``Origin`` must
  name exactly this server (no prefix match: ``http://127.0.0.1:PORT.evil.example`` is
  another site), and writes only accept JSON bodies (no simple cross-site form post);
- responses are ``no-store`` with a strict Content-Security-Policy; every asset is served from
  the package (no CDN);
- the access log has method, path without query and status only; the stdlib's default log
  lines (which quote the request line) are switched off.
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
from dataclasses import dataclass
from http.cookies import CookieError, SimpleCookie
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from typing import Any
from urllib.parse import parse_qs, urlsplit

from tide_core.review.api import MAX_BODY, Response, ReviewAPI, error

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


class ReviewHTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, address: tuple[str, int], api: ReviewAPI, token: str | None = None):
        if ":" in address[0]:
            self.address_family = socket.AF_INET6
        self.api = api
        super().__init__(address, ReviewHandler)
        port = self.server_address[1]
        names = _host_names(address[0]) | _host_names(str(self.server_address[0]))
        self.allowed_hosts = frozenset(f"{n}:{port}" for n in names)
        self.allowed_origins = frozenset(f"http://{h}" for h in self.allowed_hosts)
        self.token = token or secrets.token_urlsafe(32)
        self.cookie_name = f"tide_review_{port}"  # cookies ignore ports: one per server

    def token_ok(self, candidate: str) -> bool:
        return hmac.compare_digest(_token_bytes(candidate), _token_bytes(self.token))

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
        """The URL to open once (it carries the token; print it only to the reviewer)."""
        return f"{self.url}?token={self.token}"


class ReviewHandler(BaseHTTPRequestHandler):
    server: ReviewHTTPServer
    server_version = "tide-review/1"
    sys_version = ""

    # -- logging: method, path without query, status; nothing else ------------------------
    def log_request(self, code: int | str = "-", size: int | str = "-") -> None:
        path = urlsplit(getattr(self, "path", "") or "").path
        if not (path in ("/", "/index.html") or path.startswith(("/api/", "/static/"))):
            path = "(other path)"  # a typed-in URL could carry anything
        log.info("%s %s %s", getattr(self, "command", None) or "-", path[:200], code)

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
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
    def _token(self, query: dict[str, list[str]]) -> tuple[str | None, str]:
        """The token the request carries (header, query or cookie) and where it came from."""
        auth = self.headers.get("Authorization")
        if auth is not None:
            scheme, _, value = auth.strip().partition(" ")
            return (value.strip() if scheme.lower() in ("bearer", "token") else ""), "header"
        if "token" in query:
            return query["token"][0], "query"
        raw = self.headers.get("Cookie")
        if raw:
            try:
                jar = SimpleCookie(raw)
            except CookieError:
                jar = SimpleCookie()
            morsel = jar.get(self.server.cookie_name)
            if morsel is not None:
                return morsel.value, "cookie"
        return None, ""

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
        query = parse_qs(url.query, keep_blank_values=True)
        token, source = self._token(query)
        if token is None:
            return self._refuse(
                error(
                    401,
                    "E875",
                    "this review page needs its access token",
                    "open the URL `tide review` printed (it ends in ?token=...); scripts send "
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
        path = url.path
        if source == "query" and method in ("GET", "HEAD") and path in ("/", "/index.html"):
            # first visit: keep the token in a cookie the page's scripts cannot read, and drop it
            # from the address bar (and from the browser history)
            cookie = f"{self.server.cookie_name}={self.server.token}; Path=/; HttpOnly; SameSite=Strict"
            return self._send(
                303, b"", "text/plain; charset=utf-8", head=True, extra={"Set-Cookie": cookie, "Location": "/"}
            )
        if path in ("/", "/index.html") or path.startswith("/static/"):
            if method not in ("GET", "HEAD"):
                return self._json(error(405, "E865", f"method {method} not allowed here", "use GET"))
            name = "index.html" if path in ("/", "/index.html") else path[len("/static/") :]
            data = _static(name)
            if data is None:
                return self._json(error(404, "E863", "no such file"), head=method == "HEAD")
            return self._send(200, data, STATIC_TYPES[name], head=method == "HEAD")
        if path.startswith("/api/"):
            body = None
            if method in ("POST", "PUT", "PATCH"):
                try:
                    length = int(self.headers.get("Content-Length") or 0)
                except ValueError:
                    length = -1
                if length < 0 or length > MAX_BODY:
                    self.close_connection = True
                    return self._json(
                        error(413, "E867", "request body missing or too large", f"send at most {MAX_BODY} bytes")
                    )
                body = self.rfile.read(length) if length else b""
            api_query = parse_qs(url.query)
            api_query.pop("token", None)
            resp = self.server.api.handle(
                "GET" if method == "HEAD" else method, path, api_query, body, self.headers.get("Content-Type")
            )
            return self._json(resp, head=method == "HEAD")
        return self._json(error(404, "E863", "no such page", "open / for the review page"), head=method == "HEAD")

    def _refuse(self, resp: Response) -> None:
        """Answer a refused request and close the connection (its body, if any, is never read)."""
        self.close_connection = True
        self._json(resp)

    def _json(self, resp: Response, head: bool = False) -> None:
        data = json.dumps(resp.body, ensure_ascii=False).encode("utf-8")
        self._send(resp.status, data, "application/json; charset=utf-8", head=head)

    def _send(
        self, status: int, data: bytes, ctype: str, head: bool = False, extra: dict[str, Any] | None = None
    ) -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        for k, v in {**SECURITY_HEADERS, **(extra or {})}.items():
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
    api: ReviewAPI, host: str = "127.0.0.1", port: int = 8765, token: str | None = None
) -> ReviewHTTPServer:
    """A review server; ``token`` defaults to a fresh ``secrets.token_urlsafe(32)``."""
    return ReviewHTTPServer((host, port), api, token)


def start_in_thread(api: ReviewAPI, host: str = "127.0.0.1", port: int = 0, token: str | None = None) -> RunningServer:
    """Serve ``api`` on a daemon thread; ``port=0`` picks a free port (see ``.login_url``)."""
    server = make_server(api, host, port, token)
    t = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, name="tide-review", daemon=True)
    t.start()
    return RunningServer(server, t)
