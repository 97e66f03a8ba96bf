"""Situations, scopes and conditions: the facts a measurement is grouped by, what a card derives from its
evidence (scope, conditions of benefit, provides, requires, conflicts), and what it predicts at a site."""

from __future__ import annotations

from conftest import ROOT

from argus.skills.cards import Card, Effect, Evidence
from argus.skills.context import site_contexts
from argus.skills.document import Document
from argus.skills.extract import conditions, link, provides
from argus.skills.library import load_cards
from argus.skills.matcher import match
from argus.skills.predict import predict
from argus.skills.situation import (
    SCOPE,
    Compiled,
    agrees,
    describe,
    live_accumulator_registers,
    measurements,
    registers_fact,
    scope_of,
    sites_situation,
    situation,
    with_compile,
)

F16 = {"operands": "f16", "k_major": "A", "trans": "neither", "bound": "compute", "spills": "none", "rows": None}


def agrees_on_scope(a: dict | None, b: dict) -> bool:
    return a is not None and agrees(a, b, [k for k in SCOPE if k != "registers"])


def kernel_facts(path: str) -> dict:
    doc = Document.parse((ROOT / path).read_text(encoding="utf-8"))
    return situation(site_contexts(doc, doc.kernels()[0].name)[0])


def test_the_situation_of_an_fp32_linear_names_its_precision_and_its_transposed_operand():
    facts = kernel_facts("examples/fp32_linear_gelu.argus")
    assert facts["operands"] == "f32 tf32x3" and facts["trans"] == "B" and facts["bound"] == "compute"
    assert facts["spills"] is None  # no compile at hand: unknown, never a guess
    assert "f32 tf32x3 dots" in describe(facts) and "B through trans" in describe(facts)


def test_the_situation_of_a_row_kernel_has_no_dot_facts():
    facts = kernel_facts("examples/softmax.argus")
    assert facts["operands"] is None and facts["trans"] is None and facts["bound"] == "memory"
    assert facts["rows"] in ("within a tile", "wider than a tile")


def test_the_dots_of_one_loop_count_their_registers_together_and_loops_in_sequence_do_not():
    def sites(path: str, kernel: str):
        return site_contexts(Document.parse((ROOT / path).read_text(encoding="utf-8")), kernel)

    # causal attention: two loops one after the other (below the diagonal, then on it), scores and output in each
    causal = sites("skills/experts/attention.argus", "attention_causal")
    assert [s.accumulator_registers for s in causal if s.site == "dot"] == [64.0] * 4
    assert live_accumulator_registers(causal) == 128.0 and sites_situation(causal)["accumulator"] == "128 or more"
    assert situation(causal[0])["accumulator"] == "64 to 127"  # the principal dot alone
    # one dot: its own tile, as before
    gemm = sites("skills/experts/gemm.argus", "gemm")
    assert live_accumulator_registers(gemm) == gemm[0].accumulator_registers == 128.0
    # no dot sites (a row kernel): nothing to add, the kernel site stands
    rows = sites("examples/softmax.argus", "softmax")
    assert live_accumulator_registers(rows) is None and sites_situation(rows)["accumulator"] is None


def item(lineage: str, candidate: str, slowdown: float, facts: dict, facts_with: dict | None = None) -> Evidence:
    return Evidence(
        lineage=lineage, step=1, candidate=candidate, verdict="passed", device="NVIDIA H200", profiled=True,
        slowdown=slowdown, facts=facts, facts_with=facts_with,
    )  # fmt: skip


def card(card_id: str, evidence: list[Evidence]) -> Card:
    items = measurements(evidence)
    effects = [Effect(workload=e.lineage, gpu="NVIDIA H200", median=e.slowdown, min=e.slowdown,
                      max=e.slowdown, samples=1) for e in evidence]  # fmt: skip
    return Card(
        id=card_id, title=card_id, intent="", anchor="", transform="tile_size", preconditions=[], evidence=evidence,
        effect=effects, effect_status="measured", scope=scope_of(items), conditions=conditions(items),
        provides=provides(evidence),
    )  # fmt: skip


def bigger_tile() -> Card:
    """BM 128: 1.3× where 8 warps hold the accumulator, 0.3× once they are taken away (the gemm walk's finding)."""
    return card(
        "tile_size.BM.dot",
        [item("gemm", "s1.c3", 1.3, F16 | {"num_warps": 8}), item("grouped", "s1.c3", 1.35, F16 | {"num_warps": 8}),
         item("gemm", "s3.c1", 0.31, F16 | {"num_warps": 4}), item("grouped", "s3.c1", 0.3, F16 | {"num_warps": 4})],
    )  # fmt: skip


