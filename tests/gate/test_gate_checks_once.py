"""A gate run checks its text once, and not at all when the caller hands it the text's check (an editor's
snapshot, the agent's examined state, `argus gate`'s own): the issue counted four checks of one text a run."""

from __future__ import annotations

import pytest

import argus.gate.api as api
import argus.gate.bundle as bundle
from argus.dsl.check import check_source
from argus.gate import Status, run_gate, write_bundle

DOUBLE = """
kernel double(x: f32[N], y: out f32[N]):
    tile B = 256
    grid (cdiv(N, B),)
    i = program_id(0) * B + arange(B)
    store(y[i], load(x[i], mask=i < N, other=0) * 2, mask=i < N)

reference double(x):
    return x * 2

sizes double:
    small: N = 300
"""


@pytest.fixture
def checks(monkeypatch) -> list[str]:
    """The texts the gate's modules check, in order."""
    seen: list[str] = []

    def counting(text: str):
        seen.append(text)
        return check_source(text)

    monkeypatch.setattr(api, "check_source", counting)
    monkeypatch.setattr(bundle, "check_source", counting)
    return seen


def test_preparing_a_run_checks_the_text_once(checks, tmp_path):
    run_py = api.prepare(DOUBLE, None, None, "cpu", str(tmp_path))
    assert run_py == tmp_path / "bundle" / "run.py" and run_py.exists()
    assert checks == [DOUBLE]


def test_a_run_given_the_check_does_not_check_again(checks, tmp_path):
    given = check_source(DOUBLE)
    run_py = api.prepare(DOUBLE, None, "double", "cpu", str(tmp_path), given)
    assert run_py.exists()
    assert checks == []


def test_write_bundle_uses_the_check_it_is_given(checks, tmp_path):
    run_py = write_bundle(DOUBLE, tmp_path / "b", check=check_source(DOUBLE))
    assert (run_py.parent / "kernel.py").exists()
    assert checks == []


def test_a_given_check_with_errors_is_refused_like_the_text(checks):
    broken = DOUBLE.replace("* 2, mask", "* undefined_name, mask")
    result = run_gate(broken, device="cpu", stages=("compile",), check=check_source(broken))
    assert [e.code for e in result.errors] == ["AR101"]
    assert result.compile.status == Status.skipped
    assert checks == []
