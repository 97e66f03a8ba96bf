"""A kernel's state as the loop and its planners see it: parse, check and verify a source once.

Diagnostics become plain dicts (code, severity, line, message, data) so a planner, the trajectory log and
memory can hold them without the checker's classes. Facts are a JSON view of argus.skills.facts.KernelFacts.
"""

from __future__ import annotations

import threading
from collections import Counter, OrderedDict
from typing import Any

from argus.agent.plan import State
from argus.analysis.host import AnalysisHost
from argus.analysis.snapshot import Analysis
from argus.dsl.diagnostics import Diagnostic
from argus.gate.result import GateResult
from argus.skills.context import site_contexts, with_compile
from argus.skills.document import Document
from argus.skills.facts import KernelFacts
from argus.verify import DEFAULT_RLIMIT

VERIFY_TIMEOUT_MS = 1000
RECENT = 32  # analyses kept: a run's best state, the proposals of a batch and the text being gated

# One host for the process: its verifier cache is shared by every state (a candidate usually differs from its
# state in one place, so most kernels' obligations were proved a step earlier). The analyses of the latest
# texts are kept, so that the gate takes the check a state was examined with instead of checking it again.
_host = AnalysisHost()
_recent: OrderedDict[str, Analysis] = OrderedDict()
_recent_lock = threading.Lock()


def analysis_of(source: str) -> Analysis:
    """The analysis of `source`: a recent one, or a new snapshot of the process's host."""
    with _recent_lock:
        found = _recent.pop(source, None)
    if found is None:
        found = _host.analyze("argus-agent:state", 0, source)
    with _recent_lock:
        _recent[source] = found
        while len(_recent) > RECENT:
            _recent.popitem(last=False)
    return found


def diagnostic_json(d: Diagnostic) -> dict[str, Any]:
    return {
        "code": d.code,
        "severity": d.severity.value,
        "line": d.range.start.line + 1,  # 1-based, as the CLI and the trajectory log print lines
        "message": d.message,
        "data": d.data,
    }


def facts_json(facts: KernelFacts | None) -> dict[str, Any]:
    if facts is None:
        return {}
    return {
        "kernel": facts.name,
        "constants": dict(facts.constants),
        "policy": dict(facts.policy),
        "tune": {k: list(v) for k, v in facts.tune.items()},
        "divisible": sorted(f"{s} % {b} == 0" for s, b in facts.divisible),
        "bounded": sorted(f"{n} <= {b}" for n, b in facts.bounded),
        "stage_bytes": facts.stage_bytes,
        "stages": facts.stages,
        "dot_in_loop": facts.dot_in_loop,
        "loaded": sorted(facts.loaded),
        "stored": sorted(facts.stored),
        "check_errors": facts.check_errors,
    }


def examine(source: str, kernel: str) -> State:
    """The state of `source`: its checker and verifier diagnostics and the facts of `kernel`.

    The verifier runs only when the file checks without errors (it needs the checker's IR); its errors are
    what `new_errors` compares between a state and a candidate."""
    analysis = analysis_of(source)
    doc = Document.parse(source, analysis.check)
    diagnostics = list(doc.check.diagnostics)
    if not doc.check.has_errors:
        diagnostics += analysis.verdicts("all", VERIFY_TIMEOUT_MS, DEFAULT_RLIMIT).diagnostics
    state = State(source=source, kernel=kernel, facts=facts_json(doc.facts.get(kernel)))
    state.context = context_json(doc, kernel)
    state.diagnostics = [diagnostic_json(d) for d in diagnostics]
    state.facts["verify_errors"] = len(verify_errors(state))
    return state


def context_json(doc: Document, kernel: str) -> list[dict[str, Any]] | None:
    """The kernel's sites as JSON (argus.skills.context); None when they cannot be computed."""
    try:
        sites = site_contexts(doc, kernel)
    except Exception:  # a context is a record of the state, never a reason to stop the loop
        return None
    return [s.model_dump(mode="json") for s in sites] or None


def add_compile(state: State, result: GateResult) -> None:
    """Put a gate run's compile facts (registers, spills, shared memory) into the state's context."""
    if state.context is None or result.compile.facts is None:
        return
    from argus.skills.context import SiteContext

    sites = with_compile([SiteContext.model_validate(s) for s in state.context], result)
    state.context = [s.model_dump(mode="json") for s in sites or []]


def errors(state: State) -> list[dict[str, Any]]:
    return [d for d in state.diagnostics if d["severity"] == "error"]


def verify_errors(state: State) -> list[dict[str, Any]]:
    """Errors of the data-flow invariants (AR3xx): what a candidate may fix, or must not add."""
    return [d for d in errors(state) if d["code"].startswith("AR3")]


def new_errors(before: State, after: State) -> list[dict[str, Any]]:
    """Errors of `after` that `before` does not have. Lines move under an edit, so errors are compared by
    code: `after`'s extra errors of a code beyond the count `before` had of it, in source order."""
    budget = Counter(d["code"] for d in errors(before))
    extra = []
    for d in errors(after):
        if budget[d["code"]] > 0:
            budget[d["code"]] -= 1
        else:
            extra.append(d)
    return extra
