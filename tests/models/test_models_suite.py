"""The expressiveness suite examples/models/: at least 30 common PyTorch ops and fusions, one kernel a file (the file
named after its kernel), each with a `reference` and a `small` and a `large` size set, each checking and verifying
with no diagnostic at all, and each passing the gate's compile (sm_90, no GPU) and correct (the Triton interpreter
at `small`) stages on the CPU. examples/models/README.md lists the files and what could not be said ("Gaps").

The gate runs are the slow part (two child processes a file, each importing torch and Triton): they are started
two at a time from one session fixture, and each file's test reads its own result."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from argus.dsl.ast import PythonBlock, Sizes
from argus.dsl.check import check_source
from argus.gate import GateResult, Status, run_gate
from argus.verify import verify_check

ROOT = Path(__file__).resolve().parents[2]
MODELS = ROOT / "examples" / "models"
FILES = sorted(MODELS.glob("*.argus"))
GATE_RUNS_AT_ONCE = 2  # the CI machine's cores


def test_the_suite_has_at_least_30_files_and_the_readme_lists_each():
    assert len(FILES) >= 30
    readme = (MODELS / "README.md").read_text(encoding="utf-8")
    assert "## Gaps" in readme
    for path in FILES:
        assert f"`{path.name}`" in readme, path.name


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_a_file_checks_and_verifies_with_no_diagnostic(path):
    text = path.read_text(encoding="utf-8")
    checked = check_source(text)
    assert [d.text_line(path.name) for d in checked.diagnostics] == []
    assert [k.name for k in checked.module.kernels] == [path.stem]
    verified = verify_check(checked)
    assert [d.text_line(path.name) for d in verified.diagnostics] == []
    assert verified.stats.obligations == verified.stats.proved > 0


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_a_file_has_a_reference_a_one_line_header_and_small_and_large_sizes(path):
    text = path.read_text(encoding="utf-8")
    header, blank = text.splitlines()[:2]
    assert header.startswith("# ") and blank == ""  # one line naming the PyTorch expression it implements
    items = check_source(text).module.items
    assert [b.kind for b in items if isinstance(b, PythonBlock) and b.kind == "reference"] == ["reference"]
    (sizes,) = [s for s in items if isinstance(s, Sizes)]
    assert {"small", "large"} <= {s.name for s in sizes.sets}


def gate(path: Path) -> GateResult:
    source = path.read_text(encoding="utf-8")
    return run_gate(source, path=str(path), device="cpu", stages=("compile", "correct"), trials=1)


@pytest.fixture(scope="session")
def gate_results() -> dict[str, GateResult]:
    with ThreadPoolExecutor(GATE_RUNS_AT_ONCE) as pool:
        return dict(zip((p.stem for p in FILES), pool.map(gate, FILES), strict=True))


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_a_file_passes_compile_and_correct_on_the_cpu(path, gate_results):
    result = gate_results[path.stem]
    assert result.kernel == path.stem
    assert (result.compile.status, result.correct.status) == (Status.passed, Status.passed), result.errors
    assert result.errors == []
    assert result.compile.facts.target == "sm_90"
    assert result.correct.facts.interpreter and result.correct.facts.trials == 1
