"""The module graph of tide_core and tide_etl points one way: no import cycles, no arrow back up.

Every ``import`` statement counts, at module level or inside a function (a lazy import only
hides a cycle until the day someone hoists it).  Relative imports are resolved, and
``from pkg import name`` is an edge to ``pkg.name`` when that is one of our modules, else to ``pkg``.

The second half keeps every import at the top of its module (no import inside a function), keeps
deferred loading in one place (``tide_core.plugins.load_dotted``; a dotted path is not an edge
here) and checks that the light entry points do not load the heavy packages.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("tide_core", "tide_etl")


def _module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def discover_modules(root: Path = ROOT, packages=PACKAGES) -> dict[str, Path]:
    """Dotted module name -> source file, for every ``.py`` file under ``packages``."""
    return {_module_name(path, root): path for pkg in packages for path in sorted((root / pkg).rglob("*.py"))}


def _resolve_relative(module: str, is_package: bool, level: int, target: str | None) -> str:
    base = module.split(".")
    if not is_package:
        base = base[:-1]
    if level > 1:
        base = base[: len(base) - (level - 1)]
    return ".".join(base + ([target] if target else []))


def _own(name: str, modules: dict[str, Path]) -> str | None:
    """The longest prefix of dotted ``name`` that is one of our modules (``a.b.C`` -> ``a.b``)."""
    parts = name.split(".")
    while parts:
        candidate = ".".join(parts)
        if candidate in modules:
            return candidate
        parts.pop()
    return None


def imported_names(module: str, path: Path) -> set[str]:
    """Every absolute dotted name ``module`` imports (``from a import b`` gives both ``a`` and ``a.b``)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    is_package = path.name == "__init__.py"
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = _resolve_relative(module, is_package, node.level, node.module) if node.level else node.module or ""
            for alias in node.names:
                names.add(f"{base}.{alias.name}" if alias.name != "*" else base)
    return names


def build_graph(modules: dict[str, Path]) -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {}
    for module, path in modules.items():
        targets = {_own(name, modules) for name in imported_names(module, path)}
        graph[module] = {t for t in targets if t is not None and t != module}
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle as a path ``[a, b, ..., a]``, or None (iterative DFS, deterministic order)."""
    white, grey, black = 0, 1, 2
    colour = dict.fromkeys(graph, white)
    for start in sorted(graph):
        if colour[start] != white:
            continue
        stack = [(start, iter(sorted(graph[start])))]
        colour[start] = grey
        while stack:
            node, children = stack[-1]
            for child in children:
                if colour.get(child, black) == grey:
                    path = [n for n, _ in stack]
                    return path[path.index(child) :] + [child]
                if colour.get(child) == white:
                    colour[child] = grey
                    stack.append((child, iter(sorted(graph[child]))))
                    break
            else:
                colour[node] = black
                stack.pop()
    return None


def package_graph(graph: dict[str, set[str]], root: str = "tide_core") -> dict[str, set[str]]:
    """``graph`` collapsed to ``root``'s direct children (``tide_core.engine.recognition`` -> ``tide_core.engine``)."""

    def top(module: str) -> str:
        return ".".join(module.split(".")[:2])

    collapsed: dict[str, set[str]] = {}
    for module, targets in graph.items():
        if module.split(".")[0] != root:
            continue
        node = collapsed.setdefault(top(module), set())
        node.update(top(t) for t in targets if t.split(".")[0] == root and top(t) != top(module))
    return collapsed


def all_imports(modules: dict[str, Path]) -> dict[str, set[str]]:
    return {m: imported_names(m, p) for m, p in modules.items()}


# ----------------------------------------------------------------------------------------- tests


def test_finds_every_package():
    modules = discover_modules()
    assert "tide_core" in modules and "tide_etl" in modules
    assert "tide_core.runner" in modules


