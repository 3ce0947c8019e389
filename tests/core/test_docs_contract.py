"""Docs that can drift are checked against the code.

* ``docs/architecture.md`` calls itself the contract between modules: every fully qualified name
  it writes in backticks (``tide_core.x.y``) must import, and every call it writes
  (``name(a, b=1)``) must exist on the object or module named last in the same bullet, taking the
  documented parameters in the documented order.
* ``docs/configuration.md``: its example loads, every ``TideConfig`` field is documented with the
  default the code has, every ``TIDE_*`` variable the code reads (``tide_core``, ``tide_etl``,
  ``benchmarks``) is listed with its default, and the release-gate table's defaults are the
  built-in policy's.
* ``docs/architecture.md``: the columns it lists for each TIDE table are the DDL's (``sql/ddl``).
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

ROOT = Path(__file__).resolve().parents[2]
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


# ---------------------------------------------------------------- defaults, variables and columns
_ENV_NAME = re.compile(r"TIDE_[A-Z0-9]+(?:_[A-Z0-9]+)*")
_PROSE = object()  # a documented default written in words: not compared


def _table_rows(text: str) -> list[list[str]]:
    """Cells of every Markdown table row (header and separator rows included)."""
    return [
        [c.strip() for c in line.strip().strip("|").split("|")] for line in text.splitlines() if line.startswith("|")
    ]


def _section(text: str, heading: str) -> str:
    """The ``## heading...`` section of a Markdown text (the heading may go on after ``heading``)."""
    start = text.index(f"\n## {heading}")
    end = text.find("\n## ", start + 1)
    return text[start : end if end != -1 else len(text)]


def _documented_default(cell: str) -> object:
    """A default cell as a value: ``none ...`` is None, ``empty`` an empty collection, a leading
    backticked literal its value (a number, true/false, or text without quotes); words are _PROSE."""
    if cell.startswith("none"):
        return None
    if cell == "empty":
        return ()
    m = re.match(r"`([^`]*)`", cell) or re.fullmatch(r"(true|false|[\d.]+)", cell)
    if not m:
        return _PROSE
    literal = m.group(1).strip('"')
    if literal in ("true", "false"):
        return literal == "true"
    for kind in (int, float):
        try:
            return kind(literal)
        except ValueError:
            pass
    return literal


def _same(documented: object, actual: object) -> bool:
    if documented == () and actual is not None and not isinstance(actual, (bool, int, float, str)):
        return len(actual) == 0
    if isinstance(documented, (int, float)) and not isinstance(documented, bool):
        return isinstance(actual, (int, float)) and not isinstance(actual, bool) and float(actual) == documented
    return documented == actual


def config_default_problems(doc: str) -> list[str]:
    """``TideConfig`` fields whose scalar default the Keys table leaves out or states wrongly."""
    rows = {r[0].strip("`"): r for r in _table_rows(_section(doc, "Keys")) if len(r) == 4}
    problems = []
    for f in dataclasses.fields(TideConfig):
        if f.default is not dataclasses.MISSING:
            actual: object = f.default
        elif f.default_factory is not dataclasses.MISSING:
            actual = f.default_factory()
        else:
            continue  # required (recognizers): the doc says where it comes from
        if not (actual is None or isinstance(actual, (bool, int, float, str, tuple, dict))):
            continue  # a structured default (tables): described in words
        row = rows.get(f.name)
        documented = _documented_default(row[2]) if row else _PROSE
        if documented is _PROSE or not _same(documented, actual):
            problems.append(f"{f.name}: documented default {row[2] if row else None!r}, code {actual!r}")
    return problems


def _code_env_variables() -> dict[str, set[str]]:
    """Every ``TIDE_*`` name the code holds as a whole string (how each is read: ``os.environ``,
    ``getenv``, or a constant or table of variable names), with the files that hold it."""
    found: dict[str, set[str]] = {}
    for pkg in ("tide_core", "tide_etl", "benchmarks"):
        for path in sorted((ROOT / pkg).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.Constant) and isinstance(node.value, str) and _ENV_NAME.fullmatch(node.value):
                    found.setdefault(node.value, set()).add(str(path.relative_to(ROOT)))
    return found


def _documented_env(doc: str) -> dict[str, str]:
    """Variable -> its default cell, from every table row of the doc that names one variable."""
    out = {}
    for row in _table_rows(doc):
        m = re.fullmatch(r"`(TIDE_[A-Z0-9_<>]+)`", row[0])
        if m and len(row) >= 3:
            out[m.group(1)] = row[1]
    return out


def env_variable_problems(code: dict[str, set[str]], doc: str) -> list[str]:
    documented = _documented_env(doc)
    problems = [f"{name} ({', '.join(sorted(files))}) is not documented" for name, files in code.items()]
    problems = [p for p in problems if p.split()[0] not in documented]
    problems += [
        f"{name} is documented but no code reads it" for name in documented if "<" not in name and name not in code
    ]
    return problems


