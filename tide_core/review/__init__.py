"""Local review UI: a reviewer checks recognized spans and records decisions in the span cache.

``tide review`` serves a small web page on 127.0.0.1 (``server.py``) backed by a JSON API
(``api.py``) over one open warehouse (``store.py``).  Decisions are reviewer rows of
``tide_spans`` (``SpanCache.add_review``), so the next anonymization under any key applies
them.  The page shows PHI: it must never be reachable from another machine.
"""
