"""Every example's kernels (and each coverage kernel) compile for an sm_90 target without a GPU, through
triton.compile(ASTSource(...), target=GPUTarget("cuda", 90, 32)); its shared memory comes from Triton's
metadata and its registers from ptxas' report."""

from __future__ import annotations

import pytest
from codegen_support import EXAMPLES, KERNELS, run_harness

from argus.dsl.check import check_source

FILES = EXAMPLES + KERNELS


@pytest.fixture(scope="module")
def compiled():
    found: dict[str, list[dict]] = {}
    for record in run_harness("compile", FILES):
        found.setdefault(record["file"], []).append(record)
    return found


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_kernel_compiles_for_sm90_with_resources_read_back(compiled, path):
    kernels = {k.name for k in check_source(path.read_text(encoding="utf-8")).module.kernels}
    records = compiled[path.name]
    assert {record["kernel"] for record in records} == kernels  # every kernel of the file, a model's too
    for record in records:
        assert record["ptx_target"], "the PTX does not target sm_90a"
        assert record["registers"] is not None and 1 <= record["registers"] <= 255
        assert record["shared"] >= 0
        if record["uses_dot"]:
            assert record["shared"] > 0, "a dot kernel stages its operands in shared memory"
