"""`model` items: parsing (with recovery), what a model's analysis binds and checks, and each of AR412-AR421
at its place with a message that says what to do."""

from __future__ import annotations

import pytest

from argus.dsl import ast
from argus.dsl.check import check_source
from argus.dsl.parser import parse
from argus.dsl.types import SizeExpr

KERNELS = """\
kernel row_max(x: f32[M, N], m: out f32[M]):
    tile BN = 1024
    grid (M,)
    row = program_id(0)
    acc = full((BN,), -inf, f32)
    for c in range(0, N, BN):
        cols = c + arange(BN)
        acc = maximum(acc, load(x[row, cols], mask=cols < N, other=-inf))
    store(m[row], max(acc, axis=0))

kernel subtract(x: f32[M, N], m: f32[M], y: out f32[M, N], scale: f32 = 1.0, stride: i32 = 1):
    tile BN = 1024
    grid (M, cdiv(N, BN))
    row = program_id(0)
    cols = program_id(1) * BN + arange(BN)
    v = load(x[row, cols], mask=cols < N, other=0)
    store(y[row, cols], (v - load(m[row])) * scale, mask=cols < N)
"""
PAIRS = """
kernel pairs(p: f32[M, 2], y: out f32[M, 2]):
    tile B = 2
    grid (M,)
    row = program_id(0)
    store(y[row, arange(B)], load(p[row, arange(B)]))
"""

TAIL = """
reference centered(x):
    return x - x.max(dim=-1, keepdim=True).values

sizes centered:
    small: R = 3, C = 2500
"""


def model(
    body: str, header: str = "model centered(x: f32[R, C], y: out f32[R, C]):", tail: str = TAIL, extra: str = ""
) -> str:
    return f"{KERNELS}{extra}\n{header}\n{body}{tail}"


GOOD = model("    top = empty((R,), f32)\n    row_max(x, top)\n    subtract(x, top, y)\n")


def diagnostics(text: str, code: str | None = None):
    found = check_source(text).diagnostics
    return [d for d in found if code is None or d.code == code]


def only(text: str, code: str):
    found = diagnostics(text)
    assert [d.code for d in found] == [code], [d.text_line("m.argus") for d in found]
    return found[0]


def spanned(text: str, diagnostic) -> str:
    lines = text.splitlines()
    start, end = diagnostic.range.start, diagnostic.range.end
    assert start.line == end.line
    return lines[start.line][start.character : end.character]


# ---- parsing ---------------------------------------------------------------------------------------------


def test_a_model_parses_into_its_own_item_with_params_and_statements():
    module = parse(GOOD).module
    [item] = module.models
    assert isinstance(item, ast.Model) and item.name == "centered"
    assert [p.name for p in item.params] == ["x", "y"] and item.params[1].is_out
    assert [type(s).__name__ for s in item.body] == ["Assign", "ExprStmt", "ExprStmt"]
    assert [k.name for k in module.kernels] == ["row_max", "subtract"]


def test_model_is_a_top_level_keyword_but_stays_a_name_inside_a_kernel():
    text = KERNELS.replace("    row = program_id(0)\n    acc", "    model = program_id(0)\n    row = model\n    acc", 1)
    assert diagnostics(text, "AR001") == [] and "model = program_id(0)" in text


def test_an_unknown_top_level_word_names_model_among_the_items():
    found = only("modle m(x: f32[N]):\n    pass\n", "AR006")
    assert "`model`" in found.message


def test_a_broken_model_header_costs_one_error_and_never_hides_the_next_item():
    text = model(
        "    top = empty((R,), f32)\n    row_max(x, top)\n    subtract(x, top, y)\n",
        header="model centered(x: f32[R, C], y: out f32[R, C]:",
    )
    result = check_source(text)
    syntax = [d for d in result.diagnostics if d.code.startswith("AR0")]
    assert [d.code for d in syntax] == ["AR003"], [d.text_line("m") for d in result.diagnostics]
    assert "centered" in result.analysis.models  # the header's bracket is closed for it: nothing else lost
    assert [p.name for p in result.module.models[0].params] == ["x", "y"]


