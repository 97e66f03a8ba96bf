"""Sources that cannot be gated come back as results with the reason, never as an exception or a child."""

from __future__ import annotations

import shutil

import pytest

from argus.gate import GateSetupError, Status, run_gate, run_gate_all, write_bundle

TWO_KERNELS = """
kernel double(x: f32[N], y: out f32[N]):
    tile B = 256
    grid (cdiv(N, B),)
    i = program_id(0) * B + arange(B)
    store(y[i], load(x[i], mask=i < N, other=0) * 2, mask=i < N)

reference double(x):
    return x * 2

sizes double:
    small: N = 300

kernel triple(x: f32[N], y: out f32[N]):
    tile B = 256
    grid (cdiv(N, B),)
    i = program_id(0) * B + arange(B)
    store(y[i], load(x[i], mask=i < N, other=0) * 3, mask=i < N)

reference triple(x):
    return x * 3

sizes triple:
    small: N = 300
"""


def test_a_file_with_check_errors_is_not_gated_and_gives_its_errors():
    broken = TWO_KERNELS.replace("* 2, mask", "* undefined_name, mask")
    [first, second] = run_gate_all(broken, device="cpu")
    assert first.kernel == "double" and second.kernel == "triple"
    assert [e.code for e in first.errors] == ["AR101"]
    assert first.errors[0].line == 6
    assert all(stage.status == Status.skipped for stage in first.stages.values())
    assert not first.passed


def test_an_unknown_kernel_name_says_which_kernels_there_are():
    [result] = run_gate_all(TWO_KERNELS, kernel="quadruple", device="cpu")
    assert "no kernel or model named `quadruple`" in result.compile.message
    assert "double, triple" in result.compile.message


def test_run_gate_needs_a_kernel_name_when_the_file_has_several():
    with pytest.raises(ValueError, match="several kernels"):
        run_gate(TWO_KERNELS, device="cpu")


def test_bad_device_or_stage_is_a_clear_error():
    with pytest.raises(ValueError, match="device"):
        run_gate(TWO_KERNELS, kernel="double", device="tpu")
    with pytest.raises(ValueError, match="stages"):
        run_gate(TWO_KERNELS, kernel="double", stages=("benchmark",))


def test_write_bundle_refuses_a_source_that_does_not_check(tmp_path):
    with pytest.raises(GateSetupError) as refused:
        write_bundle("kernel broken(:\n", tmp_path)
    assert refused.value.errors and refused.value.errors[0].code.startswith("AR0")


def test_every_kernel_of_a_file_is_gated_in_file_order():
    results = run_gate_all(TWO_KERNELS, device="cpu", stages=("correct",), trials=1)
    assert [(r.kernel, r.passed) for r in results] == [("double", True), ("triple", True)]


def test_an_unknown_gate_option_is_a_clear_error():
    with pytest.raises(TypeError, match="unknown gate option 'trails'"):
        run_gate(TWO_KERNELS, kernel="double", device="cpu", trails=3)


@pytest.mark.skipif(shutil.which("nvidia-smi") is not None, reason="this machine may have a GPU")
def test_asking_for_cuda_without_a_gpu_says_so_instead_of_failing_a_stage():
    result = run_gate(TWO_KERNELS, kernel="double", device="cuda", stages=("compile", "correct"))
    assert not result.passed and result.errors == []
    assert result.compile.status == Status.error and "no CUDA GPU" in result.compile.message
    assert result.profile.status == Status.skipped
