"""The situation of a site: the few facts of its context (argus.skills.context) that a card's evidence is
grouped by, and what a card predicts in one.

A card's measurements come from lineage steps, each in a situation: the facts of the kernel the forward skill
was applied to (the candidate's text, without the skill). Two kinds of fact:

- **Scope facts** (`SCOPE`) describe what kind of kernel it is: the dot's operands and input precision, which
  operands read their contraction axis along the contiguous one, which go through `trans`, compute- or
  memory-bound, whether it spills registers, whether rows are wider than a tile, how many registers a thread
  gives the dots' results (a 128 x 128 f32 tile at 4 warps is 128 of them, 64 x 64 is 32: more warps help the
  first and cost the second; the dots of one loop count together, see `live_accumulator_registers`), whether
  the grid fills the GPU's SMs once (a larger tile on a grid under one wave leaves more of them idle), how many
  registers a thread the compile gives the kernel (near the 255 a thread can have, a bigger tile spills where
  the same tile with registers to spare gains). A card claims an effect only
  where some measurement agrees with the site on every scope fact both know; elsewhere it says "not measured
  for <fact>" and claims no number.
- **Condition facts** (`CONDITIONS`: the scope facts plus the policy) split the measurements that agree: where a
  fact's values saw the skill help (≥ HELPS) and hurt (≤ HURTS), the card carries that condition of benefit, and
  a site whose value is a hurting one is predicted with the hurting measurements and says why.

Facts unknown at a site (None: no dot, no compile at hand) constrain nothing. Pure Python, no GPU.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

from argus.gate.result import CompileFacts
from argus.skills.cards import SPILL_MARGIN, Evidence, Value
from argus.skills.context import SMS, SiteContext, site_contexts
from argus.skills.document import Document

Situation = dict[str, Value | None]


@dataclass(frozen=True, slots=True)
class Compiled:
    """What a GPU-target compile of the very text a prediction is for measured, where one did (the gate's
    compile facts): the register spill stores in bytes and the registers a thread. None where no compile
    measured them; `NOT_COMPILED` is the record of no compile at all."""

    spill_bytes: int | None = None
    registers: int | None = None

    @classmethod
    def of(cls, facts: CompileFacts | None) -> Compiled:
        return NOT_COMPILED if facts is None else cls(facts.spill_stores_bytes, facts.registers)


NOT_COMPILED = Compiled()

# what kind of kernel: outside every measurement on these, a card has no number
SCOPE = ("operands", "k_major", "trans", "bound", "spills", "registers", "rows", "accumulator", "grid")
# what splits measurements that agree on the scope into helping and hurting ones
CONDITIONS = (*SCOPE, "num_warps", "num_stages")
HELPS, HURTS = 1.02, 0.98  # a median at or beyond these is a gain or a loss; between them, noise

LABELS = {
    "operands": "operands",
    "k_major": "operands read along their contiguous axis",
    "trans": "operands through trans",
    "bound": "bound",
    "spills": "register spills",
    "registers": "registers a thread",
    "rows": "rows",
    "accumulator": "accumulator registers a thread",
    "grid": "grid",
    "num_warps": "num_warps",
    "num_stages": "num_stages",
}


def situation(
    site: SiteContext | None, spill_bytes: int | None = None, accumulator_registers: float | None = None
) -> Situation | None:
    """The facts of a site (its kernel's site carries the principal dot's); `spill_bytes` stands in for the
    compile's spills when the context has none (the language server knows them from its last gate run), and
    `accumulator_registers` for the principal dot's result registers (what all the dots hold at once)."""
    if site is None:
        return None
    spilled = site.spill_stores_bytes if site.spill_stores_bytes is not None else spill_bytes
    held = site.accumulator_registers if accumulator_registers is None else accumulator_registers
    return {
        "operands": operands(site),
        "k_major": both(site.a_k_major, site.b_k_major) if site.dot_line is not None else None,
        "trans": both(site.a_trans, site.b_trans) if site.dot_line is not None else None,
        "bound": site.bound,
        "spills": None if spilled is None else spill_fact(spilled),
        "registers": registers_fact(site.registers),
        "rows": None
        if site.row_wider_than_tile is None
        else ("wider than a tile" if site.row_wider_than_tile else "within a tile"),
        "accumulator": accumulator_fact(held) if site.dot_line is not None else None,
        "grid": grid_fact(site.programs),
        "num_warps": site.num_warps,
        "num_stages": site.num_stages,
    }


