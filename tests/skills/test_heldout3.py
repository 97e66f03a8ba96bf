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

import hashlib
from pathlib import Path

import pytest

from argus.dsl.ast import PythonBlock, Sizes
from argus.dsl.check import check_source
from argus.skills.library import LIBRARY, LINEAGES
from argus.verify import verify_check

ROOT = Path(__file__).resolve().parents[2]
HELDOUT3 = ROOT / "skills" / "heldout3"
OTHERS = [
    ROOT / "skills" / "experts",
    ROOT / "skills" / "heldout",
    ROOT / "skills" / "heldout2",
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


def kernel_names(text: str) -> list[str]:
    return [k.name for k in check_source(text).module.kernels]


def read_sums() -> dict[str, str]:
    sums = {}
    for line in (HELDOUT3 / "SHA256SUMS").read_text(encoding="utf-8").splitlines():
        if line.strip():
            digest, name = line.split()
            sums[name] = digest
    return sums


def test_the_folder_holds_exactly_the_registered_kernels():
    assert sorted(p.stem for p in HELDOUT3.glob("*.argus")) == sorted(REGISTERED)


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
        assert digest == sums[path.name], f"{path.name} changed after it was registered: never tune on skills/heldout3"


def test_the_readme_lists_every_kernel():
    readme = (HELDOUT3 / "README.md").read_text(encoding="utf-8")
    for name in REGISTERED:
        assert f"`{name}.argus`" in readme, name


@pytest.mark.parametrize("path", PATHS, ids=lambda p: p.stem)
def test_heldout3_kernel_checks_and_verifies_with_no_diagnostic(path):
    text = path.read_text(encoding="utf-8")
    checked = check_source(text)
    assert [d.text_line(path.name) for d in checked.diagnostics] == []
    assert kernel_names(text) == [path.stem]
    result = verify_check(checked)
    assert [d.text_line(path.name) for d in result.diagnostics] == []
    assert result.stats.obligations == result.stats.proved > 0


@pytest.mark.parametrize("path", PATHS, ids=lambda p: p.stem)
def test_heldout3_kernel_has_a_reference_and_small_and_large_sizes(path):
    items = check_source(path.read_text(encoding="utf-8")).module.items
    assert [b.kind for b in items if isinstance(b, PythonBlock) and b.kind == "reference"] == ["reference"]
    (sizes,) = [s for s in items if isinstance(s, Sizes)]
    assert {"small", "large"} <= {s.name for s in sizes.sets}


def test_no_heldout3_kernel_is_an_expert_an_example_or_in_a_lineage_or_a_card():
    others = [p for folder in OTHERS for p in sorted(folder.rglob("*.argus"))]
    assert others, "no expert, held-out or example kernels found"
    other_files = {p.stem for p in others}
    other_kernels = {name for p in others for name in kernel_names(p.read_text(encoding="utf-8"))}
    heldout3_kernels = {name for p in PATHS for name in kernel_names(p.read_text(encoding="utf-8"))}
    assert not set(REGISTERED) & other_files
    assert not heldout3_kernels & other_kernels
    records = sorted(LINEAGES.glob("*.json"))
    cards = sorted(LIBRARY.glob("*.yaml"))
    assert records, "no lineage records found"
    assert cards, "no skill cards found"
    for record in records + cards:
        raw = record.read_text(encoding="utf-8")
        assert "heldout3" not in raw, f"{record.name} references skills/heldout3"
        for name in heldout3_kernels:
            assert f"kernel {name}(" not in raw, f"{record.name} holds the held-out kernel {name}"
            assert f'"kernel": "{name}"' not in raw, f"{record.name} is a lineage of {name}"
