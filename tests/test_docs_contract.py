"""Docs that can drift are checked against the code.

* ``docs/architecture.md`` calls itself the contract between modules: every fully qualified name
  it writes in backticks (``tide_core.x.y``) must import, and every call it writes
  (``name(a, b=1)``) must exist on the object or module named last in the same bullet, taking the
  documented parameters in the documented order.
* ``docs/configuration.md``: its example loads, and every ``TideConfig`` field is documented.
* Every pointer to a document in the code's messages and hints (``docs/X.md``, a README section)
  leads to something that exists.
"""

from __future__ import annotations

import ast
import builtins
import dataclasses
import importlib
import inspect
import re
from pathlib import Path
from typing import Any

import pytest

from tide_core.config import TideConfig

ROOT = Path(__file__).resolve().parents[1]
ARCH = ROOT / "docs" / "architecture.md"
CONFIG_DOC = ROOT / "docs" / "configuration.md"
_MISSING = object()
_TOKEN = re.compile(r"`([^`\n]+)`")
_CALL = re.compile(r"^(\.?)([A-Za-z_][\w.]*)(\()?")
_IDENT = re.compile(r"[A-Za-z_]\w*")
_BUILTINS = frozenset(dir(builtins))


def _bullets(text: str) -> list[str]:
    """Top-level bullets and paragraphs of the doc, outside fenced code blocks."""
    out: list[str] = []
    current: list[str] = []
    fenced = False
    for line in text.splitlines():
        if line.startswith("```"):
            fenced = not fenced
            continue
        if fenced:
            continue
        if line.startswith(("- ", "#")) or not line.strip():
            if current:
                out.append(" ".join(current))
            current = [] if not line.strip() or line.startswith("#") else [line]
        else:
            current.append(line)
    if current:
        out.append(" ".join(current))
    return out


def _resolve(dotted: str) -> Any:
    """Import the longest module prefix of ``dotted`` and walk the rest as attributes."""
    parts = dotted.split(".")
    for i in range(len(parts), 0, -1):
        try:
            obj: Any = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        for name in parts[i:]:
            obj = getattr(obj, name, _MISSING)
            if obj is _MISSING:
                return _MISSING
        return obj
    return _MISSING


def _balanced(text: str, start: int) -> str | None:
    """The text inside the parenthesis group opening at ``text[start - 1]``, or None if unclosed."""
    depth = 1
    for i in range(start, len(text)):
        depth += {"(": 1, ")": -1}.get(text[i], 0)
        if depth == 0:
            return text[start:i]
    return None


def _split_params(params: str) -> list[str] | None:
    """Documented parameter names, or None when the text is not a parameter list."""
    depth, cur, items = 0, "", []
    for ch in params:
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        if ch == "," and depth == 0:
            items.append(cur)
            cur = ""
        else:
            cur += ch
    items.append(cur)
    names = []
    for item in (i.strip() for i in items):
        if item in ("", "*", "...", "/") or item.startswith("**"):
            continue
        name = re.split(r"[=:]", item, maxsplit=1)[0].strip()
        if not _IDENT.fullmatch(name):
            return None
        names.append(name)
    return names


def _parameters(obj: Any) -> list[str] | None:
    try:
        sig = inspect.signature(obj)
    except (TypeError, ValueError):
        return None
    return [p.name for p in sig.parameters.values() if p.name not in ("self", "cls")]


def _is_subsequence(small: list[str], big: list[str]) -> bool:
    it = iter(big)
    return all(name in it for name in small)


def contract_problems(text: str) -> list[str]:
    problems = []
    for bullet in _bullets(text):
        context: Any = None
        for token in _TOKEN.findall(bullet):
            token = token.strip()
            m = _CALL.match(token)
            if not m or token.endswith(".*"):
                continue
            method, name = bool(m.group(1)), m.group(2)
            params = _balanced(token, m.end()) if m.group(3) else None
            if name.startswith(("tide_core.", "tide_etl.")):
                obj = _resolve(name)
                if obj is _MISSING:
                    problems.append(f"{token!r}: {name} does not exist")
                    continue
                context = obj
            elif context is not None and params is not None and "." not in name and name not in _BUILTINS:
                owner = inspect.getmodule(context)
                obj = getattr(context, name, _MISSING)
                if obj is _MISSING and owner is not None:
                    obj = getattr(owner, name, _MISSING)
                if obj is _MISSING:
                    if method or params.strip():  # a bare "config()" may be any step's method
                        where = getattr(context, "__name__", repr(context))
                        problems.append(f"{token!r}: no {name} on {where} or its module")
                    continue
                if inspect.isclass(obj):
                    context = obj
            else:
                continue
            documented = _split_params(params) if params is not None else None
            actual = _parameters(obj) if documented else None
            if documented and actual is not None and not _is_subsequence(documented, actual):
                problems.append(f"{token!r}: documented parameters {documented} are not in {name}{tuple(actual)}")
    return problems


