"""A failure inside one of Triton's own MLIR passes is said to be the compiler's (gate_compile.pass_failure):
Python sees only `PassManager::run failed`, the pass and its assertion are on file descriptor 2."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

RUNNER = Path(__file__).resolve().parents[2] / "server" / "argus" / "gate" / "runner"

# what Triton 3.6 writes when its OptimizeThreadLocality pass meets a reduction accumulated into a loop-carried
# value whose loop result is not used once (examples/models/cumsum_rows.argus on sm_90)
NATIVE = """python: /project/lib/Dialect/TritonGPU/Transforms/OptimizeThreadLocality.cpp:341: virtual void \
mlir::triton::gpu::TritonGPUOptimizeThreadLocalityPass::runOnOperation(): Assertion `loopResult.hasOneUse()' failed.
kernel.py:540:0: error: Failures have been detected while processing an MLIR pass pipeline
kernel.py:540:0: note: Pipeline failed while executing [`TritonGPUOptimizeThreadLocality` on 'builtin.module' \
operation]: reproducer generated at `std::errs, please share the reproducer above with Triton project.`
"""


@pytest.fixture
def gate_compile(monkeypatch):
    monkeypatch.syspath_prepend(str(RUNNER))
    import gate_compile

    yield gate_compile
    sys.modules.pop("gate_compile", None)


def test_the_failing_pass_and_its_assertion_are_named(gate_compile):
    said = gate_compile.pass_failure(NATIVE)
    assert "TritonGPUOptimizeThreadLocality pass failed (assertion `loopResult.hasOneUse()`)" in said
    assert "a fault inside the compiler" in said and "not an error the kernel makes" in said


def test_other_output_is_no_pass_failure(gate_compile):
    assert gate_compile.pass_failure("ptxas info    : Used 40 registers\n") == ""


def test_the_message_of_an_exception_that_carries_it(gate_compile):
    error = RuntimeError("PassManager::run failed")
    assert gate_compile.compile_error_message(error) == "RuntimeError: PassManager::run failed"
    error.compiler_failure = gate_compile.pass_failure(NATIVE)
    assert gate_compile.compile_error_message(error).startswith("Triton's own TritonGPUOptimizeThreadLocality")


def test_what_native_code_writes_to_stderr_is_collected_and_passed_on(gate_compile, capfd):
    collected: list[str] = []
    with gate_compile.native_stderr(collected):
        os.write(2, b"Pipeline failed while executing [`SomePass` on 'builtin.module']\n")
    assert collected == ["Pipeline failed while executing [`SomePass` on 'builtin.module']\n"]
    assert "SomePass" in capfd.readouterr().err
