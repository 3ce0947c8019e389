"""The review JSON API, independent of the HTTP plumbing (``server.py`` feeds it requests).

Routes (note ids are URL path segments, percent-encoded):

- ``GET  /api/meta``                         study, default key, released keys, label colours
- ``GET  /api/notes?offset=&limit=&q=``      one page of the study's notes (no text)
- ``GET  /api/notes/{id}?key=K``             original text, spans with review status, released output
- ``POST /api/notes/{id}/reject``            ``{"start", "end", "label"}``: a recognizer span is wrong
- ``POST /api/notes/{id}/add``               ``{"start", "end", "label"}``: a span the recognizers missed
- ``POST /api/notes/{id}/undo``              ``{"start", "end", "label"}``: drop the reviewer decision
- ``GET  /api/pile?key=K``                  notes the PHI Guard held under K, riskiest first (no scores)
- ``POST /api/reload``                       re-read the notes table

Every error is ``{"error": {"code", "message", "hint"}}`` with a 4xx status; messages name
note ids and offsets, never text.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote

from tide_core.errors import TideError
from tide_core.review.colours import legend
from tide_core.review.store import ReviewError, ReviewStore

log = logging.getLogger("tide.review")

MAX_BODY = 64 * 1024
MAX_PAGE = 1000

#: HTTP status of TIDE error codes raised below the review layer.
_STATUS_BY_CODE = {"E381": 409, "E014": 400, "E011": 400, "E012": 400}


@dataclass(frozen=True)
class Response:
    status: int
    body: dict[str, Any]


def error(status: int, code: str, message: str, hint: str = "") -> Response:
    return Response(status, {"error": {"code": code, "message": message, "hint": hint}})


def route_template(path: str) -> str:
    """The route ``path`` (without query) is served by, with ``{id}`` for the note id: what the access log shows."""
    parts = [unquote(p) for p in path.split("?")[0].split("/") if p]
    if parts[:1] != ["api"]:
        return "(other path)"
    parts = parts[1:]
    if len(parts) == 1 and parts[0] in ("meta", "notes", "pile", "reload", "session"):
        return f"/api/{parts[0]}"
    if parts[:1] == ["notes"] and len(parts) == 2:
        return "/api/notes/{id}"
    if parts[:1] == ["notes"] and len(parts) == 3 and parts[2] in ("reject", "add", "undo"):
        return f"/api/notes/{{id}}/{parts[2]}"
    return "/api/(other)"


def _int_param(query: Mapping[str, Sequence[str]], name: str, default: int, lo: int, hi: int) -> int:
    values = query.get(name)
    if not values:
        return default
    try:
        v = int(values[0])
    except ValueError:
        raise ReviewError("E862", f"query parameter {name} must be an integer") from None
    if not lo <= v <= hi:
        raise ReviewError("E862", f"query parameter {name}={v} outside [{lo}, {hi}]")
    return v


class ReviewAPI:
    def __init__(self, store: ReviewStore):
        self.store = store

    def handle(
        self,
        method: str,
        path: str,
        query: Mapping[str, Sequence[str]],
        body: bytes | None = None,
        content_type: str | None = None,
    ) -> Response:
        try:
            return self._route(method, path, query, body, content_type)
        except ReviewError as exc:
            return error(exc.status, exc.code, exc.message, exc.hint)
        except TideError as exc:
            return error(_STATUS_BY_CODE.get(exc.code, 400), exc.code, exc.message, exc.hint)
        except Exception as exc:  # never echo an unexpected message: it might quote note text
            log.error("review API %s %s failed: %s", method, route_template(path), type(exc).__name__)
            return error(
                500, "E869", f"internal error ({type(exc).__name__})", "see the server log; rerun with -v for details"
            )

    # -- routing -------------------------------------------------------------------------
    def _route(
        self,
        method: str,
        path: str,
        query: Mapping[str, Sequence[str]],
        body: bytes | None,
        content_type: str | None,
    ) -> Response:
        parts = [unquote(p) for p in path.split("/") if p]
        if not parts or parts[0] != "api":
            return error(404, "E863", "no such API route", "see tide_core/review/api.py for the routes")
        parts = parts[1:]
        if parts == ["meta"]:
            self._method(method, "GET")
            return Response(200, self._meta())
        if parts == ["notes"]:
            self._method(method, "GET")
            offset = _int_param(query, "offset", 0, 0, 10**9)
            limit = _int_param(query, "limit", 100, 1, MAX_PAGE)
            q = (query.get("q") or [""])[0][:200]
            return Response(200, self.store.list_notes(offset, limit, q))
        if parts == ["pile"]:
            self._method(method, "GET")
            keys = query.get("key")
            return Response(200, self.store.review_pile(keys[0] if keys else None))
        if parts == ["reload"]:
            self._method(method, "POST")
            self._json_body(body, content_type, allow_empty=True)
            return Response(200, {"notes": self.store.reload_notes(), "quarantined": self.store.n_quarantined})
        if len(parts) == 2 and parts[0] == "notes":
            self._method(method, "GET")
            keys = query.get("key")
            key = keys[0] if keys else None
            return Response(200, self.store.note_view(parts[1], key))
        if len(parts) == 3 and parts[0] == "notes" and parts[2] in ("reject", "add", "undo"):
            self._method(method, "POST")
            data = self._json_body(body, content_type)
            extra = set(data) - {"start", "end", "label"}
            if extra:
                raise ReviewError(
                    "E864",
                    f"unexpected field(s) {', '.join(sorted(extra))}",
                    hint='send only {"start", "end", "label"}',
                )
            for f in ("start", "end", "label"):
                if f not in data:
                    raise ReviewError("E864", f"missing field {f!r}", hint='send {"start", "end", "label"}')
            nid = parts[1]
            if parts[2] == "undo":
                return Response(200, self.store.undo(nid, data["start"], data["end"], data["label"]))
            return Response(201, self.store.decide(nid, parts[2], data["start"], data["end"], data["label"]))
        return error(404, "E863", "no such API route", "see tide_core/review/api.py for the routes")

    @staticmethod
    def _method(method: str, allowed: str) -> None:
        if method != allowed:
            raise ReviewError("E865", f"method {method} not allowed here", hint=f"use {allowed}", status=405)

    @staticmethod
    def _json_body(body: bytes | None, content_type: str | None, allow_empty: bool = False) -> dict[str, Any]:
        if allow_empty and not body:
            return {}
        if (content_type or "").split(";")[0].strip().lower() != "application/json":
            raise ReviewError(
                "E866", "request body must be JSON", hint="send Content-Type: application/json", status=415
            )
        if body is None or len(body) > MAX_BODY:
            raise ReviewError(
                "E867",
                "request body missing or too large",
                hint=f"send at most {MAX_BODY} bytes",
                status=413 if body else 400,
            )
        try:
            data = json.loads(body.decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            raise ReviewError("E868", "request body is not valid JSON") from None
        if not isinstance(data, dict):
            raise ReviewError("E868", "request body must be a JSON object")
        return data

    def _meta(self) -> dict[str, Any]:
        s = self.store
        return {
            "study": s.study,
            "key": s.key,
            "keys": s.keys(),
            "labels": legend(),
            "n_notes": s.n_notes,
            "n_quarantined": s.n_quarantined,
        }
