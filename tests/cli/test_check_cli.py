"""`argus check` as a user meets it: folders (with the `.argus/` memory folder refine makes), empty folders and
files, the summary line, a bad --timeout-ms or --rlimit, and what a small --rlimit (and a small --timeout-ms)
makes it say."""

from __future__ import annotations

import json
import re

import pytest
from cli_support import EXAMPLES, argus, copy_example, no_traceback


def test_check_of_a_workspace_with_the_refine_memory_folder_checks_its_kernels(tmp_path):
    copy_example(tmp_path)
    (tmp_path / ".argus").mkdir()  # what `argus refine` leaves: <workspace>/.argus/memory.jsonl
    (tmp_path / ".argus" / "memory.jsonl").write_text("{}\n")
    (tmp_path / "old.argus").mkdir()  # a folder is not a file, whatever its name
    done = argus("check", ".", cwd=tmp_path)
    no_traceback(done)
    assert (done.returncode, done.stdout) == (0, "")
    assert done.stderr == "checked 1 file, 1 kernel: no problems\n"


def test_a_folder_without_kernel_files_is_a_usage_error(tmp_path):
    (tmp_path / "notes.txt").write_text("no kernels here\n")
    done = argus("check", str(tmp_path))
    assert done.returncode == 2
    assert done.stderr == f"argus check: no .argus file in {tmp_path}\n"


def test_an_empty_file_is_reported_as_having_no_kernel(tmp_path):
    empty = tmp_path / "empty.argus"
    empty.write_text("")
    done = argus("check", str(empty))
    assert (done.returncode, done.stdout) == (0, "")
    warned = f"argus check: {empty}: warning: no kernel in this file\n"
    assert done.stderr == warned + "checked 1 file, 0 kernels: 1 warning in 1 of 1 files\n"


def test_a_summary_counts_errors_and_warnings_and_the_files_they_are_in(tmp_path):
    copy_example(tmp_path)
    text = (EXAMPLES / "vector_add.argus").read_text()
    (tmp_path / "no_reference.argus").write_text(text.split("reference")[0])  # AR107, a warning
    (tmp_path / "shape.argus").write_text(text.split("reference")[0].replace("a + b", "a + arange(64)"))
    done = argus("check", str(tmp_path))
    assert done.returncode == 1
    errors = done.stdout.count(": error[")
    warnings = done.stdout.count(": warning[")
    assert errors >= 1 and warnings >= 2, done.stdout
    bad = len({line.split(":")[0] for line in done.stdout.splitlines()})
    plural = lambda n, word: f"{n} {word}" + ("" if n == 1 else "s")  # noqa: E731
    said = f"checked 3 files, 3 kernels: {plural(errors, 'error')}, {plural(warnings, 'warning')} in {bad} of 3 files\n"
    assert bad == 2 and done.stderr == said, (done.stdout, done.stderr)


def test_json_stays_alone_on_stdout_and_the_summary_goes_to_stderr(tmp_path):
    copy_example(tmp_path)
    done = argus("check", "--json", str(tmp_path))
    assert done.returncode == 0
    assert json.loads(done.stdout) == []
    assert done.stderr == "checked 1 file, 1 kernel: no problems\n"


@pytest.mark.parametrize("flag", ["--timeout-ms", "--rlimit"])
@pytest.mark.parametrize("value", ["-5", "0", "soon"])
def test_a_budget_that_is_not_a_positive_whole_number_is_a_usage_error(tmp_path, flag, value):
    kernel = copy_example(tmp_path)
    done = argus("check", flag, value, str(kernel))
    assert done.returncode == 2 and f"{flag}: a positive whole number, not {value!r}" in done.stderr


def test_a_small_budget_says_it_ran_out_instead_of_hinting_at_the_kernel():
    done = argus("check", "--rlimit", "100", str(EXAMPLES / "matmul.argus"), str(EXAMPLES / "layernorm.argus"))
    undecided = [line for line in done.stdout.splitlines() if "warning[AR312]" in line]
    assert undecided, done.stdout  # 100 z3 resource units are too few for these kernels' obligations
    budget = "the verifier ran out of its budget of 100 z3 resource units before deciding; raise --rlimit"
    for line in undecided:
        assert budget in line and "would prove it" not in line, line
    assert not re.search(r"requires .* would prove it", done.stdout)


def test_a_small_timeout_no_longer_decides_verdicts():
    """--timeout-ms is the wall-clock safety net, never shorter than the time the budget lasts at 500 units/ms
    (10 s by default): at 1 ms the examples are proved as they are with the defaults."""
    paths = [str(EXAMPLES / "matmul.argus"), str(EXAMPLES / "layernorm.argus")]
    done = argus("check", "--timeout-ms", "1", *paths)
    assert (done.returncode, done.stdout) == (0, ""), done.stdout
