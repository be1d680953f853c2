"""The core's stages import only earlier stages: data flows one way through `replay.core`.

Every import counts, including the ones inside functions (they run too), except those under
`if TYPE_CHECKING:`, which never run.
"""

from __future__ import annotations

import ast
from pathlib import Path

import replay.core
from replay.core import STAGES, UTILITIES

CORE = Path(replay.core.__file__).parent


def _type_checking_only(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def run_time_imports(path: Path, module: str) -> set[str]:
    """The modules a source file imports when it runs (relative imports resolved)."""
    found: set[str] = set()
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and _type_checking_only(node):
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                target = f"{base}.{node.module}" if node.module else base
            else:
                target = node.module or ""
            found.add(target)
            # `from replay.core.corpus import scan` imports the module `scan` too.
            found.update(f"{target}.{alias.name}" for alias in node.names)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(ast.parse(path.read_text(encoding="utf-8")))
    return found


def core_modules() -> dict[str, Path]:
    """Every module of `replay.core`, by dotted name."""
    modules = {}
    for path in sorted(CORE.rglob("*.py")):
        parts = list(path.relative_to(CORE).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        modules[".".join(["replay.core", *parts])] = path
    return modules


def place(module: str) -> tuple[int, str] | None:
    """(rank, name) of the stage or utility a core module belongs to; None outside the core.

    Utilities rank below every stage; the core package itself ranks with them.
    """
    if module == "replay.core":
        return (-1, "replay.core")
    if not module.startswith("replay.core."):
        return None
    head = module.split(".")[2]
    if head in UTILITIES:
        return (-1, head)
    if head in STAGES:
        return (STAGES.index(head), head)
    return (len(STAGES), head)


def test_every_core_module_belongs_to_a_stage_or_is_a_utility() -> None:
    stray = sorted(m for m in core_modules() if place(m)[0] == len(STAGES))
    assert stray == []


def test_at_most_twelve_modules_at_the_top_of_the_core() -> None:
    top = [p.name for p in CORE.glob("*.py")]
    assert len(top) <= 12, top


def test_every_stage_says_what_it_holds_and_may_import() -> None:
    for stage in STAGES:
        doc = ast.get_docstring(ast.parse((CORE / stage / "__init__.py").read_text("utf-8")))
        assert doc and "May import" in doc, stage


def test_no_stage_imports_a_later_one() -> None:
    wrong = []
    for module, path in core_modules().items():
        own = place(module)
        assert own is not None
        for imported in run_time_imports(path, module):
            other = place(imported)
            if other is None:
                continue
            if other[0] > own[0] or (own[0] == -1 and other[0] != -1):
                wrong.append(f"{module} imports {imported} ({own[1]} -> {other[1]})")
    assert wrong == []


def test_the_core_never_imports_the_interface() -> None:
    interface = ("textual", "rich", "replay.ui", "replay.commands", "replay.cli",
                 "replay.watching")
    wrong = [
        f"{module} imports {imported}"
        for module, path in core_modules().items()
        for imported in run_time_imports(path, module)
        if imported.startswith(interface)
    ]
    assert wrong == []


def test_a_later_stage_import_is_caught(tmp_path: Path) -> None:
    # The check itself: a session module importing the corpus stage would be reported.
    source = tmp_path / "model.py"
    source.write_text("def f():\n    from replay.core.corpus import scan\n", encoding="utf-8")
    imported = run_time_imports(source, "replay.core.session.model")
    assert "replay.core.corpus.scan" in imported
    assert place("replay.core.corpus.scan")[0] > place("replay.core.session.model")[0]
