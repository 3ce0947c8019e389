"""User documentation describes the product, not its history.

The README and every page under ``docs/`` say what the product is and what it measures today;
how it got there ("run 7", "stop 30", "this round") goes in ``CHANGELOG.md`` (its section
"Measurement history" keeps the superseded measurements).  A result file may keep such a label in
its *name* (``speed_run7.json``): the word boundary of the pattern does not match inside
``_run7``, so file names in backticks pass.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
_LABEL = re.compile(r"\b(run|stop|round)\s+\d+\b", re.I)
_PHRASES = ("this round", "this stop", "last stop", "next stop")


def _pages() -> list[Path]:
    return [ROOT / "README.md", *sorted(DOCS.rglob("*.md"))]


def history_problems(rel: str, text: str) -> list[str]:
    """``file:line: hit`` for every history label or phrase in one document."""
    problems = []
    for number, line in enumerate(text.splitlines(), start=1):
        lower = line.lower()
        hits = [m.group() for m in _LABEL.finditer(line)] + [p for p in _PHRASES if p in lower]
        problems.extend(f"{rel}:{number}: {hit!r}" for hit in hits)
    return problems


def test_the_readme_and_the_docs_tell_no_project_history():
    problems = []
    for path in _pages():
        rel = path.relative_to(ROOT).as_posix()
        problems.extend(history_problems(rel, path.read_text(encoding="utf-8")))
    assert not problems, "history belongs in CHANGELOG.md, not in the docs:\n" + "\n".join(problems)


def test_the_history_check_sees_labels_and_phrases_but_not_file_names():
    text = (
        "## Run 7 (2026-12-05)\n"
        "as in stop 28, this Stop\n"
        "raw results: `speed_run7.json`, `quality_seed2_stop30.json`\n"
        "rounds of Feistel, a later release\n"
    )
    problems = history_problems("x.md", text)
    assert problems == ["x.md:1: 'Run 7'", "x.md:2: 'stop 28'", "x.md:2: 'this stop'"], problems
