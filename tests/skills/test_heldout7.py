"""The pre-registered held-out set skills/heldout7: naive kernels frozen before the change to the situation facts
the skill cards match on that adds a scope fact `registers`, the registers a thread of the kernel's sm_90 compile
in bands (under 128, 128 to 191, 192 or more, from the context's `registers`), so that a card measured only on
states with registers to spare claims no number on one already near the 255-register limit, where a bigger tile
spills (skills/heldout7/README.md; the sixth set, skills/heldout6, was run on 2026-12-06 and is spent), for
judging that change and whatever changes to the cards, the search and the matcher come after it. Five of the
eight have no tune list and no `policy` line at all; the three exact-fp32 GEMMs compile to one band each.
Nothing may be tuned on them, so this test keeps the set frozen (the files match skills/heldout7/SHA256SUMS,
written when the set was committed) and keeps it held out: each kernel checks and verifies with no diagnostic,
has a reference and a small and a large size set, and no held-out kernel is an expert, an example, a kernel of
skills/heldout to skills/heldout6, or named by a lineage record or a card.

The CPU gate of each (compile for sm_90, correct under the Triton interpreter) is not run here: it takes seconds
per kernel and is covered by `argus gate skills/heldout7/X.argus --device cpu --stage compile --stage correct`,
as skills/heldout7/README.md records, with the registers each compile reported (recorded below and asserted to
be in the README, not compiled again). What the skill matcher finds on these kernels, and the situation facts
it reads from them, are deliberately not asserted: they are what the change after registration changes, and
the held-out check measures it, not the other way round. The programs each grid launches at `large` are counted
here from the kernel's text alone (its `tile`, `grid` and `sizes` lines), not through argus.skills.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from heldout_sets import (
    assert_checks_and_verifies_clean,
    assert_held_out,
    assert_naive,
    assert_readme_lists,
    assert_reference_and_small_and_large_sizes,
    assert_unchanged_since_registered,
    dot_accumulators,
    has_tune_or_policy,
    programs_at_large,
)

ROOT = Path(__file__).resolve().parents[2]
HELDOUT7 = ROOT / "skills" / "heldout7"
OTHERS = [
    ROOT / "skills" / "experts",
    ROOT / "skills" / "heldout",
    ROOT / "skills" / "heldout2",
    ROOT / "skills" / "heldout3",
    ROOT / "skills" / "heldout4",
    ROOT / "skills" / "heldout5",
    ROOT / "skills" / "heldout6",
    ROOT / "examples",
]
SMS = 132  # the H200's streaming multiprocessors: one wave of one-program-an-SM

# kernel -> (dtype, shape class, transposed operand: "trans", "indices" or None, no tune list and no policy, dot
# accumulators, programs at large, registers a thread of the sm_90 compile at the declared configuration): the
# set as registered in skills/heldout7/README.md
REGISTERED = {
    "mlp_silu_bwd": ("f32", "gemm", None, True, 1, 8192, 96),
    "pca_transform": ("f32", "gemm", "trans", False, 1, 4096, 166),
    "reparam_head": ("f32", "gemm", "trans", True, 2, 2048, 255),
    "linear_attn_state": ("f16", "gemm", "indices", False, 1, 128, 66),
    "gaussian_nll": ("f32", "row", None, True, 0, 16384, 32),
    "dice_loss": ("f16", "row", None, True, 0, 64, 32),
    "rmsnorm_bwd": ("f16", "row", None, False, 0, 16384, 40),
    "layernorm_wgrad": ("f16", "row", None, True, 0, 64, 56),
}
PATHS = [HELDOUT7 / f"{name}.argus" for name in REGISTERED]


def kernel_code(text: str) -> str:
    """The kernel's own lines, comments dropped: from its `kernel` line to the first `reference`, `inputs` or
    `sizes` block."""
    code = re.split(r"^(?:reference|inputs|sizes) ", text, maxsplit=1, flags=re.MULTILINE)[0]
    return "\n".join(line.split("#")[0] for line in code.splitlines())


def band(registers: int) -> str:
    return "under 128" if registers < 128 else "128 to 191" if registers < 192 else "192 or more"


def test_the_folder_holds_exactly_the_registered_kernels():
    assert sorted(p.stem for p in HELDOUT7.glob("*.argus")) == sorted(REGISTERED)


def test_the_set_covers_both_dtypes_both_shape_classes_and_transposed_operands():
    facts = list(REGISTERED.values())
    assert len(facts) == 8
    assert sum(dtype == "f32" for dtype, *_ in facts) == 4
    assert sum(dtype == "f16" for dtype, *_ in facts) == 4
    assert sum(shape == "gemm" for _, shape, *_ in facts) == 4
    assert sum(shape == "row" for _, shape, *_ in facts) == 4
    assert {transposed for _, _, transposed, *_ in facts} >= {"trans", "indices"}
    assert any(dtype == "f32" and shape == "gemm" for dtype, shape, *_ in facts)


@pytest.mark.parametrize("path", PATHS, ids=lambda p: p.stem)
def test_the_transposed_operands_are_read_as_registered(path):
    """`trans` of a loaded block where registered so; a kernel registered with an operand read transposed by its
    indices loads a block with broadcast index tiles (`[None, :]` and `[:, None]`) and calls no `trans`."""
    code = kernel_code(path.read_text(encoding="utf-8"))
    transposed = REGISTERED[path.stem][2]
    assert ("trans(" in code) is (transposed == "trans")
    if transposed == "indices":
        assert re.search(r"load\(\w+\[[^\]]*\[None, :\][^\]]*\[:, None\]", code)


@pytest.mark.parametrize("path", PATHS, ids=lambda p: p.stem)
def test_the_kernels_registered_without_tune_lists_or_policies_have_none(path):
    bare = REGISTERED[path.stem][3]
    assert has_tune_or_policy(path.read_text(encoding="utf-8")) is not bare


def test_most_kernels_have_no_tune_list_and_no_policy():
    assert sum(bare for _, _, _, bare, *_ in REGISTERED.values()) >= 4


@pytest.mark.parametrize("path", PATHS, ids=lambda p: p.stem)
def test_the_kernels_keep_the_dot_accumulators_they_were_registered_with(path):
    assert dot_accumulators(path.read_text(encoding="utf-8")) == REGISTERED[path.stem][4]


@pytest.mark.parametrize("path", PATHS, ids=lambda p: p.stem)
def test_the_kernels_launch_the_programs_they_were_registered_with_at_large(path):
    assert programs_at_large(path.read_text(encoding="utf-8")) == REGISTERED[path.stem][5]


def test_the_registered_registers_fall_on_both_sides_of_128():
    """What the registers fact separates: kernels at 128 or more registers a thread and kernels under, the
    exact-fp32 GEMMs one in each band, and the GEMMs on both sides."""
    gemms = [(dtype, registers) for dtype, shape, *_, registers in REGISTERED.values() if shape == "gemm"]
    everything = [registers for *_, registers in REGISTERED.values()]
    assert sum(registers >= 128 for registers in everything) >= 2
    assert sum(registers < 128 for registers in everything) >= 2
    assert {band(registers) for dtype, registers in gemms if dtype == "f32"} == {
        "under 128",
        "128 to 191",
        "192 or more",
    }
    assert all(0 < registers <= 255 for registers in everything)


def test_the_readme_records_the_registers_of_each_compile():
    readme = (HELDOUT7 / "README.md").read_text(encoding="utf-8")
    for name, (*_, registers) in REGISTERED.items():
        assert re.search(rf"^\| {name} \| ✓ {registers} registers,", readme, re.MULTILINE), name


def test_grids_both_under_one_wave_and_over_many_waves_at_large():
    """The grid fact's two sides stay in the set: at least one row kernel and one GEMM under one wave, at least
    one of each with thousands of programs."""
    rows = [programs for _, shape, *_, programs, _ in REGISTERED.values() if shape == "row"]
    gemms = [programs for _, shape, *_, programs, _ in REGISTERED.values() if shape == "gemm"]
    assert any(programs < SMS for programs in rows)
    assert any(programs >= 1000 for programs in rows)
    assert any(programs < SMS for programs in gemms)
    assert any(programs >= 1000 for programs in gemms)


@pytest.mark.parametrize("path", PATHS, ids=lambda p: p.stem)
def test_the_kernels_are_naive(path):
    """No stages, no tma, no precision, no exp2, no grouped order, no requires dropping a mask, as registered (each
    word where a name starts, comments dropped)."""
    assert_naive(path)


def test_the_kernels_are_unchanged_since_they_were_registered():
    assert_unchanged_since_registered(HELDOUT7, PATHS)


def test_the_readme_lists_every_kernel():
    assert_readme_lists(HELDOUT7, REGISTERED)


@pytest.mark.parametrize("path", PATHS, ids=lambda p: p.stem)
def test_heldout7_kernel_checks_and_verifies_with_no_diagnostic(path):
    assert_checks_and_verifies_clean(path)


@pytest.mark.parametrize("path", PATHS, ids=lambda p: p.stem)
def test_heldout7_kernel_has_a_reference_and_small_and_large_sizes(path):
    assert_reference_and_small_and_large_sizes(path)


def test_no_heldout7_kernel_is_an_expert_an_example_or_in_a_lineage_or_a_card():
    assert_held_out(HELDOUT7, PATHS, OTHERS)
