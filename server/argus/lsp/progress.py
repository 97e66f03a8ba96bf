"""Cancellable work-done progress for a long job (a gate run, a refinement): the client's Cancel button cancels
the job's asyncio task, which kills whatever processes the job started."""

from __future__ import annotations

import asyncio
import logging
import uuid
from typing import TYPE_CHECKING

from lsprotocol import types

if TYPE_CHECKING:
    from argus.lsp.state import ServerState

logger = logging.getLogger(__name__)


async def begin_cancellable(
    server: ServerState, kind: str, begin: types.WorkDoneProgressBegin, task: asyncio.Task | None
) -> str | None:
    """Create a progress token `argus-KIND-…`, begin it with `begin`, and tie its cancellation to `task`.
    None when the client does not support progress or refuses the token (the job runs without one)."""
    if not server.client_supports("window", "work_done_progress"):
        return None
    token = f"argus-{kind}-{uuid.uuid4()}"
    try:
        await server.client.work_done_progress.create_async(token)
    except Exception:
        logger.exception("the client refused a progress token")
        return None
    server.client.work_done_progress.begin(token, begin)
    loop = asyncio.get_running_loop()
    cancelled = server.client.work_done_progress.tokens.get(token)
    if cancelled is not None and task is not None:
        cancelled.add_done_callback(lambda future: future.cancelled() and loop.call_soon_threadsafe(task.cancel))
    return token


def end(server: ServerState, token: str | None, message: str) -> None:
    """End the progress `token` (None: the job ran without one) with `message`, and forget the token."""
    if token is None:
        return
    server.client.work_done_progress.end(token, types.WorkDoneProgressEnd(message=message))
    server.client.work_done_progress.tokens.pop(token, None)