def test_no_import_cycles():
    graph = build_graph(discover_modules())
    cycle = find_cycle(graph)
    assert cycle is None, "import cycle: " + " -> ".join(cycle)


def test_no_cycles_between_tide_core_packages():
    """Layering, one level up: e.g. engine primitives <- execution <- runner, never engine -> execution."""
    cycle = find_cycle(package_graph(build_graph(discover_modules())))
    assert cycle is None, "import cycle between packages: " + " -> ".join(cycle)


def test_tide_core_never_imports_dagster_or_tide_etl():
    offenders = []
    for module, names in sorted(all_imports(discover_modules()).items()):
        if not module.startswith("tide_core"):
            continue
        for name in sorted(names):
            top = name.split(".")[0]
            if top in ("dagster", "tide_etl") or top.startswith("dagster_"):
                offenders.append(f"{module} imports {name}")
    assert not offenders, "\n".join(offenders)


def test_detects_a_cycle_through_lazy_relative_and_from_imports(tmp_path):
    """The checker itself: a cycle hidden in a function, a relative import and ``from pkg import mod``."""
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from .sub import b\n")
    (pkg / "sub" / "b.py").write_text("def f():\n    from ..c import g\n")
    (pkg / "c.py").write_text("import os\nfrom pkg import a\ndef g():\n    pass\n")
    modules = discover_modules(tmp_path, ("pkg",))
    graph = build_graph(modules)
    assert graph["pkg.a"] == {"pkg.sub.b"}
    assert graph["pkg.sub.b"] == {"pkg.c"}
    assert graph["pkg.c"] == {"pkg.a"}
    assert find_cycle(graph) == ["pkg.a", "pkg.sub.b", "pkg.c", "pkg.a"]
    (pkg / "c.py").write_text("def g():\n    pass\n")
    assert find_cycle(build_graph(modules)) is None


def own_imports_inside_functions(root: Path = ROOT, packages=PACKAGES) -> list[str]:
    """``path:line`` of every import of our own modules made inside a function body."""
    found = []
    for path in (p for pkg in packages for p in sorted((root / pkg).rglob("*.py"))):
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for fn in ast.walk(tree):
            if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            for node in ast.walk(fn):
                if isinstance(node, ast.ImportFrom) and (node.level or (node.module or "").split(".")[0] in packages):
                    found.append(f"{path.relative_to(root)}:{node.lineno}")
                elif isinstance(node, ast.Import) and any(a.name.split(".")[0] in packages for a in node.names):
                    found.append(f"{path.relative_to(root)}:{node.lineno}")
    return found


def test_our_own_modules_are_imported_at_the_top_of_files():
    """The module graph is visible at the top of every file: no import of tide_core/tide_etl inside a function."""
    assert own_imports_inside_functions() == []


def test_the_top_of_file_rule_sees_an_import_inside_a_function(tmp_path):
    pkg = tmp_path / "tide_core"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("import json\n\n\ndef f():\n    from tide_core import b\n    return b\n")
    (pkg / "b.py").write_text("def g():\n    import json\n    return json\n")
    assert own_imports_inside_functions(tmp_path, ("tide_core",)) == ["tide_core/a.py:5"]


# ------------------------------------------------- every import at the top of its module (issue 14)

#: ``path::function: import`` -> why it may stay inside the function.  Empty: every package TIDE
#: uses is a required dependency, imported at the top of the module that uses it; a light module
#: reaches a heavy one only through the one dotted-path loader, ``tide_core.plugins.load_dotted``.
FUNCTION_LEVEL_IMPORTS_ALLOWED: dict[str, str] = {}


def _import_text(node: ast.Import | ast.ImportFrom) -> str:
    names = ", ".join(a.name + (f" as {a.asname}" if a.asname else "") for a in node.names)
    if isinstance(node, ast.Import):
        return f"import {names}"
    return f"from {'.' * node.level}{node.module or ''} import {names}"