def _env_code_defaults(monkeypatch: pytest.MonkeyPatch) -> dict[str, object]:
    """What the code uses when each variable is unset, where the code states it as a value."""
    from tide_core.anonymize.keys import FileKeyProvider, provider_from_env
    from tide_core.config import rules_specs
    from tide_core.io import duckdb_warehouse
    from tide_core.notify import DEFAULT_TIMEOUT_S
    from tide_etl.resources import ENV_SETTINGS, default_resources
    from tide_etl.schedules import NIGHTLY_CRON

    for name in _code_env_variables():
        monkeypatch.delenv(name, raising=False)
    resources = default_resources(environ={})
    out: dict[str, object] = {name: getattr(resources[res], field) for (res, field), name in ENV_SETTINGS.items()}
    files = provider_from_env().providers[0]
    assert isinstance(files, FileKeyProvider)
    gazetteer = next(s["csv"] for s in rules_specs() if s["name"] == "tide.gazetteer")
    out.update(
        TIDE_KEY_DIR=str(files.root),
        TIDE_DUCKDB_MEMORY_LIMIT=duckdb_warehouse.DEFAULT_MEMORY_LIMIT,
        TIDE_DUCKDB_LOCK_WAIT_S=duckdb_warehouse.DEFAULT_LOCK_WAIT_S,
        TIDE_ALERT_TIMEOUT_S=DEFAULT_TIMEOUT_S,
        TIDE_NIGHTLY_CRON=NIGHTLY_CRON,
        TIDE_GAZETTEER=str(Path(gazetteer).relative_to(ROOT)),
    )
    return out


def env_default_problems(code_defaults: dict[str, object], doc: str) -> list[str]:
    documented = _documented_env(doc)
    problems = []
    for name, actual in sorted(code_defaults.items()):
        cell = documented.get(name, "")
        value = _documented_default(re.sub(r"^[^`]*(?=`)", "", cell) if actual is not None else cell)
        if not _same(value, actual):
            problems.append(f"{name}: documented default {cell!r}, code {actual!r}")
    return problems


def _ddl_columns() -> dict[str, list[str]]:
    out = {}
    for path in sorted((ROOT / "sql" / "ddl").glob("*.sql")):
        m = re.search(r"CREATE TABLE IF NOT EXISTS `\{\{dataset\}\}\.(\w+)` \((.*?)\n\)", path.read_text(), re.S)
        assert m, f"{path.name}: no CREATE TABLE"
        out[m.group(1)] = re.findall(r"^\s*`(\w+)` ", m.group(2), re.M)
    return out


def _documented_columns(text: str) -> dict[str, list[str]]:
    """``- `tide_x` (scope): col, col (note), ...`` bullets -> their columns, up to the first full stop."""
    out = {}
    for bullet in _bullets(_section(text, "TIDE tables").split("\n", 2)[2]):
        m = re.match(r"- `(tide_\w+)` \(", bullet)
        if not m:
            continue
        scope = _balanced(bullet, m.end())
        assert scope is not None and bullet[m.end() + len(scope) + 1] == ":", bullet[:80]
        rest, depth, items, cur = bullet[m.end() + len(scope) + 2 :], 0, [], ""
        for i, ch in enumerate(rest):
            depth += {"(": 1, "[": 1, ")": -1, "]": -1}.get(ch, 0)
            if depth == 0 and ch == "." and rest[i + 1 : i + 2] in ("", " "):
                break
            if depth == 0 and ch == ",":
                items.append(cur)
                cur = ""
            else:
                cur += ch
        items.append(cur)
        out[m.group(1)] = [re.match(r"\s*(\w+)", item).group(1) for item in items]
    return out


def column_problems(text: str, ddl: dict[str, list[str]]) -> list[str]:
    problems = []
    documented = _documented_columns(text)
    for table in ("tide_spans", "tide_recognized_notes", "tide_runs"):
        if table not in documented:
            problems.append(f"{table}: no column list")
    for table, cols in documented.items():
        if table not in ddl:
            problems.append(f"{table}: documented, but no DDL in sql/ddl")
        elif cols != ddl[table]:
            missing = [c for c in ddl[table] if c not in cols]
            extra = [c for c in cols if c not in ddl[table]]
            problems.append(f"{table}: missing {missing}, not in the DDL {extra}, documented order {cols}")
    return problems


def test_documented_config_defaults_are_the_codes():
    problems = config_default_problems(CONFIG_DOC.read_text(encoding="utf-8"))
    assert not problems, "docs/configuration.md's Keys table drifted from TideConfig:\n" + "\n".join(problems)


def test_every_tide_variable_the_code_reads_is_documented():
    code = _code_env_variables()
    assert {"TIDE_WAREHOUSE", "TIDE_GAZETTEER", "TIDE_DUCKDB_MEMORY_LIMIT", "TIDE_ALERT_SMTP_HOST"} <= set(code)
    problems = env_variable_problems(code, CONFIG_DOC.read_text(encoding="utf-8"))
    assert not problems, "docs/configuration.md's environment tables drifted:\n" + "\n".join(problems)