def test_a_broken_statement_in_a_model_is_one_error_and_its_name_stays_usable():
    text = model("    top = empty((R,) f32)\n    row_max(x, top)\n    subtract(x, top, y)\n")
    found = diagnostics(text)
    assert [d.code for d in found] == ["AR001"], [d.text_line("m") for d in found]


def test_a_model_header_without_its_colon_is_read_with_it():
    text = model(
        "    top = empty((R,), f32)\n    row_max(x, top)\n    subtract(x, top, y)\n",
        header="model centered(x: f32[R, C], y: out f32[R, C])",
    )
    found = only(text, "AR001")
    assert found.message == "expected ':' after the model header"


# ---- what a model is -------------------------------------------------------------------------------------


def test_a_clean_model_binds_each_kernels_sizes_from_its_arguments():
    result = check_source(GOOD)
    assert result.diagnostics == []
    centered = result.analysis.models["centered"]
    assert list(centered.sizes) == ["R", "C"]
    [top] = centered.temporaries
    assert (top.name, top.dtype.name, top.shape, top.zeroed) == ("top", "f32", (SizeExpr("R"),), False)
    first, second = centered.launches
    assert (first.kernel, first.bindings) == ("row_max", {"M": SizeExpr("R"), "N": SizeExpr("C")})
    assert [(a.param, a.kind, a.value) for a in second.args] == [
        ("x", "tensor", "x"),
        ("m", "tensor", "top"),
        ("y", "tensor", "y"),
    ]
    assert centered.kernels == ["row_max", "subtract"]


def test_scalars_are_numbers_scalar_parameters_or_sizes_by_position_or_name():
    text = model(
        "    top = empty((R,), f32)\n    row_max(x, top)\n    subtract(x, top, y, s, stride=C)\n",
        header="model centered(x: f32[R, C], y: out f32[R, C], s: f32 = 0.5):",
        tail=TAIL.replace("reference centered(x):", "reference centered(x, s):"),
    )
    assert diagnostics(text) == []
    launch = check_source(text).analysis.models["centered"].launches[1]
    assert [(a.param, a.kind, a.value) for a in launch.args[3:]] == [("scale", "scalar", "s"), ("stride", "size", "C")]


def test_an_offset_size_binds_through_the_offset():
    text = model(
        "    top = empty((R + 1,), f32)\n    row_max(x, top)\n    subtract(x, top, y)\n",
        header="model centered(x: f32[R + 1, C], y: out f32[R + 1, C]):",
    )
    assert diagnostics(text) == []
    launch = check_source(text).analysis.models["centered"].launches[0]
    assert launch.bindings["M"] == SizeExpr("R", 1)


def test_kernels_a_model_launches_need_no_reference_or_sizes_of_their_own_and_are_not_gated_alone():
    result = check_source(GOOD)
    codes = [d.code for d in result.diagnostics]
    assert "AR107" not in codes and "AR108" not in codes
    assert result.analysis.gated == ["centered"]


def test_a_kernel_with_its_own_blocks_is_gated_on_its_own_too_and_an_unlaunched_one_keeps_its_warnings():
    text = (
        GOOD + "\nreference row_max(x):\n    return x.max(dim=-1).values\n\nsizes row_max:\n    small: M = 3, N = 50\n"
    )
    result = check_source(text)
    assert result.analysis.gated == ["row_max", "centered"]
    lonely = GOOD + PAIRS
    warned = [(d.code, d.message.split("`")[1]) for d in check_source(lonely).diagnostics]
    assert warned == [("AR107", "pairs"), ("AR108", "pairs")]
    assert check_source(lonely).analysis.gated == ["centered", "pairs"]


