"""z3 contexts whose terms any thread may release, in the language server.

The language server builds z3 terms on one thread (argus.lsp.solver_thread), but what it hands back keeps some
(a layout keeps its terms to render them for a hover), and Python releases a term wherever its last reference
goes: on the event loop when a newer version's results replace the old ones, or on any thread when the cycle
collector runs. z3's reference counts are not atomic, so such a release, while the solver thread builds terms
in the same context, corrupts z3's term table (in CI: an ASSERTION VIOLATION at ast.cpp line 375, then a
segfault). In concurrent dec-ref mode z3 queues a release under a lock and carries it out on the thread that
next uses the context.

The mode is turned on by the server only (`release_anywhere`, on its solver thread before the first proof):
it changes when z3 reuses the ids of released terms, which steers its search, so a proof near its budget may
land on the other side of it. The command line and the tests, single-threaded, keep z3's default.
"""

from __future__ import annotations

import z3
from z3 import z3core

_anywhere = False


def releasable_anywhere(context: z3.Context) -> z3.Context:
    """`context`, with its terms' releases made safe from any thread; returns it."""
    z3core.Z3_enable_concurrent_dec_ref(context.ref())
    return context


def release_anywhere() -> None:
    """From now on every context the verifier makes, and z3's default one (the terms made without one:
    argus.verify.terms' coordinates and the index arithmetic), take releases from any thread."""
    global _anywhere
    if not _anywhere:
        _anywhere = True
        releasable_anywhere(z3.main_ctx())


def new_context() -> z3.Context:
    context = z3.Context()
    return releasable_anywhere(context) if _anywhere else context
