"""The pre-registered held-out set skills/heldout5: naive kernels frozen before the change to the situation facts
the skill cards match on (the accumulator registers of a kernel with several dot accumulators summed over them;
the spill counting announced with it was not changed, skills/heldout5/README.md; the fourth set,
skills/heldout4, was run on 2026-12-02 and is spent), for judging that change and whatever changes to the cards,
the search and the matcher come after it. Five of the eight have no tune list and no `policy` line at all; two
GEMMs keep two dot accumulators. Nothing may be tuned on them, so this test keeps the set frozen (the files match
skills/heldout5/SHA256SUMS, written when the set was committed) and keeps it held out: each kernel checks and
verifies with no diagnostic, has a reference and a small and a large size set, and no held-out kernel is an
expert, an example, a kernel of skills/heldout, skills/heldout2, skills/heldout3 or skills/heldout4, or named by
a lineage record or a card.

The CPU gate of each (compile for sm_90 + correct under the Triton interpreter) is not run here: it takes seconds
to a minute per kernel and is covered by `argus gate skills/heldout5/X.argus`, as skills/heldout5/README.md
records. What the skill matcher finds on these kernels, and the situation facts it reads from them, are
deliberately not asserted: they are what the change after registration changes, and the held-out check
measures it, not the other way round.
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
    dot_accumulators,
    has_tune_or_policy,
)

ROOT = Path(__file__).resolve().parents[2]
HELDOUT5 = ROOT / "skills" / "heldout5"
OTHERS = [
    ROOT / "skills" / "experts",
    ROOT / "skills" / "heldout",
    ROOT / "skills" / "heldout2",
    ROOT / "skills" / "heldout3",
    ROOT / "skills" / "heldout4",
    ROOT / "skills" / "heldout6",
    ROOT / "examples",
]

# kernel -> (dtype, shape class, transposed operand, no tune list and no policy, dot accumulators): the set as
# registered in skills/heldout5/README.md
REGISTERED = {
    "complex_gemm": ("f32", "gemm", False, True, 2),
    "highway_gemm": ("f16", "gemm", False, True, 2),
    "linear_softplus": ("f32", "gemm", True, False, 1),
    "softcap_logits": ("f16", "gemm", True, False, 1),
    "gated_rmsnorm": ("f16", "row", False, True, 0),
    "huber_loss": ("f32", "row", False, True, 0),
    "row_cosine_similarity": ("f32", "row", False, False, 0),
    "channel_absmax": ("f16", "row", False, True, 0),
}
PATHS = [HELDOUT5 / f"{name}.argus" for name in REGISTERED]


def test_the_folder_holds_exactly_the_registered_kernels():
    assert sorted(p.stem for p in HELDOUT5.glob("*.argus")) == sorted(REGISTERED)


def test_the_set_covers_both_dtypes_both_shape_classes_and_transposed_operands():
    facts = list(REGISTERED.values())
    assert len(facts) >= 8
    assert {dtype for dtype, _, _, _, _ in facts} == {"f16", "f32"}
    assert {shape for _, shape, _, _, _ in facts} == {"gemm", "row"}
    assert sum(transposed for _, _, transposed, _, _ in facts) >= 2


@pytest.mark.parametrize("path", PATHS, ids=lambda p: p.stem)
def test_the_kernels_registered_without_tune_lists_or_policies_have_none(path):
    bare = REGISTERED[path.stem][3]
    assert has_tune_or_policy(path.read_text(encoding="utf-8")) is not bare


def test_most_kernels_have_no_tune_list_and_no_policy():
    assert sum(bare for _, _, _, bare, _ in REGISTERED.values()) >= 5


@pytest.mark.parametrize("path", PATHS, ids=lambda p: p.stem)
def test_the_kernels_keep_the_dot_accumulators_they_were_registered_with(path):
    assert dot_accumulators(path.read_text(encoding="utf-8")) == REGISTERED[path.stem][4]


def test_two_gemms_keep_two_dot_accumulators():
    assert sum(accumulators == 2 for _, _, _, _, accumulators in REGISTERED.values()) >= 2


@pytest.mark.parametrize("path", PATHS, ids=lambda p: p.stem)
def test_the_kernels_are_naive(path):
    """No stages, no tma, no precision, no exp2, no grouped order, no requires dropping a mask, as registered."""
    code = "\n".join(line.split("#")[0] for line in path.read_text(encoding="utf-8").splitlines())
    for word in ("num_stages", "tma", "input_precision", "exp2", "requires", "warp_specialize", "GROUP"):
        assert word not in code, f"{path.stem}: {word}"


def test_the_kernels_are_unchanged_since_they_were_registered():
    assert_unchanged_since_registered(HELDOUT5, PATHS)


def test_the_readme_lists_every_kernel():
    assert_readme_lists(HELDOUT5, REGISTERED)


@pytest.mark.parametrize("path", PATHS, ids=lambda p: p.stem)
def test_heldout5_kernel_checks_and_verifies_with_no_diagnostic(path):
    assert_checks_and_verifies_clean(path)


@pytest.mark.parametrize("path", PATHS, ids=lambda p: p.stem)
def test_heldout5_kernel_has_a_reference_and_small_and_large_sizes(path):
    assert_reference_and_small_and_large_sizes(path)


def test_no_heldout5_kernel_is_an_expert_an_example_or_in_a_lineage_or_a_card():
    assert_held_out(HELDOUT5, PATHS, OTHERS)
