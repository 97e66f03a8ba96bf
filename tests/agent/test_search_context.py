"""The search ranks by what a card predicts in the state's situation: predicted gains first, unmeasured
situations explored by a prior with one proposal in four, predicted losses last; the light bulb shows the same
prediction and disables a skill whose condition of benefit fails."""

from __future__ import annotations

from agent_fakes import SOFTMAX

from argus.agent.plan import State
from argus.agent.search import EXPLORE, GAINS, LOSSES, NOISE, Context, SearchPlanner, prior, rank, scored
from argus.agent.sites import Site, applicable_sites
from argus.dsl.check import check_source
from argus.dsl.spans import Span
from argus.skills.cards import SPILL_MARGIN, Card, Effect, Evidence
from argus.skills.extract import conditions
from argus.skills.library import load_cards
from argus.skills.library_provider import LibraryProvider
from argus.skills.provider import SkillRequest
from argus.skills.situation import Compiled, measurements, scope_of

F16 = {"operands": "f16", "k_major": "A", "trans": "neither", "bound": "compute", "spills": "none", "rows": None}


def situated(card: Card, *measured: tuple[float, dict]) -> Card:
    """The card as if its lineages had measured these (speedup, situation) pairs, one lineage each."""
    evidence = [
        Evidence(lineage=f"w{i}", step=1, candidate="s1.c1", verdict="passed", device="NVIDIA H200", profiled=True,
                 slowdown=speedup, facts=facts)
        for i, (speedup, facts) in enumerate(measured)
    ]  # fmt: skip
    items = measurements(evidence)
    effects = [Effect(workload=e.lineage, gpu="NVIDIA H200", median=e.slowdown, min=e.slowdown, max=e.slowdown,
                      samples=1) for e in evidence]  # fmt: skip
    return card.model_copy(
        update={
            "evidence": evidence,
            "effect": effects,
            "effect_status": "measured",
            "scope": scope_of(items),
            "conditions": conditions(items),
        }
    )


def library_card(card_id: str) -> Card:
    return next(c for c in load_cards() if c.id == card_id)


def spill_bound(card: Card) -> Card:
    """The card with only the measurements where the kernel without the skill spilled registers."""
    spilled = [e for e in card.evidence if e.spill_bytes and e.spill_bytes >= SPILL_MARGIN]
    return card.model_copy(update={"evidence": spilled, "effect_needs_spills": True})


def test_gains_then_exploration_then_losses():
    gain = situated(library_card("pipelining.num_stages.dot"), (1.25, F16), (1.3, F16))
    unmeasured = situated(library_card("tile_size.BK.dot"), (1.2, F16 | {"operands": "f32 ieee"}))
    loss = situated(library_card("tile_size.BM.dot"), (0.4, F16), (0.3, F16))
    sites = [Site(card, line, card.id, facts=F16) for line, card in enumerate((loss, unmeasured, gain))]
    tiers = {s.card.id: scored(s)[0] for s in sites}
    assert tiers == {gain.id: GAINS, unmeasured.id: EXPLORE, loss.id: LOSSES}
    assert [s.card.id for s in rank(sites)] == [gain.id, unmeasured.id, loss.id]
    # an exploration slot puts the unmeasured situation first, never the loss
    assert [s.card.id for s in rank(sites, explore=True)] == [unmeasured.id, gain.id, loss.id]
    assert scored(sites[1])[1] == prior(unmeasured) == 1.1  # 1.2 elsewhere, shrunk halfway to 1


def test_a_card_whose_gains_needed_spills_is_not_explored_at_a_kernel_that_spills_none():
    """num_warps.dot as it was before the exact-fp32 and D = 64 attention lineages (2026-12-02): every gain came
    where 4 warps spilled; on an unmeasured exact-fp32 dot it is no prior."""
    warps = spill_bound(library_card("num_warps.dot"))
    tile = situated(library_card("tile_size.BK.dot"), (1.2, F16))  # measured on f16 dots only
    assert warps.effect_needs_spills and not tile.effect_needs_spills
    ieee = F16 | {"operands": "f32 ieee", "spills": None}
    sites = [Site(card, line, card.id, facts=ieee) for line, card in enumerate((warps, tile))]
    no_spills, unknown = Context(compiled=Compiled(spill_bytes=0)), Context()
    assert [scored(s, no_spills)[0] for s in sites] == [NOISE, EXPLORE]
    assert scored(sites[0], no_spills)[1] == 1.0
    assert [s.card.id for s in rank(sites, no_spills, explore=True)] == [tile.id, warps.id]
    assert scored(sites[0], unknown)[0] == EXPLORE  # no compile yet: spills unknown, explored as before