def more_warps() -> Card:
    return card(
        "num_warps.dot",
        [item("gemm", "s2.c1", 2.9, F16 | {"num_warps": 4, "spills": "spills"}, F16 | {"num_warps": 8})],
    )


def test_a_card_s_scope_is_the_values_its_measurements_saw():
    tile = bigger_tile()
    assert tile.scope == {"operands": ["f16"], "k_major": ["A"], "trans": ["neither"], "bound": ["compute"],
                          "spills": ["none"]}  # fmt: skip


def test_a_fact_that_splits_gains_from_losses_is_a_condition_of_benefit():
    (warps,) = [c for c in bigger_tile().conditions if c.fact == "num_warps"]
    assert warps.helps == [8] and warps.hurts == [4]
    assert warps.medians == {"4": 0.305, "8": 1.325}
    assert sorted(warps.evidence) == ["gemm#s3.c1", "grouped#s3.c1"]


def test_a_split_another_fact_explains_better_is_a_confound_not_a_condition():
    """The f16 measurements mix gains at 8 warps with losses at 4: their median hurts, but warps say it all."""
    tf32 = {**F16, "operands": "f32 tf32"}
    mixed = card(
        "tile_size.BM.dot",
        [item("gemm", "s1.c3", 1.3, F16 | {"num_warps": 8}), item("gemm", "s3.c1", 0.31, F16 | {"num_warps": 4}),
         item("grouped", "s3.c1", 0.3, F16 | {"num_warps": 4}), item("tf32", "s1.c3", 1.4, tf32 | {"num_warps": 8})],
    )  # fmt: skip
    assert [c.fact for c in mixed.conditions] == ["num_warps"]


def test_noise_is_no_condition():
    flat = card(
        "exp2.dot", [item("a", "c1", 1.005, F16 | {"num_warps": 8}), item("b", "c1", 0.995, F16 | {"num_warps": 4})]
    )
    assert flat.conditions == []


def test_what_a_skill_changes_is_what_it_provides_and_links_follow_from_conditions():
    warps, tile = more_warps(), bigger_tile()
    assert [(p.fact, p.before, p.after) for p in warps.provides] == [("num_warps", 4, 8), ("spills", "spills", "none")]
    link([warps, tile])
    assert [(r.skill, r.fact, r.value) for r in tile.requires] == [("num_warps.dot", "num_warps", 8)]
    assert tile.conflicts == []  # nothing here moves warps from 8 to 4
    assert warps.requires == []


def test_a_card_predicts_the_effect_measured_in_the_matching_situation():
    tile = bigger_tile()
    gain = predict(tile, F16 | {"num_warps": 8})
    assert gain.covered and round(gain.effect, 4) == 1.325 and gain.hurts is None and gain.lineages == 2
    assert gain.why.startswith("1.33× on f16 dots") and "8 warps" in gain.why


def test_at_a_hurting_value_the_prediction_is_the_loss_and_says_which_condition():
    loss = predict(bigger_tile(), F16 | {"num_warps": 4})
    assert loss.covered and round(loss.effect, 4) == 0.305
    assert loss.hurts is not None and "num_warps = 4" in loss.hurts


def test_outside_its_scope_a_card_claims_no_number_and_names_the_fact():
    fp32 = predict(bigger_tile(), F16 | {"operands": "f32 ieee", "trans": "B", "num_warps": 8})
    assert fp32.effect is None and not fp32.covered
    assert fp32.why == "not measured for operands = f32 ieee (measured: f16)"
    unknown = predict(bigger_tile(), F16 | {"operands": None, "num_warps": 8})  # a fact unknown constrains nothing
    assert unknown.covered


def test_a_card_without_situations_claims_its_median_everywhere_as_before():
    old = bigger_tile().model_copy(update={"scope": {}, "conditions": []})
    anywhere = predict(old, F16 | {"operands": "f32 ieee"})
    assert anywhere.covered and round(anywhere.effect, 4) == 0.805 and "median over 4 lineages" in anywhere.why


