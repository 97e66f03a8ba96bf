"""The child process behind `argus.refine`: runs argus.agent.loop.refine and speaks JSON lines.

Why a process and not a thread of the server: the loop verifies every candidate with z3, whose context is not
thread-safe (the server's verifier thread uses it all the time), and a process is killed with its gate runs.

    stdin:  one JSON request line ({source, kernel, path, planner, budget, device, model, host, timeout_s}),
            then optionally the line `cancel`, which sets the threading.Event the loop polls between steps and
            interrupts a gate run in progress (the gate's runner is killed with its process group); the end of
            stdin (the server is gone) does the same
    stdout: JSON lines {"event": "started" | "step" | "done" | "unavailable" | "error" | "cancelled", ...}

`run_loop` is the one function that knows the agent's interface.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import tempfile
import threading
from pathlib import Path
from typing import IO, Any


def run_loop(request: dict[str, Any], cancel: threading.Event, on_step) -> Any:
    """argus.agent.loop.refine for one request; raises argus.agent.llm.PlannerUnavailable for an LLM planner
    whose server cannot be reached."""
    from argus.agent.gates import refine_gate
    from argus.agent.loop import refine
    from argus.agent.memory import Memory
    from argus.agent.planners import make_planner

    path = request.get("path")
    memory = Memory.for_file(path) if path else None
    planner = make_planner(request["planner"], memory=memory, model=request.get("model"), host=request.get("host"))
    with tempfile.TemporaryDirectory(prefix="argus-refine-") as scratch:
        gate = refine_gate(request["device"], float(request["timeout_s"]), Path(scratch) / "ceilings.json")
        return refine(
            request["source"], request["kernel"], planner, budget=int(request["budget"]), gate=gate, path=path,
            memory=memory, on_step=on_step, cancel=cancel,
        )  # fmt: skip


def step_event(step: Any) -> dict[str, Any]:
    proposal = step.proposal
    label = proposal.skill if proposal.kind == "skill" and proposal.skill else f"an edited {proposal.kind}"
    speedup = step.ms_before / step.ms_after if step.kept and step.ms_before and step.ms_after else None
    feedback = step.feedback
    return {
        "event": "step",
        "index": step.index,
        "label": label,
        "kept": step.kept,
        "speedup": speedup,
        "stage": feedback.stage if feedback is not None else None,
        "message": feedback.message if feedback is not None else "",
        "gate_runs": step.gate_runs,
    }


def done_event(result: Any, device: str) -> dict[str, Any]:
    start_gate = result.start.gate
    return {
        "event": "done",
        "kernel": result.kernel,
        "best": result.best.source,
        "kept": result.skills,
        "speedup": result.speedup,
        "gate_runs": result.gate_runs,
        "steps": len(result.steps),
        "stopped": result.stopped,
        "start_ms": result.start.ms,
        "device": (start_gate.device if start_gate is not None else None) or device,
        "start_status": result.start_status,
        "profile_message": start_gate.profile.message if start_gate is not None else "",
        "last_feedback": next((s.feedback.message for s in reversed(result.steps) if s.feedback), ""),
    }


def main(stdin: IO[str] = sys.stdin) -> int:
    # stdout carries the protocol only: whatever else the loop's libraries print goes to stderr
    out = os.fdopen(os.dup(sys.stdout.fileno()), "w", encoding="utf-8", buffering=1)
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    sys.stdout = sys.stderr
    lock = threading.Lock()

    def send(event: dict[str, Any]) -> None:
        with lock:
            out.write(json.dumps(event, default=str) + "\n")
            out.flush()

    cancel = threading.Event()
    main_thread = threading.main_thread()

    def watch_stdin() -> None:
        for line in stdin:
            if line.strip() == "cancel":
                break
        # `cancel`, or the end of stdin: the server is gone, and nobody will read what the loop finds
        cancel.set()  # the loop stops before its next step
        if main_thread.is_alive():  # and a gate run in progress stops now
            os.kill(os.getpid(), signal.SIGINT)

    try:
        request = json.loads(stdin.readline())
    except ValueError as problem:
        send({"event": "error", "message": f"a malformed request: {problem}"})
        return 1
    threading.Thread(target=watch_stdin, daemon=True).start()
    send({"event": "started", "pid": os.getpid()})
    try:
        from argus.agent.llm import PlannerUnavailable

        try:
            result = run_loop(request, cancel, lambda step: send(step_event(step)))
        except PlannerUnavailable as problem:
            send({"event": "unavailable", "message": str(problem)})
            return 0
        send(done_event(result, request["device"]))
    except KeyboardInterrupt:
        send({"event": "cancelled"})
    except Exception as problem:  # the server reports it; the worker's stderr has the traceback
        import traceback

        traceback.print_exc()
        send({"event": "error", "message": f"{type(problem).__name__}: {problem}"})
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
