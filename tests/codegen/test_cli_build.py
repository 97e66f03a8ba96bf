"""`argus build FILE [-o OUT.py] [--problem [KERNEL]]`."""

from __future__ import annotations

from codegen_support import EXAMPLES, ROOT

from argus.cli.main import main

EXAMPLE = {path.stem: path for path in EXAMPLES}


def test_build_writes_the_kernel_module(tmp_path):
    out = tmp_path / "softmax.py"
    assert main(["build", str(EXAMPLE["softmax"]), "-o", str(out)]) == 0
    text = out.read_text()
    assert "def softmax_kernel(" in text and "KERNELS = {" in text


def test_build_problem_writes_the_problem_module(tmp_path, capsys):
    assert main(["build", str(EXAMPLE["softmax"]), "--problem"]) == 0
    assert "def make_inputs(" in capsys.readouterr().out


def test_build_refuses_a_file_with_errors(capsys):
    assert main(["build", str(ROOT / "examples" / "buggy" / "matmul_bugs.argus")]) == 1
    err = capsys.readouterr().err
    assert "error[AR403]" in err and "nothing generated" in err


def test_build_reports_a_missing_file(capsys):
    assert main(["build", "no/such/file.argus"]) == 2
    assert "cannot read" in capsys.readouterr().err