def test_the_architecture_contract_matches_the_code():
    problems = contract_problems(ARCH.read_text(encoding="utf-8"))
    assert not problems, "docs/architecture.md drifted from the code:\n" + "\n".join(problems)


def test_the_contract_check_sees_a_wrong_signature_and_a_missing_name():
    """The checker itself can fail: a renamed parameter and a name that does not exist are caught."""
    doc = (
        "- `tide_core.steps.resolve.resolve_spans(spans, policy=None)` fine; "
        "`tide_core.steps.resolve.resolve_spanz(x)`.\n"
        "- `tide_core.anonymize.engine.Anonymizer`: `.replace_value(label, valeu)`, `no_such_method(x)`.\n"
    )
    problems = contract_problems(doc)
    assert len(problems) == 3, problems
    assert "resolve_spanz" in problems[0] and "valeu" in problems[1] and "no_such_method" in problems[2]


def _config_example() -> str:
    m = re.search(r"```toml\n(.*?)```", CONFIG_DOC.read_text(encoding="utf-8"), re.S)
    assert m, "docs/configuration.md has no TOML example"
    return m.group(1)


def test_the_configuration_example_loads(tmp_path):
    path = tmp_path / "site.toml"
    path.write_text(_config_example(), encoding="utf-8")
    config = TideConfig.from_file(path)
    assert config.executor == "ray" and config.batch_size == 128
    assert config.tables.notes == "clinical_notes" and config.tables.spans == "deid_spans"
    assert [s["name"] for s in config.recognizers][:2] == ["tide.regex", "tide.ids"]
    assert config.metadata_allowlist == ("progress", "discharge", "ehr")
    assert config.metadata_vocabulary == {"site": ("north", "south")}


def test_every_config_key_is_documented():
    doc = CONFIG_DOC.read_text(encoding="utf-8")
    missing = [f.name for f in dataclasses.fields(TideConfig) if f"`{f.name}`" not in doc]
    assert not missing, f"TideConfig fields missing from docs/configuration.md: {missing}"


def test_an_unknown_config_key_points_to_the_documentation(tmp_path):
    from tide_core.errors import ConfigError

    path = tmp_path / "bad.toml"
    path.write_text('preset = "rules"\nbatchsize = 3\n', encoding="utf-8")
    with pytest.raises(ConfigError) as err:
        TideConfig.from_file(path)
    assert err.value.code == "E027"
    doc = re.search(r"docs/[\w]+\.md", str(err.value.hint))
    assert doc and (ROOT / doc.group()).is_file()


def _string_constants() -> list[tuple[Path, str]]:
    out = []
    for pkg in ("tide_core", "tide_etl"):
        for path in sorted((ROOT / pkg).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.Constant) and isinstance(node.value, str):
                    out.append((path, node.value))
    return out


def _readme_sections() -> set[str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    return {m.group(1).strip().lower() for m in re.finditer(r"^#+\s+(.+)$", text, re.M)}


def test_every_pointer_to_a_document_in_the_code_exists():
    sections = _readme_sections()
    problems = []
    for path, value in _string_constants():
        rel = path.relative_to(ROOT)
        for doc in re.findall(r"\bdocs/[\w/.-]+\.md\b", value):
            if not (ROOT / doc).is_file():
                problems.append(f"{rel}: {doc} does not exist")
        for section in re.findall(r"README(?:'s)?,? (?:section )?[\"'\u201c]([^\"'\u201d]+)[\"'\u201d]", value):
            if section.strip().lower() not in sections:
                problems.append(f"{rel}: README section {section!r} does not exist")
        if re.search(r"README, section \w", value):
            problems.append(f"{rel}: {value!r} names a README section without quotes; quote it")
    assert not problems, "\n".join(problems)


def test_the_contract_states_the_deployed_default_model_options():
    """The default model's deployed labels and threshold are written in the contract as they are."""
    from tide_core.model_location import DEFAULT_MODEL_OPTIONS

    text = " ".join(ARCH.read_text(encoding="utf-8").split())
    m = re.search(r"`DEFAULT_MODEL_OPTIONS`: window (\d+), overlap (\d+), labels ([A-Z/]+), min_score ([\d.]+)", text)
    assert m, "docs/architecture.md no longer states DEFAULT_MODEL_OPTIONS"
    assert int(m.group(1)) == DEFAULT_MODEL_OPTIONS["window"] and int(m.group(2)) == DEFAULT_MODEL_OPTIONS["overlap"]
    assert m.group(3).split("/") == list(DEFAULT_MODEL_OPTIONS["labels"])
    assert float(m.group(4)) == DEFAULT_MODEL_OPTIONS["min_score"]
