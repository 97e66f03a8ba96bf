"""The LLM planner's prompt: a system message (what Argus is, the rules of an answer) and a user message with
everything the model can act on at this state: the kernel with line numbers, its diagnostics and their
counterexamples, the last gate result, the skill cards that match here, the feedback of this run's failed steps
and the most similar past successes and failures from memory.

Every part is bounded (a long part is cut and says so), so a big kernel or a long run cannot outgrow the
model's context window.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from typing import Any

from argus.agent.plan import State, Step
from argus.gate.result import CompileResult, CorrectResult, ProfileResult
from argus.skills.cards import Card
from argus.skills.document import Document
from argus.skills.matcher import match

logger = logging.getLogger(__name__)

MAX_SOURCE_CHARS = 16_000
MAX_DIAGNOSTICS = 8
MAX_DATA_CHARS = 800  # one counterexample, one mismatch, one compile error
MAX_MATCHES = 16
MAX_FAILED_STEPS = 6  # the most recent ones: older failures are summarized by count
MAX_MEMORY = 3  # successes and failures each

SYSTEM = """\
You refine GPU kernels written in Argus, a small tile-based Pythonic kernel language that compiles to Triton.
A kernel declares typed tensors (`x: f16[M, N]`, `y: out f16[M, N]`), tunable `tile` constants, `policy`
settings (num_warps, num_stages), `requires` facts about sizes, a `grid`, and a body of tile operations (arange,
load, store, dot, exp, sum, max, ...). A verifier proves in-bounds access, race freedom and the asserted
invariants, and refutes a violation with a counterexample. A `reference` block in PyTorch gives the meaning.

Every proposal you make is parsed, checked, verified and then gated (compiled, run against the reference on
random inputs, timed). It is kept only if it is correct and faster, or if it fixes a verifier error.

Rules:
- Answer with one JSON object that follows the given schema, and nothing else.
- Prefer a library skill (action "skill", its id and a line where it matches) when an applicable one fits.
- An edit (action "source": the whole file; or action "diff": a unified diff against it) must keep the kernel's
  name, its parameters and their dtypes, and its `requires` lines; it must keep the reference unchanged.
