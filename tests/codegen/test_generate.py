"""The generated module's contract: what it imports, what it defines, how its lines map back to Argus, and
what generation refuses."""

from __future__ import annotations

import ast
import re

import pytest
from codegen_support import EXAMPLES, KERNELS

from argus.codegen import CodegenError, GeneratedModule, KernelInfo, generate
from argus.codegen.module import RUNTIME
from argus.dsl.check import check_source

EXAMPLE = {path.stem: path for path in EXAMPLES}


def generated(path) -> GeneratedModule:
    return generate(check_source(path.read_text(encoding="utf-8")))


@pytest.mark.parametrize("path", EXAMPLES + KERNELS, ids=lambda p: p.stem)
def test_module_imports_only_math_torch_and_triton(path):
    tree = ast.parse(generated(path).source)
    imported = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            imported.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            imported.add(node.module)
    # logging: the standard library's, which the autotuned launcher's pruning reports through (codegen/runtime.py)
    assert imported <= {"math", "torch", "triton", "triton.language", "logging"}


@pytest.mark.parametrize("path", EXAMPLES + KERNELS, ids=lambda p: p.stem)
def test_source_map_matches_the_argus_line_comments(path):
    module = generated(path)
    lines = module.source.splitlines()
    commented = {
        number: int(match.group(1))
        for number, line in enumerate(lines, start=1)
        if (match := re.search(r"# argus:(\d+)$", line))
    }
    assert module.line_map == commented
    declared = re.search(r"^SOURCE_MAP = (\{.*\})$", module.source, re.MULTILINE)
    assert ast.literal_eval(declared.group(1)) == module.line_map
    argus_lines = path.read_text(encoding="utf-8").splitlines()
    runtime = runtime_lines(module.source)  # the launch runtime's own kernels (the layout copy) have no Argus line
    store_lines = [
        n for n, line in enumerate(lines, start=1) if re.search(r"tl\.(store|atomic_\w+)\(", line) and n not in runtime
    ]
    assert store_lines
    for number in store_lines:  # each store (or atomic) maps to the Argus line that writes it
        target = argus_lines[module.line_map[number] - 1]
        assert re.search(r"\b(store|atomic_\w+)\(", target)


def runtime_lines(source: str) -> set[int]:
    """Lines of the functions a generated module copies from codegen/runtime.py."""
    names = {
        node.name for node in ast.parse(RUNTIME.read_text(encoding="utf-8")).body if isinstance(node, ast.FunctionDef)
    }
    return {
        n
        for node in ast.parse(source).body
        if isinstance(node, ast.FunctionDef) and node.name in names
        for n in range(node.lineno, node.end_lineno + 1)
    }


def test_kernel_infos_describe_parameters_constants_and_tune_configs():
    module = generated(EXAMPLE["moe_gemm"])
    info = module.kernels["moe_gemm"]
    assert isinstance(info, KernelInfo) and info.name == "moe_gemm"
    assert [p["name"] for p in info.params] == ["X", "W", "offsets", "Y"]
    assert info.params[2] == {
        "name": "offsets",
        "kind": "tensor",
        "dtype": "i32",
        "shape": ["E + 1"],
        "out": False,
        "default": None,
    }
    assert info.params[3]["out"] is True
    assert info.constants == {"BM": 128, "BN": 256, "BK": 64}
    assert info.configs == [
        {"BM": 64, "BN": 128},
        {"BM": 64, "BN": 256},
        {"BM": 128, "BN": 128},
        {"BM": 128, "BN": 256},
    ]
    assert info.line_map and set(info.line_map.items()) <= set(module.line_map.items())


def test_scalar_parameters_carry_their_defaults():
    info = generated(EXAMPLE["layernorm"]).kernels["layernorm"]
    eps = info.params[-1]
    assert eps["kind"] == "scalar" and eps["dtype"] == "f32" and eps["default"] == pytest.approx(1e-5)


