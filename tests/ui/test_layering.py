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


MOST_METHODS = 40
MOST_LINES = 500


def test_no_class_in_the_ui_owns_too_much() -> None:
    # A class past these sizes holds more than one concern: split it into owners (see
    # replay/ui/screens/replay_screen.py for how the replay screen composes its owners).
    too_big = []
    for path in sorted(UI.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef):
                methods = sum(isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef)
                              for item in node.body)
                lines = (node.end_lineno or node.lineno) - node.lineno + 1
                if methods > MOST_METHODS or lines > MOST_LINES:
                    too_big.append(f"{path.relative_to(UI)}:{node.name} "
                                   f"({methods} methods, {lines} lines)")
    assert too_big == []


def test_screens_tell_the_app_by_messages() -> None:
    # The replay screen and its owners never reach for the app's own methods or state.
    modules = [UI / "screens" / "replay_screen.py", *sorted((UI / "controls").glob("*.py")),
               *sorted((UI / "widgets").glob("*.py"))]
    offenders = [f"{path.relative_to(UI)}" for path in modules
                 if "replay_app" in path.read_text(encoding="utf-8")]
    assert offenders == []
