"""The ``tide`` command table (``tide_core.cli.main.COMMANDS``) lists every ``cmd_*`` module, with its help line."""

from __future__ import annotations

import argparse
import pkgutil

import tide_core.cli as cli_pkg
from tide_core.cli.main import COMMANDS, build_parser, command_in
from tide_core.plugins import load_dotted


def test_every_cmd_module_is_in_the_table_once():
    modules = sorted(
        f"tide_core.cli.{m.name}" for m in pkgutil.iter_modules(cli_pkg.__path__) if m.name.startswith("cmd_")
    )
    assert sorted(module for module, _ in COMMANDS.values()) == modules


def test_the_table_help_is_what_each_module_registers():
    for name, (module, help_line) in COMMANDS.items():
        parser = argparse.ArgumentParser()
        sub = parser.add_subparsers()
        load_dotted(f"{module}:register")(sub)
        registered = {a.dest: a.help for a in sub._choices_actions}
        assert registered == {name: help_line}, module


def test_only_the_named_command_is_loaded():
    parser = build_parser(["-v", "keys", "list"])
    args = parser.parse_args(["-v", "keys", "list"])
    assert args.command == "keys" and callable(args.func)
    assert command_in(["--verbose", "run", "--study", "s"]) == "run" and command_in(["--help"]) is None
