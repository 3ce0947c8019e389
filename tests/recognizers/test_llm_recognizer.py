"""LLM recognizer against a real OpenAI-compatible HTTP server on 127.0.0.1 (http.server in a thread)."""

from __future__ import annotations

import json
import re
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from tide_core.errors import ConfigError, RecognitionError, TransientError
from tide_core.recognizers.llm import LLMRecognizer
from tide_core.recognizers.llm_prompt import chunk_text, extract_note, find_occurrences, parse_answer
from tide_core.spans import Note

KNOWN_PATIENTS = ("Jane Roe",)


def answer_for(note: str) -> dict:
    """A deterministic 'model': dates by regex, titled doctors, known patient names (whitespace-normalised)."""
    flat = re.sub(r"\s+", " ", note)
    return {
        "date": sorted(set(re.findall(r"\b\d{1,2}/\d{1,2}/\d{4}\b", note))),
        "DOCTOR": sorted(set(re.findall(r"Dr\. ([A-Z][a-z]+)", note))),
        "PATIENT": [p for p in KNOWN_PATIENTS if p in flat] + ["Nobody Inthenote"],
        "FAVORITE_COLOR": ["blue"],
    }


class FakeOpenAI(BaseHTTPRequestHandler):
    def log_message(self, *args):  # keep test output quiet
        pass

    def do_POST(self):
        srv = self.server
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        srv.requests.append({"path": self.path, "body": body, "auth": self.headers.get("Authorization")})
        if self.path != "/v1/chat/completions":
            return self._send(404, {"error": {"message": "not found"}})
        if srv.status is not None:
            return self._send(srv.status, {"error": {"message": "bad request"}})
        if srv.fail_first > 0:
            srv.fail_first -= 1
            return self._send(500, {"error": {"message": "overloaded"}})
        assert body["temperature"] == 0 and body["model"] == "tiny-phi"
        user = [m for m in body["messages"] if m["role"] == "user"][0]["content"]
        note = extract_note(user)
        srv.chunks.append(note)
        if srv.garbage:
            content = "I cannot help with that."
        else:
            content = "Sure! Here is the PHI:\n```json\n" + json.dumps(answer_for(note)) + "\n```\nAnything else?"
        self._send(
            200,
            {
                "id": "chatcmpl-1",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": body["model"],
                "choices": [
                    {"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}
                ],
                "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
            },
        )

    def _send(self, status, payload):
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


@pytest.fixture
def server():
    srv = ThreadingHTTPServer(("127.0.0.1", 0), FakeOpenAI)
    srv.requests, srv.chunks, srv.fail_first, srv.status, srv.garbage = [], [], 0, None, False
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    srv.url = f"http://127.0.0.1:{srv.server_address[1]}"
    yield srv
    srv.shutdown()
    srv.server_close()


def make(server, **kw):
    kw.setdefault("backoff_s", 0.01)
    return LLMRecognizer(server.url, "tiny-phi", **kw)


NOTE = (
    "Jane Roe seen 03/04/2021 by Dr. Smith.\nJane\n  Roe returned 04/05/2021; Dr. Smith agreed. "
    "Roebuck and Jane Roes are other people. Next 03/04/2021."
)


def test_every_occurrence_whitespace_robust(server):
    rec = make(server)
    spans = rec.recognize(Note("n1", "p1", NOTE))
    got = [(s.label, NOTE[s.start : s.end]) for s in spans]
    assert got == [
        ("PATIENT", "Jane Roe"),
        ("DATE", "03/04/2021"),
        ("DOCTOR", "Smith"),
        ("PATIENT", "Jane\n  Roe"),
        ("DATE", "04/05/2021"),
        ("DOCTOR", "Smith"),
        ("DATE", "03/04/2021"),
    ]
    assert all(s.recognizer == "tide.llm@1" for s in spans)
    req = server.requests[0]
    assert req["path"] == "/v1/chat/completions" and req["auth"] is None
    assert [m["role"] for m in req["body"]["messages"]] == ["system", "user"]
    assert {r.entity_type for r in rec.analyze(NOTE, ["DATE"])} == {"DATE"}


def test_500_then_success_is_retried(server):
    server.fail_first = 2
    rec = make(server, max_retries=3)
    assert len(rec.recognize(Note("n1", "p1", NOTE))) == 7
    assert len(server.requests) == 3


def test_persistent_5xx_is_transient(server):
    server.fail_first = 10
    rec = make(server, max_retries=2)
    with pytest.raises(TransientError) as e:
        rec.recognize(Note("n1", "p1", NOTE))
    assert e.value.code == "E252" and not e.value.terminal and server.url in str(e.value)
    assert len(server.requests) == 3
    assert "Jane" not in str(e.value)


def test_4xx_is_a_config_error_naming_the_url(server):
    server.status = 401
    with pytest.raises(ConfigError) as e:
        make(server).recognize(Note("n1", "p1", NOTE))
    assert e.value.code == "E251" and "401" in str(e.value) and server.url in str(e.value)
    assert len(server.requests) == 1


def test_connection_refused_is_a_config_error():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    rec = LLMRecognizer(f"http://127.0.0.1:{port}", "tiny-phi", backoff_s=0.01)
    with pytest.raises(ConfigError) as e:
        rec.analyze("Jane Roe")
    assert e.value.code == "E250" and f"127.0.0.1:{port}/v1/chat/completions" in str(e.value)


def test_long_note_is_chunked_and_offsets_map_back(server):
    parts, expected = [], []
    pos = 0
    for i in range(40):
        piece = f"Visit {i} was uneventful and the plan is unchanged; "
        date = f"{(i % 12) + 1}/{(i % 27) + 1}/20{10 + i % 10}"
        parts.append(piece + date + ". ")
        expected.append((pos + len(piece), pos + len(piece) + len(date)))
        pos += len(piece) + len(date) + 2
    text = "".join(parts)
    rec = make(server, chunk_chars=300, chunk_overlap=60)
    spans = rec.recognize(Note("long", "p1", text))
    assert len(server.chunks) > 5 and max(len(c) for c in server.chunks) <= 300
    assert sorted((s.start, s.end) for s in spans) == sorted(set(expected))
    by_start = sorted(spans, key=lambda s: s.start)
    assert all(text[s.start : s.end] == text[a:b] for s, (a, b) in zip(by_start, sorted(set(expected)), strict=True))


def test_api_key_from_named_env_var(server, monkeypatch):
    rec = make(server, api_key_env="TIDE_TEST_LLM_KEY")
    monkeypatch.delenv("TIDE_TEST_LLM_KEY", raising=False)
    with pytest.raises(ConfigError) as e:
        rec.analyze("Jane Roe")
    assert e.value.code == "E257"
    monkeypatch.setenv("TIDE_TEST_LLM_KEY", "sk-test-123")
    rec.analyze("Jane Roe")
    assert server.requests[-1]["auth"] == "Bearer sk-test-123"
    assert "sk-test" not in json.dumps(rec.config()) and "TIDE_TEST_LLM_KEY" not in json.dumps(rec.config())


def test_unparseable_answer_fails_the_note(server):
    server.garbage = True
    with pytest.raises(RecognitionError) as e:
        make(server).recognize(Note("n7", "p1", NOTE))
    assert e.value.code == "E253" and "n7" in str(e.value)


def test_recognize_many_parallel_keeps_order(server):
    notes = [Note(f"n{i}", "p1", f"Seen {i + 1}/2/2020 by Dr. Smith") for i in range(6)]
    out = make(server, max_workers=3).recognize_many(notes)
    got = [n.text[s[0].start : s[0].end] for n, s in zip(notes, out, strict=True)]
    assert got == [f"{i + 1}/2/2020" for i in range(6)]


def test_config_tracks_model_and_prompt_not_url():
    a = LLMRecognizer("http://127.0.0.1:1", "m1")
    assert a.fingerprint() == LLMRecognizer("http://localhost:2/v1", "m1").fingerprint()
    assert a.fingerprint() != LLMRecognizer("http://127.0.0.1:1", "m2").fingerprint()
    assert a.fingerprint() != LLMRecognizer("http://127.0.0.1:1", "m1", labels=["DATE"]).fingerprint()
    with pytest.raises(ConfigError):
        LLMRecognizer("http://127.0.0.1:1", "m1", labels=["NAME"])


def test_prompt_helpers():
    assert parse_answer('x ```json\n{"Date": "1/2/2020", "bogus": [1]}\n``` y') == {"DATE": ["1/2/2020"]}
    assert parse_answer('Answer: {"ID": ["123"]} trailing {') == {"ID": ["123"]}
    assert parse_answer("no json here") is None
    assert find_occurrences("Ann Lee, ann  lee; Annlee", "Ann Lee") == [(0, 7)]
    assert find_occurrences("see ann  lee", "Ann Lee") == [(4, 12)]
    chunks = chunk_text("word " * 300, 200, 40)
    assert all(len(c) <= 200 for _, c in chunks) and chunks[0][0] == 0
    covered = set()
    for off, c in chunks:
        covered |= set(range(off, off + len(c)))
    assert covered == set(range(1500))
