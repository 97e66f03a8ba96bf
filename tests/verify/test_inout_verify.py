"""The verifier on in/out tensors: an in/out tensor is both read and written, so its loads are bounds-checked, its
stores race-checked, and a load of an element another program stores is a read/write race (AR303, the obligation
every tensor that is both read and written gets); it need not be written everywhere (elements left alone keep
their input value), so it has no coverage claim (AR304)."""

from __future__ import annotations

from argus.dsl.check import check_source
from argus.verify import verify_check


def verdicts(text: str) -> list[str]:
    """The codes of the verifier's diagnostics (AR312 for an unknown), in order."""
    check = check_source(text)
    assert not check.has_errors, [d.message for d in check.diagnostics if d.severity.value == "error"]
    return [d.code for d in verify_check(check).diagnostics]


def verified(text: str):
    check = check_source(text)
    assert not check.has_errors
    return verify_check(check)


STEP = """\
kernel step(x: inout f32[N], g: f32[N]):
    tile BN = 128
    grid (GRID,)
    offs = program_id(0) * BN + arange(BN)
    v = load(x[READ], mask=READ < N, other=0)
    store(x[offs], v - load(g[offs], mask=offs < N, other=0), mask=offs < N)
"""


def step(read: str = "offs", grid: str = "cdiv(N, BN)") -> str:
    return STEP.replace("READ", read).replace("GRID", grid)


def test_an_inout_update_of_the_elements_a_program_reads_is_proved():
    result = verified(step())
    assert result.diagnostics == []
    assert result.stats.obligations == result.stats.proved > 0


def test_an_inout_load_of_an_element_another_program_stores_is_a_read_write_race():
    found = verified(step(read="offs + 1")).diagnostics
    assert [d.code for d in found] == ["AR303"]
    record = found[0].data["counterexample"]
    assert record["second"] is not None  # both accesses: the load here, the other program's store
    assert "a program reads an element of `x` that another program writes" in found[0].message


def test_an_inout_store_out_of_bounds_is_ar301():
    text = step().replace("store(x[offs]", "store(x[offs + 1]")
    assert "AR301" in verdicts(text)


def test_an_inout_tensor_need_not_be_written_everywhere_but_an_out_tensor_must():
    half = step(grid="cdiv(N, 2 * BN)")
    assert verdicts(half) == []
    out = half.replace("x: inout f32[N]", "x: out f32[N]")
    assert verdicts(out) == ["AR304"]