EXACT_LINEAR = """
kernel linear(x: f32[M, K], W: f32[N, K], y: out f32[M, N]):
    tile BM = 64 tune [64, 128], BN = 64 tune [64, 128], BK = 32 tune [32, 64]
    policy num_warps = 4 tune [4, 8], num_stages = 2 tune [2, 3], tma = 0 tune [0, 1]
    grid (cdiv(M, BM), cdiv(N, BN))
    rm = program_id(0) * BM + arange(BM)
    rn = program_id(1) * BN + arange(BN)
    acc = zeros((BM, BN), f32)
    for k0 in range(0, K, BK):
        rk = k0 + arange(BK)
        a = load(x[rm, rk], mask=(rm < M, rk < K), other=0)
        w = load(W[rn, rk], mask=(rn < N, rk < K), other=0)
        acc = dot(a, trans(w), acc)
    store(y[rm, rn], acc, mask=(rm < M, rn < N))

reference linear(x, W):
    return x @ W.T

sizes linear:
    small: M = 40, N = 36, K = 48
    large: M = 4096, N = 4096, K = 4096
"""


def test_an_fp32_kernel_with_a_transposed_operand_gets_no_fp16_effect_for_bk_or_tma():
    """Issue 15's case: the committed library on an exact-fp32 Linear whose W is read through `trans`."""
    doc = Document.parse(EXACT_LINEAR)
    assert not doc.check.has_errors, doc.check.diagnostics
    kernel = doc.kernels()[0]
    assert situation(site_contexts(doc, "linear")[0])["operands"] == "f32 ieee"
    cards = load_cards()
    seen = {}
    for line in range(kernel.span.line, kernel.span.end_line + 1):
        for m in match(doc, line, cards):
            if m.applicable:
                seen.setdefault(m.card.id, m.prediction())
    assert "tile_size.BK.dot" in seen  # the case: BK has a site here
    for skill in ("tile_size.BK.dot", "tma.dot"):
        predicted = seen.get(skill)
        if predicted is None:
            continue
        if predicted.effect is None:
            assert predicted.why.startswith(("not measured for", "effect not measured")), predicted.why
        else:  # a number only from measurements on exact-fp32 dots
            assert "on f32 ieee dots" in predicted.why and "f16" not in predicted.why, predicted.why


def test_the_precision_card_offers_tensor_cores_to_a_dot_with_no_precision_written():
    """The lineages measured ieee → tf32x3 on a tune constant PREC; a user's exact-fp32 dot names no precision.
    The constant's name is not the skill, so the one precision card reaches the literal form too."""
    doc = Document.parse(EXACT_LINEAR)
    lines = EXACT_LINEAR.strip("\n").splitlines()  # as the document numbers them: the kernel on its line 1
    assert doc.kernels()[0].span.line == 1
    line = next(i for i, text in enumerate(lines, 1) if "acc = dot(" in text)
    (found,) = [m for m in match(doc, line, load_cards()) if m.card.id == "precision.dot"]
    assert found.applicable and found.application.params["to"] == "tf32x3"
    assert 'dot(a, trans(w), acc, input_precision="tf32x3")' in found.application.result(doc.text)


COLUMN_SUMS = """
kernel column_sums(x: f32[M, N], out: out f32[N]):
    tile BM = 32, BN = 64
    grid (cdiv(N, BN),)
    cols = program_id(0) * BN + arange(BN)
    acc = zeros((BM, BN), f32)
    for r0 in range(0, M, BM):
        rows = r0 + arange(BM)
        acc = acc + load(x[rows, cols], mask=(rows < M, cols < N), other=0)
    store(out[cols], sum(acc, axis=0), mask=cols < N)

reference column_sums(x):
    return x.sum(dim=0)

sizes column_sums:
    small: M = 70, N = 90
    large: M = 65536, N = 4096
"""


def test_a_grid_under_one_wave_is_its_own_situation_and_row_evidence_does_not_reach_it():
    """64 programs at `large` (4096 columns, 64 a program) leave half the 132 SMs idle; every row-wise lineage
    had thousands of programs, so what a wider tile did there claims no number here."""
    doc = Document.parse(COLUMN_SUMS)
    assert not doc.check.has_errors, doc.check.diagnostics
    site = site_contexts(doc, "column_sums")[0]
    facts = situation(site)
    assert site.programs == 64 and facts["grid"] == "under one wave" and "a grid under one wave" in describe(facts)
    assert kernel_facts("examples/softmax.argus")["grid"] == "a wave or more"
    card = next(c for c in load_cards() if c.id == "tile_size.BN.row")
    assert card.scope["grid"] == ["a wave or more"]
    predicted = predict(card, facts)
    assert predicted.effect is None and not predicted.covered
    assert "grid" in predicted.why, predicted.why


