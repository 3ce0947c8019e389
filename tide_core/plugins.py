"""The one loader of objects named by a dotted path (``package.module:Attr`` or ``package.module.Attr``).

Shared by the recognizer registry (builtins and a site's ``{"name": "my_pkg.module:Factory"}``),
the Presidio adapter (``{"name": "presidio", "class": "presidio_analyzer....EmailRecognizer"}``)
and the few places where a light module reaches a heavy one only on the path that needs it: the
``tide`` command table (:mod:`tide_core.cli.main`), the BigQuery backend (:mod:`tide_core.io.open`),
the Ray executor (:mod:`tide_core.execution.dispatch`) and the ONNX build
(:mod:`tide_core.inference.onnx_export`).  Everywhere else packages are imported at the top of
the module that uses them.  It imports nothing of TIDE's beyond the error types, so any module may use it.
"""

from __future__ import annotations

import importlib
from typing import Any

from tide_core.errors import ConfigError


def load_dotted(path: str) -> Any:
    """Import and return the object ``path`` names; ``ConfigError`` E233/E234 when it cannot."""
    module_name, _, attr = path.partition(":")
    if not attr:
        module_name, _, attr = path.rpartition(".")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise ConfigError(
            "E233",
            f"cannot import module {module_name!r} for {path!r} ({exc.name} missing)",
            hint="check the dotted path ('package.module:Factory') and that the package is installed",
        ) from None
    try:
        obj = module
        for part in attr.split("."):
            obj = getattr(obj, part)
    except AttributeError:
        raise ConfigError(
            "E234",
            f"module {module_name!r} has no attribute {attr!r}",
            hint="check the dotted path ('package.module:Factory')",
        ) from None
    return obj