def test_a_model_without_reference_or_sizes_is_warned_like_a_kernel():
    text = model("    top = empty((R,), f32)\n    row_max(x, top)\n    subtract(x, top, y)\n", tail="")
    found = {d.code: d.message for d in diagnostics(text)}
    assert set(found) == {"AR107", "AR108"}
    assert found["AR107"].startswith("model `centered` has no `reference centered(...)`")


def test_reference_and_sizes_of_a_model_follow_the_kernel_rules():
    wrong_params = GOOD.replace("reference centered(x):", "reference centered(x, y):")
    assert "takes" in only(wrong_params, "AR106").message
    unbound = GOOD.replace("small: R = 3, C = 2500", "small: R = 3")
    assert only(unbound, "AR405").message == "size set `small` does not bind C"
    misnamed = [d for d in diagnostics(GOOD.replace("sizes centered:", "sizes centred:")) if d.code == "AR105"]
    assert [d.message for d in misnamed] == ["`sizes centred` names no kernel or model in this file"]


def test_a_model_named_like_a_kernel_is_a_duplicate():
    text = model(
        "    top = empty((R,), f32)\n    row_max(x, top)\n    subtract(x, top, y)\n",
        header="model pairs(x: f32[R, C], y: out f32[R, C]):",
        tail="",
        extra=PAIRS,
    )
    duplicate = [d for d in diagnostics(text) if d.code == "AR102"]
    assert len(duplicate) == 1 and "share one namespace" in duplicate[0].message


def test_a_launch_names_its_kernel_for_go_to_definition():
    result = check_source(GOOD)
    launch = next(s for s in result.analysis.symbols if s.kind == "kernel" and s.name == "subtract")
    kernel = next(k for k in result.module.kernels if k.name == "subtract")
    assert launch.definition == kernel.name_span
    assert launch.type.startswith("(x: f32[M, N], m: f32[M], y: out f32[M, N]")


# ---- the diagnostics -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("statement", "shown", "words"),
    [
        ("    tile B = 4\n", "tile B = 4", "`tile` belongs in a kernel"),
        ("    for i in range(0, 4):\n        pass\n", None, "a loop belongs in a kernel"),
        ("    z = x\n", "x", "a model computes nothing itself"),
        ("    z = empty(R, f32)\n", "R", "write a one-axis shape `(R,)`"),
        ("    z = empty((R, Q), f32)\n", "Q", "`Q` is not a size of model `centered` (its sizes: R, C)"),
        ("    z = zeros((R * 2,), f32)\n", "R * 2", "a size of the model (R, C), one ± a number, or a number"),
    ],
)
def test_ar412_a_statement_a_model_cannot_hold(statement, shown, words):
    text = model(statement + "    top = empty((R,), f32)\n    row_max(x, top)\n    subtract(x, top, y)\n")
    found = only(text, "AR412")
    assert words in found.message
    if shown is not None:
        assert spanned(text, found) == shown


def test_ar413_a_launch_of_no_kernel_suggests_the_close_one_and_refuses_a_model():
    text = model("    top = empty((R,), f32)\n    rowmax(x, top)\n    subtract(x, top, y)\n")
    found = [d for d in diagnostics(text) if d.code == "AR413"]
    assert len(found) == 1 and "did you mean `row_max`?" in found[0].message and spanned(text, found[0]) == "rowmax"
    twice = GOOD + "\nmodel again(x: f32[R, C], y: out f32[R, C]):\n    centered(x, y)\n"
    refused = [d for d in diagnostics(twice) if d.code == "AR413"]
    assert len(refused) == 1 and "`centered` is a model" in refused[0].message


