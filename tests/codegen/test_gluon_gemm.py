"""`policy epilogue_warps`: a persistent GEMM's epilogue in warps of its own, through Gluon (codegen/gluon_gemm.py).

What runs here: the shape is recognized or refused with its reason, the epilogue is translated (once a tile what
reads only the columns, once a row slice the rest), the launcher hands the setting to the dispatcher, which
runs the Triton kernel wherever the Gluon one cannot run (the CPU here). With the device's Triton (3.6) in
$ARGUS_TRITON_DEVICE_PYTHON the Gluon kernel is compiled for sm_90 too; CI installs it (.ci/setup-triton-device.sh).
On a GPU, bench/h200.py gates and times it (docs/perf.md, issue 18).
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
import torch
from codegen_support import HERE, ROOT, Recorder, generated

from argus.codegen import generate
from argus.codegen.errors import CodegenError
from argus.dsl.check import check_source

EXPERT = ROOT / "skills" / "experts" / "gemm_persistent.argus"

GEMM = """
kernel g(A: f16[M, K], B: f16[K, N], {params}C: out f16[M, N]):
    tile BM = 128, BN = 256, BK = 64, GROUP_M = 8, SMS = 132
    policy num_warps = 8, num_stages = 3, tma = 1, epilogue_warps = 4
    grid (SMS,)
    tiles_n = cdiv(N, BN)
    per_group = GROUP_M * tiles_n
    num_tiles = per_group * cdiv(cdiv(M, BM), GROUP_M)
    for t in range(program_id(0), num_tiles, SMS):
        group = t // per_group
        q = t % per_group
        pm = group * GROUP_M + q % GROUP_M
        pn = q // GROUP_M
        rm = pm * BM + arange(BM)
        rn = pn * BN + arange(BN)
        acc = zeros((BM, BN), f32)
        for k0 in range(0, K, BK):
            rk = k0 + arange(BK)
            a = load(A[rm, rk], mask=(rm < M, rk < K), other=0)
            b = load(B[rk, rn], mask=(rk < K, rn < N), other=0)
            acc = dot(a, b, acc)
{epilogue}
"""
SCALED = GEMM.format(
    params="scale: f32[M], alpha: f32, ",
    epilogue="""\
        s = load(scale[rm], mask=rm < M, other=0)
        c = maximum(acc * s[:, None] * alpha, 0.0)
        store(C[rm, rn], c.to(f16), mask=(rm < M, rn < N))""",
)


def function(text: str, name: str) -> str:
    """The source of one generated function, up to the next top-level line."""
    start = text.index(f"def {name}(")
    end = text.find("\n@", start)
    return text[start : end if end > 0 else len(text)]


def test_the_expert_epilogue_splits_into_columns_once_a_tile_and_rows_once_a_slice():
    text = generated(EXPERT.read_text())
    columns = function(text, "_gemm_persistent_g_columns")
    rows = function(text, "_gemm_persistent_g_rows")
    assert "gl.load(p_bias + rn * p_bias_stride, mask=v" in columns and " = (rn < N)" in columns
    assert "gl.load" not in rows.split('"""')[2].split("gl.store")[0]  # no bias load per row slice
    assert "_argus_erf(v" in rows and "* 0.7071067811865476)" in rows
    assert "gl.store(c_ptr + rm[:, None] * stride_cm + rn[None, :]" in rows
    assert "def gemm_persistent_gluon(" in text and "gl.warp_specialize(" in text
    # the plain GEMM of the same file has no such policy and gets no Gluon kernel
    assert "gemm_plain_persistent_gluon" not in text and '"jit": gemm_plain_persistent_kernel,' in text


def test_row_vectors_and_scalars_reach_the_row_slices():
    text = generated(SCALED)
    rows = function(text, "_g_g_rows")
    assert "gl.load(p_scale + rm * p_scale_stride, mask=v" in rows and " = (rm < M)" in rows
    assert "s_alpha" in rows and "gl.maximum(" in rows
    launch = function(text, "_g_gluon_launch")
    assert 'values["scale"], values["scale_stride0"], values["alpha"], GROUP_M=settings.get(\'GROUP_M\', 1)' in launch


@pytest.mark.parametrize(
    ("epilogue", "reason"),
    [
        (
            "        c = acc - max(acc, axis=1)[:, None]\n        store(C[rm, rn], c.to(f16), mask=(rm < M, rn < N))",
            "elementwise epilogues, not one with `reduce`",
        ),
        ("        store(C[rm, rn], acc, mask=(rm < M, rn < N))", "f16 tensors A, B and C"),
        ("        store(C[rm, rn], (acc ** 2.0).to(f16), mask=(rm < M, rn < N))", "epilogues without `**`"),
    ],
)
def test_an_epilogue_out_of_shape_is_refused_with_its_reason(epilogue, reason):
    text = GEMM.format(params="", epilogue=epilogue)
    if "], acc," in epilogue:
        # an f32 C's staging for TMA leaves room for 2 stages only (AR410)
        text = text.replace("C: out f16[M, N]", "C: out f32[M, N]").replace("num_stages = 3", "num_stages = 2")
    check = check_source(text)
    assert not any(d.severity.value == "error" for d in check.diagnostics), [d.message for d in check.diagnostics]
    with pytest.raises(CodegenError, match="through Gluon only for") as refused:
        generate(check)
    assert reason in str(refused.value)


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        # half of K only: the Gluon kernel always runs the whole contraction
        (("for k0 in range(0, K, BK):", "for k0 in range(0, K // 2, BK):"), "a K loop `for k0 in range(0, K, BK)`"),
        (("acc = zeros((BM, BN), f32)", "acc = full((BM, BN), 1.0, f32)"), "from zeros"),
        (("rm = pm * BM + arange(BM)", "rm = pm * 64 + arange(BM)"), "tiles `rm = pm * BM + arange(BM)`"),
    ],
)
def test_a_gemm_the_gluon_kernel_would_compute_differently_is_refused(change, reason):
    plain = "        store(C[rm, rn], acc.to(f16), mask=(rm < M, rn < N))"
    check = check_source(GEMM.format(params="", epilogue=plain).replace(*change))
    assert not check.has_errors, [d.message for d in check.diagnostics]
    with pytest.raises(CodegenError, match="through Gluon only for") as refused:
        generate(check)
    assert reason in str(refused.value)


