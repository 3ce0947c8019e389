"""Options shared by several commands."""

from __future__ import annotations

import argparse

from tide_core.config import PRESETS, TideConfig

DEFAULT_WAREHOUSE = "duckdb:tide.duckdb"


def add_warehouse(p: argparse.ArgumentParser, default: str = DEFAULT_WAREHOUSE) -> None:
    p.add_argument(
        "--warehouse", default=default, help=f"duckdb:PATH[#SCHEMA] or bigquery:PROJECT.DATASET (default {default})"
    )


def add_config(p: argparse.ArgumentParser) -> None:
    g = p.add_mutually_exclusive_group()
    g.add_argument(
        "--preset",
        choices=PRESETS,
        default=None,
        help="recognizer preset: default (PHI model + regex + gazetteer + known-PHI) or rules (no model)",
    )
    g.add_argument("--config", default=None, help="TOML/JSON run configuration (docs/configuration.md)")
    p.add_argument("--executor", choices=("local", "ray"), default=None, help="run recognition locally or on Ray")
    p.add_argument("--ray-address", default=None, help="existing Ray cluster (else RAY_ADDRESS or a local Ray)")
    p.add_argument("--notes-table", default=None, help="source notes table (default: notes)")


def add_keys(p: argparse.ArgumentParser) -> None:
    p.add_argument("--key-dir", default=None, help="key directory (default $TIDE_KEY_DIR or ./.tide/keys)")


def config_from_args(args: argparse.Namespace) -> TideConfig:
    overrides = {}
    if getattr(args, "executor", None):
        overrides["executor"] = args.executor
    if getattr(args, "ray_address", None):
        overrides["ray_address"] = args.ray_address
    if getattr(args, "config", None):
        return TideConfig.from_file(args.config, **overrides)
    return TideConfig.preset(getattr(args, "preset", None) or "default", **overrides)
