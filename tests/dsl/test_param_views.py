"""Views a parameter declares (`x: f16[B, C, H, W] as [B, C * H * W]`): parsing with exact spans, the view as the
type the kernel indexes with the stored shape binding the sizes, AR221 for anything but a merge of neighbouring
axes in order (and on a scalar or a model's parameter), `layout` on a view, and a model launch binding a
kernel's sizes from the stored shape."""

from __future__ import annotations

from checked_text import messages, param_types, reported

from argus.dsl.check import check_source
from argus.dsl.parser import parse
from argus.dsl.types import SizeExpr

VIEW = """\
kernel rows(x: f16[B, C, H, W] as [B, C * H * W], y: out f32[B, C, H, W] as [B, C * H * W]):
    tile BN = 256
    grid (B, cdiv(C * H * W, BN))
    b = program_id(0)
    cols = program_id(1) * BN + arange(BN)
    v = load(x[b, cols], mask=cols < C * H * W, other=0)
    store(y[b, cols], v.to(f32), mask=cols < C * H * W)
"""


# ---- parsing ---------------------------------------------------------------------------------------------


def test_inout_and_a_view_parse_with_exact_spans():
    parsed = parse(VIEW.replace("y: out", "y: inout"))
    assert parsed.diagnostics == []
    x, y = parsed.module.kernels[0].params
    line = VIEW.replace("y: out", "y: inout").split("\n")[0]
    assert (x.is_out, x.is_inout, x.mode) == (False, False, "")
    assert (y.is_out, y.is_inout, y.mode) == (True, True, "inout")
    assert line[x.view_span.col : x.view_span.end_col] == "as [B, C * H * W]"
    assert line[x.span.col : x.span.end_col] == "x: f16[B, C, H, W] as [B, C * H * W]"
    assert len(x.view) == 2 and len(x.shape) == 4


# ---- views -----------------------------------------------------------------------------------------------


def test_a_view_is_what_the_kernel_indexes_and_the_stored_shape_binds_the_sizes():
    assert reported(VIEW) == []
    types = param_types(VIEW)
    x = types["x"]
    assert [str(d) for d in x.shape] == ["B", "C * H * W"]
    assert [str(d) for d in x.stored_shape] == ["B", "C", "H", "W"]
    assert x.shape[1] == SizeExpr(None, 0, "", (SizeExpr("C"), SizeExpr("H"), SizeExpr("W")))
    assert x.shape[1].symbols() == ["C", "H", "W"] and x.shape[1].value({"C": 2, "H": 3, "W": 5}) == 30
    assert str(x) == "f16[B, C, H, W] as [B, C * H * W] tensor"
    kernel = check_source(VIEW).analysis.kernels["rows"]
    assert list(kernel.sizes) == ["B", "C", "H", "W"]


def test_a_view_may_merge_any_run_of_neighbouring_axes_and_keep_literals_and_offsets():
    text = VIEW.replace("x: f16[B, C, H, W] as [B, C * H * W]", "x: f16[B, C, H, W] as [B * C, H * W]")
    text = text.replace("load(x[b, cols]", "load(x[b, 0]").replace("mask=cols < C * H * W, other=0)", ")")
    assert reported(text) == []
    assert [str(d) for d in param_types(text)["x"].shape] == ["B * C", "H * W"]
    offsets = VIEW.replace(
        "y: out f32[B, C, H, W] as [B, C * H * W]", "y: out f32[B, C, H, W, 2] as [B, C * H * W * 2]"
    )
    offsets = offsets.replace("x: f16[B, C, H, W] as [B, C * H * W]", "x: f16[B, C + 1, 4] as [B, (C + 1) * 4]")
    shape = param_types(offsets)["x"].shape
    assert [str(d) for d in shape] == ["B", "(C + 1) * 4"]


def test_a_view_that_reorders_splits_or_invents_axes_is_ar221():
    cases = {
        "x: f16[B, C, H, W] as [B, H * C * W]": ("AR221", "H * C * W", "the stored axes here are C * H * W"),
        "x: f16[B, C, H, W] as [B, C * H]": ("AR221", "as [B, C * H]", "leaves out its axis W"),
        "x: f16[B, C, H, W] as [B, C * H * W * Q]": ("AR221", "Q", "`Q` is not a dimension of `x`"),
        "x: f16[B, C, H, W] as [B, C * H * W, 1]": ("AR221", "1", "already in the view"),
        "x: f16[B, C * H * W]": ("AR217", "C * H * W", "size name"),
    }
    for header, (code, spanned, words) in cases.items():
        text = VIEW.replace("x: f16[B, C, H, W] as [B, C * H * W]", header)
        found = [r for r in reported(text) if r[0] in ("AR221", "AR217")]
        assert found[:1] == [(code, spanned)], (header, reported(text))
        assert words in messages(text, code)[0], messages(text, code)


def test_a_view_on_a_scalar_is_ar221():
    text = "kernel k(x: f32[N], eps: f32 as [N], y: out f32[N]):\n    grid (1,)\n    store(y[0], load(x[0]))\n"
    assert reported(text) == [("AR221", "as [N]")]


def test_a_layout_names_a_view_axis_that_is_one_stored_axis_only():
    ok = VIEW.replace("    grid", "    layout x: B\n    grid")
    assert reported(ok) == []
    product = """\
kernel k(x: f32[M, N, K] as [M, N * K], y: out f32[M]):
    layout x: K
    grid (M,)
    m = program_id(0)
    store(y[m], load(x[m, 0]))
"""
    assert [code for code, _ in reported(product)] == ["AR411"]


# ---- models ----------------------------------------------------------------------------------------------

MODEL_KERNEL = """\
kernel row_sums(x: f32[R, C, L] as [R, C * L], y: out f32[R]):
    tile BN = 256
    grid (R,)
    r = program_id(0)
    acc = zeros((BN,), f32)
    for c0 in range(0, C * L, BN):
        cols = c0 + arange(BN)
        acc += load(x[r, cols], mask=cols < C * L, other=0)
    store(y[r], sum(acc, axis=0))
"""


def check(model: str) -> list[tuple[str, str]]:
    text = f"{MODEL_KERNEL}\n{model}"
    return reported(text)


def message(model: str, code: str) -> str:
    return messages(f"{MODEL_KERNEL}\n{model}", code)[0]


def test_a_launch_binds_a_kernels_sizes_from_the_stored_shape_of_its_view():
    model = "model m(x: f32[A, B, D], y: out f32[A]):\n    row_sums(x, y)\n"
    assert check(model) == []
    launch = check_source(f"{MODEL_KERNEL}\n{model}").analysis.models["m"].launches[0]
    assert launch.bindings == {"R": SizeExpr("A"), "C": SizeExpr("B"), "L": SizeExpr("D")}
    flat = "model m(x: f32[A, E], y: out f32[A]):\n    row_sums(x, y)\n"
    assert check(flat) == [("AR416", "x")]
    assert "f32[R, C, L]" in message(flat, "AR416")


def test_a_model_parameter_declares_no_view():
    model = "model m(x: f32[A, B, D] as [A, B * D], y: out f32[A]):\n    row_sums(x, y)\n"
    assert check(model) == [("AR221", "as [A, B * D]")]
    assert "the kernel that indexes it" in message(model, "AR221")
