"""z3 terms built on one thread and released on another, while the first goes on building terms in the same
context: what the language server does when a newer version's results replace the old ones on its event loop
(argus.verify.contexts, turned on by the server's solver thread). Run in a child process, since a corrupted z3
term table ends it with a segfault."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

RACE = textwrap.dedent(
    """
    import queue, sys, threading
    import z3
    from argus.verify.contexts import new_context, release_anywhere

    release_anywhere()  # what the language server's solver thread does first
    context = z3.main_ctx() if sys.argv[1] == "main" else new_context()
    handoff = queue.Queue(maxsize=2)

    def solver_thread():
        xs = [z3.BitVec(f"x{i}", 32, context) for i in range(8)]
        for round in range(ROUNDS):
            handoff.put([xs[i % 8] * (round * 100000 + i) + xs[(i + 3) % 8] for i in range(5000)])
            solver = z3.Solver(ctx=context)
            solver.set("timeout", 20)
            solver.add(xs[0] * xs[1] * xs[2] == round * 7919 + 12345, z3.ULT(xs[0], 60000), xs[1] > 3)
            solver.check()  # builds terms inside z3 while the other thread releases the last batch
        handoff.put(None)

    threading.Thread(target=solver_thread).start()
    while (terms := handoff.get()) is not None:
        while terms:
            terms.pop()  # each term released here, on the thread that did not build it
    print("survived")
    """
)
# With a context not in concurrent dec-ref mode the child died (SIGSEGV, once SIGABRT) in each of 12 runs of
# 15 to 30 rounds, within 0.8 s; with it, 15 rounds take about 3 s.
ROUNDS = 15


@pytest.mark.parametrize("which", ["new", "main"])
def test_terms_released_on_another_thread_leave_the_context_whole(which: str):
    script = RACE.replace("ROUNDS", str(ROUNDS))
    done = subprocess.run([sys.executable, "-c", script, which], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, f"exit {done.returncode}: {done.stderr[-2000:]}"
    assert done.stdout.strip() == "survived"


def test_the_servers_solver_thread_turns_the_mode_on_before_its_first_job():
    # in a child process: the mode, once on, stays on for z3's default context, and the other tests keep z3's own
    probe = (
        "from argus.lsp.solver_thread import SolverThread\n"
        "from argus.verify import contexts\n"
        "before = contexts._anywhere\n"
        "solver = SolverThread()\n"
        "print(before, solver.executor.submit(lambda: contexts._anywhere).result(timeout=60))\n"
        "solver.executor.shutdown()\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["False", "True"]
