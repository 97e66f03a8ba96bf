"""The pre-registered held-out set skills/heldout4: naive kernels frozen before the skill matcher covers kernels
without tune lists or policies (the third set, skills/heldout3, was run on 2026-12-02 and is spent), for judging
the cards, the search and the matcher as they stood at registration and that change after it. Five of the eight
have no tune list and no `policy` line at all. Nothing may be tuned on them, so this test keeps the set frozen
(the files match skills/heldout4/SHA256SUMS, written when the set was committed) and keeps it held out: each
kernel checks and verifies with no diagnostic, has a reference and a small and a large size set, and no
held-out kernel is an expert, an example, a kernel of skills/heldout, skills/heldout2 or skills/heldout3, or
named by a lineage record or a card.

The CPU gate of each (compile for sm_90 + correct under the Triton interpreter) is not run here: it takes seconds
to about a minute per kernel and is covered by `argus gate skills/heldout4/X.argus`, as skills/heldout4/README.md
records. What the skill matcher finds on these kernels is deliberately not asserted: the matcher is what the
change after registration changes, and the held-out check measures it, not the other way round.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from heldout_sets import (
    assert_checks_and_verifies_clean,
    assert_held_out,
    assert_readme_lists,
    assert_reference_and_small_and_large_sizes,
    assert_unchanged_since_registered,
    has_tune_or_policy,
)

ROOT = Path(__file__).resolve().parents[2]
HELDOUT4 = ROOT / "skills" / "heldout4"
OTHERS = [
    ROOT / "skills" / "experts",
    ROOT / "skills" / "heldout",
    ROOT / "skills" / "heldout2",
    ROOT / "skills" / "heldout3",
    ROOT / "skills" / "heldout5",
    ROOT / "skills" / "heldout6",
    ROOT / "examples",
]

# kernel -> (dtype, shape class, transposed operand, no tune list and no policy): the set as registered in
# skills/heldout4/README.md
REGISTERED = {
    "layerscale_residual_gemm": ("f16", "gemm", False, True),
    "geglu_erf_gemm": ("f32", "gemm", False, True),
    "weightnorm_linear": ("f32", "gemm", True, False),
    "dequant_linear_i8": ("f16", "gemm", True, False),
    "rope_halves": ("f16", "row", False, True),
    "alibi_softmax": ("f32", "row", False, False),
    "masked_mean_pool": ("f16", "row", False, True),
    "row_zscore_clip": ("f32", "row", False, True),
}
PATHS = [HELDOUT4 / f"{name}.argus" for name in REGISTERED]


def test_the_folder_holds_exactly_the_registered_kernels():
    assert sorted(p.stem for p in HELDOUT4.glob("*.argus")) == sorted(REGISTERED)


def test_the_set_covers_both_dtypes_both_shape_classes_and_transposed_operands():
    facts = list(REGISTERED.values())
    assert len(facts) >= 8
    assert {dtype for dtype, _, _, _ in facts} == {"f16", "f32"}
    assert {shape for _, shape, _, _ in facts} == {"gemm", "row"}
    assert sum(transposed for _, _, transposed, _ in facts) >= 2


@pytest.mark.parametrize("path", PATHS, ids=lambda p: p.stem)
def test_the_kernels_registered_without_tune_lists_or_policies_have_none(path):
    bare = REGISTERED[path.stem][3]
    assert has_tune_or_policy(path.read_text(encoding="utf-8")) is not bare


def test_most_kernels_have_no_tune_list_and_no_policy():
    assert sum(bare for _, _, _, bare in REGISTERED.values()) >= 5


def test_the_kernels_are_unchanged_since_they_were_registered():
    assert_unchanged_since_registered(HELDOUT4, PATHS)


def test_the_readme_lists_every_kernel():
    assert_readme_lists(HELDOUT4, REGISTERED)


@pytest.mark.parametrize("path", PATHS, ids=lambda p: p.stem)
def test_heldout4_kernel_checks_and_verifies_with_no_diagnostic(path):
    assert_checks_and_verifies_clean(path)


@pytest.mark.parametrize("path", PATHS, ids=lambda p: p.stem)
def test_heldout4_kernel_has_a_reference_and_small_and_large_sizes(path):
    assert_reference_and_small_and_large_sizes(path)


def test_no_heldout4_kernel_is_an_expert_an_example_or_in_a_lineage_or_a_card():
    assert_held_out(HELDOUT4, PATHS, OTHERS)