def test_the_state_s_registers_a_thread_from_its_compile_decide_whether_evidence_with_room_reaches_it():
    """BK measured only where the compile left registers to spare: at a state whose last compile gave 237
    registers a thread the card claims nothing and the site is explored; at 150 its number stands; with no
    compile the fact is unknown and the number stands too."""
    room = F16 | {"registers": "128 to 191"}
    tile = situated(library_card("tile_size.BK.dot"), (1.2, room), (1.3, room))
    site = Site(tile, 0, tile.id, facts=F16 | {"registers": None})
    near_limit, spare, unknown = (Context(compiled=Compiled(registers=n)) for n in (237, 150, None))
    tier, _, predicted = scored(site, near_limit)
    assert tier == EXPLORE and predicted.effect is None and "registers a thread" in predicted.why
    for context in (spare, unknown):
        tier, effect, predicted = scored(site, context)
        assert tier == GAINS and predicted.covered and round(effect, 2) == 1.25


def test_a_card_that_lost_everywhere_gets_no_exploration_credit():
    lost = situated(library_card("tile_size.BM.dot"), (0.5, F16))
    assert prior(lost) == 0.5


def test_exploration_comes_before_predicted_losses_and_every_fourth_proposal_explores():
    row = {"operands": None, "k_major": None, "trans": None, "bound": "memory", "spills": None}
    cards = {c.id: c for c in load_cards() if c.id.endswith(".row")}
    sites = applicable_sites(SOFTMAX, "softmax", list(cards.values()))
    ids = {s.card.id for s in sites}
    assert {"exp2.row", "reciprocal.row", "num_warps.row"} <= ids
    elsewhere = row | {"rows": "a situation this kernel is not in"}
    here = sites[0].facts
    cards["exp2.row"] = situated(cards["exp2.row"], (1.3, here), (1.2, here))
    cards["reciprocal.row"] = situated(cards["reciprocal.row"], (1.1, here))
    cards["num_warps.row"] = situated(cards["num_warps.row"], (1.5, elsewhere))  # unmeasured here
    for other in ids - {"exp2.row", "reciprocal.row", "num_warps.row"}:
        cards[other] = situated(cards[other], (0.5, here))  # losses here
    planner = SearchPlanner(list(cards.values()))
    state = State(source=SOFTMAX, kernel="softmax", ms=1.0)
    made = [planner.propose(state, []) for _ in range(4)]
    assert [p.skill for p in made[:2]] == ["exp2.row", "reciprocal.row"]
    assert made[0].prediction["covered"] and made[0].prediction["effect"] == 1.25
    # the third: nothing covered predicts a gain, so exploration (not a loss); then the losses
    assert made[2].skill == "num_warps.row" and "exploring" in made[2].rationale
    assert made[3] is None or made[3].prediction["hurts"] is not None
    # the budget share: the fourth proposal explores even while a predicted gain is left
    planner = SearchPlanner(list(cards.values()))
    planner.proposals = 3
    assert planner.propose(state, []).skill == "num_warps.row"
    assert planner.propose(state, []).skill == "exp2.row"  # then back to the predicted gains


def test_the_light_bulb_disables_a_skill_whose_condition_of_benefit_fails():
    cards = [c for c in load_cards() if c.id.endswith(".row")]
    sites = applicable_sites(SOFTMAX, "softmax", cards)
    exp2 = next(s for s in sites if s.card.id == "exp2.row")
    slower = situated(exp2.card, (0.7, exp2.facts), (0.75, exp2.facts))
    faster = situated(exp2.card, (1.3, exp2.facts), (1.2, exp2.facts))
    request = SkillRequest("file:///s.argus", SOFTMAX, check_source(SOFTMAX), Span(exp2.line, 0, exp2.line, 0))

    def action(card: Card):
        return next(a for a in LibraryProvider(cards=[card]).actions(request) if a.skill == "exp2.row")

    shown = action(faster)
    assert shown.applicable and shown.detail.startswith("1.25× on ") and "2 lineages" in shown.detail
    hidden = action(slower)
    assert not hidden.applicable and hidden.edits == ()
    assert hidden.failed_precondition.startswith("condition of benefit fails: measured slower")


def test_the_light_bulb_reads_the_registers_of_the_last_gate_compile_of_this_text():
    """The language server hands the provider the registers a thread its last gate run compiled for this very
    text: evidence measured with registers to spare shows no number at a kernel near the limit."""
    cards = [c for c in load_cards() if c.id.endswith(".row")]
    exp2 = next(s for s in applicable_sites(SOFTMAX, "softmax", cards) if s.card.id == "exp2.row")
    room = situated(exp2.card, (1.3, exp2.facts | {"registers": "under 128"}))
    span = Span(exp2.line, 0, exp2.line, 0)

    def detail(registers: dict[str, int]) -> str:
        compiled = {kernel: Compiled(registers=n) for kernel, n in registers.items()}
        request = SkillRequest("file:///s.argus", SOFTMAX, check_source(SOFTMAX), span, compiled)
        return next(a for a in LibraryProvider(cards=[room]).actions(request) if a.skill == "exp2.row").detail

    assert detail({}).startswith("1.30× on ")
    assert detail({"softmax": 40}).startswith("1.30× on ")
    assert detail({"softmax": 230}) == "not measured for registers a thread = 192 or more (measured: under 128)"
