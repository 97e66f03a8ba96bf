"""Every example, and the coverage kernels beside these tests, generated and run under the Triton interpreter
at its `small` sizes, matches its PyTorch reference: fp32 to 1e-4, fp16 to 1e-2, integers exactly. Outputs
start as NaN (or -7), so an element the kernel never writes fails."""

from __future__ import annotations

import pytest
from codegen_support import EXAMPLES, KERNELS, run_harness

FILES = EXAMPLES + KERNELS


@pytest.fixture(scope="module")
def interpreted():
    return run_harness("interpret", FILES)


@pytest.fixture(scope="module")
def strided():
    """The same runs with every 2-D input a non-contiguous (column-major) view of the same values."""
    return run_harness("interpret", FILES, "--transpose-inputs")


def records_for(records: list[dict], path) -> list[dict]:
    found = [r for r in records if r["file"] == path.name]
    assert found, f"no output was checked for {path.name}"
    return found


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_kernel_matches_its_reference_under_the_interpreter(interpreted, path):
    for record in records_for(interpreted, path):
        assert record["nan"] == 0, f"{record['kernel']} left {record['nan']} elements of {record['output']} unwritten"
        assert record["close"], record


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_kernel_reads_non_contiguous_inputs_through_their_strides(strided, path):
    records = records_for(strided, path)
    for record in records:
        assert record["close"], record
    if path.stem in ("matmul", "layernorm", "softmax", "rowstats"):
        assert any(stride[0] == 1 for r in records for stride in r["strides"] if len(stride) == 2)


def test_tile_constant_override_changes_the_launch_and_keeps_results():
    records = run_harness("interpret", [p for p in EXAMPLES if p.stem == "vector_add"], "--override", "BLOCK=512")
    assert records and all(r["close"] and r["overrides"] == {"BLOCK": 512} for r in records)
