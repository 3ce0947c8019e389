"""Local review UI: a reviewer checks recognized spans and records decisions.

``tide review`` serves a small web page on 127.0.0.1 (``server.py``) backed by a JSON API
(``api.py``) over one open warehouse (``store.py``).  Every API request needs a session token,
swapped for the one-time login code the server prints once at start.  Decisions are rows of
``tide_review_decisions`` with the reviewer's name (``SpanCache.add_review``); recognition never
rewrites them and every anonymization under any key applies them.  The page shows PHI: it must
never be reachable from another machine.
"""
