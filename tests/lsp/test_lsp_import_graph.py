"""server/argus/lsp/ has no import cycle: every import between its modules counts, at the top, inside a
function or for type checking only; and no module but the package itself imports argus.lsp.server, which
composes the features (they work with argus.lsp.state.ServerState)."""

from __future__ import annotations

import ast
from pathlib import Path

LSP = Path(__file__).resolve().parents[2] / "server" / "argus" / "lsp"


def lsp_imports(path: Path) -> set[str]:
    """The modules of argus.lsp that `path` imports, by module name (`state`, `documents`, ...)."""
    modules = {p.stem for p in LSP.glob("*.py")}
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module] + [f"{node.module}.{alias.name}" for alias in node.names]
        else:
            continue
        for name in names:
            parts = name.split(".")
            if parts[:2] == ["argus", "lsp"] and len(parts) > 2 and parts[2] in modules:
                found.add(parts[2])
    return found - {path.stem}


def import_graph() -> dict[str, set[str]]:
    return {path.stem: lsp_imports(path) for path in LSP.glob("*.py") if path.stem != "__init__"}


def a_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle of `graph` as the modules along it (first repeated at the end), or None."""
    visiting: list[str] = []
    done: set[str] = set()

    def visit(node: str) -> list[str] | None:
        if node in visiting:
            return [*visiting[visiting.index(node) :], node]
        if node in done:
            return None
        visiting.append(node)
        for child in sorted(graph.get(node, ())):
            found = visit(child)
            if found is not None:
                return found
        visiting.pop()
        done.add(node)
        return None

    for start in sorted(graph):
        found = visit(start)
        if found is not None:
            return found
    return None


def test_the_lsp_package_has_no_import_cycle():
    cycle = a_cycle(import_graph())
    assert cycle is None, "import cycle in server/argus/lsp/: " + " -> ".join(cycle)


def test_the_cycle_finder_finds_a_cycle():
    assert a_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}) == ["a", "b", "c", "a"]
    assert a_cycle({"a": {"b"}, "b": set()}) is None


def test_no_feature_module_imports_the_server_module():
    importers = sorted(name for name, imports in import_graph().items() if "server" in imports)
    assert importers == []
