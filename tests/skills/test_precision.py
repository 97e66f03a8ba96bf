"""The precision transform: an f32 dot moves from exact fp32 toward the tensor cores (ieee → tf32x3 → tf32) only
where the accuracy rule (argus.dsl.accuracy) says the new precision keeps its output's tolerance at the kernel's
sizes, with the rule's reason as the refusal; a string tile constant moves along its tune list; the inverse
goes back to the most accurate precision, text for text."""

from __future__ import annotations

import pytest
from test_split_k import F32_GEMM
from test_transforms import checks_clean, forward, only

from argus.skills.document import Document
from argus.skills.transforms import TRANSFORMS

PREC_GEMM = F32_GEMM.replace(
    "tile BM = 32, BN = 32, BK = 16", 'tile BM = 32, BN = 32, BK = 16, PREC = "ieee" tune ["ieee", "tf32x3"]'
).replace('input_precision="ieee"', "input_precision=PREC")
HALF_OUT = F32_GEMM.replace("C: out f32[M, N]", "C: out f16[M, N]").replace("acc * 0.5,", "(acc * 0.5).to(f16),")
HALF_IN = HALF_OUT.replace("A: f32[M, K], B: f32[K, N]", "A: f16[M, K], B: f16[K, N]")


def test_an_exact_f32_dot_moves_to_three_tf32_products_where_they_keep_the_f32_tolerance():
    app = only(forward("precision", F32_GEMM))
    assert app.applicable, app.failed
    assert (app.params["from"], app.params["to"]) == ("ieee", "tf32x3")
    after = app.result(F32_GEMM)
    assert 'acc = dot(a, b, acc, input_precision="tf32x3")' in after
    assert checks_clean(after)


def test_tf32_is_refused_for_an_f32_output_at_a_long_k_with_the_rules_reason():
    app = only(forward("precision", F32_GEMM, to="tf32"))
    assert app.failed.name == "keeps_accuracy"
    assert app.failed.found.startswith('`C` (f32) in size set `small`: "tf32" keeps about 3 decimal digits')
    assert "the f32 tolerance is 1.0e-04 absolute" in app.failed.found


def test_a_tolerance_the_reference_declares_is_the_one_kept():
    loose = F32_GEMM.replace("reference mm(A, B):", "reference mm(A, B) tolerance C = 0.25:")
    app = only(forward("precision", loose, to="tf32"))
    assert app.applicable, app.failed


def test_tf32_keeps_the_tolerance_of_a_short_sum_into_a_16_bit_output_but_not_of_a_long_one():
    short = HALF_OUT.replace("K = 200", "K = 32").replace("K = 16384", "K = 32")
    app = only(forward("precision", short, to="tf32"))
    assert app.applicable, app.failed
    long = only(forward("precision", HALF_OUT, to="tf32"))
    assert long.failed.name == "keeps_accuracy" and "the f16 tolerance" in long.failed.found


def test_a_16_bit_dot_is_refused_as_f32_operands():
    app = only(forward("precision", HALF_IN))
    assert app.failed.name == "f32_operands"
    assert "f16" in app.failed.found


def test_a_dot_without_input_precision_gets_the_keyword():
    plain = F32_GEMM.replace(', input_precision="ieee")', ")")
    app = only(forward("precision", plain))
    assert 'acc = dot(a, b, acc, input_precision="tf32x3")' in app.result(plain)


@pytest.mark.parametrize("precision", ["tf32x3", "tf32"])
def test_the_inverse_goes_back_to_ieee_and_the_forward_restores_the_text(precision):
    text = F32_GEMM.replace('input_precision="ieee"', f'input_precision="{precision}"')
    (inverse,) = TRANSFORMS["precision"].inverse(Document.parse(text))
    after = inverse.result(text)
    assert after == F32_GEMM
    (again,) = TRANSFORMS["precision"].forward(Document.parse(after), TRANSFORMS["precision"].restoring(inverse))
    assert again.result(after) == text


def test_a_precision_constant_moves_along_its_tune_list_and_back():
    app = only(forward("precision", PREC_GEMM))
    assert app.applicable, app.failed
    after = app.result(PREC_GEMM)
    assert 'PREC = "tf32x3" tune ["ieee", "tf32x3"]' in after
    assert checks_clean(after)
    (inverse,) = TRANSFORMS["precision"].inverse(Document.parse(after))
    assert inverse.result(after) == PREC_GEMM
    assert only(forward("precision", PREC_GEMM, to="tf32")).failed.name == "keeps_accuracy"


def test_a_precision_the_tune_list_lacks_joins_it():
    short = PREC_GEMM.replace('tune ["ieee", "tf32x3"]', 'tune ["ieee"]')
    app = only(forward("precision", short))
    assert 'PREC = "tf32x3" tune ["ieee", "tf32x3"]' in app.result(short)
    assert checks_clean(app.result(short))
