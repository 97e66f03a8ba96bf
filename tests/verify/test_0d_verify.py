"""The verifier on 0-d tensors: the one element is in bounds by construction; two programs storing it race (AR302)
unless they add atomically; one program storing it covers it."""

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


LOSS = """\
kernel loss(x: f32[N], s: f32[], total: out f32[]):
    tile BN = 128
    grid (GRID,)
    offs = program_id(0) * BN + arange(BN)
    v = load(x[offs], mask=offs < N, other=0) * load(s)
    WRITE(total, sum(v, axis=0))
"""


def loss(write: str, grid: str = "cdiv(N, BN)") -> str:
    return LOSS.replace("WRITE", write).replace("GRID", grid)


def test_programs_storing_one_0d_output_race():
    found = verified(loss("store")).diagnostics
    assert [d.code for d in found] == ["AR302"]
    assert "two programs write the same element of `total`" in found[0].message


def test_programs_adding_into_one_0d_output_atomically_do_not_race_and_cover_it():
    result = verified(loss("atomic_add"))
    assert result.diagnostics == []
    assert result.stats.obligations == result.stats.proved > 0


def test_one_program_storing_a_0d_output_is_proved_and_covers_it():
    text = loss("store", grid="1").replace("tile BN = 128", "tile BN = 128\n    requires N <= BN")
    assert verdicts(text) == []


def test_a_0d_output_nothing_stores_under_a_false_branch_is_not_covered():
    text = LOSS.replace("GRID", "1").replace("WRITE(total, sum(v, axis=0))", "if N < 0:\n        store(total, 1.0)")
    assert verdicts(text) == ["AR304"]
