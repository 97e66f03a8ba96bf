"""Points where a long verification may be stopped, or lend its thread to quick work.

z3's context is not thread-safe, so everything that builds z3 terms (a verification, a layout rendered for a
hover, a quick fix re-proved) runs on one thread. A verification of a long file takes seconds. Between two
obligations and between two kernels it calls `checkpoint`, and whoever started it decides there: stop it (the
text changed, raise `Superseded`), run quick work waiting for the thread (a hover's layout), or, between
kernels, let another document's verification go first (raise `Yielded`: the per-kernel cache keeps the
kernels already done). The CLI installs no hook, and then a checkpoint costs one attribute lookup.

It lives in the language core, not in argus.verify, so that the language server can name these exceptions
without importing the verifier (and z3) at start-up.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Literal

Kind = Literal["obligation", "kernel"]


class Interrupted(BaseException):
    """A verification ended early by its caller. A BaseException, like asyncio.CancelledError: the verifier's
    `except Exception` guards turn its own failures into unknown verdicts and must let this one through."""


class Superseded(Interrupted):
    """The text being verified is no longer current (or the document closed): drop the work."""


class Yielded(Interrupted):
    """Another verification waits; this one is resumed later (the kernels it finished are cached)."""


_local = threading.local()


@contextmanager
def checkpoints(hook: Callable[[Kind], None]) -> Iterator[None]:
    """Call `hook` at every checkpoint this thread reaches inside the block (nested blocks: the innermost)."""
    previous = getattr(_local, "hook", None)
    _local.hook = hook
    try:
        yield
    finally:
        _local.hook = previous


@contextmanager
def no_checkpoints() -> Iterator[None]:
    """Run the block with checkpoints switched off: quick work run from inside a hook must not re-enter it."""
    with checkpoints(lambda kind: None):
        yield


def checkpoint(kind: Kind) -> None:
    hook = getattr(_local, "hook", None)
    if hook is not None:
        hook(kind)
