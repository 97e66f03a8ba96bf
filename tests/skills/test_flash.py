"""The flash-attention transforms on the attention experts: the one-pass online softmax (against a max
pre-pass)."""

from __future__ import annotations

from pathlib import Path

from test_transforms import checks_clean, forward, only

ROOT = Path(__file__).resolve().parents[2]
EXPERT = (ROOT / "skills" / "experts" / "attention.argus").read_text(encoding="utf-8")
FULL = EXPERT[: EXPERT.index("kernel attention_causal")]

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
