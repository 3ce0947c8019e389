"""The orchestrator stays split by responsibility: short engine functions, a short runner, nothing
below the runner importing it.

``tide_core/engine/`` holds the study-run pieces (study input, recognizer set-up, the run ledger,
the shared chunk-run loop); ``tide_core/runner.py`` reads as two short study scripts on top of
them.  These bounds are read from the source with ``ast``.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

#: The longest a function (nested functions included) in tide_core/engine/ may be, in lines.
MAX_ENGINE_FUNCTION_LINES = 80
#: The longest tide_core/runner.py may be, in lines.
MAX_RUNNER_LINES = 450
#: Packages that sit below the runner: they read study input and build recognizers from the engine.
BELOW_RUNNER = ("assurance", "review", "release", "engine", "execution", "store", "steps", "io")


def long_functions(folder: Path, limit: int) -> list[str]:
    """``path::name (n lines)`` of every function or method in ``folder`` longer than ``limit`` lines."""
    found = []
    for path in sorted(folder.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                assert node.end_lineno is not None
                n = node.end_lineno - node.lineno + 1
                if n > limit:
                    found.append(f"{path.relative_to(folder.parent).as_posix()}::{node.name} ({n} lines)")
    return found


def runner_importers(root: Path, packages: tuple[str, ...]) -> list[str]:
    """Modules of ``tide_core/<package>/`` that import ``tide_core.runner`` (any form, anywhere in the file)."""
    found = []
    for package in packages:
        for path in sorted((root / "tide_core" / package).rglob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
            for node in ast.walk(tree):
                names: list[str] = []
                if isinstance(node, ast.Import):
                    names = [a.name for a in node.names]
                elif isinstance(node, ast.ImportFrom) and node.module:
                    names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
                if "tide_core.runner" in names:
                    found.append(f"{path.relative_to(root).as_posix()}:{node.lineno}")
    return found


def test_no_engine_function_is_longer_than_80_lines():
    assert long_functions(ROOT / "tide_core" / "engine", MAX_ENGINE_FUNCTION_LINES) == []


def test_the_runner_is_at_most_450_lines():
    n = len((ROOT / "tide_core" / "runner.py").read_text(encoding="utf-8").splitlines())
    assert n <= MAX_RUNNER_LINES, f"tide_core/runner.py has {n} lines; move the work into tide_core/engine/"


def test_nothing_below_the_runner_imports_it():
    assert runner_importers(ROOT, BELOW_RUNNER) == []


def test_the_rules_see_a_long_function_and_a_runner_import(tmp_path):
    """The checkers themselves: a nested function counts with its outer one; ``from tide_core import
    runner`` and ``import tide_core.runner`` are both seen."""
    engine = tmp_path / "tide_core" / "engine"
    engine.mkdir(parents=True)
    body = "".join(f"    x{i} = {i}\n" for i in range(80))
    (engine / "long.py").write_text(f"def outer():\n    def inner():\n        pass\n{body}", encoding="utf-8")
    (engine / "short.py").write_text("def ok():\n" + "".join(f"    y{i} = {i}\n" for i in range(79)), encoding="utf-8")
    assert long_functions(engine, 80) == ["engine/long.py::outer (83 lines)"]
    review = tmp_path / "tide_core" / "review"
    review.mkdir()
    (review / "a.py").write_text("from tide_core import runner\n", encoding="utf-8")
    (review / "b.py").write_text("import json\n\n\ndef f():\n    import tide_core.runner\n", encoding="utf-8")
    (review / "c.py").write_text("from tide_core.engine.study_input import read_study_input\n", encoding="utf-8")
    assert runner_importers(tmp_path, ("review",)) == ["tide_core/review/a.py:1", "tide_core/review/b.py:5"]