def sites_situation(sites: list[SiteContext] | None, spill_bytes: int | None = None) -> Situation | None:
    """The situation of a kernel from its sites (`site_contexts`: the kernel's first). Its skills set the whole
    kernel (tma, warps, stages), so its operands are every dot's: where the dots differ (one changed to tf32x3,
    the other still exact fp32) the fact names each, a kind of kernel no measurement had unless it had them too."""
    if not sites:
        return None
    facts = situation(sites[0], spill_bytes, live_accumulator_registers(sites))
    kinds = list(dict.fromkeys(o for o in (operands(s) for s in sites[1:] if s.site == "dot") if o is not None))
    if facts is not None and len(kinds) > 1:
        facts["operands"] = " and ".join(kinds)
    return facts


def live_accumulator_registers(sites: list[SiteContext]) -> float | None:
    """Registers a thread the dots' result tiles take at once: the dots of one loop are live together (a GeGLU
    GEMM's two accumulators, attention's scores beside its output), loops one after another are not, so the
    most any loop's dots hold. The sites come in program order, each dot after the loop it is in (the dots
    before the first loop count as one group). None without dot sites (a context recorded without them):
    the kernel site's principal dot stands."""
    groups: list[float] = []
    for site in sites[1:]:
        if site.site == "loop" or (site.site == "dot" and not groups):
            groups.append(0.0)
        if site.site == "dot" and site.accumulator_registers is not None:
            groups[-1] += site.accumulator_registers
    return max(groups) if any(groups) else None


def accumulator_fact(registers: float | None) -> str | None:
    """The dot accumulator's registers a thread, in three bands: light, what a 64 x 64 f32 tile gives 4 warps;
    medium; heavy, where a 128 x 128 one at 4 warps is."""
    if registers is None:
        return None
    return "under 64" if registers < 64 else "64 to 127" if registers < 128 else "128 or more"


def grid_fact(programs: int | None) -> str | None:
    """Whether the grid at the work's sizes fills the H200's SMs once (one program an SM): a kernel whose grid is
    under one wave (a column reduction over a tall matrix, a per-batch statistic) loses SMs to any change that
    makes fewer programs, which a grid of thousands does not notice."""
    if programs is None:
        return None
    return "under one wave" if programs < SMS else "a wave or more"


def spill_fact(spill_bytes: int) -> str:
    return "spills" if spill_bytes >= SPILL_MARGIN else "none"


def registers_fact(registers: int | None) -> str | None:
    """The registers a thread of the kernel's compile, in three bands of the 255 a thread can hold: room to
    spare; half of them or more; three quarters or more, where the operand fragments of a bigger tile or a
    deeper pipeline no longer fit (ptxas caps at 255 and spills the rest)."""
    if registers is None:
        return None
    return "under 128" if registers < 128 else "128 to 191" if registers < 192 else "192 or more"


def with_compile(facts: Situation | None, compiled: Compiled = NOT_COMPILED) -> Situation | None:
    """The situation with what a compile knows put in where it does not know it (a situation computed without
    a compile, and the spills and registers of the state's last gate run)."""
    if facts is None:
        return facts
    known: Situation = {}
    if compiled.spill_bytes is not None and facts.get("spills") is None:
        known["spills"] = spill_fact(compiled.spill_bytes)
    if compiled.registers is not None and facts.get("registers") is None:
        known["registers"] = registers_fact(compiled.registers)
    return facts | known if known else facts