- Use the feedback of failed steps: do not repeat a proposal that failed, fix what its evidence shows.
- Answer action "stop" when nothing promising is left."""


def system_message() -> dict[str, str]:
    return {"role": "system", "content": SYSTEM}


def retry_message(error: str) -> dict[str, str]:
    return {
        "role": "user",
        "content": f"Your answer was not usable: {error}\nAnswer again with one JSON object that follows the schema.",
    }


def build_messages(
    state: State, history: Sequence[Step], *, matches: list[dict[str, Any]], memory: Any = None
) -> list[dict[str, str]]:
    parts = [
        kernel_part(state),
        diagnostics_part(state.diagnostics),
        gate_part(state),
        skills_part(matches),
        history_part(history),
        memory_part(memory, state.facts),
        'Propose the next action as one JSON object: {"action": ..., "skill", "line", "source" or "diff", '
        '"rationale"}.',
    ]
    return [system_message(), {"role": "user", "content": "\n\n".join(p for p in parts if p)}]


def cut(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return f"{text[:limit]} [... {len(text) - limit} more characters cut]"


def compact(value: Any, limit: int = MAX_DATA_CHARS) -> str:
    return cut(json.dumps(value, default=str, separators=(", ", ": ")), limit)


def kernel_part(state: State) -> str:
    source = cut(state.source, MAX_SOURCE_CHARS)
    numbered = "\n".join(f"{i:4} | {line}" for i, line in enumerate(source.splitlines(), 1))
    return (
        f"Kernel `{state.kernel}`: the file, with line numbers for reference (they are not part of the file):\n"
        f"{numbered}"
    )


def diagnostics_part(diagnostics: list[dict[str, Any]]) -> str:
    if not diagnostics:
        return "Diagnostics: none (the kernel checks and verifies clean)."
    lines = [f"Diagnostics ({len(diagnostics)}):"]
    for d in diagnostics[:MAX_DIAGNOSTICS]:
        line = d.get("line")  # 1-based (argus.agent.states.diagnostic_json)
        where = f" at line {line}" if isinstance(line, int) else ""
        lines.append(f"- {d.get('severity', 'error')} {d.get('code', '?')}{where}: {cut(str(d.get('message')), 400)}")
        data = d.get("data") or {}
        found = data.get("counterexample", data) if isinstance(data, dict) else data
        if found:
            lines.append(f"  counterexample: {compact(pruned(witness(found)))}")
    if len(diagnostics) > MAX_DIAGNOSTICS:
        lines.append(f"[... {len(diagnostics) - MAX_DIAGNOSTICS} more diagnostics cut]")
    return "\n".join(lines)


def gate_part(state: State) -> str:
    gate = state.gate
    if gate is None:
        return "Last gate result: not gated yet."
    lines = ["Last gate result:"]
    for stage, result in gate.stages.items():
        text = f"- {stage}: {result.status.value}"
        if result.message:
            text += f": {cut(result.message, 400)}"
        if isinstance(result, CompileResult) and result.facts is not None:
            facts = result.facts
            kept = {
                "shared_memory_bytes": facts.shared_memory_bytes,
                "registers": facts.registers,
                "spill_stores_bytes": facts.spill_stores_bytes,
            }
            text += f" ({', '.join(f'{k} {v}' for k, v in kept.items() if v is not None)})"
        if isinstance(result, CorrectResult) and result.facts is not None and result.facts.first_mismatch is not None:
            text += f"\n  first mismatch: {compact(result.facts.first_mismatch.model_dump(mode='json'))}"
        if isinstance(result, ProfileResult) and result.facts is not None:
            text += f" (median {result.facts.kernel.ms_median} ms)"
        lines.append(text)
    for error in gate.errors[:3]:
        lines.append(f"- error {error.code}: {cut(error.message, 300)}")
        if error.detail:
            lines.append(f"  detail: {cut(error.detail, MAX_DATA_CHARS)}")
    if state.ms is not None:
        lines.append(f"Kernel time to beat: {state.ms:.4g} ms (median).")
    return "\n".join(lines)


def skill_matches(state: State, cards: list[Card]) -> list[dict[str, Any]]:
    """The cards that match some line of the state's kernel, one entry per skill and anchor (1-based lines):
    Match.to_json() plus every line it matches at, and the card's preconditions and risks."""
    try:
        doc = Document.parse(state.source)
    except Exception:  # the checker turns bad input into diagnostics, so this is a bug: the prompt goes on without
        logger.exception("no skill matches for the prompt: the source could not be read")
        return []
    kernel = next((k for k in doc.kernels() if k.name == state.kernel), None)
    if kernel is None:
        return []
    found: dict[tuple[str, int], dict[str, Any]] = {}
    by_id = {c.id: c for c in cards}
    for line in range(kernel.span.line, kernel.span.end_line + 1):
        try:
            matches = match(doc, line, cards)
        except Exception:  # one transform failing on an odd kernel must not take the prompt down
            logger.warning("skill matching failed at line %d; the prompt leaves it out", line + 1, exc_info=True)
            continue
        for m in matches:
            entry = m.to_json()
            key = (entry["skill"], entry["line"])
            if key not in found:
                card = by_id[entry["skill"]]
                entry["lines"] = []
                entry["preconditions"] = [f"{p.name}: {p.meaning}" for p in card.preconditions]
                entry["risks"] = [risk_text(r) for r in card.risks]
                found[key] = entry
            if line + 1 not in found[key]["lines"]:
                found[key]["lines"].append(line + 1)
    # applicable ones first: they are what the model should pick from
    return sorted(found.values(), key=lambda e: (not e["applicable"], e["line"], e["skill"]))


def risk_text(risk: Any) -> str:
    text = risk.what
    if risk.precondition:
        text += f" (precondition {risk.precondition})"
    if risk.stage:
        text += f" (failed at {risk.stage})"
    return text


def skills_part(matches: list[dict[str, Any]]) -> str:
    if not matches:
        return "Library skills that match this kernel: none."
    lines = ['Library skills that match this kernel (apply one with action "skill", its id and one of its lines):']
    described: set[str] = set()
    for m in matches[:MAX_MATCHES]:
        at = ", ".join(str(n) for n in m["lines"])
        head = f"- {m['skill']} at line{'s' if len(m['lines']) > 1 else ''} {at}: {m['title']}"
        if m["applicable"]:
            lines.append(f"{head}; applicable; expected effect: {m['expected_effect']}")
        else:
            failed = m["failed_precondition"] or {}
            lines.append(f"{head}; NOT applicable: precondition {failed.get('name')} fails ({failed.get('found')})")
        if m["skill"] in described:
            continue  # a card at a second anchor: its preconditions and risks are listed once
        described.add(m["skill"])
        lines.append(f"  preconditions: {'; '.join(m['preconditions']) or 'none'}")
        if m["risks"]:
            lines.append(f"  risks: {cut('; '.join(m['risks']), 400)}")
    if len(matches) > MAX_MATCHES:
        lines.append(f"[... {len(matches) - MAX_MATCHES} more matching skills cut]")
    return "\n".join(lines)


