"""Every example is a file a newcomer opens first: it must check without a single diagnostic, and every item of
it (its kernels and models) is something the gate runs, alone or through a model."""

from pathlib import Path

import pytest

from argus.dsl.check import check_source
from argus.dsl.ir import walk_ops
from argus.dsl.types import TensorT

EXAMPLES = sorted((Path(__file__).parents[2] / "examples").glob("*.argus"))
WORKLOADS = {"vector_add", "softmax", "layernorm", "matmul", "attention", "moe_gemm"}
MODELS = {"long_softmax", "linear_logsumexp"}  # examples of a `model`: kernels launched in order


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


def test_the_model_examples_are_there_and_hold_a_model_named_like_the_file():
    found = {path.stem: check_source(path.read_text()).analysis.models for path in EXAMPLES}
    assert {stem for stem, models in found.items() if models} >= MODELS
    for stem in MODELS:
        assert stem in found[stem]


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_every_item_is_gated_alone_or_through_a_model_that_writes_each_output(path):
    analysis = check_source(path.read_text()).analysis
    launched = {name for model in analysis.models.values() for name in model.kernels}
    assert set(analysis.kernels) <= set(analysis.gated) | launched
    assert set(analysis.models) <= set(analysis.gated)
    for model in analysis.models.values():
        assert model.launches, f"{model.name} launches nothing"
        written = {
            str(arg.value)
            for launch in model.launches
            for arg in launch.args
            if arg.kind == "tensor" and analysis.kernels[launch.kernel].tensor(arg.param).is_out
        }
        outputs = {p.name for p in model.params if p.is_out}
        assert outputs and outputs <= written
        assert {t.name for t in model.temporaries} <= written


def test_buggy_example_reports_each_planted_mistake():
    path = Path(__file__).parents[2] / "examples" / "buggy" / "matmul_bugs.argus"
    codes = [d.code for d in check_source(path.read_text()).diagnostics]
    assert codes == ["AR403", "AR202", "AR210", "AR212", "AR405"]
