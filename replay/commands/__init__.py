"""Headless subcommands (`replay scan`, `replay export`, ...), one module each.

A module here is a command when it defines `NAME`, `HELP`, `configure(parser)` and
`run(args) -> int`. The CLI finds them by listing this package.
"""

from __future__ import annotations

import importlib
import pkgutil
from types import ModuleType


def command_modules() -> dict[str, ModuleType]:
    """Every command module by its command name, in a stable order."""
    found: dict[str, ModuleType] = {}
    for module_info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        if module_info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{__name__}.{module_info.name}")
        if hasattr(module, "NAME") and hasattr(module, "run"):
            found[module.NAME] = module
    return found
