"""BigQuery DDL of every TIDE table, generated from the table registry (``tables.TABLES``).

``python -m tide_core.store.ddl [DIR]`` rewrites ``sql/ddl`` (default); ``tests/io/test_table_registry.py``
checks that the checked-in files equal what this module renders, so the DDL cannot drift from the
schemas the engine writes.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

import pyarrow as pa

from tide_core.store.tables import TABLES, TableSpec

DDL_DIR = Path(__file__).resolve().parents[2] / "sql" / "ddl"

_TYPES = {"string": "STRING", "int64": "INT64", "double": "FLOAT64", "bool": "BOOL"}


def column_type(t: pa.DataType) -> str:
    if pa.types.is_timestamp(t):
        return "TIMESTAMP" if t.tz else "DATETIME"
    return _TYPES[str(t)]


def render(spec: TableSpec) -> str:
    """The ``CREATE TABLE IF NOT EXISTS`` statement of one table (``{{dataset}}`` left to fill in)."""
    lines = [
        f"-- {spec.description}",
        f"-- Generated from tide_core.store.tables.TABLES[{spec.kind!r}] by `python -m tide_core.store.ddl`; "
        "replace {{dataset}} with PROJECT.DATASET (the source dataset).",
        f"CREATE TABLE IF NOT EXISTS `{{{{dataset}}}}.{spec.default_name}` (",
        ",\n".join(f"  `{f.name}` {column_type(f.type)}" for f in spec.schema),
        ")",
    ]
    if spec.time_partition:
        lines.append(f"PARTITION BY TIMESTAMP_TRUNC(`{spec.time_partition}`, MONTH)")
    if spec.cluster:
        lines.append(f"CLUSTER BY {', '.join(spec.cluster)}")
    lines.append(f'OPTIONS (description = "{spec.description}");')
    return "\n".join(lines) + "\n"


def rendered() -> dict[str, str]:
    """File name -> DDL text, for every table of the registry."""
    return {spec.ddl_file: render(spec) for spec in TABLES.values()}


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    out = Path(args[0]) if args else DDL_DIR
    out.mkdir(parents=True, exist_ok=True)
    for name, text in rendered().items():
        (out / name).write_text(text, encoding="utf-8")
    print(f"wrote {len(TABLES)} DDL files to {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
