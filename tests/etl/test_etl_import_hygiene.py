"""Importing the Dagster code location changes no process-wide warnings state of its own.

Third-party packages add their own filters on import (numpy, scipy); ours must not: a silenced
Dagster preview or beta warning is silenced for the definition that needs it, not for the process.
"""

from __future__ import annotations

import subprocess
import sys


def test_importing_the_code_location_adds_no_global_dagster_warnings_filter():
    code = (
        "import warnings; before = list(warnings.filters); import tide_etl, tide_etl.checks; tide_etl.defs; "
        "added = [f for f in warnings.filters if f not in before]; "
        "print([(f[1].pattern if f[1] else '', f[2].__module__ + '.' + f[2].__name__) for f in added])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, check=True)
    added = out.stdout.strip().splitlines()[-1]
    assert "AssetCheckSpec" not in added and "dagster" not in added, f"importing tide_etl added: {added}"
