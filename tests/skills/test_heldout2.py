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

import hashlib
from pathlib import Path

import pytest

from argus.dsl.ast import PythonBlock, Sizes
from argus.dsl.check import check_source
from argus.skills.library import LIBRARY, LINEAGES
from argus.verify import verify_check

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


def kernel_names(text: str) -> list[str]:
    return [k.name for k in check_source(text).module.kernels]


def read_sums() -> dict[str, str]:
    sums = {}
    for line in (HELDOUT2 / "SHA256SUMS").read_text(encoding="utf-8").splitlines():
        if line.strip():
            digest, name = line.split()
            sums[name] = digest
    return sums


def test_the_folder_holds_exactly_the_registered_kernels():
    assert sorted(p.stem for p in HELDOUT2.glob("*.argus")) == sorted(REGISTERED)


def test_the_set_covers_both_dtypes_both_shape_classes_and_transposed_operands():
    facts = list(REGISTERED.values())
    assert len(facts) >= 8
    assert {dtype for dtype, _, _ in facts} == {"f16", "f32"}
    assert {shape for _, shape, _ in facts} == {"gemm", "row"}
    assert sum(transposed for _, _, transposed in facts) >= 2


def test_the_kernels_are_unchanged_since_they_were_registered():
    sums = read_sums()
    assert sorted(sums) == sorted(p.name for p in PATHS)
    for path in PATHS:
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
        assert digest == sums[path.name], f"{path.name} changed after it was registered: never tune on skills/heldout2"


def test_the_readme_lists_every_kernel():
    readme = (HELDOUT2 / "README.md").read_text(encoding="utf-8")
    for name in REGISTERED:
        assert f"`{name}.argus`" in readme, name


@pytest.mark.parametrize("path", PATHS, ids=lambda p: p.stem)
def test_heldout2_kernel_checks_and_verifies_with_no_diagnostic(path):
    text = path.read_text(encoding="utf-8")
    checked = check_source(text)
    assert [d.text_line(path.name) for d in checked.diagnostics] == []
    assert kernel_names(text) == [path.stem]
    result = verify_check(checked)
    assert [d.text_line(path.name) for d in result.diagnostics] == []
    assert result.stats.obligations == result.stats.proved > 0


@pytest.mark.parametrize("path", PATHS, ids=lambda p: p.stem)
def test_heldout2_kernel_has_a_reference_and_small_and_large_sizes(path):
    items = check_source(path.read_text(encoding="utf-8")).module.items
    assert [b.kind for b in items if isinstance(b, PythonBlock) and b.kind == "reference"] == ["reference"]
    (sizes,) = [s for s in items if isinstance(s, Sizes)]
    assert {"small", "large"} <= {s.name for s in sizes.sets}


def test_no_heldout2_kernel_is_an_expert_an_example_or_in_a_lineage_or_a_card():
    others = [p for folder in OTHERS for p in sorted(folder.rglob("*.argus"))]
    assert others, "no expert, held-out or example kernels found"
    other_files = {p.stem for p in others}
    other_kernels = {name for p in others for name in kernel_names(p.read_text(encoding="utf-8"))}
    heldout2_kernels = {name for p in PATHS for name in kernel_names(p.read_text(encoding="utf-8"))}
    assert not set(REGISTERED) & other_files
    assert not heldout2_kernels & other_kernels
    records = sorted(LINEAGES.glob("*.json"))
    cards = sorted(LIBRARY.glob("*.yaml"))
    assert records, "no lineage records found"
    assert cards, "no skill cards found"
    for record in records + cards:
        raw = record.read_text(encoding="utf-8")
        assert "heldout2" not in raw, f"{record.name} references skills/heldout2"
        for name in heldout2_kernels:
            assert f"kernel {name}(" not in raw, f"{record.name} holds the held-out kernel {name}"
            assert f'"kernel": "{name}"' not in raw, f"{record.name} is a lineage of {name}"
