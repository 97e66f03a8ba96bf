"""AR321 (verify/rescaled_sums.py): a sum carried beside a running max is rescaled when the max grows.

The buggy kernels and their fixed twins are in the corpus (`rescale_*`); here, the witness's iteration and the
forms of a correct online softmax that must stay clean: the Triton tutorial's (`acc * alpha` before the dot,
`l_i * alpha + l_ij`), a factor guarded with `where`, a sum that takes no exponential of the new max.
"""

from __future__ import annotations

from argus.dsl.check import check_source
from argus.verify import verify_check

ONLINE = """
kernel lse(x: f32[M, N], y: out f32[M]):
    tile BN = 16
    grid (M,)
    row = program_id(0)
    m_i = full((1,), -inf, f32)
    l_i = zeros((1,), f32)
    for c0 in range(0, N, BN):
        cols = c0 + arange(BN)
        v = load(x[row, cols], mask=cols < N, other=-inf)
        m_new = maximum(m_i, max(v, axis=0, keep_dims=True))
        {update}
    store(y[row + arange(1)], m_i + log(l_i))
"""

RIGHT = "l_i = l_i * exp(m_i - m_new) + sum(exp(v - m_new), axis=0, keep_dims=True)\n        m_i = m_new"


def diagnostics(source: str) -> list:
    check = check_source(source)
    assert not check.has_errors, [d.text_line("k.argus") for d in check.diagnostics]
    return verify_check(check).diagnostics


def test_a_sum_not_rescaled_is_an_error_at_the_second_whole_block():
    update = "l_i = l_i + sum(exp(v - m_new), axis=0, keep_dims=True)\n        m_i = m_new"
    [found] = diagnostics(ONLINE.format(update=update))
    assert (found.code, found.range.start.line + 1) == ("AR321", 12)
    assert "it is added to without a rescale" in found.message
    witness = found.data["counterexample"]
    assert witness["iteration"]["c0"] == 16  # the loop's second iteration
    assert witness["sizes"]["N"] >= 32  # and a whole block of it


def test_a_factor_taken_after_the_max_was_overwritten_is_an_error():
    update = "m_i = m_new\n        l_i = l_i * exp(m_i - m_new) + sum(exp(v - m_new), axis=0, keep_dims=True)"
    [found] = diagnostics(ONLINE.format(update=update))
    assert found.code == "AR321" and "computed from the new max only" in found.message


def test_the_usual_rescales_are_clean():
    assert diagnostics(ONLINE.format(update=RIGHT)) == []
    guarded = (
        "alpha = where(m_new == -inf, 1.0, exp(m_i - m_new))\n"
        "        l_i = l_i * alpha + sum(exp(v - m_new), axis=0, keep_dims=True)\n        m_i = m_new"
    )
    assert diagnostics(ONLINE.format(update=guarded)) == []
    split = (
        "l_ij = sum(exp(v - m_new), axis=0, keep_dims=True)\n"
        "        alpha = exp(m_i - m_new)\n        l_i = l_i * alpha\n        l_i = l_i + l_ij\n        m_i = m_new"
    )
    assert diagnostics(ONLINE.format(update=split)) == []


def test_a_sum_that_takes_no_exponential_of_the_new_max_is_not_judged():
    # a running max beside a plain running sum of the values: nothing to rescale
    update = "l_i = l_i + sum(where(cols < N, v, 0.0), axis=0, keep_dims=True)\n        m_i = m_new"
    assert [d.code for d in diagnostics(ONLINE.format(update=update))] == []


def test_a_sum_broadcast_before_its_unscaled_add_is_still_an_error():
    # the uses are read through broadcast_to as through casts and expand_dims
    update = "l_i = broadcast_to(l_i, (1,)) + sum(exp(v - m_new), axis=0, keep_dims=True)\n        m_i = m_new"
    [found] = diagnostics(ONLINE.format(update=update))
    assert found.code == "AR321" and "it is added to without a rescale" in found.message


def test_a_loop_that_carries_the_blocks_max_instead_of_the_new_one_is_an_error():
    # l_i is rescaled to m_new, but m_i goes on as the block's own max: the next factor starts from the wrong max
    update = "l_i = l_i * exp(m_i - m_new) + sum(exp(v - m_new), axis=0, keep_dims=True)\n"
    update += "        m_i = max(v, axis=0, keep_dims=True)"
    [found] = diagnostics(ONLINE.format(update=update))
    assert (found.code, found.range.start.line + 1) == ("AR321", 13)
    assert "carries another value on as `m_i`, not `m_new`" in found.message
    assert found.data["counterexample"]["iteration"]["c0"] == 16
