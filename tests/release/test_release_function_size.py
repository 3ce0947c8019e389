"""No function in tide_core/release/ is longer than 80 lines (issue 34: a release step reads as a short script).

Lines are counted from ``def`` to the function's last line (docstring and comments included), by
the ``ast`` of each module, nested functions and methods too.  A function that grows past the
limit is split into named steps, as :func:`tide_core.release.lifecycle.decide` is.
"""

from __future__ import annotations

import ast
from pathlib import Path

RELEASE = Path(__file__).resolve().parents[2] / "tide_core" / "release"
MAX_LINES = 80


def long_functions(root: Path, limit: int = MAX_LINES) -> list[str]:
    """``module:function (lines)`` for every function under ``root`` longer than ``limit`` lines."""
    out = []
    for path in sorted(root.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                n = (node.end_lineno or node.lineno) - node.lineno + 1
                if n > limit:
                    out.append(f"{path.relative_to(root)}:{node.name} ({n})")
    return out


def test_no_function_in_the_release_package_is_over_80_lines():
    assert RELEASE.is_dir() and len(list(RELEASE.glob("*.py"))) >= 5
    assert long_functions(RELEASE) == []


def test_the_rule_sees_a_long_function(tmp_path):
    body = "\n".join(f"    x{i} = {i}" for i in range(MAX_LINES))  # def + 80 lines: 81
    (tmp_path / "m.py").write_text(f"class C:\n    def f(self):\n    {body.replace(chr(10), chr(10) + '    ')}\n")
    (tmp_path / "ok.py").write_text("def g():\n" + "\n".join(f"    y{i} = {i}" for i in range(MAX_LINES - 1)) + "\n")
    assert long_functions(tmp_path) == ["m.py:f (81)"]
