"""The documentation site builds with no warning, and its error index matches the code.

* ``mkdocs build --strict`` (``mkdocs.yml`` at the repository root) turns every warning into an
  error: a link to a missing page or anchor, a page in ``docs/`` missing from the navigation.
* ``docs/errors.md`` lists every error code (``E123``) that ``tide_core`` and ``tide_etl`` carry,
  and only those.  The list is derived from the code (every string constant that is exactly a code),
  so a new code fails this test until the index names it.  Regenerate the index with
  ``.venv/bin/python tests/core/test_docs_site.py`` after adding or retiring a code.
"""

from __future__ import annotations

import ast
import os
import re
import shutil
import subprocess
import sys
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
INDEX = DOCS / "errors.md"
PACKAGES = ("tide_core", "tide_etl")
CODE = re.compile(r"E\d{3}")
_ROW = re.compile(r"^\|\s*(E\d{3})\s*\|", re.M)
_DOC_ROW = re.compile(r"^\|\s*`?(E\d{3})`?\s*\|\s*(.+?)\s*\|\s*$", re.M)
_SOURCE_LINE = re.compile(r"^\s*(E\d{3})\s{2,}(\S.*)$", re.M)  # a module docstring's code table
#: Meanings of codes the code names without a message (constants, passed-through codes).
MEANINGS = {
    "E402": "a note whose recognition failed is not released (the recognition code is kept when known)",
    "E500": "a recognizer raised on the note (the message names the note id and exception type)",
    "E501": "out of memory on the note alone, after its batch was split down to it",
    "E502": "a recognizer returned a span outside the note, or for another note",
    "E503": "a recognizer returned the wrong number of results",
    "E504": "the note was lost with its Ray worker",
    "E518": "a chunk's anonymization did not come back from the Ray workers after its retries",
    "E519": "a chunk's recognition from its shard did not come back from the Ray workers after its retries",
    "E773": "held by the PHI Guard for review (quarantined; the reason names the guard version, never a score)",
}


@dataclass
class CodeSite:
    """Where one code occurs in the code: modules, the error classes that carry it, its messages."""

    modules: list[str] = field(default_factory=list)
    classes: list[str] = field(default_factory=list)
    messages: list[str] = field(default_factory=list)
    described: list[str] = field(default_factory=list)


def _text(node: ast.expr | None) -> str | None:
    """A message argument as text; an f-string's fields become an ellipsis."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(v.value if isinstance(v, ast.Constant) else "…" for v in node.values)
    if isinstance(node, ast.IfExp):
        return _text(node.body)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _text(node.left), _text(node.right)
        if left is not None or right is not None:
            return (left or "…") + (right or "…")
    return None


def _callee(call: ast.Call) -> str:
    func = call.func
    return func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""


def code_sites(packages: tuple[str, ...] = PACKAGES) -> dict[str, CodeSite]:
    """Every error code in the packages' sources: string constants that are exactly ``E`` + 3 digits."""
    sites: dict[str, CodeSite] = defaultdict(CodeSite)
    for pkg in packages:
        for path in sorted((ROOT / pkg).rglob("*.py")):
            source = path.read_text(encoding="utf-8")
            tree = ast.parse(source)
            described = {m.group(1): m.group(2).strip() for m in _SOURCE_LINE.finditer(source)}
            module = ".".join(path.relative_to(ROOT).with_suffix("").parts)
            parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
            for node in ast.walk(tree):
                if not (isinstance(node, ast.Constant) and isinstance(node.value, str)):
                    continue
                if not CODE.fullmatch(node.value):
                    continue
                site = sites[node.value]
                if module not in site.modules:
                    site.modules.append(module)
                if node.value in described:
                    site.described.append(described[node.value])
                call = parents.get(node)
                if not isinstance(call, ast.Call) or node not in call.args:
                    continue
                position = call.args.index(node)
                name = _callee(call)
                if position == 0 and name.endswith("Error") and name not in site.classes:
                    site.classes.append(name)
                rest = call.args[position + 1 : position + 2] or [k.value for k in call.keywords if k.arg == "message"]
                message = _text(rest[0]) if rest else None
                if message and message.strip():
                    hints = [k.value for k in call.keywords if k.arg == "hint"]
                    hints = hints or call.args[position + 2 : position + 3]
                    hint = _text(hints[0]) if hints else None
                    if hint and hint.strip():
                        hint = " ".join(hint.split())
                        message += " (fix: " + (hint if len(hint) <= 160 else hint[:157].rsplit(" ", 1)[0] + " …") + ")"
                    site.messages.append(" ".join(message.split()))
    return dict(sites)


