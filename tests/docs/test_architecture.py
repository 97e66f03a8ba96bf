"""docs/architecture.md cannot drift from the code: what it names exists, and its dependency table is the one the
imports give.

A backticked repository path (one with a `/` that ends in a known extension or a `/`, or that starts with a
top-level entry of the repository) must exist; a backticked dotted name under `argus.` must be a module, or a
name a module (or a class in it) defines; every package under server/argus/ has its `server/argus/NAME/`
section; and the table of argus packages each package imports is what its `import` statements say.
"""

from __future__ import annotations

import ast
import re
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "architecture.md"
TEXT = DOC.read_text(encoding="utf-8")
PACKAGE_ROOT = ROOT / "server" / "argus"
PACKAGES = sorted(p.name for p in PACKAGE_ROOT.iterdir() if (p / "__init__.py").is_file())

CODE = re.compile(r"`([^`\n]+)`")
PATH_LIKE = re.compile(r"[A-Za-z0-9_.\-]+(/[A-Za-z0-9_.\-*]+)*/?")
EXTENSIONS = (".py", ".md", ".sh", ".ts", ".js", ".mjs", ".lua", ".json", ".toml", ".lark")
DOTTED = re.compile(r"argus\.(\w+)(\.\w+)*")
TABLE_ROW = re.compile(r"^\| `(\w+)` \| ([a-z, ]+) \|$", re.MULTILINE)


def backticked() -> list[str]:
    return CODE.findall(TEXT)


def repo_paths() -> list[str]:
    top = {p.name for p in ROOT.iterdir()}
    found = []
    for code in backticked():
        if "/" not in code or not PATH_LIKE.fullmatch(code) or code.startswith("../"):
            continue
        if code.endswith(EXTENSIONS) or code.endswith("/") or code.split("/")[0] in top:
            found.append(code)
    return sorted(set(found))


def exists(path: str) -> bool:
    if "*" in path:  # a glob such as skills/lineages/*.json: something must match it
        return any(ROOT.glob(path))
    return (ROOT / path).exists()


@pytest.mark.parametrize("path", repo_paths())
def test_every_path_the_page_names_exists(path):
    assert exists(path), f"docs/architecture.md names `{path}`, which is not in the repository"


def test_the_page_names_paths_at_all():
    assert len(repo_paths()) > 50  # the pattern above still finds what the page names


@pytest.mark.parametrize("package", PACKAGES)
def test_every_package_has_its_section(package):
    assert f"### `server/argus/{package}/`" in TEXT, f"server/argus/{package}/ has no section in the code map"


def defined_names(body: list[ast.stmt]) -> dict[str, ast.AST]:
    names: dict[str, ast.AST] = {}
    for node in body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names[node.name] = node
        elif isinstance(node, ast.Assign):
            names.update({t.id: node for t in node.targets if isinstance(t, ast.Name)})
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names[node.target.id] = node
        elif isinstance(node, ast.ImportFrom):  # a package's __init__ re-exports
            names.update({(a.asname or a.name): node for a in node.names})
    return names


def documented_names() -> list[str]:
    """Backticked `argus.PACKAGE...` names (`argus.refine`, `argus.applySkill` are editor commands)."""
    return sorted({c for c in backticked() if (m := DOTTED.fullmatch(c)) and m.group(1) in PACKAGES})


def resolves(dotted: str) -> bool:
    """A module of argus, then names defined in it (a class's own names after a class)."""
    parts = dotted.split(".")[1:]
    folder = PACKAGE_ROOT
    for index, part in enumerate(parts):
        if (folder / part / "__init__.py").is_file():
            folder = folder / part
            continue
        module = folder / f"{part}.py"
        if module.is_file():
            rest, body = parts[index + 1 :], ast.parse(module.read_text(encoding="utf-8")).body
        else:
            rest, body = parts[index:], ast.parse((folder / "__init__.py").read_text(encoding="utf-8")).body
        for name in rest:
            node = defined_names(body).get(name)
            if node is None:
                return False
            body = node.body if isinstance(node, ast.ClassDef) else []
        return True
    return True


@pytest.mark.parametrize("dotted", documented_names())
def test_every_dotted_name_resolves(dotted):
    assert resolves(dotted), f"docs/architecture.md names `{dotted}`, which server/argus/ does not define"


def imported_packages(package: str) -> set[str]:
    """The other argus packages `package` imports anywhere (lazy imports inside functions are edges too)."""
    found: set[str] = set()
    for path in (PACKAGE_ROOT / package).rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                modules = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                modules = [node.module] + [f"{node.module}.{alias.name}" for alias in node.names]
            else:
                continue
            for module in modules:
                parts = module.split(".")
                if parts[0] == "argus" and len(parts) > 1 and parts[1] in PACKAGES:
                    found.add(parts[1])
    return found - {package}


def documented_edges() -> dict[str, set[str]]:
    rows = {name: deps for name, deps in TABLE_ROW.findall(TEXT) if name in PACKAGES}
    return {name: {d.strip() for d in deps.split(",")} - {"none"} for name, deps in rows.items()}


def test_the_dependency_table_lists_every_package():
    assert sorted(documented_edges()) == PACKAGES


@pytest.mark.parametrize("package", PACKAGES)
def test_the_dependency_table_is_what_the_imports_say(package):
    documented = documented_edges().get(package, set())
    actual = imported_packages(package)
    assert documented == actual, (
        f"docs/architecture.md says {package} imports {sorted(documented)}; its imports say {sorted(actual)}"
    )


def type_checked_in_doc() -> set[str]:
    """The modules the code map's **Type checking.** paragraph lists as checked strictly."""
    paragraph = TEXT.split("**Type checking.**", 1)[1].split("\n\n", 1)[0]
    start, end = paragraph.index("public APIs"), paragraph.index("The rest of argus")
    return set(re.findall(r"`(argus[.\w]*)`", paragraph[start:end]))


def test_the_type_checked_modules_are_the_ones_mypy_checks():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["mypy"]
    strict = next(o for o in config["overrides"] if o.get("disallow_untyped_defs"))
    by_config = {m.removesuffix(".*") for m in strict["module"]}
    by_files = set()
    for file in config["files"]:
        parts = Path(file).with_suffix("").parts[1:]  # server/argus/... -> argus....
        by_files.add(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    documented = type_checked_in_doc()
    assert documented == by_config == by_files, (documented, by_config, by_files)
