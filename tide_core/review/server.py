"""HTTP plumbing of the review UI: stdlib ``ThreadingHTTPServer``, static files, JSON API.

The page shows PHI, so the server is built to stay on the reviewer's machine:

- it binds 127.0.0.1 unless told otherwise (``tide review`` refuses a non-loopback address
  without ``--allow-non-loopback``);
- it answers only requests whose ``Host`` header names the address it is bound to (a page on
  another site cannot reach it through DNS rebinding) and refuses state-changing requests
  whose ``Origin`` is another site, and it only accepts JSON bodies (no simple cross-site form
  post can record a decision);
- responses are ``no-store`` with a strict Content-Security-Policy; every asset is served from
  the package (no CDN);
- the access log has method, path without query and status only; the stdlib's default log
  lines (which quote the request line) are switched off.
"""

from __future__ import annotations

import ipaddress
import json
import logging
import socket
import sys
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from urllib.parse import parse_qs, urlsplit

from tide_core.review.api import MAX_BODY, ReviewAPI, error

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
    names = {"127.0.0.1", "localhost", "[::1]"}
    h = host.strip("[]")
    names.add(f"[{h}]" if ":" in h else h)
    if h in ("0.0.0.0", "::", ""):
        names |= {socket.gethostname().lower(), socket.getfqdn().lower()}
    return names


class ReviewHTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, address: tuple[str, int], api: ReviewAPI):
        if ":" in address[0]:
            self.address_family = socket.AF_INET6
        self.api = api
        super().__init__(address, ReviewHandler)
        port = self.server_address[1]
        self.allowed_hosts = {f"{n}:{port}" for n in _host_names(address[0])}
        self.allowed_origins = {f"http://{h}" for h in self.allowed_hosts}

    def handle_error(self, request, client_address) -> None:
        """Log the exception type only: the stdlib prints a traceback whose message may quote a request."""
        log.warning("review request failed: %s", sys.exc_info()[0].__name__)

    @property
    def url(self) -> str:
        host, port = self.server_address[:2]
        if host in ("0.0.0.0", "::"):
            host = "127.0.0.1"
        return f"http://{'[' + host + ']' if ':' in host else host}:{port}/"


class ReviewHandler(BaseHTTPRequestHandler):
    server: ReviewHTTPServer
    server_version = "tide-review/1"
    sys_version = ""

    # -- logging: method, path without query, status; nothing else ------------------------
    def log_request(self, code="-", size="-") -> None:
        path = urlsplit(getattr(self, "path", "") or "").path
        if not (path in ("/", "/index.html") or path.startswith(("/api/", "/static/"))):
            path = "(other path)"  # a typed-in URL could carry anything
        log.info("%s %s %s", getattr(self, "command", None) or "-", path[:200], code)

    def log_message(self, format, *args) -> None:  # noqa: A002 - stdlib signature
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
    def _handle(self, method: str) -> None:
        url = urlsplit(self.path)
        host = (self.headers.get("Host") or "").lower()
        if host and host not in self.server.allowed_hosts:
            return self._json(
                error(
                    403, "E870", "request for an unexpected host", "open the page at the address `tide review` printed"
                )
            )
        origin = self.headers.get("Origin")
        if method not in ("GET", "HEAD") and origin is not None and origin.lower() not in self.server.allowed_origins:
            return self._json(
                error(403, "E871", "cross-origin request refused", "use the review page served by this server")
            )
        path = url.path
        if path in ("/", "/index.html") or path.startswith("/static/"):
            if method not in ("GET", "HEAD"):
                return self._json(error(405, "E865", f"method {method} not allowed here", "use GET"))
            name = "index.html" if path in ("/", "/index.html") else path[len("/static/") :]
            data = _static(name)
            if data is None:
                return self._json(error(404, "E863", "no such file"))
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
            resp = self.server.api.handle(
                "GET" if method == "HEAD" else method, path, parse_qs(url.query), body, self.headers.get("Content-Type")
            )
            return self._json(resp, head=method == "HEAD")
        return self._json(error(404, "E863", "no such page", "open / for the review page"))

    def _json(self, resp, head: bool = False) -> None:
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

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(timeout=10)


def make_server(api: ReviewAPI, host: str = "127.0.0.1", port: int = 8765) -> ReviewHTTPServer:
    return ReviewHTTPServer((host, port), api)


def start_in_thread(api: ReviewAPI, host: str = "127.0.0.1", port: int = 0) -> RunningServer:
    """Serve ``api`` on a daemon thread; ``port=0`` picks a free port (see ``.url``)."""
    server = make_server(api, host, port)
    t = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, name="tide-review", daemon=True)
    t.start()
    return RunningServer(server, t)
