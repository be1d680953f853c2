"""No two modules of `replay` import each other at run time, directly or round a circle.

The graph is read with `ast`, not by importing: every `import` and `from ... import` counts,
including the ones inside functions (a lazy import is still a run-time dependency, only a
later one), except those under `if TYPE_CHECKING:`, which never run. An import of `a.b` is an
edge to the module `a.b` (its parent packages are not counted: every module of a package
would otherwise be in a circle with an `__init__` that re-exports it).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "replay"


def module_name(path: Path) -> str:
    """`replay/ui/app.py` -> `replay.ui.app`; `replay/ui/__init__.py` -> `replay.ui`."""
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _type_checking_nodes(tree: ast.AST) -> set[int]:
    """Ids of every node inside an `if TYPE_CHECKING:` body (its `else` does run)."""
    skipped: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for child in node.body:
                skipped.update(id(inner) for inner in ast.walk(child))
    return skipped


def imported_names(path: Path, modules: set[str], name: str | None = None) -> Iterator[str]:
    """The modules of `modules` that the file at `path` (module `name`) imports at run time."""
    name = name or module_name(path)
    is_package = path.name == "__init__.py"
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skipped = _type_checking_nodes(tree)
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name in modules:
                    yield alias.name
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = name.split(".") if is_package else name.split(".")[:-1]
                base = base[:len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            for alias in node.names:
                # `from a import b` names the module `a.b` when there is one, else `a`'s `b`.
                candidate = f"{target}.{alias.name}"
                if candidate in modules:
                    yield candidate
                elif target in modules:
                    yield target


def import_graph() -> dict[str, set[str]]:
    """Run-time imports between the modules of `replay`."""
    paths = sorted(PACKAGE.rglob("*.py"))
    modules = {module_name(path) for path in paths}
    return {module_name(path): set(imported_names(path, modules)) - {module_name(path)}
            for path in paths}


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan), each sorted."""
    counter = [0]
    order: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(start: str) -> None:
        # Iterative, so a long chain of imports never meets the recursion limit.
        work = [(start, iter(sorted(graph[start])))]
        order[start] = low[start] = counter[0]
        counter[0] += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, edges = work[-1]
            for target in edges:
                if target not in order:
                    order[target] = low[target] = counter[0]
                    counter[0] += 1
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, iter(sorted(graph[target]))))
                    break
                if target in on_stack:
                    low[node] = min(low[node], order[target])
            else:
                work.pop()
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[node])
                if low[node] == order[node]:
                    group = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        group.append(member)
                        if member == node:
                            break
                    if len(group) > 1:
                        found.append(sorted(group))

    for module in sorted(graph):
        if module not in order:
            visit(module)
    return sorted(found)


def test_the_graph_sees_lazy_imports_and_skips_type_checking(tmp_path: Path) -> None:
    source = tmp_path / "m.py"
    source.write_text(
        "from typing import TYPE_CHECKING\n"
        "import a.b\n"
        "from a import c\n"
        "if TYPE_CHECKING:\n"
        "    from a import d\n"
        "else:\n"
        "    from a import e\n"
        "def later():\n"
        "    from a.f import thing\n", encoding="utf-8")
    modules = {"a", "a.b", "a.c", "a.d", "a.e", "a.f"}
    found = set(imported_names(source, modules, name="m"))
    assert found == {"a.b", "a.c", "a.e", "a.f"}


def test_circles_are_found() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
    assert circles(graph) == [["a", "b", "c"]]


def test_no_module_of_replay_is_in_an_import_circle() -> None:
    found = circles(import_graph())
    assert found == [], "modules importing each other at run time:\n" + "\n".join(
        " <-> ".join(group) for group in found)
