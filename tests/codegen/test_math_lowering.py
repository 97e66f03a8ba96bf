"""The Triton text of the elementwise math Triton has no portable function for (argus.codegen.math_lowering):
helpers defined once before the kernels, powers as multiplications or through _argus_pow, and the launch forms
of the same functions in `requires`. Their numbers: test_math_accuracy.py; compiled and run: the coverage kernel
kernels/elementwise_math.argus (test_compile.py, test_interpreter.py)."""

from __future__ import annotations

import re

import pytest
import torch
from codegen_support import generated

KERNEL = """
kernel k(x: f32[N], h: f16[N], j: i32[N], y: out f32[N], z: out f16[N], w: out i32[N]):
    tile B = 128
    grid (cdiv(N, B),)
    offs = program_id(0) * B + arange(B)
    v = load(x[offs], mask=offs < N, other=0)
    g = load(h[offs], mask=offs < N, other=0)
    i = load(j[offs], mask=offs < N, other=0)
    store(y[offs], {value}, mask=offs < N)
    store(z[offs], {half}, mask=offs < N)
    store(w[offs], {integer}, mask=offs < N)
"""


def body(value: str = "v", half: str = "g", integer: str = "i") -> str:
    source = generated(KERNEL.format(value=value, half=half, integer=integer))
    return source[source.index("def k_kernel(") :]


def module(value: str = "v", half: str = "g", integer: str = "i") -> str:
    return generated(KERNEL.format(value=value, half=half, integer=integer))


def stored(text: str, output: str) -> str:
    """The value expression of the store into `output`."""
    line = next(line for line in text.splitlines() if line.strip().startswith(f"tl.store({output} +"))
    return line.split(", ", 1)[1].rsplit(", mask=", 1)[0]


@pytest.mark.parametrize(
    ("value", "text"),
    [
        ("v ** 2", "v * v"),
        ("v ** 3", "v * v * v"),
        ("v ** 3.0", "v * v * v"),
        ("v ** -2", "1.0 / (v * v)"),
        ("v ** 1", "v"),
        ("v ** 0.5", "_argus_pow(v, 0.5).to(tl.float32)"),
        ("v ** 9", "_argus_pow(v, 9).to(tl.float32)"),
        ("v ** 0", "_argus_pow(v, 0).to(tl.float32)"),  # 1, NaN included, as torch.pow
        ("v ** v", "_argus_pow(v, v).to(tl.float32)"),
        ("pow(v, 3)", "v * v * v"),
        ("i ** 2.0", "i.to(tl.float32) * i.to(tl.float32)"),
        ("log1p(v) + floor(v) + log10(v)", "_argus_log1p(v) + tl.floor(v) + tl.log(v) * 0.4342944819032518"),
    ],
)
def test_float_lowering(value, text):
    assert stored(body(value=value), "y") == text


def test_a_narrow_float_power_is_multiplied_in_f32_and_rounded_once():
    assert stored(body(half="g ** 3"), "z") == "(g.to(tl.float32) * g.to(tl.float32) * g.to(tl.float32)).to(tl.float16)"
    assert stored(body(half="round(g)"), "z") == "_argus_round(g.to(tl.float32)).to(tl.float16)"


@pytest.mark.parametrize(
    ("integer", "text"),
    [("i ** 3", "i * i * i"), ("i ** 0", "i * 0 + 1"), ("floor(i) + sign(i)", "i + _argus_sign(i)")],
)
def test_integer_lowering(integer, text):
    assert stored(body(integer=integer), "w") == text


def test_the_base_of_a_power_gets_a_name_instead_of_being_written_three_times():
    text = body(value="(v + 1.0) ** 3")
    assert re.search(r"^\s+tmp = v \+ 1\.0", text, re.MULTILINE)
    assert stored(text, "y") == "tmp * tmp * tmp"


def test_each_helper_is_defined_once_before_the_kernels_with_the_helpers_it_calls():
    source = module(value="sinh(v) + sinh(v * 2.0) + v ** 0.5")
    definitions = re.findall(r"^def (_argus_\w+)\(", source, re.MULTILINE)
    assert sorted(definitions) == ["_argus_expm1", "_argus_pow", "_argus_sinh"]  # sinh calls expm1
    kernel = source.index("def k_kernel(")
    assert all(source.index(f"def {name}(") < kernel for name in definitions)
    assert all(source[: source.index(f"def {name}(")].rstrip().endswith("@triton.jit") for name in definitions)


def test_a_module_without_these_functions_defines_no_helper():
    assert "_argus_" not in module(value="exp(v) * v")


LAUNCH = """
kernel scale(x: f32[N], z: out f32[N], eps: f32 = 0.25):
    tile BLOCK = 128
    requires {condition}
    grid (cdiv(N, BLOCK),)
    offs = program_id(0) * BLOCK + arange(BLOCK)
    store(z[offs], load(x[offs], mask=offs < N, other=0) * eps, mask=offs < N)
"""


@pytest.mark.parametrize(
    ("condition", "holds_at_default"),
    [
        ("round(eps * 10.0) == 2.0", True),  # 2.5 rounds to the even 2
        ("floor(eps * 10.0) + ceil(eps * 10.0) == 5.0", True),
        ("trunc(-eps * 10.0) == -2.0", True),
        ("sign(eps - 1.0) == -1.0", True),
        ("log1p(eps) < expm1(eps)", True),
        ("eps ** 0.5 == 0.5", True),
        ("eps ** 2 > 0.1", False),
        ("N ** 2 < 1000000", True),
    ],
)
def test_math_in_requires_is_computed_at_launch(build, condition, holds_at_default):
    launched = build(LAUNCH.format(condition=condition))
    x = torch.randn(300)
    _, requirements = launched.KERNELS["scale"]["launch"](N=300, eps=0.25, BLOCK=128)
    assert [holds for _, holds in requirements] == [holds_at_default]
    if holds_at_default:
        launched.scale(x, torch.empty_like(x))
        assert len(launched.KERNELS["scale"]["jit"].launches) == 1
