"""TIDE's Dagster code location.  ``tide_etl.defs`` is the single Definitions object, built when
first accessed (when Dagster loads the location: ``dagster dev -m tide_etl`` finds
``tide_location``, the workspace files name ``defs``), so importing ``tide_etl`` reads no
environment."""

from typing import Any

import dagster as dg

from tide_etl import definitions
from tide_etl.definitions import build_defs

__all__ = ["defs", "build_defs", "tide_location"]


@dg.definitions
def tide_location() -> dg.Definitions:
    """The code location, for Dagster's module discovery (``[tool.dagster] module_name``)."""

    loaded: dg.Definitions = definitions.defs
    return loaded


def __getattr__(name: str) -> Any:
    if name == "defs":
        return definitions.defs
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