def imports_inside_functions(root: Path = ROOT, packages=PACKAGES) -> list[str]:
    """``path::function: import ...`` for every import statement (of anything) in a function or method body."""
    found = []
    for path in (p for pkg in packages for p in sorted((root / pkg).rglob("*.py"))):
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        seen: set[int] = set()
        for fn in ast.walk(tree):
            if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            for node in ast.walk(fn):
                if isinstance(node, (ast.Import, ast.ImportFrom)) and id(node) not in seen:
                    seen.add(id(node))  # a nested function's import is reported once, under the outer one
                    found.append(f"{path.relative_to(root).as_posix()}::{fn.name}: {_import_text(node)}")
    return found


def test_every_import_is_at_the_top_of_its_module():
    """No ``import`` inside a function or method in tide_core/ or tide_etl/, of any package (third-party,
    stdlib or ours), beyond the explained allowlist: a reader sees a module's dependencies at its top."""
    found = imports_inside_functions()
    unexplained = [f for f in found if f not in FUNCTION_LEVEL_IMPORTS_ALLOWED]
    assert unexplained == [], "move these imports to the top of their module:\n" + "\n".join(unexplained)
    stale = sorted(set(FUNCTION_LEVEL_IMPORTS_ALLOWED) - set(found))
    assert stale == [], f"allowlist entries that no longer occur: {stale}"
    assert all(reason.strip() for reason in FUNCTION_LEVEL_IMPORTS_ALLOWED.values())


def test_the_import_rule_sees_third_party_imports_in_functions_and_methods(tmp_path):
    pkg = tmp_path / "tide_core"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "top.py").write_text("import json\nfrom collections import abc\n\n\ndef f():\n    return json, abc\n")
    (pkg / "lazy.py").write_text(
        "def load():\n    import torch\n    return torch\n\n\n"
        "class Model:\n    def predict(self):\n        from transformers import AutoModel\n\n"
        "        def inner():\n            import numpy as np\n            return np\n\n"
        "        return AutoModel, inner\n"
    )
    assert imports_inside_functions(tmp_path, ("tide_core",)) == [
        "tide_core/lazy.py::load: import torch",
        "tide_core/lazy.py::predict: from transformers import AutoModel",
        "tide_core/lazy.py::predict: import numpy as np",
    ]


def importlib_loaders(root: Path = ROOT, packages=PACKAGES) -> list[str]:
    """``path:line`` of every ``importlib.import_module(...)`` / ``__import__(...)`` call."""
    found = []
    for path in (p for pkg in packages for p in sorted((root / pkg).rglob("*.py"))):
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call):
                continue
            f = node.func
            name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
            if name in ("import_module", "__import__"):
                found.append(f"{path.relative_to(root).as_posix()}:{node.lineno}")
    return found


def test_one_dotted_path_loader():
    """Deferred loading goes through ``tide_core.plugins.load_dotted`` only (commands, backends,
    recognizers, executors, site plugins), never a private ``importlib`` call elsewhere."""
    assert [f.split(":")[0] for f in importlib_loaders()] == ["tide_core/plugins.py"]


#: Modules meant to stay light: importing them (and building the ``tide`` parser for ``--help``)
#: must not load any of these packages (each costs seconds).
LIGHT_MODULES = (
    "tide_core",
    "tide_core.errors",
    "tide_core.types",
    "tide_core.plugins",
    "tide_core.spans",
    "tide_core.config",
    "tide_core.model_location",
    "tide_core.recognizers.registry",
    "tide_core.recognizers.regex_recognizer",
    "tide_core.io.open",
    "tide_core.runner",
    "tide_core.cli.main",
    "tide_core.evaluation.gold_io",
)
HEAVY_PACKAGES = (
    "torch",
    "transformers",
    "ray",
    "presidio_analyzer",
    "presidio_anonymizer",
    "google.cloud",
    "onnx",
    "onnxruntime",
    "sklearn",
    "matplotlib",
    "dagster",
)