def test_policy_settings_are_tuned_with_the_constants():
    info = generated(next(p for p in KERNELS if p.stem == "scaled_gemm")).kernels["scaled_gemm"]
    assert {"BN": 16, "num_warps": 2} in info.configs and len(info.configs) == 4


def test_tile_constants_stay_names_in_the_kernel():
    source = generated(EXAMPLE["matmul"]).source
    assert "tl.arange(0, BM)" in source and "range(0, K, BK)" in source and "tl.zeros((BM, BN)" in source


def test_tags_assertions_and_invariants_generate_nothing():
    text = """
kernel twice(x: f32[N], y: out f32[N]):
    tile B = 64
    grid (cdiv(N, B),)
    offs = program_id(0) * B + arange(B)
    v = tag(load(x[offs], mask=offs < N, other=0), k=0)
    assert_tag(v, k=0)
    acc = zeros((B,), f32)
    for i in range(0, 2):
        invariant i >= 0
        acc += v
    store(y[offs], acc, mask=offs < N)
"""
    module = generate(check_source(text))
    body = module.source.split("def twice_kernel")[1].split("def _twice_launch")[0]
    assert not any(word in body for word in ("tag(", "assert", "invariant"))
    assert "v = tl.load(" in body and "acc = acc + v" in body


def test_dot_precision_is_passed_for_f32_operands_only():
    assert 'input_precision="ieee"' in generated(next(p for p in KERNELS if p.stem == "scaled_gemm")).source
    assert "input_precision" not in generated(EXAMPLE["matmul"]).source.split("def _matmul_launch")[0]


F16_ACCUMULATOR = """
kernel mm(A: f16[M, K], B: f16[K, N], C: out f16[M, N]):
    tile BM = 64, BN = 64, BK = 32
    grid (cdiv(M, BM), cdiv(N, BN))
    rm = program_id(0) * BM + arange(BM)
    rn = program_id(1) * BN + arange(BN)
    acc = zeros((BM, BN), f16)
    for k0 in range(0, K, BK):
        rk = k0 + arange(BK)
        a = load(A[rm, rk], mask=(rm < M, rk < K), other=0)
        b = load(B[rk, rn], mask=(rk < K, rn < N), other=0)
        acc = dot(a, b, acc)
    store(C[rm, rn], acc, mask=(rm < M, rn < N))
"""


def test_an_f16_accumulator_is_named_as_the_dots_out_dtype():
    # Triton 3.6 (the H200's) defaults out_dtype to f32 even with an accumulator and refuses an f16 one
    source = generate(check_source(F16_ACCUMULATOR)).source
    assert "tl.dot(a, b, acc, out_dtype=tl.float16)" in source


def test_file_with_errors_is_refused():
    with pytest.raises(CodegenError, match="error"):
        generate(check_source((EXAMPLE["matmul"].parent / "buggy" / "matmul_bugs.argus").read_text()))


def test_file_without_kernels_is_refused():
    with pytest.raises(CodegenError, match="no kernel"):
        generate(check_source("# nothing here\n"))


COPY = """
kernel KERNEL(SRC: f32[N], DST: out f32[N]):
    tile B = 64
    grid (cdiv(N, B),)
    offs = program_id(0) * B + arange(B)
    store(DST[offs], load(SRC[offs], mask=offs < N), mask=offs < N)
"""


@pytest.mark.parametrize(
    ("kernel", "source", "destination", "clash"),
    [("tl", "x", "y", "tl"), ("copy", "math", "y", "math"), ("copy", "x", "x_stride0", "x_stride0")],
)
def test_names_that_would_shadow_generated_ones_are_refused(kernel, source, destination, clash):
    text = COPY.replace("KERNEL", kernel).replace("SRC", source).replace("DST", destination)
    check = check_source(text)
    assert not check.has_errors, [d.message for d in check.diagnostics]
    with pytest.raises(CodegenError, match=f"`{clash}`"):
        generate(check)
