"""The pre-registered held-out set skills/heldout6: naive kernels frozen before the change to the situation facts
the skill cards match on that adds a scope fact `grid`, whether a kernel's grid at its `large` sizes fills the
H200's 132 SMs ("under one wave" or "a wave or more", from the context's programs and waves), so that a card
measured on kernels with thousands of programs claims no number on one whose grid is already under a wave
(skills/heldout6/README.md; the fifth set, skills/heldout5, was run on 2026-12-02 and is spent), for judging that
change and whatever changes to the cards, the search and the matcher come after it. Five of the eight have no
tune list and no `policy` line at all; three row kernels and one GEMM launch under one wave of programs at
`large`. Nothing may be tuned on them, so this test keeps the set frozen (the files match
skills/heldout6/SHA256SUMS, written when the set was committed) and keeps it held out: each kernel checks and
verifies with no diagnostic, has a reference and a small and a large size set, and no held-out kernel is an
expert, an example, a kernel of skills/heldout, skills/heldout2, skills/heldout3, skills/heldout4 or
skills/heldout5, or named by a lineage record or a card.

The CPU gate of each (correct under the Triton interpreter) is not run here: it takes seconds per kernel and is
covered by `argus gate skills/heldout6/X.argus --device cpu --stage correct`, as skills/heldout6/README.md
records. What the skill matcher finds on these kernels, and the situation facts it reads from them (the grid
fact among them), are deliberately not asserted: they are what the change after registration changes, and the
held-out check measures it, not the other way round. The programs each grid launches at `large` are counted here
from the kernel's text alone (its `tile`, `grid` and `sizes` lines), not through argus.skills.
"""

from __future__ import annotations

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
HELDOUT6 = ROOT / "skills" / "heldout6"
OTHERS = [
    ROOT / "skills" / "experts",
    ROOT / "skills" / "heldout",
    ROOT / "skills" / "heldout2",
    ROOT / "skills" / "heldout3",
    ROOT / "skills" / "heldout4",
    ROOT / "skills" / "heldout5",
    ROOT / "examples",
]
SMS = 132  # the H200's streaming multiprocessors: one wave of one-program-an-SM

# kernel -> (dtype, shape class, transposed operand, no tune list and no policy, dot accumulators, programs at
# large): the set as registered in skills/heldout6/README.md
REGISTERED = {
    "pairwise_sqdist": ("f32", "gemm", True, True, 1, 16384),
    "decode_linear": ("f16", "gemm", True, False, 1, 64),
    "pruned_linear": ("f16", "gemm", False, False, 1, 8192),
    "lora_merge": ("f32", "gemm", False, True, 1, 16384),
    "groupnorm_stats": ("f16", "row", False, True, 0, 64),
    "dp_clip_factor": ("f32", "row", False, True, 0, 64),
    "weighted_pool": ("f16", "row", False, True, 0, 64),
    "row_entropy": ("f32", "row", False, False, 0, 32768),
}
PATHS = [HELDOUT6 / f"{name}.argus" for name in REGISTERED]


def test_the_folder_holds_exactly_the_registered_kernels():
    assert sorted(p.stem for p in HELDOUT6.glob("*.argus")) == sorted(REGISTERED)


def test_the_set_covers_both_dtypes_both_shape_classes_and_transposed_operands():
    facts = list(REGISTERED.values())
    assert len(facts) >= 8
    assert {dtype for dtype, *_ in facts} == {"f16", "f32"}
    assert {shape for _, shape, *_ in facts} == {"gemm", "row"}
    assert sum(shape == "gemm" for _, shape, *_ in facts) >= 3
    assert sum(shape == "row" for _, shape, *_ in facts) >= 3
    assert sum(transposed for _, _, transposed, *_ in facts) >= 1
    assert any(dtype == "f32" and shape == "gemm" for dtype, shape, *_ in facts)


@pytest.mark.parametrize("path", PATHS, ids=lambda p: p.stem)
def test_the_kernels_registered_without_tune_lists_or_policies_have_none(path):
    bare = REGISTERED[path.stem][3]
    assert has_tune_or_policy(path.read_text(encoding="utf-8")) is not bare


def test_most_kernels_have_no_tune_list_and_no_policy():
    assert sum(bare for _, _, _, bare, _, _ in REGISTERED.values()) >= 5


@pytest.mark.parametrize("path", PATHS, ids=lambda p: p.stem)
def test_the_kernels_keep_the_dot_accumulators_they_were_registered_with(path):
    assert dot_accumulators(path.read_text(encoding="utf-8")) == REGISTERED[path.stem][4]


@pytest.mark.parametrize("path", PATHS, ids=lambda p: p.stem)
def test_the_kernels_launch_the_programs_they_were_registered_with_at_large(path):
    assert programs_at_large(path.read_text(encoding="utf-8")) == REGISTERED[path.stem][5]


def test_row_kernels_both_under_one_wave_and_over_many_waves_at_large():
    """What the grid fact separates: at least two row kernels under one wave, at least one with thousands of
    programs; and a GEMM on each side."""
    rows = [programs for _, shape, *_, programs in REGISTERED.values() if shape == "row"]
    gemms = [programs for _, shape, *_, programs in REGISTERED.values() if shape == "gemm"]
    assert sum(programs < SMS for programs in rows) >= 2
    assert any(programs >= 1000 for programs in rows)
    assert any(programs < SMS for programs in gemms)
    assert any(programs >= 1000 for programs in gemms)


@pytest.mark.parametrize("path", PATHS, ids=lambda p: p.stem)
def test_the_kernels_are_naive(path):
    """No stages, no tma, no precision, no exp2, no grouped order, no requires dropping a mask, as registered (each
    word where a name starts: `row_entropy`'s reference calls `log_softmax`)."""
    assert_naive(path)


def test_the_kernels_are_unchanged_since_they_were_registered():
    assert_unchanged_since_registered(HELDOUT6, PATHS)


def test_the_readme_lists_every_kernel():
    assert_readme_lists(HELDOUT6, REGISTERED)


@pytest.mark.parametrize("path", PATHS, ids=lambda p: p.stem)
def test_heldout6_kernel_checks_and_verifies_with_no_diagnostic(path):
    assert_checks_and_verifies_clean(path)


@pytest.mark.parametrize("path", PATHS, ids=lambda p: p.stem)
def test_heldout6_kernel_has_a_reference_and_small_and_large_sizes(path):
    assert_reference_and_small_and_large_sizes(path)


def test_no_heldout6_kernel_is_an_expert_an_example_or_in_a_lineage_or_a_card():
    assert_held_out(HELDOUT6, PATHS, OTHERS)