def test_light_modules_do_not_load_heavy_packages():
    code = (
        "import importlib, json, sys\n"
        f"heavy = {HEAVY_PACKAGES!r}\n"
        "blame = {}\n"
        f"for mod in {LIGHT_MODULES!r}:\n"
        "    importlib.import_module(mod)\n"
        "    for h in heavy:\n"
        "        if h in sys.modules and h not in blame:\n"
        "            blame[h] = mod\n"
        "from tide_core.cli.main import build_parser\n"
        "build_parser(['--help'])\n"
        "build_parser(['keys', 'list'])\n"
        "for h in heavy:\n"
        "    if h in sys.modules and h not in blame:\n"
        "        blame[h] = 'tide --help / tide keys list'\n"
        "print(json.dumps(blame))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, check=True)
    loaded = json.loads(out.stdout.strip().splitlines()[-1])
    assert loaded == {}, f"heavy packages loaded by light modules (package: first module to load it): {loaded}"


# ------------------------------------------------------------- benchmarks stay outside the product

#: Out-of-generator corpora: text that must not come from the generator that trained the model, nor
#: be shaped by the recognizers it is meant to judge.
OOG_FORBIDDEN = ("tide_core.synth", "tide_core.recognizers", "tide_core.training")


def benchmark_rule_breaches(root: Path = ROOT) -> list[str]:
    """Imports that break the benchmark rules: the product (tide_core, tide_etl) never imports
    ``benchmarks``; ``benchmarks.oog`` never imports the note generator or the recognizers."""
    breaches = []
    product = discover_modules(root, PACKAGES)
    for module, names in sorted(all_imports(product).items()):
        breaches += [f"{module} imports {n}" for n in sorted(names) if n.split(".")[0] == "benchmarks"]
    if (root / "benchmarks").is_dir():
        bench = discover_modules(root, ("benchmarks",))
        for module, names in sorted(all_imports(bench).items()):
            if module.startswith("benchmarks.oog"):
                breaches += [
                    f"{module} imports {n}"
                    for n in sorted(names)
                    if any(n == f or n.startswith(f + ".") for f in OOG_FORBIDDEN)
                ]
    return breaches


def test_benchmarks_are_outside_the_product_and_oog_is_independent():
    assert (ROOT / "benchmarks" / "oog").is_dir()
    assert benchmark_rule_breaches() == []


def test_the_wheel_leaves_benchmarks_out():
    """Packaging: setuptools finds only tide_core* and tide_etl*, and no package data points at benchmarks."""
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    include = text.split("[tool.setuptools.packages.find]", 1)[1].split("\n\n", 1)[0]
    assert 'include = ["tide_core*", "tide_etl*"]' in include
    assert "bench" not in text.split("[tool.setuptools.package-data]", 1)[1].split("\n\n", 1)[0]
    assert not (ROOT / "tide_core" / "bench").exists()


def test_the_benchmark_rules_see_a_breach(tmp_path):
    for pkg in ("tide_core", "tide_etl", "benchmarks", "benchmarks/oog"):
        (tmp_path / pkg).mkdir(parents=True)
        (tmp_path / pkg / "__init__.py").write_text("")
    (tmp_path / "tide_core" / "a.py").write_text("from benchmarks import speed\n")
    (tmp_path / "benchmarks" / "oog" / "gen.py").write_text(
        "import json\nfrom tide_core.synth.notes import make\nfrom tide_core.recognizers import registry\n"
    )
    (tmp_path / "benchmarks" / "quality.py").write_text("from tide_core.synth import notes\n")
    assert benchmark_rule_breaches(tmp_path) == [
        "tide_core.a imports benchmarks.speed",
        "benchmarks.oog.gen imports tide_core.recognizers.registry",
        "benchmarks.oog.gen imports tide_core.synth.notes.make",
    ]