def kernel_situation(doc: Document, kernel: str) -> Situation | None:
    """The situation of a kernel's own site, without a compile."""
    try:
        sites = site_contexts(doc, kernel)
    except Exception:  # a context it cannot compute (an unusual launch) leaves the prediction unsituated
        return None
    return sites_situation(sites)


def operands(site: SiteContext) -> str | None:
    if site.dot_line is None or site.a_dtype is None:
        return None
    if site.a_dtype == "f32" and site.input_precision:
        return f"f32 {site.input_precision}"
    return site.a_dtype


def both(a: bool | None, b: bool | None) -> str | None:
    """Which of the two operands a fact holds for: `A`, `B`, `A and B`, `neither` (None when unknown)."""
    if a is None or b is None:
        return None
    return {(True, True): "A and B", (True, False): "A", (False, True): "B", (False, False): "neither"}[(a, b)]


def describe(facts: Situation, keys: Iterable[str] = CONDITIONS) -> str:
    """`f16 dots, K-major A, B through trans, compute-bound, 8 warps`: the known facts in words."""
    words = []
    for key in keys:
        value = facts.get(key)
        if value is None:
            continue
        if key == "operands":
            words.append(f"{value} dots")
        elif key == "k_major":
            words.append(f"K-major {value}" if value != "neither" else "no K-major operand")
        elif key == "trans":
            words.append(f"{value} through trans" if value != "neither" else "no trans")
        elif key == "bound":
            words.append(f"{value}-bound")
        elif key == "spills":
            words.append("spilling registers" if value == "spills" else "no spills")
        elif key == "registers":
            words.append(f"{value} registers a thread")
        elif key == "rows":
            words.append(f"rows {value}")
        elif key == "accumulator":
            words.append(f"accumulator {value} registers a thread")
        elif key == "grid":
            words.append(f"a grid of {value}" if value == "a wave or more" else f"a grid {value}")
        elif key == "num_warps":
            words.append(f"{value} warps")
        elif key == "num_stages":
            words.append(f"{value} stages")
    return ", ".join(words)


def agrees(a: Situation, b: Situation, keys: Iterable[str]) -> bool:
    return all(a.get(k) is None or b.get(k) is None or a.get(k) == b.get(k) for k in keys)


@dataclass(frozen=True, slots=True)
class Measurement:
    """One profiled candidate of a card: its situation and speedup (kernel time without the skill over with)."""

    lineage: str
    candidate: str
    speedup: float
    facts: Situation


def measurements(evidence: list[Evidence]) -> list[Measurement]:
    """The profiled evidence with a speedup; one whose record has no context has an empty situation."""
    return [
        Measurement(e.lineage, e.candidate, e.slowdown, e.facts or {}) for e in evidence if e.profiled and e.slowdown
    ]


def lineage_median(items: list[Measurement]) -> float:
    """The median over lineages of each lineage's median: a lineage with many steps weighs as one."""
    by_lineage: dict[str, list[float]] = defaultdict(list)
    for m in items:
        by_lineage[m.lineage].append(m.speedup)
    return statistics.median(statistics.median(v) for v in by_lineage.values())


def scope_of(items: list[Measurement]) -> dict[str, list[Value]]:
    """Per scope fact, the values the measurements saw (sorted); a fact no measurement knows is left out."""
    found: dict[str, set] = defaultdict(set)
    for m in items:
        for key in SCOPE:
            if m.facts.get(key) is not None:
                found[key].add(m.facts[key])
    return {k: sorted(found[k], key=str) for k in SCOPE if found.get(k)}


def outside(facts: Situation, scope: dict[str, list[Value]]) -> str | None:
    """The first scope fact of a site whose value no measurement saw, in words; None inside every range."""
    for key in SCOPE:
        value = facts.get(key)
        if value is not None and key in scope and value not in scope[key]:
            seen = ", ".join(str(v) for v in scope[key])
            return f"{LABELS[key]} = {value} (measured: {seen})"
    return None