def test_documented_variable_defaults_are_the_codes(monkeypatch):
    code_defaults = _env_code_defaults(monkeypatch)
    assert len(code_defaults) >= 17
    problems = env_default_problems(code_defaults, CONFIG_DOC.read_text(encoding="utf-8"))
    assert not problems, "\n".join(problems)


def test_setting_an_alert_variable_to_its_documented_default_changes_nothing():
    """The alert settings have no constants to compare: setting each documented literal default must
    give the settings of an empty environment."""
    from tide_core.notify import AlertSettings

    documented = _documented_env(CONFIG_DOC.read_text(encoding="utf-8"))
    literal = {
        name: re.match(r"`([^`]*)`", cell).group(1)
        for name, cell in documented.items()
        if name.startswith("TIDE_ALERT_") and cell.startswith("`")
    }
    assert {"TIDE_ALERT_SMTP_PORT", "TIDE_ALERT_TIMEOUT_S", "TIDE_ALERT_SMTP_STARTTLS"} <= set(literal)
    literal.pop("TIDE_ALERT_SLACK_TOKEN_ENV")  # read only beside a channel: checked below
    for name, value in literal.items():
        assert AlertSettings.from_env({name: value}) == AlertSettings.from_env({}), name
    token = documented["TIDE_ALERT_SLACK_TOKEN_ENV"].strip("`")
    channel = {"TIDE_ALERT_SLACK_CHANNEL": "#tide", token: "xoxb-test"}
    assert AlertSettings.from_env(channel).slack_token == "xoxb-test"


def test_documented_gate_policy_defaults_are_the_built_in_policy():
    """Writing each documented default into a policy file changes nothing but the label."""
    from tide_core.assurance.gate_policy import policy_from_mapping

    rows = [r for r in _table_rows(_section(CONFIG_DOC.read_text(encoding="utf-8"), "Release-gate policy"))]
    defaults = {r[0].strip("`"): _documented_default(r[2]) for r in rows[2:] if len(r) == 4}
    compared = {k: v for k, v in defaults.items() if v is not _PROSE}
    assert {"target_rate", "confidence", "every_bucket", "block_on_drift", "require_drift"} <= set(compared)
    base = {"name": "docs", "version": 1}
    for key, value in compared.items():
        assert policy_from_mapping({**base, key: value}) == policy_from_mapping(base), key


def test_documented_table_columns_are_the_ddls():
    problems = column_problems(ARCH.read_text(encoding="utf-8"), _ddl_columns())
    assert not problems, "docs/architecture.md's TIDE tables drifted from sql/ddl:\n" + "\n".join(problems)


def test_the_drift_checks_see_a_broken_doc(monkeypatch):
    """Each check above fails on a copy of the docs with one thing wrong."""
    doc = CONFIG_DOC.read_text(encoding="utf-8")
    assert not config_default_problems(doc)
    wrong_batch = doc.replace("| `batch_size` | integer | 64 |", "| `batch_size` | integer | 32 |")
    assert [p.split(":")[0] for p in config_default_problems(wrong_batch)] == ["batch_size"]
    words = doc.replace("| `ray_address` | string | none (a local Ray) |", "| `ray_address` | string | a local Ray |")
    assert [p.split(":")[0] for p in config_default_problems(words)] == ["ray_address"]

    code = _code_env_variables()
    row = next(line for line in doc.splitlines() if line.startswith("| `TIDE_GAZETTEER` |"))
    assert env_variable_problems(code, doc.replace(row + "\n", "")) == [
        "TIDE_GAZETTEER (tide_core/config.py) is not documented"
    ]
    stale = doc.replace(row, row + "\n| `TIDE_NO_SUCH_THING` | none | gone |")
    assert env_variable_problems(code, stale) == ["TIDE_NO_SUCH_THING is documented but no code reads it"]

    code_defaults = _env_code_defaults(monkeypatch)
    for old, new in (
        ("`64MB`", "`128MB`"),
        ("`0 2 * * *`", "`0 3 * * *`"),
        ("| `TIDE_CONFIG` | none", "| `TIDE_CONFIG` | `x`"),
    ):
        assert old in doc
        assert len(env_default_problems(code_defaults, doc.replace(old, new, 1))) == 1, old

    arch, ddl = ARCH.read_text(encoding="utf-8"), _ddl_columns()
    assert "n_chunks" in ddl["tide_runs"] and not column_problems(arch, ddl)
    assert column_problems(re.sub(r"n_released,\s+n_quarantined,", "n_released,", arch), ddl)[0].startswith(
        "tide_runs: missing ['n_quarantined']"
    )
    assert column_problems(arch, {**ddl, "tide_spans": [*ddl["tide_spans"], "extra"]})[0].startswith("tide_spans")
