"""0-d tensors (`loss: out f32[]`, `s: f32[]`): the bare name is the access of the one element (`store(loss, v)`,
`atomic_add(loss, v)`, `load(s)`), its value a scalar; indexing one, a bare ranked tensor and a 0-d tensor used
as a value each get a diagnostic that says what to write (AR208, AR216, AR201, AR408)."""

from __future__ import annotations

from checked_text import messages, reported

from argus.dsl.check import check_source

SCALE = """\
kernel scale(x: inout f32[N], s: f32[], loss: out f32[]):
    tile BN = 128
    grid (cdiv(N, BN),)
    offs = program_id(0) * BN + arange(BN)
    v = load(x[offs], mask=offs < N, other=0) * load(s)
    store(x[offs], v, mask=offs < N)
    atomic_add(loss, sum(v, axis=0))
"""


# ---- 0-d tensors -----------------------------------------------------------------------------------------


def test_a_0d_tensor_is_accessed_by_its_bare_name_as_a_scalar():
    kernel = check_source(SCALE).analysis.kernels["scale"]
    memory = [op for op in kernel.body.ops if op.kind in ("load", "store", "atomic_add")]
    assert [(op.kind, op.attrs["tensor"], op.attrs["rank"]) for op in memory] == [
        ("load", "x", 1),
        ("load", "s", 0),
        ("store", "x", 1),
        ("atomic_add", "loss", 0),
    ]
    assert str(memory[1].result.type) == "f32"  # a scalar, not a one-element tile


def test_a_0d_store_takes_a_scalar_not_a_tile():
    text = SCALE.replace("atomic_add(loss, sum(v, axis=0))", "store(loss, v)")
    assert reported(text) == [("AR201", "v")]


def test_indexing_a_0d_tensor_says_to_use_its_bare_name():
    text = SCALE.replace("atomic_add(loss, sum(v, axis=0))", "atomic_add(loss[0], sum(v, axis=0))")
    assert reported(text) == [("AR208", "loss[0]")]
    assert "bare name" in messages(text, "AR208")[0]


def test_a_bare_ranked_tensor_is_still_an_error_with_the_indices_it_needs():
    text = SCALE.replace("store(x[offs], v, mask=offs < N)", "store(x, v)")
    assert reported(text) == [("AR208", "x")]
    assert "x[i]" in messages(text, "AR208")[0]


def test_a_0d_tensor_in_arithmetic_says_to_load_it():
    text = SCALE.replace("* load(s)", "* s")
    assert reported(text) == [("AR216", "s")]
    assert "load its one element: load(s)" in messages(text, "AR216")[0]


def test_a_0d_output_never_written_is_ar408():
    text = SCALE.replace("    atomic_add(loss, sum(v, axis=0))\n", "")
    assert reported(text) == [("AR408", "loss: out f32[]")]
