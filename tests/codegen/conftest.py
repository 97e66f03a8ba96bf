"""Fixtures for the code generation tests.

Kernels run under the Triton interpreter in a separate process (harness.py), because TRITON_INTERPRET must be
set before triton is first imported and pytest's own process may already have imported it. Launcher checks
run here: they raise before anything is launched, and a recorder stands in for the jit function where a test
needs the launch itself.
"""

from __future__ import annotations

import types
from pathlib import Path

import pytest
from codegen_support import Recorder, module_from

from argus.codegen import generate, generate_problem
from argus.dsl.check import check_source


@pytest.fixture
def build(tmp_path):
    """build(text or path) -> the generated kernel module, imported, with every jit function recorded."""

    def make(source: str | Path, record: bool = True) -> types.ModuleType:
        text = source.read_text(encoding="utf-8") if isinstance(source, Path) else source
        module = module_from(generate(check_source(text)).source, "kernels", tmp_path)
        if record:
            for entry in module.KERNELS.values():
                entry["jit"] = Recorder()
        return module

    return make


@pytest.fixture
def problem(tmp_path):
    """problem(path, kernel) -> the generated problem module, imported."""

    def make(path: Path, kernel: str) -> types.ModuleType:
        text = generate_problem(check_source(path.read_text(encoding="utf-8")), kernel)
        return module_from(text, f"problem_{kernel}", tmp_path)

    return make
