"""Helpers for the code generation tests (a module of its own name, so it never clashes with other folders'
conftest modules)."""

from __future__ import annotations

import json
import subprocess
import sys
import types
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
EXAMPLES = sorted((ROOT / "examples").glob("*.argus"))
KERNELS = sorted((HERE / "kernels").glob("*.argus"))


def run_harness(mode: str, paths: list[Path], *extra: str) -> list[dict]:
    command = [sys.executable, str(HERE / "harness.py"), mode, *map(str, paths), *extra]
    done = subprocess.run(command, capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-4000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def generated(text: str) -> str:
    """The Triton source generated from an Argus text that must check clean."""
    from argus.codegen import generate
    from argus.dsl.check import check_source

    check = check_source(text)
    assert not check.has_errors, [d.message for d in check.diagnostics]
    return generate(check).source


def module_from(source: str, name: str, folder: Path) -> types.ModuleType:
    path = folder / f"{name}.py"
    path.write_text(source, encoding="utf-8")
    module = types.ModuleType(name)
    module.__file__ = str(path)
    exec(compile(source, str(path), "exec"), module.__dict__)
    return module


class Recorder:
    """Stands in for a kernel's jit function: records the launch instead of running it. Named like Triton's
    interpreter so the launcher accepts CPU tensors."""

    def __init__(self):
        self.launches: list[dict] = []

    def __getitem__(self, grid):
        def launch(*args, **kwargs):
            self.launches.append({"grid": grid, "args": args, "kwargs": kwargs})

        return launch


Recorder.__name__ = "InterpretedFunction"
