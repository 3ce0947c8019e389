"""TIDE's Dagster code location.  ``tide_etl.defs`` is the single Definitions object."""

from tide_etl.definitions import build_defs, defs

__all__ = ["defs", "build_defs"]
