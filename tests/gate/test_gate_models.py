"""A model through the gate on the CPU: every launch compiled for sm_90, the model's function against its
reference in the interpreter; a wrong result reported at the launch that writes the output, a launcher's
refusal at the launch that made it, and what the checker already refuses never run at all."""

from __future__ import annotations

import pytest

from argus.codegen import generate, generate_problem
from argus.dsl.check import check_source
from argus.gate import Status, run_bundle, run_gate, run_gate_all
from argus.gate.bundle import write_files
from argus.gate.manifest import manifest

TWO_STEPS = """\
kernel double(x: f32[N], y: out f32[N]):
    tile B = 128
    grid (cdiv(N, B),)
    i = program_id(0) * B + arange(B)
    store(y[i], load(x[i], mask=i < N, other=0) * 2, mask=i < N)

kernel shift(x: f32[N], y: out f32[N], by: f32 = 1.0):
    tile B = 128
    grid (cdiv(N, B),)
    i = program_id(0) * B + arange(B)
    store(y[i], load(x[i], mask=i < N, other=0) + by, mask=i < N)

model double_shift(x: f32[N], y: out f32[N]):
    t = empty((N,), f32)
    double(x, t)
    shift(t, y)

reference double_shift(x):
    return x * 2 + 1

sizes double_shift:
    small: N = 300
"""
LINES = TWO_STEPS.splitlines()


def line_of(text: str) -> int:
    return LINES.index(text) + 1


def test_a_model_passes_compile_and_correct_with_each_launch_compiled():
    result = run_gate(TWO_STEPS, kernel="double_shift", device="cpu", stages=("compile", "correct"), trials=2)
    assert result.passed, result.errors
    assert result.kernel == "double_shift"
    launches = result.compile.facts.launches
    assert [(launch.kernel, launch.line) for launch in launches] == [
        ("double", line_of("    double(x, t)")),
        ("shift", line_of("    shift(t, y)")),
    ]
    assert all(launch.registers and launch.config["B"] == 128 for launch in launches)
    assert result.compile.facts.registers == max(launch.registers for launch in launches)
    assert result.compile.facts.config == {}
    assert result.correct.facts.trials == 2 and result.correct.facts.sizes == [{"N": 300}, {"N": 300}]
    assert result.correct.facts.reduction_length == {"y": 1}


def test_without_a_name_the_gate_runs_the_model_and_the_kernels_that_stand_alone():
    own = TWO_STEPS + "\nreference double(x):\n    return x * 2\n\nsizes double:\n    small: N = 100\n"
    results = run_gate_all(own, device="cpu", stages=("correct",), trials=1)
    assert [r.kernel for r in results] == ["double", "double_shift"]  # shift has no reference: the model covers it
    assert all(r.passed for r in results), [r.errors for r in results]


def test_launches_in_the_wrong_order_on_a_zeroed_temporary_fail_at_the_launch_that_writes_the_output():
    swapped = TWO_STEPS.replace(
        "    t = empty((N,), f32)\n    double(x, t)\n    shift(t, y)",
        "    t = zeros((N,), f32)\n    shift(t, y)\n    double(x, t)",
    )
    assert check_source(swapped).has_errors is False  # zeros counts as written: only running tells
    result = run_gate(swapped, kernel="double_shift", device="cpu", stages=("compile", "correct"), trials=1)
    assert result.compile.status == Status.passed and result.correct.status == Status.failed
    [error] = result.errors
    assert error.code == "AR502" and error.message.startswith("double_shift: `y[0]` is ")
    assert error.line == swapped.splitlines().index("    shift(t, y)") + 1


def test_launches_in_the_wrong_order_on_an_empty_temporary_never_run():
    swapped = TWO_STEPS.replace("    double(x, t)\n    shift(t, y)", "    shift(t, y)\n    double(x, t)")
    result = run_gate(swapped, kernel="double_shift", device="cpu", stages=("compile", "correct"))
    assert [e.code for e in result.errors] == ["AR418"]
    assert "`shift` reads `t` (its `x`) before any launch writes it" in result.errors[0].message
    assert all(stage.status == Status.skipped for stage in result.stages.values())


def test_a_temporary_too_small_is_refused_by_the_checker():
    small = TWO_STEPS.replace("t = empty((N,), f32)", "t = empty((N - 1,), f32)")
    result = run_gate(small, kernel="double_shift", device="cpu", stages=("compile", "correct"))
    codes = [e.code for e in result.errors]
    assert codes and set(codes) == {"AR416"}
    assert "`N` of `double` is N from `x` (axis 0) and N - 1 from `t` (axis 0)" in result.errors[0].message


def test_a_temporary_too_small_in_a_generated_module_is_the_launchers_error_at_the_launch(tmp_path):
    """The same mistake past the checker (a module edited by hand, as a bundle on another machine could be): the
    launcher refuses the launch, and the error points at the model's launch line, not into the runtime."""
    check = check_source(TWO_STEPS)
    generated = generate(check)
    source = generated.source.replace("t = torch.empty((N,)", "t = torch.empty((N - 1,)")
    assert source != generated.source
    facts = manifest(check, ["double_shift"], generated.line_map, "two_steps.argus")
    run_py = write_files(tmp_path, source, {"double_shift": generate_problem(check, "double_shift")}, facts, TWO_STEPS)
    [result] = run_bundle(run_py, device="cpu", stages=("correct",), trials=1)
    [error] = result.errors
    assert error.code == "AR503"
    assert error.message == (
        "double_shift: the launcher rejected the arguments: double: `y`: expected axis 0 (N) of length 300, since "
        "N = 300 from `x`, got a f32 tensor of shape [299] on cpu"
    )
    assert error.line == line_of("    double(x, t)")


