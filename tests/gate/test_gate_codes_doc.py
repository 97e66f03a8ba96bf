"""docs/diagnostics.md's AR5xx examples, run through the gate on the CPU: each Wrong example reports its code
and each Right example passes the same stages. (`check` cannot produce these codes, so the DSL's doc test
leaves them to this one.)"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from argus.dsl.codes import CODES
from argus.gate import Status, run_gate

DOC = (Path(__file__).resolve().parents[2] / "docs" / "diagnostics.md").read_text(encoding="utf-8")
GATE_CODES = sorted(code for code in CODES if code.startswith("AR5"))
FENCE = re.compile(r"```argus\n(.*?)```", re.DOTALL)

# The stage each code's examples need, and the gate's settings for them (a short limit for the hang).
STAGES = {"AR501": ("compile",)}
OPTIONS = {"AR504": {"timeout_s": 15}}
# Text on the Argus line the error must point at (the others point at the kernel's header).
POINTS_AT = {
    "AR501": "arange(B)",
    "AR502": "store(z[i], a + b",
    "AR505": "load(x[i * 100000])",
    "AR507": "torch.softmax(x, dim=2)",
}


def example(code: str, label: str) -> str:
    section = DOC.split(f"\n## {code}: ", 1)[1].split("\n## ", 1)[0]
    return FENCE.search(section, section.index(f"**{label}**")).group(1)


def gate(code: str, label: str):
    options = {"timeout_s": 90, **OPTIONS.get(code, {})}
    return run_gate(example(code, label), device="cpu", stages=STAGES.get(code, ("correct",)), trials=1, **options)


def test_every_gate_code_has_a_section():
    assert [code for code in GATE_CODES if f"\n## {code}: {CODES[code].title}\n" not in DOC] == []


@pytest.mark.parametrize("code", GATE_CODES)
def test_wrong_example_reports_the_code(code):
    result = gate(code, "Wrong")
    assert code in [e.code for e in result.errors], result.errors
    assert not result.passed
    lines = example(code, "Wrong").splitlines()
    [error] = [e for e in result.errors if e.code == code]
    assert POINTS_AT.get(code, "kernel ") in lines[error.line - 1]


@pytest.mark.parametrize("code", GATE_CODES)
def test_right_example_passes(code):
    result = gate(code, "Right")
    assert result.passed, result.errors
    assert [s.status for s in result.stages.values() if s.status != Status.skipped] == [Status.passed]