@pytest.mark.parametrize(
    ("launch", "shown", "words"),
    [
        ("subtract(x, top)", "subtract(x, top)", "`subtract` needs `y`"),
        ("subtract(x, top, y, 1.0, 2, 3)", "3", "takes 5 arguments"),
        ("subtract(x, top, y, BN=64)", "BN", "`BN` is a tile constant of `subtract`"),
        ("subtract(x, top, y, x=x)", "x", "`x` is given twice"),
        ("subtract(x, top, y, top)", "top", "is a scalar of dtype f32, and `top` is a tensor"),
        ("subtract(x, R, y)", "R", "is a tensor (f32[M]), and `R` is a size of the model"),
        ("subtract(x, top, y, 2 * R)", "2 * R", "pass a number, a scalar parameter of the model or one of its sizes"),
    ],
)
def test_ar414_launch_arguments_that_do_not_match_the_kernel(launch, shown, words):
    text = model(f"    top = empty((R,), f32)\n    row_max(x, top)\n    {launch}\n")
    found = [d for d in diagnostics(text) if d.code == "AR414"]
    assert len(found) == 1, [d.text_line("m") for d in diagnostics(text)]
    assert words in found[0].message and spanned(text, found[0]) == shown
    assert found[0].related, "the related information points at the kernel"


def test_ar414_an_output_passed_twice_to_one_launch():
    text = model(
        "    p = zeros((R, 2), f32)\n    pairs(p, p)\n    top = empty((R,), f32)\n    row_max(x, top)\n"
        "    subtract(x, top, y)\n",
        extra=PAIRS,
    )
    found = only(text, "AR414")
    assert "passed to both `p` and `y` of `pairs`" in found.message


def test_ar415_a_dtype_that_differs_from_the_kernel_parameter():
    text = model("    top = empty((R,), f16)\n    row_max(x, top)\n    subtract(x, top, y)\n")
    found = [d for d in diagnostics(text)]
    assert [d.code for d in found] == ["AR415", "AR415"]
    assert found[0].message == "`top` is f16 (f16[R]); `m` of `row_max` takes f32 (f32[M])"
    kernel_line = KERNELS.splitlines().index("kernel row_max(x: f32[M, N], m: out f32[M]):")
    assert found[0].related[0].range.start.line == kernel_line  # the kernel parameter
    integer = model("    top = empty((R,), f32)\n    row_max(x, top)\n    subtract(x, top, y, 1, 2.5)\n")
    assert "`stride` of `subtract` is a scalar of dtype i32; `2.5` is f32" in only(integer, "AR415").message


def test_ar416_one_kernel_size_bound_to_two_extents_names_both():
    text = model("    top = empty((C,), f32)\n    row_max(x, top)\n    subtract(x, top, y)\n")
    found = [d for d in diagnostics(text) if d.code == "AR416"]
    assert len(found) == 2  # each launch gives M both R (from x) and C (from top)
    assert found[0].message == (
        "`M` of `row_max` is R from `x` (axis 0) and C from `top` (axis 0): pass tensors whose extents agree"
    )
    assert spanned(text, found[0]) == "top"
    assert {r.message for r in found[0].related} >= {"`M` = R from here"}


@pytest.mark.parametrize(
    ("temporary", "words"),
    [
        ("p = zeros((R, 3), f32)", "axis 1 has length 2, and `p` is f32[R, 3]"),
        ("p = zeros((R,), f32)", "rank 2; `p` is f32[R], rank 1"),
    ],
)
def test_ar416_a_number_or_rank_the_kernel_does_not_declare(temporary, words):
    text = model(
        f"    {temporary}\n    q = empty((R, 2), f32)\n    pairs(p, q)\n    top = empty((R,), f32)\n"
        "    row_max(x, top)\n    subtract(x, top, y)\n",
        extra=PAIRS,
    )
    found = [d for d in diagnostics(text) if d.code == "AR416"]
    assert len(found) == 1 and words in found[0].message


def test_ar417_a_launch_that_writes_a_model_input():
    text = model("    top = empty((R,), f32)\n    row_max(x, top)\n    subtract(x, top, x)\n    subtract(x, top, y)\n")
    found = only(text, "AR417")
    assert "`x` is an input of the model" in found.message
    assert found.range.start.line == text.splitlines().index("    subtract(x, top, x)")


