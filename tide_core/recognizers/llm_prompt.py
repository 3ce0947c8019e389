"""Prompt and answer handling for the LLM recognizer (no network code here).

The model is asked for the PHI *surface strings* per category, not offsets: language models copy
strings reliably and count characters badly.  Offsets are recovered afterwards by searching the
note for every occurrence of each string, tolerant of whitespace differences ("John\\nSmith" in
the note, "John Smith" in the answer) and only on word boundaries.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from typing import Any

from tide_core.fingerprint import fingerprint
from tide_core.types import LABELS

PROMPT_VERSION = "1"

LABEL_DESCRIPTIONS: dict[str, str] = {
    "PATIENT": "names of the patient and of relatives or other private persons (no titles like Mr./Mrs.)",
    "DOCTOR": "names of clinicians and staff (no titles like Dr., no credentials like MD or RN)",
    "DATE": "dates and date fragments: '03/04/2021', 'March 3rd', '3/4', a year alone; "
    "an attached time is part of the date",
    "AGE": "ages: the digits only ('67' in '67-year-old')",
    "ID": "medical record numbers, account, SSN, licence and device numbers: "
    "the identifier characters only, not the prefix word",
    "PHONE": "phone and fax numbers, including an attached extension",
    "EMAIL": "e-mail addresses",
    "URL": "web addresses and IP addresses",
    "LOCATION": "street lines (with apartment), cities, states, ZIP codes and countries, each separately",
    "HOSPITAL": "names of hospitals, clinics and other facilities (room numbers are not PHI)",
    "OTHER": "employers, schools and other identifying organisations",
}

NOTE_OPEN = "<<<NOTE"
NOTE_CLOSE = "NOTE>>>"


def system_prompt(labels: Sequence[str]) -> str:
    lines = [
        "You find protected health information (PHI) in clinical notes.",
        "Return ONLY a JSON object whose keys are categories and whose values are lists of the exact "
        "strings as they appear in the note (copy them character for character; do not normalise).",
        "List each distinct string once; do not invent strings that are not in the note.",
        "Categories:",
    ]
    lines += [f"- {lab}: {LABEL_DESCRIPTIONS[lab]}" for lab in labels]
    lines.append("Times of day alone, doses, vital signs, lab values and room numbers are not PHI.")
    lines.append('Example answer: {"PATIENT": ["John Smith"], "DATE": ["03/04/2021"], "AGE": ["67"]}')
    return "\n".join(lines)


def build_messages(note_text: str, labels: Sequence[str]) -> list[dict[str, str]]:
    """OpenAI chat messages for one chunk of a note."""
    user = f"Find the PHI in this note. Categories: {', '.join(labels)}.\n{NOTE_OPEN}\n{note_text}\n{NOTE_CLOSE}"
    return [{"role": "system", "content": system_prompt(labels)}, {"role": "user", "content": user}]


def extract_note(user_content: str) -> str:
    """Inverse of ``build_messages`` for the note part (used by test servers and tools)."""
    start = user_content.index(NOTE_OPEN) + len(NOTE_OPEN) + 1
    end = user_content.rindex(NOTE_CLOSE) - 1
    return user_content[start:end]


_FENCE = re.compile(r"```(?:json|JSON)?\s*(.*?)```", re.S)


def parse_answer(content: str, labels: Sequence[str] = LABELS) -> dict[str, list[str]] | None:
    """Parse the model's answer into {label: [strings]}; ``None`` if no JSON object is found.

    Tolerates code fences, text before/after the object, label keys in any case, a single string
    instead of a list, and unknown keys (dropped).
    """
    if not isinstance(content, str):
        return None
    candidates = [m.group(1) for m in _FENCE.finditer(content)] + [content]
    decoder = json.JSONDecoder()
    for cand in candidates:
        idx = cand.find("{")
        while idx != -1:
            try:
                obj, _ = decoder.raw_decode(cand, idx)
            except json.JSONDecodeError:
                idx = cand.find("{", idx + 1)
                continue
            if isinstance(obj, dict):
                return _normalise(obj, labels)
            idx = cand.find("{", idx + 1)
    return None


def _normalise(obj: dict[str, Any], labels: Sequence[str]) -> dict[str, list[str]]:
    wanted = {lab.upper(): lab for lab in labels}
    out: dict[str, list[str]] = {}
    for key, values in obj.items():
        label = wanted.get(str(key).strip().upper())
        if label is None:
            continue
        if isinstance(values, str):
            values = [values]
        if not isinstance(values, list):
            continue
        strings = [str(v).strip() for v in values if isinstance(v, (str, int)) and str(v).strip()]
        strings = [str(v) for v in strings]
        if strings:
            out.setdefault(label, [])
            out[label] += [s for s in strings if s not in out[label]]
    return out


def surface_regex(surface: str) -> re.Pattern[str] | None:
    """A regex for ``surface`` that allows any whitespace run between its tokens, on word boundaries."""
    tokens = surface.split()
    if not tokens:
        return None
    body = r"\s+".join(re.escape(t) for t in tokens)
    if re.match(r"\w", tokens[0]):
        body = r"(?<!\w)" + body
    if re.search(r"\w$", tokens[-1]):
        body = body + r"(?!\w)"
    return re.compile(body)


def find_occurrences(text: str, surface: str) -> list[tuple[int, int]]:
    """Every occurrence of ``surface`` in ``text`` (exact case first, any case if none)."""
    rx = surface_regex(surface)
    if rx is None:
        return []
    hits = [m.span() for m in rx.finditer(text)]
    if not hits:
        hits = [m.span() for m in re.compile(rx.pattern, re.IGNORECASE).finditer(text)]
    return hits


def chunk_text(text: str, chunk_chars: int, overlap: int) -> list[tuple[int, str]]:
    """(offset, chunk) windows covering ``text``; cuts fall on whitespace when one is near."""
    if len(text) <= chunk_chars:
        return [(0, text)]
    chunks: list[tuple[int, str]] = []
    start = 0
    n = len(text)
    while start < n:
        end = min(n, start + chunk_chars)
        if end < n:
            cut = max(text.rfind(" ", start + chunk_chars // 2, end), text.rfind("\n", start + chunk_chars // 2, end))
            if cut > start:
                end = cut
        chunks.append((start, text[start:end]))
        if end >= n:
            break
        nxt = max(end - overlap, start + 1)
        # start the next window on a token boundary
        while 0 < nxt < end and not text[nxt - 1].isspace():
            nxt -= 1
        start = nxt if nxt > start else end
    return chunks


def labels_hash(labels: Iterable[str]) -> str:
    """Fingerprint of the system prompt for ``labels`` (part of the LLM recognizer's config)."""

    return fingerprint(system_prompt(list(labels)))
