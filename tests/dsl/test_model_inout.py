"""A model and in/out tensors: a model's `inout` parameter may be given to a kernel's `out` or `inout` parameter
(AR417 refuses a plain input there), and a kernel's `inout` parameter reads its argument (AR418 for a temporary
nothing wrote yet)."""

from __future__ import annotations

from argus.dsl.check import check_source

KERNELS = """\
kernel copy(x: f32[N], y: out f32[N]):
    tile BN = 128
    grid (cdiv(N, BN),)
    offs = program_id(0) * BN + arange(BN)
    store(y[offs], load(x[offs], mask=offs < N, other=0), mask=offs < N)

kernel scale_(x: inout f32[N], s: f32 = 2.0):
    tile BN = 128
    grid (cdiv(N, BN),)
    offs = program_id(0) * BN + arange(BN)
    store(x[offs], load(x[offs], mask=offs < N, other=0) * s, mask=offs < N)
"""


def check(model: str) -> list[tuple[str, str]]:
    text = f"{KERNELS}\n{model}"
    lines = text.split("\n")
    found = []
    for d in check_source(text).diagnostics:
        if d.code in ("AR107", "AR108"):
            continue
        start, end = d.range.start, d.range.end
        found.append((d.code, lines[start.line][start.character : end.character]))
    return found


def message(model: str, code: str) -> str:
    return next(d.message for d in check_source(f"{KERNELS}\n{model}").diagnostics if d.code == code)


def test_a_model_inout_parameter_may_be_copied_from_then_updated_in_place():
    model = "model m(x: inout f32[N], y: out f32[N]):\n    copy(x, y)\n    scale_(x, 3.0)\n"
    assert check(model) == []
    ir = check_source(f"{KERNELS}\n{model}").analysis.models["m"]
    assert [(p.name, p.is_out, p.is_inout) for p in ir.params] == [("x", True, True), ("y", True, False)]


def test_a_model_input_given_to_a_kernels_inout_parameter_is_ar417():
    model = "model m(x: f32[N], y: out f32[N]):\n    copy(x, y)\n    scale_(x)\n"
    assert check(model) == [("AR417", "x")]
    words = message(model, "AR417")
    assert "an in/out parameter of `scale_`" in words and "declare `x: inout ...`" in words


def test_a_kernels_inout_parameter_reads_its_argument_so_an_empty_temporary_is_ar418():
    model = "model m(x: f32[N], y: out f32[N]):\n    t = empty((N,), f32)\n    scale_(t)\n    copy(t, y)\n"
    assert check(model) == [("AR418", "t")]
    zeros = model.replace("empty", "zeros")
    assert check(zeros) == []
    written = "model m(x: f32[N], y: out f32[N]):\n    copy(x, y)\n    scale_(y)\n"
    assert check(written) == []


def test_a_model_output_given_only_to_an_inout_parameter_is_read_before_it_is_written():
    model = "model m(y: out f32[N]):\n    scale_(y)\n"
    assert [code for code, _ in check(model)] == ["AR418"]