def test_ar418_a_read_before_any_write_and_zeros_counts_as_written():
    text = model("    top = empty((R,), f32)\n    subtract(x, top, y)\n    row_max(x, top)\n")
    found = only(text, "AR418")
    assert found.message.startswith("`subtract` reads `top` (its `m`) before any launch writes it")
    assert spanned(text, found) == "top"
    zeroed = model("    top = zeros((R,), f32)\n    subtract(x, top, y)\n    row_max(x, top)\n")
    assert diagnostics(zeroed) == []


def test_ar419_an_output_no_launch_writes():
    text = model(
        "    top = empty((R,), f32)\n    row_max(x, top)\n    subtract(x, top, y)\n",
        header="model centered(x: f32[R, C], y: out f32[R, C], z: out f32[R]):",
        tail=TAIL.replace("return x - x.max(dim=-1, keepdim=True).values", "return x, x[:, 0]"),
    )
    found = only(text, "AR419")
    assert found.message == "output `z` of model `centered` is never written by a launch"
    assert found.severity.value == "warning"


def test_ar420_a_temporary_no_launch_reads():
    text = model(
        "    spare = empty((R, 2), f32)\n    top = empty((R,), f32)\n    row_max(x, top)\n    subtract(x, top, y)\n"
    )
    found = only(text, "AR420")
    assert spanned(text, found) == "spare" and found.severity.value == "warning"


def test_ar421_a_size_set_that_a_launched_kernels_requires_refuses():
    text = GOOD.replace(
        "    tile BN = 1024\n    grid (M, cdiv(N, BN))",
        "    tile BN = 1024\n    requires N % 4 == 0\n    grid (M, cdiv(N, BN))",
    )
    text = text.replace("small: R = 3, C = 2500", "small: R = 3, C = 2500\n    odd: R = 3, C = 2501")
    found = only(text, "AR421")
    line = text.splitlines().index("    subtract(x, top, y)") + 1
    assert found.message == (
        f"size set `odd` (R=3, C=2501): `subtract` at line {line} (M=3, N=2501) violates `requires N % 4 == 0`"
    )
    assert [r.message for r in found.related] == ["the requirement of `subtract`", "the launch of `subtract`"]


def test_ar421_a_length_a_kernel_fixes():
    text = model(
        "    q = empty((R, 2), f32)\n    pairs(x, q)\n    top = empty((R,), f32)\n    row_max(x, top)\n"
        "    subtract(x, top, y)\n",
        tail=TAIL + "    wide: R = 3, C = 2\n",
        extra=PAIRS,
    ).replace("small: R = 3, C = 2500", "small: R = 3, C = 5")
    found = [d.message for d in diagnostics(text) if d.code in ("AR421", "AR416")]
    line = text.splitlines().index("    pairs(x, q)") + 1
    assert found == [
        f"size set `small` (R=3, C=5): `x` has length 5 on axis 1, and `pairs` at line {line} takes 2 = 2 there"
    ]


def test_ar421_a_size_the_launch_would_make_zero():
    text = model(
        "    top = empty((R,), f32)\n    row_max(x, top)\n    subtract(x, top, y)\n    q = empty((K - 3, 2), f32)\n"
        "    pairs(w, q)\n    pairs(q, z)\n",
        header="model centered(x: f32[R, C], w: f32[K - 3, 2], y: out f32[R, C], z: out f32[K - 3, 2]):",
        tail=TAIL.replace("reference centered(x):", "reference centered(x, w):")
        .replace("return x - x.max(dim=-1, keepdim=True).values", "return x - x.max(dim=-1, keepdim=True).values, w")
        .replace("small: R = 3, C = 2500", "small: R = 3, C = 2500, K = 5\n    empty: R = 3, C = 2500, K = 3"),
        extra=PAIRS,
    )
    found = [d.message for d in diagnostics(text)]
    lines = [text.splitlines().index(launch) + 1 for launch in ("    pairs(w, q)", "    pairs(q, z)")]
    assert found == [
        f"size set `empty` (R=3, C=2500, K=3): `pairs` at line {line} would get M = 0; a size is at least 1"
        for line in lines
    ]
