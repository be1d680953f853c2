"""Screens and the palette never import the app at run time: they post messages and the app
acts on them (the picker used to call the app's loading functions, an import circle)."""

from __future__ import annotations

import ast
from pathlib import Path

UI = Path(__file__).resolve().parents[2] / "replay" / "ui"


def _runtime_imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skipped: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skipped.update(id(child) for child in ast.walk(node))
    found = set()
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return found


def test_screens_widgets_and_palette_do_not_import_the_app() -> None:
    modules = [*sorted((UI / "screens").glob("*.py")), *sorted((UI / "widgets").glob("*.py")),
               UI / "commands.py"]
    offenders = [str(path.relative_to(UI)) for path in modules
                 if "replay.ui.app" in _runtime_imports(path)]
    assert offenders == []