def proposal_text(proposal: Any) -> str:
    if proposal.kind == "skill":
        line = "?" if proposal.line is None else proposal.line + 1
        return f"skill {proposal.skill} at line {line}"
    return f"{proposal.kind} edit" + (f' ("{cut(proposal.rationale, 160)}")' if proposal.rationale else "")


EVIDENCE_FIRST = ("first_mismatch", "counterexample", "requires", "max_rel_error", "tolerance", "sizes")


def evidence(data: dict[str, Any], message: str) -> dict[str, Any]:
    """A step's feedback data with what locates the failure first (the mismatching element, the
    counterexample), so cutting the tail keeps it. What the message already says is left out: the message
    itself and the errors it repeats."""
    first = {k: data[k] for k in EVIDENCE_FIRST if data.get(k) is not None}
    if isinstance(first.get("counterexample"), dict):
        first["counterexample"] = witness(first["counterexample"])
    rest = {k: v for k, v in data.items() if k not in first and k not in ("message", "errors")}
    others = [e for e in data.get("errors") or [] if isinstance(e, dict) and str(e.get("message")) not in message]
    if others:
        rest["other errors"] = [
            f"{e.get('code')} line {e.get('line')}: {cut(str(e.get('message')), 200)}" for e in others
        ]
    return pruned(first | rest)


def witness(counterexample: Any) -> Any:
    """A counterexample without its position: the verifier counts lines from 0, the prompt from 1, and the
    diagnostic it belongs to already names the line."""
    if not isinstance(counterexample, dict):
        return counterexample
    return {k: v for k, v in counterexample.items() if k not in ("line", "character")}


def pruned(value: Any) -> Any:
    """Without empty fields (None, {}, []): they cost tokens and say nothing."""
    if isinstance(value, dict):
        kept = {k: pruned(v) for k, v in value.items()}
        return {k: v for k, v in kept.items() if v not in (None, {}, [])}
    if isinstance(value, list):
        return [pruned(v) for v in value]
    return value


def history_part(history: Sequence[Step]) -> str:
    if not history:
        return ""
    lines = ["Earlier steps of this run:"]
    kept = [s for s in history if s.kept]
    for s in kept:
        lines.append(f"- step {s.index + 1}: {proposal_text(s.proposal)}: kept (reward {s.reward:.3g})")
    failed = [s for s in history if not s.kept]
    if len(failed) > MAX_FAILED_STEPS:
        lines.append(f"[... {len(failed) - MAX_FAILED_STEPS} older failed steps cut]")
    for s in failed[-MAX_FAILED_STEPS:]:
        if s.feedback is None:
            lines.append(f"- step {s.index + 1}: {proposal_text(s.proposal)}: not kept")
            continue
        lines.append(
            f"- step {s.index + 1}: {proposal_text(s.proposal)}: not kept at {s.feedback.stage}: "
            f"{cut(s.feedback.message, 400)}"
        )
        if s.feedback.data:
            lines.append(f"  evidence: {compact(evidence(s.feedback.data, s.feedback.message))}")
    return "\n".join(lines)


def memory_part(memory: Any, facts: dict[str, Any]) -> str:
    if memory is None:
        return ""
    try:
        successes, failures = memory.similar(facts, k=MAX_MEMORY)
    except Exception as e:  # a broken memory file costs the prompt a section, never the run
        return f"Memory of past runs: unavailable ({type(e).__name__}: {cut(str(e), 200)})."
    if not successes and not failures:
        return "Memory of past runs on similar kernels: nothing yet."
    lines = ["Memory of past runs on kernels with similar facts:"]
    for title, records in (("succeeded", successes), ("failed", failures)):
        for record in records[:MAX_MEMORY]:
            lines.append(f"- {title}: {memory_text(record)}")
    return "\n".join(lines)


def memory_text(record: dict[str, Any]) -> str:
    """One remembered step (argus.agent.memory.step_record): what was proposed, its reward, and where and why
    it failed; the facts it shares with this kernel are what made it similar, so they are left out."""
    kind = record.get("proposal")
    if not isinstance(kind, str):
        return compact({k: v for k, v in record.items() if k != "facts"}, 500)
    what = f"{kind} edit"
    if kind == "skill":
        line = record.get("line")  # Proposal.line: 0-based
        what = f"skill {record.get('skill')}" + (f" at line {line + 1}" if isinstance(line, int) else "")
    if isinstance(record.get("reward"), int | float):
        what += f", reward {record['reward']:.3g}"
    if record.get("stage"):
        what += f", failed at {record['stage']}: {cut(str(record.get('message', '')), 240)}"
    return what
