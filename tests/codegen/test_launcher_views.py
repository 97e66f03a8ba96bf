"""The launcher with declared views, in/out tensors and 0-d tensors (a recorder stands in for the jit function).

A view: the launcher checks the tensor as the caller holds it (rank, sizes from the stored shape), takes
`tensor.view(...)` of the declared shape, which shares its memory, and passes the view's strides; a tensor whose
strides do not let the merged axes be one is refused with an ArgusLaunchError naming the parameter and its
strides. An in/out tensor is checked like any tensor, never zeroed (it accumulates onto its input value), and the
autotuned launcher restores it between trials. A 0-d tensor has no strides and no size."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from codegen_support import generated

KERNELS = Path(__file__).parent / "kernels" / "inplace_views.argus"


def launch_error(launcher, *args, **kwargs) -> str:
    error_type = launcher.__globals__["ArgusLaunchError"]
    with pytest.raises(error_type) as caught:
        launcher(*args, **kwargs)
    return str(caught.value)


def chw(B=2, C=3, H=5, W=7):
    return torch.randn(B, C, H, W).half(), torch.empty(B, C, H, W), torch.zeros(())


def test_a_view_is_taken_of_the_stored_tensor_and_its_strides_are_passed(build):
    module = build(KERNELS)
    x, y, peak = chw()
    module.chw_scale(x, y, peak)
    (launch,) = module.KERNELS["chw_scale"]["jit"].launches
    args = launch["args"]
    assert args[0].shape == (2, 105) and args[0].data_ptr() == x.data_ptr()  # the view, on x's memory
    assert args[1].shape == (2, 105) and args[1].data_ptr() == y.data_ptr()  # writes land in the caller's y
    assert args[2] is peak
    assert args[3:7] == (2, 3, 5, 7)  # B, C, H, W: sizes from the stored shape
    assert args[7:11] == (105, 1, 105, 1)  # x's and y's view strides; none for the 0-d peak


def test_a_tensor_whose_merged_axes_do_not_chain_is_refused_naming_it_and_its_strides(build):
    module = build(KERNELS)
    x, y, peak = chw()
    permuted = x.permute(0, 1, 3, 2).contiguous().permute(0, 1, 3, 2)  # H and W swapped in memory
    message = launch_error(module.chw_scale, permuted, y, peak)
    assert message.startswith("chw_scale: `x`: expected axes 1..3 (C, H, W) that merge into one axis of the view")
    assert "[B, C * H * W]" in message and "strides [105, 35, 1, 5]" in message
    assert "axis 2" in message and "x.view(...)" in message
    assert module.KERNELS["chw_scale"]["jit"].launches == []


def test_a_sliced_batch_still_views_since_only_the_merged_axes_must_chain(build):
    module = build(KERNELS)
    x, y, peak = chw(B=4)
    module.chw_scale(x[::2], y[::2], peak)  # every other sample: the batch stride doubles, C, H, W stay packed
    (launch,) = module.KERNELS["chw_scale"]["jit"].launches
    assert launch["args"][7:11] == (210, 1, 210, 1)


def test_the_view_is_checked_after_the_stored_shape(build):
    module = build(KERNELS)
    x, y, peak = chw()
    message = launch_error(module.chw_scale, x.reshape(2, 105), y, peak)
    assert "`x`" in message and "rank 4" in message  # the stored rank, not the view's
    message = launch_error(module.chw_scale, x, torch.empty(2, 3, 5, 8), peak)
    assert "`y`" in message and "W = 7" in message


def test_the_entry_describes_the_view(build):
    entry = build(KERNELS).KERNELS["chw_scale"]
    x = entry["params"][0]
    assert x["shape"] == ["B", "C", "H", "W"] and x["view"] == [[0], [1, 2, 3]]
    assert x["view_shape"] == ["B", "C * H * W"]
    assert entry["strides"] == {"x": ["x_stride0", "x_stride1"], "y": ["y_stride0", "y_stride1"], "peak": []}
    assert entry["inout"] == ["peak"] and entry["accumulated"] == {}  # peak is in/out: kept, not started


def test_an_inout_tensor_is_passed_as_it_is_and_never_zeroed(build):
    module = build(KERNELS)
    x, y, s = torch.randn(7, 100), torch.randn(7, 100), torch.tensor(2.0)
    before = x.clone()
    module.add_mul_(x, y, s)
    (launch,) = module.KERNELS["add_mul_"]["jit"].launches
    assert launch["args"][0] is x and torch.equal(x, before)  # the recorder ran nothing; nothing reset it either
    message = launch_error(module.add_mul_, x.double(), y, s)
    assert "`x`" in message and "f32" in message


def test_a_0d_tensor_is_checked_for_rank_and_dtype(build):
    module = build(KERNELS)
    x = torch.randn(1000)
    message = launch_error(module.sum_sq, x, torch.zeros(1))
    assert "`total`" in message and "rank 0" in message and "rank 1" in message
    total = torch.full((), 5.0)
    module.sum_sq(x, total)
    assert float(total) == 0.0  # a 0-d output written only by atomic_add is zeroed like any other


def test_the_autotuned_launcher_restores_inout_tensors_between_trials():
    source = generated(KERNELS.read_text(encoding="utf-8").replace("tile BM = 4,", "tile BM = 4 tune [4, 8],"))
    assert "restore_value=restored or None" in source
    assert "'inout': ['x']" in source.replace('"inout"', "'inout'")


def test_counts_read_an_inout_tensor_and_write_it_back(build):
    entry = build(KERNELS).KERNELS["add_mul_"]
    counts = entry["counts"](M=7, N=100)
    assert counts["bytes"] == 2 * 700 * 4 + 700 * 4 + 4  # x read and written, y read, s read


# ---- the problem module ---------------------------------------------------------------------------------


def test_the_problem_module_makes_inout_tensors_as_inputs_and_lists_them_among_the_outputs(problem):
    module = problem(KERNELS, "chw_scale")
    assert module.OUTPUTS == ["y", "peak"] and module.INOUTS == ["peak"]
    inputs = module.make_inputs(module.SIZES["small"], 0, "cpu")
    assert list(inputs["x"].shape) == [2, 3, 5, 7]  # as the caller holds it: the launcher takes the view
    assert inputs["peak"].shape == () and bool(torch.isfinite(inputs["peak"]))  # random data, not torch.empty
    assert inputs["peak"].dtype == torch.float32


def test_the_problem_reference_sees_the_inout_values_it_is_given(problem):
    module = problem(KERNELS, "add_mul_")
    inputs = module.make_inputs(module.SIZES["small"], 0, "cpu")
    start = inputs["x"].clone()
    expected = module.reference(**{k: v.clone() for k, v in inputs.items()})
    assert torch.allclose(expected, (start + inputs["y"]) * inputs["s"])
    assert torch.equal(inputs["x"], start)  # the reference changed its own copy


def test_a_0d_reference_value_is_a_0d_tensor(problem):
    module = problem(KERNELS, "sum_sq")
    inputs = module.make_inputs(module.SIZES["small"], 0, "cpu")
    assert inputs["total"].shape == () and module.reference(**inputs).shape == ()
