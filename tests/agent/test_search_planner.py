"""The search planner: ranking by predicted effect and evidence, re-ranking by this workspace's rewards,
determinism, and backing up to an earlier kept state."""

from __future__ import annotations

from agent_fakes import SOFTMAX, FakeGate, unmeasured_cards

from argus.agent.loop import refine
from argus.agent.memory import Memory
from argus.agent.plan import Feedback, Proposal, State, Step
from argus.agent.search import NOISE, Context, SearchPlanner, observed_effects, scope_facts, score, scored
from argus.agent.sites import applicable_sites, predicted_effect
from argus.gate.result import CompileFacts, CompileResult, GateResult
from argus.skills.apply import digest, plan
from argus.skills.cards import Effect
from argus.skills.library import load_cards
from argus.skills.situation import Compiled


def measured(card_id: str, *medians: float):
    card = next(c for c in load_cards() if c.id == card_id)
    effects = [
        Effect(workload=f"w{i}", gpu="NVIDIA H200", median=m, min=m, max=m, samples=1) for i, m in enumerate(medians)
    ]
    # no scope: the card claims its median everywhere, as an older library card does
    return card.model_copy(update={"effect": effects, "effect_status": "measured", "scope": {}, "conditions": []})


def proposals(planner: SearchPlanner, source: str = SOFTMAX, n: int = 10) -> list[str]:
    state, found = State(source=source, kernel="softmax"), []
    for _ in range(n):
        proposal = planner.propose(state, [])
        if proposal is None:
            break
        found.append(proposal.key())
    return found


def test_predicted_effect_is_the_median_of_the_lineage_medians():
    assert predicted_effect(measured("exp2.row", 1.1, 1.5, 1.2)) == 1.2
    assert predicted_effect(next(c for c in unmeasured_cards() if c.id == "exp2.row")) == 1.0


def test_ranks_by_predicted_effect_then_evidence():
    cards = [c for c in unmeasured_cards() if c.id.endswith(".row")]
    # Nothing measured: more evidence first (the committed library's counts), then card id breaks ties.
    found = proposals(SearchPlanner(cards))
    evidence = {c.id: len(c.evidence) for c in cards}
    ranked = sorted(found, key=lambda key: (-evidence[key.split(":")[1].split("@")[0]], key))
    assert found == ranked and set(found) == {"skill:reciprocal.row@16", "skill:exp2.row@14", "skill:num_warps.row@6"}
    # measured up to 16 warps, so the example's 8 → 16 is within the evidence
    up_to_16 = {"parameters": {"setting": "num_warps", "expert_value": 16}}
    warps = measured("num_warps.row", 1.3).model_copy(update=up_to_16)
    faster = [warps if c.id == "num_warps.row" else c for c in cards]
    assert proposals(SearchPlanner(faster))[0] == "skill:num_warps.row@6"
    slower = [measured("reciprocal.row", 0.9) if c.id == "reciprocal.row" else c for c in cards]
    assert proposals(SearchPlanner(slower))[-1] == "skill:reciprocal.row@16"


def test_the_same_inputs_give_the_same_order():
    assert proposals(SearchPlanner()) == proposals(SearchPlanner())


def test_rewards_observed_in_the_workspace_re_rank_skills(tmp_path):
    memory = Memory(tmp_path / "memory.jsonl")
    for reward in (-1.0, -1.0):
        step = Step(0, "search", Proposal(kind="skill", skill="reciprocal.row", line=16), kept=False, reward=reward)
        memory.record(step, "k")
    cards = unmeasured_cards()
    assert score(next(c for c in cards if c.id == "reciprocal.row"), Context(stats=memory.skill_stats())) == 0.0
    assert proposals(SearchPlanner(cards, memory=memory))[-1] == "skill:reciprocal.row@16"


def test_a_skill_this_run_measured_slower_is_ranked_by_that_measurement_not_its_card():
    up_to_16 = {"parameters": {"setting": "num_warps", "expert_value": 16}}
    warps = measured("num_warps.row", 1.3).model_copy(update=up_to_16)
    cards = [warps if c.id == "num_warps.row" else c for c in unmeasured_cards() if c.id.endswith(".row")]
    exp2 = SOFTMAX.replace("exp(z)", "exp2(z * 1.4426950408889634)")
    state = State(source=exp2, kernel="softmax", ms=1.0)
    assert SearchPlanner(cards).propose(state, []).skill == "num_warps.row"  # the card predicts 1.3×
    slower = Step(1, "search", Proposal(kind="skill", skill="num_warps.row", line=6), kept=False, reward=0.0,
                  ms_before=1.0, ms_after=1.25)  # fmt: skip
    first = SearchPlanner(cards).propose(state, [slower])
    assert first.skill != "num_warps.row" and "num_warps" not in first.rationale
    assert score(warps, Context(observed={"num_warps.row": {None: 0.8}})) == 0.8