def test_the_manifest_gives_a_model_its_launches_outputs_and_chained_reductions():
    from pathlib import Path

    text = (Path(__file__).resolve().parents[2] / "examples" / "linear_logsumexp.argus").read_text(encoding="utf-8")
    facts = manifest(check_source(text), ["linear_logsumexp"], {}, None)["kernels"]["linear_logsumexp"]
    lines = text.splitlines()
    assert facts["model"] is True
    assert facts["launches"] == [
        {"kernel": "linear", "line": lines.index("    linear(h, W, logits)") + 1},
        {"kernel": "row_logsumexp", "line": lines.index("    row_logsumexp(logits, lse)") + 1},
    ]
    assert facts["outputs"] == {"lse": lines.index("    row_logsumexp(logits, lse)") + 1}
    assert facts["reductions"] == {"lse": [["V"], ["D"]]}  # R = V + D: a GEMM over D, then a sum over V
    assert facts["dot_dtype"] == "f32"


@pytest.mark.parametrize("kernel", ["shift", "nothing"])
def test_a_kernel_only_the_model_covers_or_an_unknown_name_is_said_before_any_run(kernel):
    [result] = run_gate_all(TWO_STEPS, kernel=kernel, device="cpu", stages=("correct",))
    assert not result.passed and result.correct.status == Status.skipped
    if kernel == "shift":
        assert "checked through the model that launches it (double_shift)" in result.compile.message
    else:
        assert "no kernel or model named `nothing`" in result.compile.message
        assert "double, shift, double_shift" in result.compile.message


PROFILE_ON_THE_CPU = """
import contextlib, json, sys
sys.path.insert(0, sys.argv[1])
import torch
import gate_profile
from gate_common import Bundle, Phases

events = []
made = {}


class CountingTimer:
    # CUDA events need a GPU: this stand-in runs each timed function once and reports one millisecond
    def time(self, fn, trials, *rest):
        events.append("timed")
        fn()
        return {"ms_median": 1.0, "ms_p10": 1.0, "ms_p90": 1.0, "trials": 1}


def compile_stand_in(reference):
    events.append("compiled")
    return reference


@contextlib.contextmanager
def turn():
    events.append("taken")
    yield
    events.append("released")


loaded = Phases.load


def load_on_the_cpu(self):
    module, problem, entry = loaded(self)
    make_inputs = problem.make_inputs

    def on_the_cpu(sizes, seed, device):
        made.update(make_inputs(sizes, seed, "cpu"))
        return made

    problem.make_inputs = on_the_cpu
    return module, problem, entry


Phases.load = load_on_the_cpu
gate_profile.Timer = CountingTimer
torch.compile = compile_stand_in
torch.cuda.synchronize = lambda: None
ceilings = {"copy_gb_per_s": 4000.0, "gemm_fp16_tflops": 600.0, "gemm_bf16_tflops": 700.0}
record = gate_profile.run_profile(Bundle(__import__("pathlib").Path(sys.argv[1])), "double_shift", "cuda", 100,
                                  ceilings, True, turn)
error = float((made["y"] - (made["x"] * 2 + 1)).abs().max())
print(json.dumps({"record": record, "events": events, "error": error}))
"""


def test_the_profile_stage_times_the_model_and_each_launch_alone(tmp_path):
    """The profile stage needs a GPU; its model path runs here under the interpreter, with a stand-in for the
    CUDA-event timer: one real run of the model records each launch, then the model and each launch are timed."""
    import json
    import os
    import subprocess
    import sys

    from argus.gate import write_bundle

    run_py = write_bundle(TWO_STEPS, tmp_path / "bundle")
    env = {**os.environ, "TRITON_INTERPRET": "1"}
    done = subprocess.run(
        [sys.executable, "-c", PROFILE_ON_THE_CPU, str(run_py.parent)],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    found = json.loads(done.stdout.strip().splitlines()[-1])
    assert found["record"]["status"] == "passed", found["record"]
    assert found["error"] < 1e-6  # the recorded run was a real one
    facts = found["record"]["facts"]
    assert [(launch["kernel"], launch["line"]) for launch in facts["launches"]] == [
        ("double", line_of("    double(x, t)")),
        ("shift", line_of("    shift(t, y)")),
    ]
    assert all(launch["timing"]["ms_median"] == 1.0 for launch in facts["launches"])
    assert (facts["flops"], facts["bytes"]) == (2 * 384, 4 * 4 * 300)  # two launches of 3 tiles of 128, 4 tensors
    assert facts["speedup_over_eager"] == facts["speedup_over_compiled"] == 1.0
    # torch.compile compiles before the GPU is taken; the model, each launch and both references are timed
    # while it is held, and nothing after it is released
    assert found["events"] == ["compiled", "taken"] + ["timed"] * 5 + ["released"]
