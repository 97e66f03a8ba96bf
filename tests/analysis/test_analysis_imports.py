"""argus.analysis knows nothing of the protocol: no module it can reach, at the top or inside a function,
imports pygls or lsprotocol; and importing every module of it loads neither."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

PACKAGE_ROOT = Path(__file__).resolve().parents[2] / "server"
ANALYSIS = PACKAGE_ROOT / "argus" / "analysis"
PROTOCOL = {"pygls", "lsprotocol"}


def module_file(name: str) -> Path | None:
    path = PACKAGE_ROOT.joinpath(*name.split("."))
    if (path / "__init__.py").is_file():
        return path / "__init__.py"
    return path.with_suffix(".py") if path.with_suffix(".py").is_file() else None


def imported_names(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module)
            names |= {f"{node.module}.{alias.name}" for alias in node.names}
    return names


def reachable_imports(start: list[str]) -> dict[str, str]:
    """Every name imported by the argus modules reachable from `start`, with a module that imports it."""
    seen: set[str] = set()
    found: dict[str, str] = {}
    stack = list(start)
    while stack:
        module = stack.pop()
        if module in seen:
            continue
        seen.add(module)
        path = module_file(module)
        if path is None:
            continue
        parts = module.split(".")
        stack += [".".join(parts[:k]) for k in range(2, len(parts))]  # its packages' __init__ run first
        for name in imported_names(path):
            found.setdefault(name, module)
            if name.startswith("argus."):
                stack.append(name)
    return found


def analysis_modules() -> list[str]:
    return sorted("argus.analysis" + ("" if p.stem == "__init__" else f".{p.stem}") for p in ANALYSIS.glob("*.py"))


def test_no_module_argus_analysis_reaches_imports_pygls_or_lsprotocol():
    found = reachable_imports(analysis_modules())
    protocol = {name: by for name, by in found.items() if name.split(".")[0] in PROTOCOL}
    assert protocol == {}, f"reachable from argus.analysis: {protocol}"


def test_the_walk_follows_argus_imports_into_other_layers():
    found = reachable_imports(analysis_modules())
    assert "lark" in {name.split(".")[0] for name in found}  # through argus.dsl.check, imported lazily


def test_importing_every_analysis_module_loads_no_protocol_package():
    probe = (
        "import importlib, sys\n"
        f"for name in {analysis_modules()!r}: importlib.import_module(name)\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('pygls', 'lsprotocol')))\n"
    )
    run = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "[]"
