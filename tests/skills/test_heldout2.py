"""The pre-registered held-out set skills/heldout2 (issue 15, part 5): naive kernels frozen before any card or
search change, for the check of context-aware skills. Nothing may be tuned on them, so this test keeps the set
frozen (the files match skills/heldout2/SHA256SUMS, written when the set was committed) and keeps it held out:
each kernel checks and verifies with no diagnostic, has a reference and a small and a large size set, and no
held-out kernel is an expert, an example, a kernel of skills/heldout, or named by a lineage record or a card.

The CPU gate of each (compile for sm_90 + correct under the Triton interpreter) is not run here: it takes seconds
to tens of seconds per kernel and is covered by `argus gate skills/heldout2/X.argus`, as skills/heldout2/README.md
records. What the skill matcher finds on these kernels is deliberately not asserted: the cards are what issue 15
changes, and the held-out check measures them, not the other way round.
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
)

ROOT = Path(__file__).resolve().parents[2]
HELDOUT2 = ROOT / "skills" / "heldout2"
OTHERS = [ROOT / "skills" / "experts", ROOT / "skills" / "heldout", ROOT / "examples"]

# kernel -> (dtype, shape class, transposed operand): the set as registered in skills/heldout2/README.md
REGISTERED = {
    "scaled_linear": ("f32", "gemm", True),
    "gemm_bias_relu2": ("f32", "gemm", False),
    "linear_wgrad": ("f16", "gemm", True),
    "gemm_residual": ("f16", "gemm", False),
    "batched_similarity": ("f32", "gemm", True),
    "l2norm_gain": ("f32", "row", False),
    "softmax_temp": ("f16", "row", False),
    "embedding_bag": ("f32", "row", False),
    "swiglu": ("f16", "row", False),
    "bias_grad": ("f32", "row", False),
}
PATHS = [HELDOUT2 / f"{name}.argus" for name in REGISTERED]


def test_the_folder_holds_exactly_the_registered_kernels():
    assert sorted(p.stem for p in HELDOUT2.glob("*.argus")) == sorted(REGISTERED)


def test_the_set_covers_both_dtypes_both_shape_classes_and_transposed_operands():
    facts = list(REGISTERED.values())
    assert len(facts) >= 8
    assert {dtype for dtype, _, _ in facts} == {"f16", "f32"}
    assert {shape for _, shape, _ in facts} == {"gemm", "row"}
    assert sum(transposed for _, _, transposed in facts) >= 2


def test_the_kernels_are_unchanged_since_they_were_registered():
    assert_unchanged_since_registered(HELDOUT2, PATHS)


def test_the_readme_lists_every_kernel():
    assert_readme_lists(HELDOUT2, REGISTERED)


@pytest.mark.parametrize("path", PATHS, ids=lambda p: p.stem)
def test_heldout2_kernel_checks_and_verifies_with_no_diagnostic(path):
    assert_checks_and_verifies_clean(path)


@pytest.mark.parametrize("path", PATHS, ids=lambda p: p.stem)
def test_heldout2_kernel_has_a_reference_and_small_and_large_sizes(path):
    assert_reference_and_small_and_large_sizes(path)


def test_no_heldout2_kernel_is_an_expert_an_example_or_in_a_lineage_or_a_card():
    assert_held_out(HELDOUT2, PATHS, OTHERS)
