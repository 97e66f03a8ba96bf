"""In/out parameters (`x: inout f32[N]`): parsing with exact spans, their types (written and read), what a
reference takes, and each misuse's diagnostic (AR211, AR216, AR408, AR411, AR106) at its place."""

from __future__ import annotations

from checked_text import messages, param_types, reported

from argus.dsl.check import check_source
from argus.dsl.parser import parse

SCALE = """\
kernel scale(x: inout f32[N], s: f32, y: out f32[N]):
    tile BN = 128
    grid (cdiv(N, BN),)
    offs = program_id(0) * BN + arange(BN)
    v = load(x[offs], mask=offs < N, other=0) * s
    store(x[offs], v, mask=offs < N)
    store(y[offs], v + 1, mask=offs < N)
"""


# ---- parsing ---------------------------------------------------------------------------------------------


def test_inout_parses_with_exact_spans():
    parsed = parse(SCALE)
    assert parsed.diagnostics == []
    x, s, y = parsed.module.kernels[0].params
    assert (x.is_out, x.is_inout, x.mode) == (True, True, "inout")
    assert (s.mode, y.mode) == ("", "out")
    line = SCALE.split("\n")[0]
    assert line[x.span.col : x.span.end_col] == "x: inout f32[N]"


def test_the_new_words_stay_usable_as_names():
    text = """\
kernel k(inout: inout f32[N], out: out f32[N], as_: f32):
    tile BN = 128
    grid (cdiv(N, BN),)
    offs = program_id(0) * BN + arange(BN)
    store(out[offs], load(inout[offs], mask=offs < N, other=0) * as_, mask=offs < N)
    store(inout[offs], 0.0, mask=offs < N)
"""
    assert reported(text) == []


# ---- in/out ----------------------------------------------------------------------------------------------


def test_an_inout_tensor_is_read_and_written_and_typed_as_both():
    assert reported(SCALE) == []
    types = param_types(SCALE)
    assert (types["x"].out, types["x"].inout) == (True, True)
    assert str(types["x"]) == "inout f32[N] tensor"
    kernel = check_source(SCALE).analysis.kernels["scale"]
    assert [(p.name, p.is_out, p.is_inout) for p in kernel.params] == [
        ("x", True, True),
        ("s", False, False),
        ("y", True, False),
    ]


def test_a_store_to_an_input_says_out_or_inout():
    text = SCALE.replace("x: inout f32[N]", "x: f32[N]")
    assert reported(text) == [("AR211", "x[offs]")]
    (message,) = messages(text, "AR211")
    assert "`x: out ...`" in message and "`x: inout ...`" in message


def test_an_inout_never_written_is_a_warning_that_says_to_drop_inout():
    text = SCALE.replace("    store(x[offs], v, mask=offs < N)\n", "")
    assert reported(text) == [("AR408", "x: inout f32[N]")]
    assert "drop `inout`" in messages(text, "AR408")[0]


def test_an_inout_scalar_is_refused():
    text = SCALE.replace("s: f32", "s: inout f32")
    assert reported(text) == [("AR216", "s: inout f32")]
    assert "only tensors can be `inout`" in messages(text, "AR216")[0]


def test_the_reference_takes_inout_tensors_among_its_inputs_in_order():
    tail = "\nreference scale(x, s):\n    return x * s, x * s + 1\n\nsizes scale:\n    small: N = 100\n"
    assert reported(SCALE + tail) == []
    wrong = SCALE + tail.replace("reference scale(x, s)", "reference scale(s)")
    (code, _), *rest = reported(wrong)
    assert (code, rest) == ("AR106", [])
    assert "(x, s)" in messages(wrong, "AR106")[0]


def test_a_data_fact_on_a_tensor_the_kernel_writes_is_refused():
    text = """\
kernel k(idx: inout i32[N], y: out f32[N]):
    tile BN = 128
    requires in_range(idx, 0, N)
    grid (cdiv(N, BN),)
    offs = program_id(0) * BN + arange(BN)
    i = load(idx[offs], mask=offs < N, other=0)
    store(y[offs], i.to(f32), mask=offs < N)
    store(idx[offs], i + 1, mask=offs < N)
"""
    assert reported(text) == [("AR216", "idx")]
    assert "written by the kernel" in messages(text, "AR216")[0]


def test_a_layout_on_an_inout_tensor_is_refused():
    text = SCALE.replace("    grid", "    layout x: N\n    grid")
    assert reported(text) == [("AR411", "x")]
    assert "an in/out tensor" in messages(text, "AR411")[0]