def test_registers_near_the_limit_are_their_own_situation_and_evidence_with_room_does_not_reach_them():
    """A bigger K step adds operand fragments to every thread: on a tf32x3 GEMM the lineages measured it where
    the compile left registers to spare (8 warps), and a state already near the 255 a thread spills instead.
    The compile's registers (the state's last gate run) put the site in its band; without a compile the fact
    is unknown and constrains nothing."""
    assert [registers_fact(r) for r in (None, 96, 128, 191, 192, 255)] == [
        None, "under 128", "128 to 191", "128 to 191", "192 or more", "192 or more"
    ]  # fmt: skip
    facts = kernel_facts("examples/fp32_linear_gelu.argus")
    assert facts["registers"] is None
    card = next(c for c in load_cards() if c.id == "tile_size.BK.dot")
    assert set(card.scope["registers"]) == {"under 128", "128 to 191", "192 or more"}
    room = with_compile(facts, Compiled(spill_bytes=0, registers=150))
    assert room["registers"] == "128 to 191" and room["spills"] == "none"
    assert "128 to 191 registers a thread" in describe(room)
    near_limit = with_compile(facts, Compiled(spill_bytes=0, registers=237))
    assert near_limit["registers"] == "192 or more"
    measured_with_room = [e for e in card.evidence if e.facts and agrees_on_scope(e.facts, room)]
    assert measured_with_room and all(e.facts["registers"] == "128 to 191" for e in measured_with_room)
    predicted = predict(card, near_limit, {"setting": "BK", "from": "32", "to": "64"})
    assert predicted.effect is None and "registers a thread" in predicted.why, predicted.why
    assert with_compile(facts) is facts  # nothing compiled: the situation as it was


# Two exact-fp32 products of one x tile (a mean and a gate, say), W1 and W2 stored [N, K]: precision.dot changes
# one dot at a time, so a state between two steps has one dot at tf32x3 and the other exact.
TWO_DOTS = """
kernel two(x: f32[M, K], W1: f32[N, K], W2: f32[N, K], y: out f32[M, N]):
    tile BM = 64, BN = 64, BK = 32
    grid (cdiv(M, BM), cdiv(N, BN))
    rm = program_id(0) * BM + arange(BM)
    rn = program_id(1) * BN + arange(BN)
    a1 = zeros((BM, BN), f32)
    a2 = zeros((BM, BN), f32)
    for k0 in range(0, K, BK):
        rk = k0 + arange(BK)
        a = load(x[rm, rk], mask=(rm < M, rk < K), other=0)
        w1 = load(W1[rn, rk], mask=(rn < N, rk < K), other=0)
        w2 = load(W2[rn, rk], mask=(rn < N, rk < K), other=0)
        a1 = dot(a, trans(w1), a1FIRST)
        a2 = dot(a, trans(w2), a2SECOND)
    store(y[rm, rn], a1 * a2, mask=(rm < M, rn < N))

reference two(x, W1, W2):
    return (x @ W1.T) * (x @ W2.T)

sizes two:
    small: M = 40, N = 36, K = 48
    large: M = 4096, N = 4096, K = 4096
"""
TF32X3 = ', input_precision="tf32x3"'


def two_dots(first: str, second: str) -> Document:
    doc = Document.parse(TWO_DOTS.replace("FIRST", first).replace("SECOND", second))
    assert not doc.check.has_errors, doc.check.diagnostics
    return doc


def test_a_kernel_whose_dots_differ_in_precision_names_both_and_a_kernel_wide_card_claims_no_number():
    """heldout7's confident miss: tma.dot predicted from the first dot's tf32x3 evidence while the second dot was
    still exact fp32 (0.76×). The kernel's situation names both, a kind of kernel no lineage measured."""
    mixed = sites_situation(site_contexts(two_dots(TF32X3, ""), "two"))
    assert mixed["operands"] == "f32 tf32x3 and f32 ieee"
    assert "f32 tf32x3 and f32 ieee dots" in describe(mixed)
    assert sites_situation(site_contexts(two_dots(TF32X3, TF32X3), "two"))["operands"] == "f32 tf32x3"
    assert sites_situation(site_contexts(two_dots("", ""), "two"))["operands"] == "f32 ieee"
    doc = two_dots(TF32X3, "")
    kernel = doc.kernels()[0]
    cards = load_cards()
    predictions = [
        m.prediction()
        for line in range(kernel.span.line, kernel.span.end_line + 1)
        for m in match(doc, line, cards)
        if m.applicable and m.card.id in ("tma.dot", "num_warps.dot", "pipelining.num_stages.dot")
    ]
    assert predictions
    for predicted in predictions:  # no kernel-wide card has a number for a kernel of mixed dots
        assert predicted.effect is None, predicted.why
