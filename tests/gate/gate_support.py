"""Bundles for the gate's tests: the hand-written vector_add fixture (argus.codegen's module contract), with
one line swappable for a fault."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from argus.dsl.check import check_source
from argus.gate.bundle import write_files
from argus.gate.manifest import manifest

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = Path(__file__).resolve().parent / "fixtures"
EXAMPLES = ROOT / "examples"
FAULT = "    pass  # FAULT"


def edited(text: str, edits: list[tuple[str, str]]) -> str:
    for old, new in edits:
        assert old in text, old
        text = text.replace(old, new)
    return text


def fixture_bundle(
    folder: Path, fault: str = "", kernel_edits: list[tuple[str, str]] = (), problem_edits: list[tuple[str, str]] = ()
) -> Path:
    """The vector_add fixture as a bundle; `fault` replaces the launcher's FAULT line (code, unindented)."""
    source = (EXAMPLES / "vector_add.argus").read_text(encoding="utf-8")
    kernel = (FIXTURES / "vector_add_kernel.py").read_text(encoding="utf-8")
    if fault:
        kernel = edited(kernel, [(FAULT, "\n".join("    " + line for line in fault.splitlines()))])
    kernel = edited(kernel, list(kernel_edits))
    problem = edited((FIXTURES / "vector_add_problem.py").read_text(encoding="utf-8"), list(problem_edits))
    source_map = ast.literal_eval(re.search(r"^SOURCE_MAP = (\{.*\})$", kernel, re.MULTILINE).group(1))
    facts = manifest(check_source(source), ["vector_add"], source_map, "vector_add.argus")
    return write_files(folder, kernel, {"vector_add": problem}, facts, source)


def fault_line() -> int:
    """The 1-based line of the FAULT placeholder in the fixture kernel module."""
    lines = (FIXTURES / "vector_add_kernel.py").read_text(encoding="utf-8").splitlines()
    return next(i for i, line in enumerate(lines, 1) if line == FAULT)
