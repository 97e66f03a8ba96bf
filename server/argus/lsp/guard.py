"""Handlers that fail answer with an empty result and one log line, never with a dead server."""

from __future__ import annotations

import functools
import logging
from collections.abc import Awaitable, Callable
from typing import Any

logger = logging.getLogger("argus.lsp")


def guarded(empty: Any = None) -> Callable[[Callable[..., Awaitable[Any]]], Callable[..., Awaitable[Any]]]:
    """Wrap an async handler: an exception is logged with its traceback and `empty` is returned."""

    def decorate(handler: Callable[..., Awaitable[Any]]) -> Callable[..., Awaitable[Any]]:
        @functools.wraps(handler)
        async def run(*args: Any) -> Any:
            try:
                return await handler(*args)
            except Exception:
                logger.exception("handler %s failed", handler.__name__)
                return empty() if callable(empty) else empty

        # pygls reads the handler's signature to decide whether to pass the server; ours never takes it
        del run.__wrapped__
        return run

    return decorate
