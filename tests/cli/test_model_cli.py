"""`argus check`, `argus build` and `argus gate` on a file with a model, as a user runs them."""

from __future__ import annotations

import json

from cli_support import argus, copy_example, no_traceback


def test_check_counts_the_model_and_reports_its_mistakes_in_json(tmp_path):
    path = copy_example(tmp_path, "long_softmax")
    clean = argus("check", str(path))
    assert clean.returncode == 0, clean.stderr
    assert clean.stderr.strip() == "checked 1 file, 2 kernels, 1 model: no problems"
    broken = path.read_text(encoding="utf-8").replace(
        "    softmax_partials(x, partials)\n    softmax_apply(x, partials, y)",
        "    softmax_apply(x, partials, y)\n    softmax_partials(x, partials)",
    )
    path.write_text(broken, encoding="utf-8")
    done = argus("check", "--json", "--no-verify", str(path))
    assert done.returncode == 1
    [record] = json.loads(done.stdout)
    assert record["code"] == "AR418" and "`softmax_apply` reads `partials`" in record["message"]
    assert record["range"]["start"]["line"] == broken.splitlines().index("    softmax_apply(x, partials, y)")


def test_build_writes_the_module_with_the_model_and_the_models_problem(tmp_path):
    path = copy_example(tmp_path, "long_softmax")
    module = tmp_path / "out" / "kernels.py"
    assert argus("build", str(path), "-o", str(module)).returncode == 0
    text = module.read_text(encoding="utf-8")
    assert "def long_softmax(*args, autotune=False, check_data=True, **kwargs):" in text and "MODELS = {" in text
    only = argus("build", str(path), "--problem")  # the one item the file gates: the model
    assert only.returncode == 0 and '"""Problem for the Argus model `long_softmax`' in only.stdout
    named = argus("build", str(path), "--problem", "long_softmax")
    assert named.returncode == 0 and named.stdout == only.stdout


def test_build_refuses_the_problem_of_a_kernel_only_a_model_covers(tmp_path):
    path = copy_example(tmp_path, "long_softmax")
    done = argus("build", str(path), "--problem", "softmax_apply")
    assert done.returncode == 1
    no_traceback(done)
    assert "checked through the model that launches it (long_softmax)" in done.stderr


def test_gate_runs_a_model_by_name_and_prints_each_launch(tmp_path):
    path = copy_example(tmp_path, "long_softmax")
    done = argus(
        "gate", str(path), "--kernel", "long_softmax", "--device", "cpu", "--stage", "compile", "--stage", "correct",
        "--trials", "1", timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"{path}: long_softmax on cpu" in done.stdout
    assert "✓ compile  sm_90: 2 launches, at most" in done.stdout
    assert "softmax_partials (line 47):" in done.stdout and "softmax_apply (line 48):" in done.stdout
    assert "✓ correct  1 trial on the interpreter at R=3, C=2500" in done.stdout
    assert "[gate] long_softmax: compiling launch 1 of 2, softmax_partials (line 47)" in done.stderr


def test_gate_names_the_models_when_the_name_is_unknown(tmp_path):
    path = copy_example(tmp_path, "long_softmax")
    done = argus("gate", str(path), "--kernel", "softmax", "--device", "cpu")
    assert done.returncode == 2
    no_traceback(done)
    assert "no kernel or model named `softmax` in the file (it has: softmax_partials, softmax_apply, long_softmax)" in (
        done.stderr
    )
