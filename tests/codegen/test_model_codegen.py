"""A model in the generated module: its function's source and line map, what it launches in which order on
which temporaries, its checks, its counts, its problem module, and its results under the Triton interpreter."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap

import pytest
from codegen_support import EXAMPLES, ROOT, module_from

from argus.codegen import CodegenError, generate, generate_problem
from argus.dsl.check import check_source

EXAMPLE = {path.stem: path for path in EXAMPLES}
LONG_SOFTMAX = EXAMPLE["long_softmax"]
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

model double_shift(x: f32[N], y: out f32[N], by: f32 = 1.0):
    t = empty((N,), f32)
    double(x, t)
    shift(t, y, by)

reference double_shift(x, by):
    return x * 2 + by

sizes double_shift:
    small: N = 1000
"""


def model_function(source: str, name: str) -> list[str]:
    lines = source.splitlines()
    start = lines.index(next(line for line in lines if line.startswith(f"def {name}(")))
    end = next(i for i in range(start + 1, len(lines)) if lines[i] and not lines[i].startswith(" "))
    return lines[start:end]


def test_the_model_function_allocates_its_temporaries_and_launches_in_order():
    module = generate(check_source(LONG_SOFTMAX.read_text(encoding="utf-8")))
    body = [re.sub(r"  # argus:\d+$", "", line).strip() for line in model_function(module.source, "long_softmax")]
    assert body[0] == "def long_softmax(*args, autotune=False, check_data=True, **kwargs):"
    code = [line for line in body if line and not line.startswith(('"""', "launch", "Run model"))]
    assert code[-4:] == [
        "run = _model_runner(autotune, check_data)",
        "partials = torch.empty((R, 32, 2), dtype=torch.float32, device=device)",
        "run(softmax_partials, x, partials)",
        "run(softmax_apply, x, partials, y)",
    ]
    assert "MODELS = {" in module.source and module.models["long_softmax"].kernels == [
        "softmax_partials",
        "softmax_apply",
    ]


def test_each_line_of_the_model_function_maps_to_its_model_line():
    text = LONG_SOFTMAX.read_text(encoding="utf-8")
    module = generate(check_source(text))
    argus = text.splitlines()
    generated = module.source.splitlines()
    mapped = {}
    for number, line in enumerate(generated, start=1):
        if line.strip().startswith(("partials = torch.empty", "run(softmax_")):
            mapped[line.strip().split("  #")[0]] = argus[module.line_map[number] - 1].strip()
    assert mapped == {
        "partials = torch.empty((R, 32, 2), dtype=torch.float32, device=device)": (
            "partials = empty((R, 32, 2), f32)           # per row and chunk: (maximum, sum of exp)"
        ),
        "run(softmax_partials, x, partials)": "softmax_partials(x, partials)",
        "run(softmax_apply, x, partials, y)": "softmax_apply(x, partials, y)",
    }
    header = generated.index(next(line for line in generated if line.startswith("def long_softmax(")))
    assert argus[module.line_map[header + 1] - 1].startswith("model long_softmax(")
    assert module.models["long_softmax"].line_map and set(module.models["long_softmax"].line_map) <= set(
        module.line_map
    )


def test_the_model_launches_each_kernel_with_the_sizes_it_binds(build):
    import torch

    module = build(TWO_STEPS)
    x, y = torch.randn(300), torch.empty(300)
    module.double_shift(x, y, 0.5)
    [first] = module.KERNELS["double"]["jit"].launches
    [second] = module.KERNELS["shift"]["jit"].launches
    temporary = first["args"][1]
    assert first["grid"] == (3,) and first["args"][0] is x and tuple(temporary.shape) == (300,)
    assert second["args"][0] is temporary and second["args"][1] is y and second["args"][2] == 0.5
    module.double_shift(x=x, y=y)  # by name, the scalar at its default
    assert module.KERNELS["shift"]["jit"].launches[-1]["args"][2] == 1.0


def test_the_model_checks_its_arguments_as_a_launcher_does(build):
    import torch

    module = build(TWO_STEPS)
    with pytest.raises(module.ArgusLaunchError) as shape:
        module.double_shift(torch.randn(300), torch.empty(301))
    assert str(shape.value) == (
        "double_shift: `y`: expected axis 0 (N) of length 300, since N = 300 from `x`, "
        "got a f32 tensor of shape [301] on cpu"
    )
    with pytest.raises(module.ArgusLaunchError, match="double_shift: `x`: expected dtype f32"):
        module.double_shift(torch.randn(300).half(), torch.empty(300))
    with pytest.raises(
        module.ArgusLaunchError, match=r"double_shift: `B`: expected one of the model's parameters \(x, y, by\)"
    ):
        module.double_shift(torch.randn(300), torch.empty(300), B=64)
    assert module.KERNELS["double"]["jit"].launches == []  # nothing launched before the checks passed


