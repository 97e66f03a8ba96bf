"""The problem module: named sizes, inputs in parameter order, the reference, and the `inputs` block."""

from __future__ import annotations

import pytest
import torch
from codegen_support import EXAMPLES

from argus.codegen import CodegenError, generate_problem
from argus.dsl.check import check_source

EXAMPLE = {path.stem: path for path in EXAMPLES}


def test_sizes_come_from_the_sizes_block(problem):
    module = problem(EXAMPLE["matmul"], "matmul")
    assert module.SIZES == {"small": {"M": 100, "N": 72, "K": 80}, "large": {"M": 4096, "N": 4096, "K": 4096}}
    assert module.OUTPUTS == ["C"]


def test_inputs_cover_every_parameter_in_order_with_dtypes_and_shapes(problem):
    module = problem(EXAMPLE["layernorm"], "layernorm")
    inputs = module.make_inputs(module.SIZES["small"], 0, "cpu")
    assert list(inputs) == ["x", "w", "b", "y", "eps"]
    assert inputs["x"].dtype == torch.float16 and list(inputs["x"].shape) == [19, 2500]
    assert list(inputs["w"].shape) == [2500] and list(inputs["y"].shape) == [19, 2500]
    assert inputs["eps"] == pytest.approx(1e-5)
    assert 0.5 < inputs["x"].float().std() < 2


def test_inputs_are_reproducible_by_seed(problem):
    module = problem(EXAMPLE["vector_add"], "vector_add")
    first, again = (module.make_inputs({"N": 100}, 7, "cpu") for _ in range(2))
    other = module.make_inputs({"N": 100}, 8, "cpu")
    assert torch.equal(first["x"], again["x"]) and not torch.equal(first["x"], other["x"])


def test_inputs_block_generates_its_parameters(problem):
    module = problem(EXAMPLE["moe_gemm"], "moe_gemm")
    for seed in range(3):
        offsets = module.make_inputs(module.SIZES["small"], seed, "cpu")["offsets"]
        assert offsets.dtype == torch.int32 and offsets.shape == (5,)
        assert offsets[0] == 0 and offsets[-1] == 256 and bool(torch.all(offsets[1:] >= offsets[:-1]))


def test_reference_reads_sizes_from_the_tensors(problem):
    module = problem(EXAMPLE["softmax"], "softmax")
    inputs = module.make_inputs({"M": 3, "N": 10}, 0, "cpu")
    expected = module.reference(**inputs)
    assert torch.allclose(expected.float(), torch.softmax(inputs["x"].float(), dim=1), atol=1e-3)


def test_reference_errors_map_back_to_argus_lines(problem):
    module = problem(EXAMPLE["moe_gemm"], "moe_gemm")
    source = EXAMPLE["moe_gemm"].read_text().splitlines()
    assert any("Y[lo:hi]" in source[line - 1] for line in module.SOURCE_MAP.values())


def test_scalar_bound_by_a_size_set_overrides_its_default(problem):
    text = EXAMPLE["layernorm"].read_text().replace("small: M = 19, N = 2500", "small: M = 3, N = 8, eps = 0.5")
    module_text = generate_problem(check_source(text), "layernorm")
    namespace: dict = {}
    exec(compile(module_text, "problem", "exec"), namespace)
    assert namespace["make_inputs"](namespace["SIZES"]["small"], 0, "cpu")["eps"] == 0.5


def test_unknown_kernel_is_refused():
    with pytest.raises(CodegenError, match="no kernel or model `nope`"):
        generate_problem(check_source(EXAMPLE["softmax"].read_text()), "nope")
