"""The flash-attention transforms on the attention experts: the one-pass online softmax (against a max
pre-pass) and the causal split (no mask on the key blocks left of the diagonal)."""

from __future__ import annotations

from pathlib import Path

from test_transforms import checks_clean, forward, only

ROOT = Path(__file__).resolve().parents[2]
EXPERT = (ROOT / "skills" / "experts" / "attention.argus").read_text(encoding="utf-8")
FULL = EXPERT[: EXPERT.index("kernel attention_causal")]
CAUSAL = EXPERT[EXPERT.index("kernel attention_causal") :]

PREPASS = """\
    for n0 in range(0, S, BN):
        rn = n0 + arange(BN)
        k = load(K[z, h, rn, rd])                    # f16[BN, D]
        qk = dot(q, trans(k))                        # f32[BM, BN]
        m_i = maximum(m_i, max(qk, axis=1) * qk_scale)
"""
TWO_PASS = FULL.replace("    for n0 in range(0, S, BN):\n", PREPASS + "    for n0 in range(0, S, BN):\n", 1).replace(
    "m_new = maximum(m_i, max(qk, axis=1) * qk_scale)", "m_new = m_i"
)
MASKED = CAUSAL.replace(
    "        qk = dot(q, trans(k))\n", "        qk = where(rm[:, None] >= rn[None, :], dot(q, trans(k)), -inf)\n", 1
)


def test_online_softmax_turns_the_max_pre_pass_into_a_running_max():
    app = only(forward("online_softmax", TWO_PASS))
    assert app.applicable, app.failed
    after = app.result(TWO_PASS)
    assert after == FULL
    assert checks_clean(after)


def test_online_softmax_is_refused_when_a_running_sum_is_not_rescaled():
    unscaled = TWO_PASS.replace("        acc = acc * alpha[:, None]\n", "")
    app = only(forward("online_softmax", unscaled))
    assert app.failed.name == "rescales_running_sums"
    assert "acc" in app.failed.found


def test_the_causal_split_drops_the_mask_left_of_the_diagonal_only():
    apps = forward("causal_split", MASKED)
    assert len(apps) == 2  # the loop left of the diagonal, and the diagonal block's loop
    (app,) = [a for a in apps if a.applicable]
    after = app.result(MASKED)
    assert after == CAUSAL
    assert checks_clean(after)
    diagonal = next(a for a in apps if not a.applicable)
    assert diagonal.failed.name == "blocks_left_of_diagonal"


def test_the_causal_split_is_refused_when_the_block_end_is_not_a_multiple_of_the_key_block():
    loose = MASKED.replace("requires S % BM == 0, BM % BN == 0", "requires S % BM == 0")
    apps = forward("causal_split", loose)
    assert all(a.failed.name == "blocks_left_of_diagonal" for a in apps)
    assert any("multiple of BN" in a.failed.found for a in apps)
