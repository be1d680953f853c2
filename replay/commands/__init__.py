"""Headless subcommands (`replay scan`, `replay export`, ...), one module each.

A module here is a command when it defines `NAME` (its module name), `HELP`,
`configure(parser)` and `run(args) -> int`. The CLI lists this package for the names and
imports only the command it runs: importing all of them cost 35 ms of every app start.
"""

from __future__ import annotations

import importlib
import pkgutil
from types import ModuleType


def command_names() -> list[str]:
    """Every command's name, in a stable order, without importing any."""
    return sorted(info.name for info in pkgutil.iter_modules(__path__)
                  if not info.name.startswith("_"))


def command_module(name: str) -> ModuleType:
    """The module of one command."""
    module = importlib.import_module(f"{__name__}.{name}")
    if getattr(module, "NAME", None) != name or not hasattr(module, "run"):
        raise LookupError(f"replay.commands.{name} is not a command module")
    return module


def command_modules() -> dict[str, ModuleType]:
    """Every command module by its command name (imports them all: for help texts)."""
    return {name: command_module(name) for name in command_names()}
