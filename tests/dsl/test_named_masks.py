"""A per-axis mask tuple bound to a name (issue 20 item 3): `mask = (rm < M, rn < N)` and then `load(x[rm, rn],
mask=mask, other=0)`. The name holds the tuple's entries; a load, store or atomic_add that takes it builds the
same mask it would from the tuple written in place, so the verifier sees exactly the same thing."""

from __future__ import annotations

from textwrap import dedent

import pytest

from argus.dsl.check import check_source
from argus.verify import verify_check

QUIET = {"AR107", "AR108", "AR408"}  # no reference, no sizes; an output some bodies here leave alone
KERNEL = """\
kernel k(x: f32[M, N], y: out f32[M, N], s: out f32[M]):
    tile BM = 16, BN = 32
    grid (cdiv(M, BM), cdiv(N, BN))
    rm = program_id(0) * BM + arange(BM)
    rn = program_id(1) * BN + arange(BN)
{body}
"""


def check(body: str):
    result = check_source(KERNEL.format(body=dedent(body).strip("\n").replace("\n", "\n    ").join(["    ", ""])))
    return result, [d for d in result.diagnostics if d.code not in QUIET]


def messages(body: str) -> list[tuple[str, str]]:
    return [(d.code, d.message) for d in check(body)[1]]


def test_a_named_mask_checks_clean_and_has_the_tuple_type():
    result, diagnostics = check("""
mask = (rm < M, rn < N)
v = load(x[rm, rn], mask=mask, other=0)
store(y[rm, rn], v, mask=mask)
""")
    assert diagnostics == []
    types = [s.type for s in result.analysis.symbols if s.name == "mask"]
    assert types and set(types) == {"(bool[BM], bool[BN])"}


def verdicts(body: str) -> list[tuple[str, dict, dict]]:
    result, diagnostics = check(body)
    assert diagnostics == [], diagnostics
    found = verify_check(result).diagnostics
    return [(d.code, d.data["counterexample"]["element"], d.data["counterexample"]["sizes"]) for d in found]


@pytest.mark.parametrize(
    ("entries", "wrong"),
    [
        ("rm < M, rn < N", False),
        ("rm < M, rn < M", True),
        ("rm < M, None", True),
        ("None, rn < N", True),
        ("rm < N, rn < N", True),
        ("rm <= M, rn < N", True),
    ],
)
def test_the_verifier_sees_what_it_sees_with_the_tuple_written_in_place(entries, wrong):
    inline = verdicts(f"""
v = load(x[rm, rn], mask=({entries}), other=0)
store(y[rm, rn], v, mask=({entries}))
atomic_add(s[rm], sum(v, axis=1), mask=({entries.split(",")[0]},))
""")
    named = verdicts(f"""
mask = ({entries})
rows = ({entries.split(",")[0]},)
v = load(x[rm, rn], mask=mask, other=0)
store(y[rm, rn], v, mask=mask)
atomic_add(s[rm], sum(v, axis=1), mask=rows)
""")
    assert named == inline
    assert bool(inline) == wrong  # the same witnesses (element, sizes), where there is a bug to find


def test_a_named_mask_with_a_wrong_number_of_entries_is_ar203_at_the_name():
    _, diagnostics = check("""
mask = (rm < M, rn < N, rn < N)
v = load(x[rm, rn], mask=mask, other=0)
store(y[rm, rn], v, mask=(rm < M, rn < N))
""")
    (found,) = diagnostics
    assert found.code == "AR203"
    assert found.message == "`mask`: the access is [BM, BN]: a mask tuple has one entry per axis, 2 here, not 3"
    assert found.range.start.line == 6  # the load's line, where the name is read


def test_a_named_mask_entry_that_does_not_fit_its_axis_is_ar203():
    found = messages("""
mask = (rn < N, rm < M)
store(y[rm, rn], zeros((BM, BN), f32), mask=mask)
""")
    assert found == [("AR203", "`mask`: mask entry 0 is [BN] but axis 0 of the access has BM elements")]


def test_a_tuple_that_is_not_a_mask_still_cannot_be_named():
    found = messages("""
t = (rm, rn)
store(y[rm, rn], zeros((BM, BN), f32), mask=(rm < M, rn < N))
""")
    assert [code for code, _ in found] == ["AR216"]
    assert "unless it is a per-axis mask" in found[0][1]


def test_a_named_mask_is_no_value_for_arithmetic():
    found = messages("""
mask = (rm < M, rn < N)
store(y[rm, rn], where(mask, 1.0, 0.0), mask=mask)
""")
    assert [code for code, _ in found] == ["AR216"]
    assert "only mask= of load, store and atomic_add takes" in found[0][1]


def test_a_named_mask_unpacks():
    assert (
        messages("""
mask = (rm < M, rn < N)
a, b = mask
store(y[rm, rn], zeros((BM, BN), f32), mask=a[:, None] & b[None, :])
""")
        == []
    )


def test_a_mask_named_inside_a_loop_is_used_there():
    assert (
        messages("""
acc = zeros((BM,), f32)
for k in range(0, N, BN):
    cols = k + arange(BN)
    inside = (rm < M, cols < N)
    acc += sum(load(x[rm, cols], mask=inside, other=0), axis=1)
store(s[rm], acc, mask=rm < M)
""")
        == []
    )


def test_a_mask_named_before_a_loop_cannot_change_in_it():
    found = messages("""
mask = (rm < M, rn < N)
for k in range(0, N, BN):
    mask = (rm < M, k + rn < N)
    store(y[rm, rn], zeros((BM, BN), f32), mask=mask)
""")
    assert [code for code, _ in found] == ["AR216"]
    assert "cannot change from one iteration to the next" in found[0][1]


def test_a_mask_named_on_a_branch_is_not_merged_after_it():
    found = messages("""
if M > 8:
    mask = (rm < M, rn < N)
    store(y[rm, rn], zeros((BM, BN), f32), mask=mask)
else:
    mask = (rm < M, None)
store(y[rm, rn], zeros((BM, BN), f32), mask=mask)
""")
    assert [code for code, _ in found] == ["AR110"]
    assert "name it before the `if`" in found[0][1]
