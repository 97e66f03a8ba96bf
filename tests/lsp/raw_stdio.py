"""A raw JSON-RPC peer for `argus serve`: bytes in, parsed frames out, and the server's stderr. For the tests that
send what no well-behaved client would (broken framing, badly typed parameters), which pytest-lsp's client
cannot."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import sys
from typing import Any

SERVER = [sys.executable, "-m", "argus", "serve"]


def frame(message: dict[str, Any] | bytes, declared: int | None = None) -> bytes:
    """`message` with its header; `declared` overrides the Content-Length (to send a wrong one)."""
    body = message if isinstance(message, bytes) else json.dumps(message).encode()
    return b"Content-Length: %d\r\n\r\n" % (len(body) if declared is None else declared) + body


def request(msg_id: int | str, method: str, params: Any = None) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": msg_id, "method": method}
    if params is not None:
        message["params"] = params
    return message


def notification(method: str, params: Any = None) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
    if params is not None:
        message["params"] = params
    return message


class RawServer:
    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process
        self.received: list[dict[str, Any]] = []
        self.stderr = bytearray()
        self._arrived = asyncio.Event()
        self._tasks = [asyncio.create_task(self._read_stdout()), asyncio.create_task(self._read_stderr())]

    @classmethod
    async def start(cls, env: dict[str, str] | None = None) -> RawServer:
        process = await asyncio.create_subprocess_exec(
            *SERVER,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env={**os.environ, **(env or {})},
        )
        return cls(process)

    async def _read_stdout(self) -> None:
        stream = self.process.stdout
        with contextlib.suppress(asyncio.IncompleteReadError, ConnectionError):
            while True:
                header = await stream.readuntil(b"\r\n\r\n")
                length = next(
                    int(line.split(b":", 1)[1])
                    for line in header.split(b"\r\n")
                    if line.lower().startswith(b"content-length:")
                )
                self.received.append(json.loads(await stream.readexactly(length)))
                self._arrived.set()

    async def _read_stderr(self) -> None:
        while chunk := await self.process.stderr.read(65536):
            self.stderr += chunk

    def write(self, data: bytes) -> None:
        self.process.stdin.write(data)

    def send(self, message: dict[str, Any]) -> None:
        self.write(frame(message))

    async def response(self, msg_id: int | str | None, timeout: float = 10.0) -> dict[str, Any]:
        """The answer to request `msg_id`, waiting at most `timeout` seconds for it."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while True:
            found = [m for m in self.received if "method" not in m and m.get("id") == msg_id]
            if found:
                return found[0]
            left = deadline - loop.time()
            if left <= 0:
                raise AssertionError(f"no answer to request {msg_id!r} within {timeout} s; got {self.received}")
            self._arrived.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._arrived.wait(), timeout=left)

    def notifications(self, method: str) -> list[dict[str, Any]]:
        return [m for m in self.received if m.get("method") == method and "id" not in m]

    async def initialize(self) -> None:
        self.send(request("init", "initialize", {"processId": None, "rootUri": None, "capabilities": {}}))
        answer = await self.response("init")
        assert "result" in answer, answer
        self.send(notification("initialized", {}))

    async def exit_code(self, timeout: float) -> int:
        return await asyncio.wait_for(self.process.wait(), timeout=timeout)

    def stderr_lines(self) -> list[str]:
        return self.stderr.decode("utf-8", "replace").splitlines()

    async def close(self) -> None:
        """Shut the server down politely if it is still there, else kill it; either way, wait for it."""
        if self.process.returncode is None:
            with contextlib.suppress(ConnectionError, RuntimeError):
                self.send(request("close", "shutdown"))
                self.send(notification("exit"))
            try:
                await asyncio.wait_for(self.process.wait(), timeout=5)
            except TimeoutError:
                self.process.kill()
                await self.process.wait()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError, TimeoutError):
                await asyncio.wait_for(task, timeout=2)
