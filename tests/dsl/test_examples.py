"""Every example is a kernel a newcomer opens first: it must check without a single diagnostic."""

from pathlib import Path

import pytest

from argus.dsl.check import check_source
from argus.dsl.ir import walk_ops
from argus.dsl.types import TensorT

EXAMPLES = sorted((Path(__file__).parents[2] / "examples").glob("*.argus"))
WORKLOADS = {"vector_add", "softmax", "layernorm", "matmul", "attention", "moe_gemm"}


def test_every_workload_has_an_example():
    assert {path.stem for path in EXAMPLES} >= WORKLOADS


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_example_checks_clean(path):
    result = check_source(path.read_text())
    assert [d.text_line(path.name) for d in result.diagnostics] == []


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_example_lowers_to_ir_with_an_output_store(path):
    result = check_source(path.read_text())
    assert result.analysis.kernels, "no kernel lowered"
    for kernel in result.analysis.kernels.values():
        outputs = {p.name for p in kernel.params if isinstance(p.type, TensorT) and p.type.out}
        stored = {op.attrs["tensor"] for op in walk_ops(kernel.body) if op.kind in ("store", "atomic_add")}
        assert outputs and outputs <= stored
        assert kernel.grid, "the grid must lower to IR values"


def test_buggy_example_reports_each_planted_mistake():
    path = Path(__file__).parents[2] / "examples" / "buggy" / "matmul_bugs.argus"
    codes = [d.code for d in check_source(path.read_text()).diagnostics]
    assert codes == ["AR403", "AR202", "AR210", "AR212", "AR405"]
