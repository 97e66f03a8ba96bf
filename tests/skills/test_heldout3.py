"""The pre-registered held-out set skills/heldout3: naive kernels frozen before any further card or search
change (the second set, skills/heldout2, was run on 2026-12-01 and is spent), for judging the cards and the
search as they stood at registration and any later change. Nothing may be tuned on them, so this test keeps the
set frozen (the files match skills/heldout3/SHA256SUMS, written when the set was committed) and keeps it held
out: each kernel checks and verifies with no diagnostic, has a reference and a small and a large size set, and
no held-out kernel is an expert, an example, a kernel of skills/heldout or skills/heldout2, or named by a
lineage record or a card.

The CPU gate of each (compile for sm_90 + correct under the Triton interpreter) is not run here: it takes seconds
to about a minute per kernel and is covered by `argus gate skills/heldout3/X.argus`, as skills/heldout3/README.md
records. What the skill matcher finds on these kernels is deliberately not asserted: the cards are what later
changes change, and the held-out check measures them, not the other way round.
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
HELDOUT3 = ROOT / "skills" / "heldout3"
OTHERS = [
    ROOT / "skills" / "experts",
    ROOT / "skills" / "heldout",
    ROOT / "skills" / "heldout2",
    ROOT / "skills" / "heldout4",
    ROOT / "skills" / "heldout5",
    ROOT / "skills" / "heldout6",
    ROOT / "examples",
]

# kernel -> (dtype, shape class, transposed operand): the set as registered in skills/heldout3/README.md
REGISTERED = {
    "gemm_bias_sigmoid": ("f32", "gemm", False),
    "row_scaled_gemm": ("f16", "gemm", False),
    "linear_f16_wt": ("f16", "gemm", True),
    "feature_gram": ("f32", "gemm", True),
    "rowwise_absmax_scale": ("f32", "row", False),
    "causal_row_softmax": ("f16", "row", False),
    "gelu_tanh": ("f16", "row", False),
    "row_gather_scale": ("f32", "row", False),
    "column_mean": ("f16", "row", False),
}
PATHS = [HELDOUT3 / f"{name}.argus" for name in REGISTERED]


def test_the_folder_holds_exactly_the_registered_kernels():
    assert sorted(p.stem for p in HELDOUT3.glob("*.argus")) == sorted(REGISTERED)


def test_the_set_covers_both_dtypes_both_shape_classes_and_transposed_operands():
    facts = list(REGISTERED.values())
    assert len(facts) >= 8
    assert {dtype for dtype, _, _ in facts} == {"f16", "f32"}
    assert {shape for _, shape, _ in facts} == {"gemm", "row"}
    assert sum(transposed for _, _, transposed in facts) >= 2


def test_the_kernels_are_unchanged_since_they_were_registered():
    assert_unchanged_since_registered(HELDOUT3, PATHS)


def test_the_readme_lists_every_kernel():
    assert_readme_lists(HELDOUT3, REGISTERED)


@pytest.mark.parametrize("path", PATHS, ids=lambda p: p.stem)
def test_heldout3_kernel_checks_and_verifies_with_no_diagnostic(path):
    assert_checks_and_verifies_clean(path)


@pytest.mark.parametrize("path", PATHS, ids=lambda p: p.stem)
def test_heldout3_kernel_has_a_reference_and_small_and_large_sizes(path):
    assert_reference_and_small_and_large_sizes(path)


def test_no_heldout3_kernel_is_an_expert_an_example_or_in_a_lineage_or_a_card():
    assert_held_out(HELDOUT3, PATHS, OTHERS)