def test_the_model_counts_are_the_sum_of_its_launches(build):
    module = build(TWO_STEPS)
    counts = module.MODELS["double_shift"]["counts"](N=1000)
    double = module.KERNELS["double"]["counts"](N=1000)
    shift = module.KERNELS["shift"]["counts"](N=1000)
    assert counts == {"flops": double["flops"] + shift["flops"], "bytes": double["bytes"] + shift["bytes"]}
    assert counts["bytes"] == 4 * 4 * 1000  # x, t; t, y: the temporary is written once and read once


def test_the_problem_module_of_a_model_has_its_sizes_inputs_and_reference(problem):
    generated = problem(LONG_SOFTMAX, "long_softmax")
    assert generated.SIZES["small"] == {"R": 3, "C": 2500} and generated.OUTPUTS == ["y"]
    inputs = generated.make_inputs(generated.SIZES["small"], 0, "cpu")
    assert list(inputs) == ["x", "y"] and tuple(inputs["x"].shape) == (3, 2500)
    assert generated.reference(**inputs).shape == (3, 2500)


def test_a_kernel_only_a_model_covers_has_no_problem_module_and_says_why():
    check = check_source(LONG_SOFTMAX.read_text(encoding="utf-8"))
    with pytest.raises(CodegenError) as refused:
        generate_problem(check, "softmax_apply")
    assert str(refused.value).endswith(
        "kernel `softmax_apply` has no `reference` block: it is checked through the model that launches it "
        "(long_softmax)"
    )


def test_a_model_name_that_would_shadow_what_its_function_calls_is_refused():
    shadowing = (
        TWO_STEPS.replace("model double_shift(x: f32[N]", "model double_shift(double: f32[N]")
        .replace("    double(x, t)", "    double(double, t)")
        .replace(
            "reference double_shift(x, by):\n    return x * 2",
            "reference double_shift(double, by):\n    return double * 2",
        )
    )
    check = check_source(shadowing)
    assert check.diagnostics == []  # Argus keeps kernels and values apart; the generated Python would not
    with pytest.raises(CodegenError, match="`double` in model `double_shift` would shadow the kernel `double`"):
        generate(check)
    renamed = check_source(TWO_STEPS.replace("double_shift", "double_kernel"))
    with pytest.raises(CodegenError, match="a model named `double_kernel` would shadow a name"):
        generate(renamed)


INTERPRET = """
import json, sys
sys.path.insert(0, {folder!r})
import torch, kernel, problem
runs = []
for seed in (0, 1):
    inputs = problem.make_inputs(problem.SIZES["small"], seed, "cpu")
    for name in problem.OUTPUTS:
        inputs[name].fill_(float("nan"))
    kernel.MODELS[{name!r}]["launcher"](**inputs)
    expected = problem.reference(**inputs)
    expected = expected if isinstance(expected, tuple) else (expected,)
    for output, want in zip(problem.OUTPUTS, expected):
        got = inputs[output]
        runs.append({{"nan": int(torch.isnan(got).sum()), "error": float((got - want).abs().max())}})
print(json.dumps(runs))
"""


@pytest.mark.parametrize("name", ["long_softmax", "linear_logsumexp"])
def test_the_model_matches_its_reference_under_the_interpreter(tmp_path, name):
    check = check_source(EXAMPLE[name].read_text(encoding="utf-8"))
    (tmp_path / "kernel.py").write_text(generate(check).source, encoding="utf-8")
    (tmp_path / "problem.py").write_text(generate_problem(check, name), encoding="utf-8")
    script = textwrap.dedent(INTERPRET.format(folder=str(tmp_path), name=name))
    env = {**os.environ, "TRITON_INTERPRET": "1"}
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, cwd=ROOT, timeout=600
    )
    assert done.returncode == 0, done.stderr[-3000:]
    runs = json.loads(done.stdout.strip().splitlines()[-1])
    assert runs and all(run["nan"] == 0 and run["error"] < 1e-4 for run in runs), runs


def test_the_models_entry_records_each_launch_and_its_function(tmp_path):
    source = generate(check_source(TWO_STEPS)).source
    module = module_from(source, "two_steps", tmp_path)
    assert module.MODELS["double_shift"]["launcher"] is module.double_shift
    assert module.MODELS["double_shift"]["launches"] == [
        {"kernel": "double", "line": 15, "args": {"x": "x", "y": "t"}, "sizes": {"N": ["N", 0]}},
        {"kernel": "shift", "line": 16, "args": {"x": "t", "y": "y", "by": "by"}, "sizes": {"N": ["N", 0]}},
    ]