def test_what_this_run_measured_counts_only_at_a_state_of_the_same_kind():
    """A kept step can change the kind of kernel (a bigger tile, a heavier accumulator): what a skill measured
    before it says nothing after, and the card's evidence for the new situation decides again."""
    cards = [c for c in unmeasured_cards() if c.id.endswith(".row")]
    (site,) = [s for s in applicable_sites(SOFTMAX, "softmax", cards) if s.card.id == "num_warps.row"]
    here = scope_facts(site.facts)
    assert here is not None and here["rows"] is not None
    elsewhere = here | {"rows": "within a tile" if here["rows"] == "wider than a tile" else "wider than a tile"}

    def twice_as_fast_at(facts):
        proposal = Proposal(kind="skill", skill="num_warps.row", line=6, prediction={"scope_facts": facts})
        return Step(1, "search", proposal, kept=True, reward=2.0, ms_before=1.0, ms_after=0.5)

    same = Context(observed=observed_effects([twice_as_fast_at(here)]))
    other = Context(observed=observed_effects([twice_as_fast_at(elsewhere)]))
    assert scored(site, same)[1] == 2.0 and same.measured(site) == 2.0
    assert other.measured(site) is None and scored(site, other)[1] == scored(site, Context())[1]
    # the planner records the kind with each proposal, so the history it reads back has it
    proposal = SearchPlanner(cards).propose(State(source=SOFTMAX, kernel="softmax", ms=1.0), [])
    assert proposal.prediction["scope_facts"] == scope_facts(site.facts)


def test_a_card_measured_only_where_kernels_spilled_predicts_nothing_for_a_kernel_that_spills_none():
    update = {"parameters": {"setting": "num_warps", "expert_value": 16}, "effect_needs_spills": True}
    warps = measured("num_warps.row", 1.3).model_copy(update=update)
    cards = [warps if c.id == "num_warps.row" else c for c in unmeasured_cards() if c.id.endswith(".row")]

    def first(spills: int | None):
        facts = CompileFacts(target="sm_90", triton_version="test", config={}, spill_stores_bytes=spills)
        known = GateResult(kernel="softmax", device="cpu", compile=CompileResult(facts=facts))
        gate = None if spills is None else known
        return SearchPlanner(cards).propose(State(source=SOFTMAX, kernel="softmax", ms=1.0, gate=gate), [])

    for spills in (1024, None):  # spills, or not known: the card's 1.3×
        assert first(spills).skill == "num_warps.row" and first(spills).prediction["effect"] == 1.3
    # spills none: no number, and no exploration either (its gains needed spills): the unmeasured cards go first
    assert first(0).skill != "num_warps.row"
    (site,) = [s for s in applicable_sites(SOFTMAX, "softmax", cards) if s.card.id == "num_warps.row"]
    tier, value, predicted = scored(site, Context(compiled=Compiled(spill_bytes=0)))
    assert (tier, value, predicted.effect) == (NOISE, 1.0, None) and "spill" in predicted.why


def test_backs_up_to_the_next_best_kept_state_when_the_best_is_exhausted():
    cards = unmeasured_cards()
    planner = SearchPlanner(cards)
    start = State(source=SOFTMAX, kernel="softmax", ms=1.0)
    reciprocal = next(c for c in cards if c.id == "reciprocal.row")
    best = State(source=plan(SOFTMAX, reciprocal, 16).text_after, kernel="softmax", ms=0.9)
    assert planner.propose(start, []).key() == "skill:exp2.row@14"  # the most evidence
    keys = [planner.propose(best, []) for _ in range(4)]
    # At the best state: its two untried sites (exp2 again: not yet tried there); then back at the start, only
    # rewrites not tried anywhere: the reciprocal, there; then nothing.
    assert [p.key() for p in keys[:2]] == ["skill:exp2.row@14", "skill:num_warps.row@6"]
    assert keys[2].skill == "reciprocal.row" and keys[2].at == digest(SOFTMAX) and keys[3] is None


def test_search_keeps_what_the_timings_favour():
    result = refine(SOFTMAX, "softmax", SearchPlanner(unmeasured_cards()), budget=8, gate=FakeGate())
    # exp2 first (the most evidence): faster, kept; 16 warps: slower, not kept; the reciprocal: faster, kept;
    # 16 warps again at that new state (untried there): slower; then nothing is left
    assert result.skills == ["exp2.row", "reciprocal.row"]
    assert result.stopped == "planner" and result.gate_runs == 4


def test_a_move_past_the_measured_setting_predicts_no_change():
    card = measured("num_warps.dot", 4.0).model_copy(update={"parameters": {"setting": "num_warps", "expert_value": 8}})
    assert predicted_effect(card, {"to": "8"}) == 4.0
    assert predicted_effect(card, {"to": "16"}) == 1.0


def test_a_rewrite_that_failed_to_compile_is_not_proposed_again_at_a_later_state():
    cards = unmeasured_cards()
    reciprocal = next(c for c in cards if c.id == "reciprocal.row")
    start = State(source=SOFTMAX, kernel="softmax", ms=1.0)
    later = State(source=plan(SOFTMAX, reciprocal, 16).text_after, kernel="softmax", ms=0.9)

    def at_later_state(feedback: Feedback) -> list[str]:
        planner = SearchPlanner(cards)
        first = planner.propose(start, [])
        assert first.key() == "skill:exp2.row@14"
        history = [Step(0, "search", first, kept=False, reward=-1.0, feedback=feedback, gate_runs=1)]
        return [p.skill for p in iter(lambda: planner.propose(later, history), None)]

    # slower is a measurement of this state: the same rewrite is still worth a gate run at another one
    assert "exp2.row" in at_later_state(Feedback("slower", "1.1 ms against the best 1.0 ms"))
    for stage in ("compile", "correct"):  # a refusal of the rewrite itself: never asked again in this run
        assert "exp2.row" not in at_later_state(Feedback(stage, "Triton cannot compile it"))
