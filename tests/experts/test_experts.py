"""The expert kernels of skills/experts: every one checks clean (no error, no warning, every proof obligation
proved), runs under the Triton interpreter at its `small` sizes and matches its PyTorch reference, and
compiles for sm_90 without a GPU. The H200 numbers come from bench/h200.py (docs/perf.md)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from argus.dsl.check import check_source
from argus.verify import verify_check

ROOT = Path(__file__).resolve().parents[2]
EXPERTS = sorted((ROOT / "skills" / "experts").glob("*.argus"))
HARNESS = ROOT / "tests" / "codegen" / "harness.py"
KERNELS = {"gemm", "gemm_plain", "attention", "attention_causal", "softmax", "layernorm", "grouped_gemm"}
# fp32_gemm.argus: the f32 GEMMs at each input precision and operand layout, and a Linear with a transposed W
KERNELS |= {"gemm_tf32x3", "gemm_tf32x3_kmajor", "gemm_exact", "gemm_tf32", "linear_gelu_t"}
# rows_wide.argus: row reductions over rows wider than a tile; attention64.argus: attention at head dim 64
KERNELS |= {"logsumexp_wide", "cross_entropy", "attention64"}
# gemm_persistent.argus: the epilogue GEMM and the plain one as persistent tile walks (issue 18)
KERNELS |= {"gemm_persistent", "gemm_plain_persistent"}
# attention_causal_lpt.argus: causal attention launched longest first within groups of heads (issue 18)
KERNELS |= {"attention_causal_lpt"}
# grouped_gemm_exact.argus: the grouped GEMM with exact per-expert tiles (issue 18, item 4)
KERNELS |= {"grouped_gemm_exact"}
ROW_KERNELS = {"softmax", "layernorm", "logsumexp_wide", "cross_entropy"}  # no dot


def harness(mode: str, *extra: str) -> list[dict]:
    """tests/codegen/harness.py in a fresh process (TRITON_INTERPRET must be set before triton loads)."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT / "server"), str(HARNESS.parent)]))
    env.setdefault("TRITON_DEFAULT_FP_FUSION", "1")
    command = [sys.executable, str(HARNESS), mode, *map(str, EXPERTS), *extra]
    done = subprocess.run(command, capture_output=True, text=True, timeout=900, cwd=ROOT, env=env)
    assert done.returncode == 0, done.stderr[-4000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_the_five_workloads_are_all_there_and_a_plain_gemm():
    names = {name for path in EXPERTS for name in check_source(path.read_text()).analysis.kernels}
    assert names == KERNELS


@pytest.mark.parametrize("path", EXPERTS, ids=lambda p: p.stem)
def test_expert_checks_clean_and_every_obligation_is_proved(path):
    check = check_source(path.read_text())
    assert [d.message for d in check.diagnostics] == []
    result = verify_check(check, timeout_ms=5000)
    assert [d.text_line(path.name) for d in result.diagnostics] == []
    assert result.stats.obligations == result.stats.proved > 0


@pytest.fixture(scope="module")
def interpreted():
    return harness("interpret")


@pytest.mark.parametrize("path", EXPERTS, ids=lambda p: p.stem)
def test_expert_matches_its_reference_under_the_interpreter(interpreted, path):
    records = [r for r in interpreted if r["file"] == path.name]
    assert records, f"nothing of {path.name} ran"
    for record in records:
        assert record["nan"] == 0, f"{record['kernel']} left {record['nan']} elements unwritten"
        assert record["close"], record


@pytest.fixture(scope="module")
def through_pointers():
    """The same runs with `tma=0`: every access through pointers, whatever the file's default."""
    return harness("interpret", "--override", "tma=0")


@pytest.mark.parametrize("path", EXPERTS, ids=lambda p: p.stem)
def test_expert_matches_its_reference_through_pointers(through_pointers, path):
    records = [r for r in through_pointers if r["file"] == path.name]
    assert records, f"nothing of {path.name} ran"
    for record in records:
        assert record["nan"] == 0 and record["close"], record


@pytest.fixture(scope="module")
def through_tma():
    """The same runs with `tma=1`: block accesses go through tensor descriptors (the interpreter runs them)."""
    return harness("interpret", "--override", "tma=1")


@pytest.mark.parametrize("path", EXPERTS, ids=lambda p: p.stem)
def test_expert_matches_its_reference_through_tma_descriptors(through_tma, path):
    records = [r for r in through_tma if r["file"] == path.name]
    assert records, f"nothing of {path.name} ran"
    for record in records:
        if "tma" in record["overrides"]:
            assert record["nan"] == 0 and record["close"], record


def test_the_matrix_kernels_have_a_tma_form(through_tma):
    with_tma = {r["kernel"] for r in through_tma if r["overrides"].get("tma") == 1}
    fp32 = {"gemm_tf32x3", "gemm_exact", "linear_gelu_t"}  # the ones without a `layout`, which TMA cannot use
    matrix = {"gemm", "gemm_plain", "gemm_persistent", "gemm_plain_persistent", "attention", "attention_causal"}
    matrix |= {"attention64", "attention_causal_lpt", "grouped_gemm", "grouped_gemm_exact"}
    assert with_tma == matrix | fp32


@pytest.fixture(scope="module")
def compiled():
    return harness("compile")


@pytest.mark.parametrize("path", EXPERTS, ids=lambda p: p.stem)
def test_expert_compiles_for_sm90(compiled, path):
    records = [r for r in compiled if r["file"] == path.name]
    assert records, f"nothing of {path.name} compiled"
    for record in records:
        assert record["ptx_target"], record
        assert record["shared"] <= 232448, record  # the H200's shared memory per block
        assert record["uses_dot"] == (record["kernel"] not in ROW_KERNELS), record
