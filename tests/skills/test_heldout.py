"""The held-out kernels (skills/heldout): naive first versions that no lineage used, for the held-out check of the
skill search. Each one checks and verifies clean, leaves room for at least two library skills, and is no expert.

The CPU gate of each (compile + correct) is not run here: it takes seconds per kernel and is covered by running
`argus gate skills/heldout/X.argus --device cpu`, as skills/heldout/README.md records.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from heldout_sets import assert_checks_and_verifies_clean, kernel_names

from argus.skills.document import Document
from argus.skills.library import LINEAGES, load_cards
from argus.skills.matcher import match

ROOT = Path(__file__).resolve().parents[2]
HELDOUT = ROOT / "skills" / "heldout"
EXPERTS = ROOT / "skills" / "experts"

# the skills each naive kernel must leave room for (the matcher may find more)
EXPECTED = {
    "batched_gemm": {"dot_accumulator.dot", "drop_edge_masks.dot", "pipelining.num_stages.dot", "tile_size.BM.dot"},
    "gemm_bias_gelu": {"dot_accumulator.dot", "grouped_order.dot", "pipelining.num_stages.dot", "tile_size.BN.dot"},
    "rmsnorm": {"rsqrt.row", "reciprocal.row", "num_warps.row"},
    "logsoftmax": {"exp2.row", "reciprocal.row", "num_warps.row"},
    "causal_attention": {"exp2.dot", "causal_split.dot", "drop_edge_masks.dot", "heavy_first.dot"},
    "stencil2d": {"exp2.row", "num_warps.row"},
}
PATHS = [HELDOUT / f"{name}.argus" for name in EXPECTED]


def applicable_skills(text: str) -> set[str]:
    """Every library skill applicable at some line of the file (kernel-wide ones at the header or the loops)."""
    doc = Document.parse(text)
    cards = load_cards()
    found = set()
    for line in range(len(text.splitlines())):
        found |= {m.card.id for m in match(doc, line, cards) if m.applicable}
    return found


def test_the_folder_holds_exactly_the_listed_kernels():
    assert sorted(p.stem for p in HELDOUT.glob("*.argus")) == sorted(EXPECTED)


@pytest.mark.parametrize("path", PATHS, ids=lambda p: p.stem)
def test_heldout_kernel_checks_and_verifies_with_no_diagnostic(path):
    assert_checks_and_verifies_clean(path)


@pytest.mark.parametrize("path", PATHS, ids=lambda p: p.stem)
def test_the_matcher_finds_at_least_two_applicable_library_skills(path):
    found = applicable_skills(path.read_text(encoding="utf-8"))
    expected = EXPECTED[path.stem]
    assert len(found) >= 2, f"{path.stem}: only {sorted(found)} applicable"
    assert expected <= found, f"{path.stem}: expected {sorted(expected)}, the matcher found {sorted(found)}"


def test_no_heldout_kernel_is_an_expert_or_in_a_lineage():
    experts = sorted(EXPERTS.rglob("*.argus"))
    assert experts, "no expert kernels found"
    expert_files = {p.stem for p in experts}
    expert_kernels = {name for p in experts for name in kernel_names(p.read_text(encoding="utf-8"))}
    heldout_kernels = {name for p in PATHS for name in kernel_names(p.read_text(encoding="utf-8"))}
    assert not set(EXPECTED) & expert_files
    assert not heldout_kernels & expert_kernels
    assert not heldout_kernels & expert_files
    records = sorted(LINEAGES.glob("*.json"))
    assert records, "no lineage records found"
    for record in records:
        raw = record.read_text(encoding="utf-8")
        assert "heldout" not in raw, f"{record.name} references skills/heldout"
        for name in heldout_kernels:
            assert f"kernel {name}(" not in raw, f"{record.name} holds the held-out kernel {name}"
            assert f'"kernel": "{name}"' not in raw, f"{record.name} is a lineage of {name}"
