"""The pre-registered held-out set skills/heldout8: naive kernels frozen before the change that makes a kernel-wide
skill (tma, num_warps, num_stages, warp_specialize) read the situation of every dot it affects instead of the one
dot at the site's line (skills/heldout8/README.md; heldout7, run on an H100 on 2026-12-07, is spent: there
`tma.dot` was predicted 1.05x from one dot's tf32x3 context in a kernel whose other dot was still exact fp32, and
measured 0.76x), for judging that change, the row cards' ranking (tile_size.BN.row, num_warps.row) and whatever
changes to the cards, the search and the matcher come after it. Four of the eight have two or more dots (three of
them exact-fp32, so that one precision step leaves their dots at two precisions), one has a single dot, three are
row-wise reductions over rows wider than a tile.
Nothing may be tuned on them, so this test keeps the set frozen (the files match skills/heldout8/SHA256SUMS,
written when the set was committed) and keeps it held out: each kernel checks and verifies with no diagnostic,
has a reference and a small and a large size set, and no held-out kernel is an expert, an example, a kernel of
skills/heldout to skills/heldout7, or named by a lineage record or a card.

The CPU gate of each (compile for sm_90, correct under the Triton interpreter) is not run here: it takes seconds
per kernel and is covered by `argus gate skills/heldout8/X.argus --device cpu --stage compile --stage correct`,
as skills/heldout8/README.md records, with the registers each compile reported (recorded below and asserted to
be in the README, not compiled again). What the skill matcher finds on these kernels, and the situation facts
it reads from them, are deliberately not asserted: they are what the change after registration changes, and
the held-out check measures it, not the other way round. The dots, their accumulators and the programs each grid
launches at `large` are counted here from the kernel's text alone (its `dot` calls and its `tile`, `grid` and
`sizes` lines), not through argus.skills.
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
HELDOUT8 = ROOT / "skills" / "heldout8"
OTHERS = [
    ROOT / "skills" / "experts",
    ROOT / "skills" / "heldout",
    ROOT / "skills" / "heldout2",
    ROOT / "skills" / "heldout3",
    ROOT / "skills" / "heldout4",
    ROOT / "skills" / "heldout5",
    ROOT / "skills" / "heldout6",
    ROOT / "skills" / "heldout7",
    ROOT / "examples",
]
SMS = 132  # the H200's streaming multiprocessors, as the situation's grid fact counts a wave

# kernel -> (dtype, shape class, transposed operands: a set of "trans" and "indices", no tune list and no policy,
# dots, dot accumulators, programs at large, registers a thread of the sm_90 compile at the declared
# configuration): the set as registered in skills/heldout8/README.md
REGISTERED = {
    "retention_parallel": ("f32", "gemm", {"trans"}, True, 2, 1, 2048, 166),
    "fm_interaction": ("f32", "gemm", set(), True, 2, 2, 512, 186),
    "svd_linear": ("f32", "gemm", {"trans", "indices"}, True, 2, 1, 512, 168),
    "lora_linear": ("f16", "gemm", {"trans"}, True, 3, 2, 8192, 66),
    "poly_kernel": ("f32", "gemm", {"trans"}, False, 1, 1, 16384, 128),
    "soft_argmax": ("f16", "row", set(), True, 0, 0, 16384, 31),
    "multiclass_hinge": ("f32", "row", set(), True, 0, 0, 16384, 28),
    "hoyer_sparsity": ("f16", "row", set(), False, 0, 0, 96, 40),
}
PATHS = [HELDOUT8 / f"{name}.argus" for name in REGISTERED]


def kernel_code(text: str) -> str:
    """The kernel's own lines, comments dropped: from its `kernel` line to the first `reference`, `inputs` or
    `sizes` block."""
    code = re.split(r"^(?:reference|inputs|sizes) ", text, maxsplit=1, flags=re.MULTILINE)[0]
    return "\n".join(line.split("#")[0] for line in code.splitlines())


def dots(text: str) -> int:
    return len(re.findall(r"\bdot\(", kernel_code(text)))


def test_the_folder_holds_exactly_the_registered_kernels():
    assert sorted(p.stem for p in HELDOUT8.glob("*.argus")) == sorted(REGISTERED)


def test_the_set_has_multi_dot_kernels_of_both_dtypes_with_transposed_operands():
    """What the kernel-wide change needs: at least four kernels with two or more dots, mostly fp32, at least one
    f16, at least two of them with a transposed operand; and one single-dot GEMM beside them."""
    multi = [facts for facts in REGISTERED.values() if facts[4] >= 2]
    assert len(multi) >= 4
    assert sum(dtype == "f32" for dtype, *_ in multi) >= 3
    assert any(dtype == "f16" for dtype, *_ in multi)
    assert sum(bool(transposed) for _, _, transposed, *_ in multi) >= 2
    assert any(shape == "gemm" and n == 1 for _, shape, _, _, n, *_ in REGISTERED.values())


def test_the_set_has_row_reductions_of_both_dtypes():
    rows = [facts for facts in REGISTERED.values() if facts[1] == "row"]
    assert len(rows) >= 3
    assert {dtype for dtype, *_ in rows} == {"f16", "f32"}
    assert all(n == 0 for _, _, _, _, n, *_ in rows)


@pytest.mark.parametrize("path", PATHS, ids=lambda p: p.stem)
def test_the_kernels_keep_the_dots_they_were_registered_with(path):
    assert dots(path.read_text(encoding="utf-8")) == REGISTERED[path.stem][4]


@pytest.mark.parametrize("path", PATHS, ids=lambda p: p.stem)
def test_the_kernels_keep_the_dot_accumulators_they_were_registered_with(path):
    assert dot_accumulators(path.read_text(encoding="utf-8")) == REGISTERED[path.stem][5]


@pytest.mark.parametrize("path", PATHS, ids=lambda p: p.stem)
def test_the_transposed_operands_are_read_as_registered(path):
    """`trans` of a loaded block where registered so; an operand registered as read transposed by its indices is
    a load with broadcast index tiles (`[None, :]` and `[:, None]`)."""
    code = kernel_code(path.read_text(encoding="utf-8"))
    transposed = REGISTERED[path.stem][2]
    assert ("trans(" in code) is ("trans" in transposed)
    broadcast = re.search(r"load\(\w+\[[^\]]*\[None, :\][^\]]*\[:, None\]", code)
    assert bool(broadcast) is ("indices" in transposed)


@pytest.mark.parametrize("path", PATHS, ids=lambda p: p.stem)
def test_the_kernels_registered_without_tune_lists_or_policies_have_none(path):
    bare = REGISTERED[path.stem][3]
    assert has_tune_or_policy(path.read_text(encoding="utf-8")) is not bare


def test_most_kernels_have_no_tune_list_and_no_policy():
    assert sum(bare for _, _, _, bare, *_ in REGISTERED.values()) >= 4


@pytest.mark.parametrize("path", PATHS, ids=lambda p: p.stem)
def test_the_kernels_launch_the_programs_they_were_registered_with_at_large(path):
    assert programs_at_large(path.read_text(encoding="utf-8")) == REGISTERED[path.stem][6]


@pytest.mark.parametrize("path", [p for p in PATHS if REGISTERED[p.stem][1] == "row"], ids=lambda p: p.stem)
def test_the_row_kernels_rows_are_wider_than_their_tile_at_large(path):
    text = path.read_text(encoding="utf-8")
    (tile,) = re.findall(r"^\s*tile BN = (\d+)", text, re.MULTILINE)
    (width,) = re.findall(r"^\s*large: .*\bN = ([\d_]+)", text, re.MULTILINE)
    assert int(width.replace("_", "")) > int(tile)


def test_the_exact_fp32_multi_dot_kernels_start_with_every_dot_at_one_precision():
    """Every f32 dot of the set starts at dot's default precision (ieee): no `input_precision` anywhere, so one
    precision step on a multi-dot kernel makes a state whose dots are at two precisions."""
    multi = [p for p in PATHS if REGISTERED[p.stem][0] == "f32" and REGISTERED[p.stem][4] >= 2]
    assert len(multi) >= 3
    for path in multi:
        assert "input_precision" not in kernel_code(path.read_text(encoding="utf-8"))


def test_the_readme_records_the_registers_of_each_compile():
    readme = (HELDOUT8 / "README.md").read_text(encoding="utf-8")
    for name, (*_, registers) in REGISTERED.items():
        assert re.search(rf"^\| {name} \| ✓ {registers} registers,", readme, re.MULTILINE), name


def test_grids_under_one_wave_and_over_many_waves_at_large():
    programs = [n for *_, n, _ in REGISTERED.values()]
    assert any(n < SMS for n in programs)
    assert sum(n >= 1000 for n in programs) >= 4


@pytest.mark.parametrize("path", PATHS, ids=lambda p: p.stem)
def test_the_kernels_are_naive(path):
    """No stages, no tma, no precision, no exp2, no grouped order, no requires dropping a mask, no warp
    specialization, as registered (each word where a name starts, comments dropped)."""
    assert_naive(path)


def test_the_kernels_are_unchanged_since_they_were_registered():
    assert_unchanged_since_registered(HELDOUT8, PATHS)


def test_the_readme_lists_every_kernel():
    assert_readme_lists(HELDOUT8, REGISTERED)


@pytest.mark.parametrize("path", PATHS, ids=lambda p: p.stem)
def test_heldout8_kernel_checks_and_verifies_with_no_diagnostic(path):
    assert_checks_and_verifies_clean(path)


@pytest.mark.parametrize("path", PATHS, ids=lambda p: p.stem)
def test_heldout8_kernel_has_a_reference_and_small_and_large_sizes(path):
    assert_reference_and_small_and_large_sizes(path)


def test_no_heldout8_kernel_is_an_expert_an_example_or_in_a_lineage_or_a_card():
    assert_held_out(HELDOUT8, PATHS, OTHERS)