def _documented_meanings() -> dict[str, tuple[str, str]]:
    """Code → (page, meaning) from the guides' own code tables (``| E920 | meaning |``)."""
    out: dict[str, tuple[str, str]] = {}
    for page in sorted(DOCS.glob("*.md")):
        if page == INDEX:
            continue
        for m in _DOC_ROW.finditer(page.read_text(encoding="utf-8")):
            out.setdefault(m.group(1), (page.name, m.group(2)))
    return out


def _pages_naming(code: str, pages: dict[str, str]) -> list[str]:
    return [name for name, text in pages.items() if re.search(rf"\b{code}\b", text)]


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("<", "&lt;").replace(">", "&gt;").replace("*", "\\*")


def render_index(sites: dict[str, CodeSite]) -> str:
    """The Markdown of docs/errors.md for these codes."""
    meanings = _documented_meanings()
    pages = {p.name: p.read_text(encoding="utf-8") for p in sorted(DOCS.glob("*.md")) if p != INDEX}
    lines = [
        "# Error codes",
        "",
        "Every error TIDE raises or records carries a stable code. Messages and hints name note ids,",
        "offsets, labels, paths and settings, never note text, identifiers or key material. Errors are",
        "terminal (they fail again on retry: bad input, bad configuration) unless their class is",
        "`TransientError` (a lost worker, an out-of-memory batch, a flaky network). A note that cannot be",
        "recognized, anonymized or verified is quarantined under its code (`tide_quarantine`), never",
        "released. The classes are in `tide_core.errors`.",
        "",
        "This page is generated from the code (`.venv/bin/python tests/core/test_docs_site.py`), and",
        "`tests/core/test_docs_site.py` fails when a code in `tide_core` or `tide_etl` is missing here or a code",
        "listed here no longer occurs in the code. The meaning is the guide's own description where a",
        "guide tabulates the code, else the message the code raises and its hint (`…` stands for a value",
        "filled in at run time).",
        "",
    ]
    by_range: dict[str, list[str]] = defaultdict(list)
    for code in sorted(sites):
        by_range[code[:2]].append(code)
    for prefix, codes in sorted(by_range.items()):
        lines += [f"## {prefix}xx", "", "| code | class | meaning | raised in | guide |", "|---|---|---|---|---|"]
        for code in codes:
            site = sites[code]
            documented = meanings.get(code)
            if documented:
                meaning = documented[1]
            elif site.described:
                meaning = _cell(site.described[0])
            elif code in MEANINGS:
                meaning = MEANINGS[code]
            elif site.messages:
                meaning = _cell(site.messages[0])
            else:
                meaning = "a quarantine or status code; see the guide"
            classes = ", ".join(f"`{c}`" for c in site.classes) or "–"
            modules = ", ".join(f"`{m}`" for m in site.modules[:3]) + (" …" if len(site.modules) > 3 else "")
            guides = ", ".join(f"[{n[:-3]}]({n})" for n in _pages_naming(code, pages)[:3]) or "–"
            lines.append(f"| {code} | {classes} | {meaning} | {modules} | {guides} |")
        lines.append("")
    return "\n".join(lines)


def index_problems(index_text: str, codes: set[str]) -> list[str]:
    """Codes the index lacks, codes it lists that the code does not carry, and rows without a meaning."""
    listed = _ROW.findall(index_text)
    problems = [f"{c} occurs in the code but is not in docs/errors.md" for c in sorted(codes - set(listed))]
    retired = sorted(set(listed) - codes)
    problems += [f"{c} is listed in docs/errors.md but no longer occurs in the code" for c in retired]
    problems += [f"{c} is listed more than once" for c in sorted({c for c in listed if listed.count(c) > 1})]
    for row in index_text.splitlines():
        m = _ROW.match(row)
        if m and len(row.split(" | ")) < 5:
            problems.append(f"{m.group(1)}: the row has no meaning")
    return problems


