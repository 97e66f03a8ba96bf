"""Tile constants take the role their kernel gives them (BM, BN, BK), so a tile-size card learned on an
expert's BM applies to a user's BLOCK_M or BI."""

from __future__ import annotations

from kernels import CAUSAL_ROWS, NAIVE_GEMM, NAIVE_SOFTMAX

from argus.dsl.check import check_source
from argus.skills.document import Document
from argus.skills.library import load_cards
from argus.skills.matcher import match
from argus.skills.roles import constants_for, tile_roles

RENAMED_GEMM = NAIVE_GEMM.replace("BM", "BLOCK_M").replace("BN", "BLOCK_N").replace("BK", "TILE_K")
ELEMENTWISE = NAIVE_SOFTMAX.replace("BN", "BLOCK")
# the names of an expert, in the wrong places: the contraction step is called BN and the output columns BK
SWAPPED = NAIVE_GEMM.replace("BN", "Q").replace("BK", "BN").replace("Q", "BK")


def kernel(text: str):
    check = check_source(text)
    assert not [d for d in check.diagnostics if d.severity.value == "error"]
    (only,) = check.module.kernels
    return only


def test_a_dots_accumulator_and_k_loop_give_the_roles():
    assert tile_roles(kernel(NAIVE_GEMM)) == {"BM": "BM", "BN": "BN", "BK": "BK"}
    assert tile_roles(kernel(RENAMED_GEMM)) == {"BLOCK_M": "BM", "BLOCK_N": "BN", "TILE_K": "BK"}
    assert tile_roles(kernel(SWAPPED)) == {"BM": "BM", "BK": "BN", "BN": "BK"}


def test_a_kernel_without_a_dot_has_a_row_tile_only_when_one_constant_is_a_run_length():
    assert tile_roles(kernel(ELEMENTWISE)) == {"BLOCK": "BN"}
    assert tile_roles(kernel(CAUSAL_ROWS)) == {}  # BM and D both run lengths: which walks the row is unknown


def test_a_card_applies_to_the_constant_in_its_role_whatever_its_name():
    doc = Document.parse(RENAMED_GEMM)
    header = kernel(RENAMED_GEMM).span.line
    offered = {m.card.id: m.application.params for m in match(doc, header, load_cards()) if m.applicable}
    assert offered["tile_size.BM.dot"]["setting"] == "BLOCK_M"
    assert offered["tile_size.BN.dot"]["setting"] == "BLOCK_N"
    assert offered["tile_size.BK.dot"]["setting"] == "TILE_K"
    # a kernel that has the card's name keeps it (attention's BN is its key block, the step of its K loop)
    assert constants_for(kernel(SWAPPED), "BK") == ["BK"]
    assert constants_for(kernel(RENAMED_GEMM), "BK") == ["TILE_K"]


def test_a_row_card_applies_to_an_elementwise_kernels_block():
    doc = Document.parse(ELEMENTWISE)
    header = kernel(ELEMENTWISE).span.line
    tiles = [m for m in match(doc, header, load_cards()) if m.card.id == "tile_size.BN.row"]
    assert [m.application.params["setting"] for m in tiles] == ["BLOCK"]
