"""LLM recognizer (``tide.llm``): an OpenAI-compatible chat-completions endpoint as a recognizer.

Any server that implements ``POST {base_url}/v1/chat/completions`` works (vLLM, llama.cpp server,
Ollama's OpenAI API, a hosted API under an agreement).  Requests use temperature 0.  An API key,
if needed, is read at call time from the environment variable *named* in the configuration
(``api_key_env``); a key is never part of a spec or a fingerprint.

Long notes are split into overlapping chunks (``chunk_chars``, ``chunk_overlap``); every string
the model returns for any chunk is then searched in the *whole* note, so each occurrence is
labelled, including ones in chunks where the model missed it.

Failures: 5xx, 429 and timeouts are retried with exponential backoff and end in
``TransientError`` (E252); other 4xx answers and refused connections are configuration problems
(``ConfigError`` E251/E250, naming the URL).  Neither message includes note text or the response
body, which may echo it.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

import requests

from tide_core.errors import ConfigError, RecognitionError, TransientError
from tide_core.recognizers import llm_prompt
from tide_core.recognizers.base import TideRecognizer
from tide_core.spans import Note, RecognizerResult, Span
from tide_core.steps.resolve import ResolutionPolicy, resolve_spans
from tide_core.types import LABELS

if TYPE_CHECKING:
    import requests

_POLICY = ResolutionPolicy()


class LLMRecognizer(TideRecognizer):
    name = "tide.llm"
    version = "1"

    def __init__(
        self,
        base_url: str,
        model: str,
        *,
        api_key_env: str | None = None,
        labels: Sequence[str] | None = None,
        chunk_chars: int = 6000,
        chunk_overlap: int = 300,
        timeout_s: float = 120.0,
        max_retries: int = 3,
        backoff_s: float = 1.0,
        score: float = 0.85,
        max_tokens: int | None = None,
        json_mode: bool = False,
        max_workers: int = 4,
    ):
        if not base_url or not model:
            raise ConfigError(
                "E254",
                "tide.llm needs base_url and model",
                hint='e.g. {"name": "tide.llm", "base_url": "http://127.0.0.1:8000", "model": "my-model"}',
            )
        labels = tuple(labels) if labels else LABELS
        for lab in labels:
            if lab not in LABELS:
                raise ConfigError("E255", f"tide.llm: unknown label {lab!r}", hint=f"use one of {', '.join(LABELS)}")
        if chunk_chars < 200 or not 0 <= chunk_overlap < chunk_chars // 2:
            raise ConfigError(
                "E256",
                "tide.llm: need chunk_chars >= 200 and 0 <= chunk_overlap < chunk_chars/2",
                hint="e.g. chunk_chars=6000, chunk_overlap=300",
            )
        url = base_url.rstrip("/")
        if url.endswith("/v1"):
            url = url[:-3]
        self.base_url = url
        self.endpoint = f"{url}/v1/chat/completions"
        self.model = model
        self.api_key_env = api_key_env
        self.labels = labels
        self.supported_entities = list(labels)
        self.chunk_chars = int(chunk_chars)
        self.chunk_overlap = int(chunk_overlap)
        self.timeout_s = float(timeout_s)
        self.max_retries = int(max_retries)
        self.backoff_s = float(backoff_s)
        self.score = float(score)
        self.max_tokens = max_tokens
        self.json_mode = bool(json_mode)
        self.max_workers = max(1, int(max_workers))
        self._session: requests.Session | None = None

    # ------------------------------------------------------------------ config
    def config(self) -> dict[str, Any]:
        return {
            "model": self.model,
            "prompt_version": llm_prompt.PROMPT_VERSION,
            "prompt": llm_prompt.labels_hash(self.labels),
            "labels": list(self.labels),
            "chunk_chars": self.chunk_chars,
            "chunk_overlap": self.chunk_overlap,
            "temperature": 0.0,
            "score": self.score,
            "json_mode": self.json_mode,
            "max_tokens": self.max_tokens,
        }

    def load(self) -> None:
        if self._session is None:
            self._session = requests.Session()

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state["_session"] = None
        return state

    # ------------------------------------------------------------------ HTTP
    def _headers(self) -> dict[str, str]:
        headers = {"Content-Type": "application/json"}
        if self.api_key_env:
            key = os.environ.get(self.api_key_env)
            if not key:
                raise ConfigError(
                    "E257",
                    f"tide.llm: environment variable {self.api_key_env} is not set",
                    hint="export the API key under that name, or drop api_key_env for a local server",
                )
            headers["Authorization"] = f"Bearer {key}"
        return headers

    def complete(self, messages: list[dict[str, str]]) -> str:
        """One chat completion with retries; returns the message content."""
        self.load()
        body: dict[str, Any] = {"model": self.model, "messages": messages, "temperature": 0}
        if self.max_tokens:
            body["max_tokens"] = int(self.max_tokens)
        if self.json_mode:
            body["response_format"] = {"type": "json_object"}
        headers = self._headers()
        last = "no attempt"
        for attempt in range(self.max_retries + 1):
            if attempt:
                time.sleep(self.backoff_s * (2 ** (attempt - 1)))
            try:
                assert self._session is not None  # opened by load() above
                resp = self._session.post(
                    self.endpoint,
                    data=json.dumps(body),
                    headers=headers,
                    timeout=self.timeout_s,
                )
            except requests.exceptions.Timeout:
                last = f"timeout after {self.timeout_s:g}s"
                continue
            except requests.exceptions.ConnectionError as exc:
                text = str(exc).lower()
                if "refused" in text or "failed to establish" in text or "name or service" in text:
                    raise ConfigError(
                        "E250",
                        f"tide.llm: cannot connect to {self.endpoint}",
                        hint="start the OpenAI-compatible server or fix base_url",
                    ) from None
                last = "connection dropped"
                continue
            if resp.status_code >= 500 or resp.status_code == 429:
                last = f"HTTP {resp.status_code}"
                continue
            if resp.status_code >= 400:
                raise ConfigError(
                    "E251",
                    f"tide.llm: {self.endpoint} answered HTTP {resp.status_code}",
                    hint="check model name, API key and request options (401/403: key; 404: URL/model)",
                )
            try:
                payload = resp.json()
                return payload["choices"][0]["message"]["content"] or ""
            except (ValueError, KeyError, IndexError, TypeError):
                raise RecognitionError(
                    "E253",
                    f"tide.llm: {self.endpoint} returned no chat completion message",
                    hint="the server must answer in the OpenAI chat.completion shape",
                ) from None
        raise TransientError(
            "E252",
            f"tide.llm: {self.endpoint} failed after {self.max_retries + 1} attempts ({last})",
            hint="the server is overloaded or down; the note can be retried later",
        )

    # ------------------------------------------------------------------ recognition
    def _strings_for(self, text: str, note_ref: str) -> dict[str, list[str]]:
        found: dict[str, list[str]] = {}
        for offset, chunk in llm_prompt.chunk_text(text, self.chunk_chars, self.chunk_overlap):
            if not chunk.strip():
                continue
            content = self.complete(llm_prompt.build_messages(chunk, self.labels))
            answer = llm_prompt.parse_answer(content, self.labels)
            if answer is None:
                raise RecognitionError(
                    "E253",
                    f"tide.llm: unparseable answer for {note_ref} (chunk at offset {offset})",
                    hint="the model must answer with a JSON object {category: [strings]}",
                )
            for label, strings in answer.items():
                bucket = found.setdefault(label, [])
                bucket += [s for s in strings if s not in bucket]
        return found

    def analyze(
        self, text: str, entities: Sequence[str] | None = None, nlp_artifacts: Any = None, note_ref: str = "text"
    ) -> list[RecognizerResult]:
        wanted = set(entities) if entities else None
        spans: list[Span] = []
        for label, strings in self._strings_for(text, note_ref).items():
            if wanted is not None and label not in wanted:
                continue
            for s in strings:
                for start, end in llm_prompt.find_occurrences(text, s):
                    spans.append(Span("_", start, end, label, self.score, self.qualified_name))
        return [
            RecognizerResult(s.label, s.start, s.end, s.score, {"recognizer_name": self.qualified_name})
            for s in resolve_spans(spans, _POLICY)
        ]

    def recognize(self, note: Note) -> list[Span]:
        results = self.analyze(note.text, None, note_ref=f"note {note.note_id}")
        return [Span(note.note_id, r.start, r.end, r.entity_type, r.score, self.qualified_name) for r in results]

    def recognize_many(self, notes: Sequence[Note]) -> list[list[Span]]:
        if self.max_workers == 1 or len(notes) <= 1:
            return [self.recognize(n) for n in notes]
        self.load()
        with ThreadPoolExecutor(max_workers=self.max_workers) as pool:
            return list(pool.map(self.recognize, notes))
