"""The researchers' and operators' SQL of ``sql/`` on either warehouse.

The files are written for BigQuery (backquoted identifiers, ``{{dataset}}``, ``@name``
parameters) in a dialect-neutral subset, so one source serves both warehouses; a file that
cannot be neutral has a DuckDB variant beside it (``sql/queries/duckdb/<same name>``).
``render_duckdb`` turns a file into DuckDB SQL: ``{{dataset}}.t`` becomes ``t`` (or
``schema.t``), other backquotes become double quotes, and ``@name`` parameters become ``?``
in order.  ``run_duckdb`` renders and runs a file on a ``DuckDBWarehouse``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path

from tide_core.errors import ConfigError

SQL_DIR = Path(__file__).resolve().parents[1] / "sql"

_DATASET_TABLE = re.compile(r"`\{\{dataset\}\}\.([A-Za-z_][A-Za-z0-9_]*)`")
_PARAM = re.compile(r"(?<![\w@])@([A-Za-z_][A-Za-z0-9_]*)")


def source(path: str | Path, dialect: str = "bigquery") -> Path:
    """The file to run on ``dialect``: its variant in ``<dir>/<dialect>/`` if there is one."""
    path = Path(path)
    variant = path.parent / dialect / path.name
    return variant if dialect != "bigquery" and variant.is_file() else path


def render_duckdb(text: str, schema: str | None = None) -> tuple[str, list[str]]:
    """(DuckDB SQL, parameter names in order of their ``?``)."""
    prefix = f'"{schema}".' if schema else ""
    text = _DATASET_TABLE.sub(lambda m: f'{prefix}"{m.group(1)}"', text)
    if "{{dataset}}" in text:
        raise ValueError("a {{dataset}} reference outside a backquoted table name")
    text = text.replace("`", '"')
    names: list[str] = []

    def param(m: re.Match) -> str:
        names.append(m.group(1))
        return "?"

    lines = []
    for line in text.splitlines():
        code, dash, comment = line.partition("--")
        lines.append(_PARAM.sub(param, code) + dash + comment)
    return "\n".join(lines), names


def run_duckdb(wh, path: str | Path, params: Mapping[str, object] | None = None):
    """Run one ``sql/`` file (its DuckDB variant if any) on a DuckDB warehouse; an Arrow table."""

    schema = getattr(wh, "schema", None)
    sql, names = render_duckdb(source(path, "duckdb").read_text(encoding="utf-8"), None if schema == "main" else schema)
    params = dict(params or {})
    missing = sorted(set(names) - set(params))
    if missing:
        raise ConfigError(
            "E922",
            f"{Path(path).name} needs parameters {', '.join('@' + n for n in missing)}",
            hint="pass them as params={'study': ..., 'key': ...}",
        )
    return wh.sql(sql, [params[n] for n in names])