def test_an_epilogue_of_casts_only_is_the_plain_gemm():
    plain = "        store(C[rm, rn], acc.to(f16), mask=(rm < M, rn < N))"
    check = check_source(GEMM.format(params="", epilogue=plain))
    rows = function(generate(check).source, "_g_g_rows")
    assert "(z).to(gl.float16)" in rows


def test_a_grid_of_tiles_is_not_a_persistent_walk():
    text = """
kernel g(A: f16[M, K], B: f16[K, N], C: out f16[M, N]):
    tile BM = 128, BN = 256, BK = 64
    policy num_warps = 8, epilogue_warps = 4
    grid (cdiv(M, BM), cdiv(N, BN))
    rm = program_id(0) * BM + arange(BM)
    rn = program_id(1) * BN + arange(BN)
    acc = zeros((BM, BN), f32)
    for k0 in range(0, K, BK):
        rk = k0 + arange(BK)
        acc = dot(load(A[rm, rk], mask=(rm < M, rk < K), other=0), load(B[rk, rn], mask=(rk < K, rn < N), other=0), acc)
    store(C[rm, rn], acc.to(f16), mask=(rm < M, rn < N))
"""
    with pytest.raises(CodegenError, match="a persistent walk"):
        generate(check_source(text))


@pytest.mark.parametrize("value", [1, 2, 8])
def test_epilogue_warps_is_zero_or_four(value):
    check = check_source(SCALED.replace("epilogue_warps = 4", f"epilogue_warps = {value}"))
    assert any(d.code == "AR403" and "epilogue_warps must be 0 or 4" in d.message for d in check.diagnostics)


def test_the_launcher_hands_the_setting_to_the_dispatcher_which_falls_back_off_hopper(build):
    module = build(SCALED, record=False)
    entry = module.KERNELS["g"]
    dispatcher = entry["jit"]
    assert isinstance(dispatcher, module._ArgusGluonDispatch) and entry["gluon"]
    tensors = {
        "A": torch.zeros(200, 96, dtype=torch.float16),
        "B": torch.zeros(96, 136, dtype=torch.float16),
        "scale": torch.zeros(200),
        "alpha": 1.0,
        "C": torch.zeros(200, 136, dtype=torch.float16),
    }
    entry["jit"] = recorder = Recorder()
    entry["launcher"](**tensors)
    assert recorder.launches[-1]["kwargs"]["epilogue_warps"] == 4
    entry["launcher"](**tensors, epilogue_warps=0)
    assert recorder.launches[-1]["kwargs"]["epilogue_warps"] == 0
    # the dispatcher: on CPU tensors the Gluon launch declines, and the Triton kernel gets the launch without
    # the setting (it has no such parameter)
    triton_kernel = Recorder()
    dispatch = module._ArgusGluonDispatch(triton_kernel, module._g_gluon_launch, dispatcher.names)
    args, kwargs = recorder.launches[-1]["args"], {**recorder.launches[-1]["kwargs"], "epilogue_warps": 4}
    dispatch[(132,)](*args, **kwargs)
    assert triton_kernel.launches and "epilogue_warps" not in triton_kernel.launches[-1]["kwargs"]
    assert module._g_gluon_launch(dict(zip(dispatcher.names, args, strict=True)), kwargs, 4) is False


def test_the_autotuner_leaves_the_setting_at_its_declared_value(build):
    module = build(EXPERT)
    entry = module.KERNELS["gemm_persistent"]
    assert any(config.get("epilogue_warps") == 4 for config in entry["configs"])
    for config in module._fitting_configs(entry, {}):
        assert "epilogue_warps" not in config.all_kwargs()


DEVICE_PYTHON = os.environ.get("ARGUS_TRITON_DEVICE_PYTHON")


@pytest.mark.skipif(
    not DEVICE_PYTHON and not os.environ.get("CI"),
    reason="needs the device's Triton (3.6): set ARGUS_TRITON_DEVICE_PYTHON (CI does)",
)
def test_the_gluon_kernel_compiles_for_sm90_without_spills(tmp_path: Path):
    assert DEVICE_PYTHON, "CI must provide the device's Triton: .ci/setup-triton-device.sh"
    for name, text in (("gemm_persistent", EXPERT.read_text()), ("g", SCALED)):
        module = tmp_path / f"{name}.py"
        module.write_text(generated(text))
        command = [DEVICE_PYTHON, str(HERE / "gluon_compile.py"), str(module), name]
        done = subprocess.run(command, capture_output=True, text=True, timeout=900, cwd=tmp_path)
        assert done.returncode == 0, done.stderr[-4000:]
        report = json.loads(done.stdout.strip().splitlines()[-1])
        assert report["triton"].startswith("3.6"), report
        # 168 registers a thread is ptxas' cap for 12 warps; the accumulator fits without a spill
        assert report["registers"] == [168] and report["spill_stores"] == [0], report
        assert report["shared_bytes"] <= 227 * 1024 and report["ptx_erf_calls"] == 0, report