def test_every_error_code_in_the_code_is_in_the_index_and_back():
    sites = code_sites()
    assert len(sites) > 250  # the walk found the codes at all
    problems = index_problems(INDEX.read_text(encoding="utf-8"), set(sites))
    assert not problems, "regenerate with `.venv/bin/python tests/core/test_docs_site.py`:\n" + "\n".join(problems)


def test_the_index_check_sees_a_missing_and_a_retired_code():
    """The check itself can fail: a code the index lacks and a code the code no longer has are named."""
    text = "| E101 | `KeyProviderError` | bad key | `m` | – |\n| E999 | `X` | gone | `m` | – |\n"
    problems = index_problems(text, {"E101", "E102"})
    assert problems == [
        "E102 occurs in the code but is not in docs/errors.md",
        "E999 is listed in docs/errors.md but no longer occurs in the code",
    ]


def test_the_code_walk_reads_codes_classes_and_messages():
    sites = code_sites()
    assert "ConfigError" in sites["E027"].classes and "tide_core.config" in sites["E027"].modules
    assert any(m for m in sites["E361"].messages)  # the missing default model names where it looked


SETUP_COMMAND = (
    "python3.11 -m venv .venv && .venv/bin/pip install torch==2.13.0 && .venv/bin/pip install -c constraints.txt"
    " -e . && .venv/bin/tide train-recognizer --default && .venv/bin/tide demo"
)


def test_the_readme_is_short_keeps_the_two_commands_and_its_links_lead_somewhere():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 250
    blocks = re.findall(r"```bash\n(.*?)```", text, re.S)
    assert SETUP_COMMAND + "\n" in blocks and "bash .ci/run\n" in blocks
    headings = set(re.findall(r"^## (.+)$", text, re.M))
    assert {"Security", "Tests", "Results", "Where to go next"} <= headings
    assert re.search(r"\b[\d,]+ tests\b", text.split("## Tests", 1)[1])
    broken = [t for t in re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", text) if not (ROOT / t).exists()]
    assert not broken, f"README links to missing files: {broken}"


def _build(config: Path, site_dir: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    return subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(config), "--site-dir", str(site_dir)],
        cwd=config.parent,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_the_docs_site_builds_with_warnings_as_errors(tmp_path):
    done = _build(ROOT / "mkdocs.yml", tmp_path / "site")
    assert done.returncode == 0, f"mkdocs build --strict failed:\n{done.stdout[-4000:]}{done.stderr[-4000:]}"
    errors_page = (tmp_path / "site" / "errors" / "index.html").read_text(encoding="utf-8")
    assert "E027" in errors_page and "E361" in errors_page
    assert (tmp_path / "site" / "results" / "quality" / "index.html").is_file()


def test_a_broken_link_or_a_page_outside_the_nav_fails_the_build(tmp_path):
    """Strict mode is real: the same site with one broken link, or one page left out of the nav, fails."""
    for case, page, text in (
        ("link", "index.md", "\n[gone](no_such_page.md)\n"),
        ("anchor", "index.md", "\n[gone](security.md#no-such-section)\n"),
        ("nav", "orphan.md", "# Not in the navigation\n"),
    ):
        work = tmp_path / case
        shutil.copytree(DOCS, work / "docs")
        shutil.copy(ROOT / "mkdocs.yml", work / "mkdocs.yml")
        with (work / "docs" / page).open("a", encoding="utf-8") as f:
            f.write(text)
        done = _build(work / "mkdocs.yml", work / "site")
        assert done.returncode != 0, f"{case}: a strict build passed with a broken {case}"
        marker = {"link": "no_such_page.md", "anchor": "#no-such-section", "nav": "orphan.md"}[case]
        out = done.stdout + done.stderr
        warnings = out[out.index("WARNING") :] if "WARNING" in out else ""
        assert marker in warnings, f"{case}: no warning names {marker}: {warnings[-2000:]}"


if __name__ == "__main__":
    INDEX.write_text(render_index(code_sites()), encoding="utf-8")
    print(f"wrote {INDEX.relative_to(ROOT)}")
