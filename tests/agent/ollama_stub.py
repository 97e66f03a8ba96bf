"""A loopback server speaking enough of the Ollama HTTP API for the official `ollama` client: the nearest real
thing to an LLM server in a test (DESIGN.md). Replies are scripted, in order; every request is recorded so a
test can read the prompt the planner sent.

    POST /api/chat    non-streaming chat ("stream": false): the next scripted reply as the assistant message;
                      404 {"error": "model 'x' not found"} for a model the stub does not hold
    GET  /api/tags    the models it holds
    GET  /api/version a version string
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

CREATED_AT = "2025-01-01T00:00:00.000000Z"


@dataclass
class OllamaStub:
    models: list[str] = field(default_factory=lambda: ["stub-coder:latest"])
    replies: list[str] = field(default_factory=list)  # assistant contents, served in order
    requests: list[dict[str, Any]] = field(default_factory=list)  # (method, path, body) of every request
    host: str = ""
    delay_s: float = 0.0  # before each chat reply: a slow model

    @property
    def model(self) -> str:
        return self.models[0]

    def script(self, *replies: str | dict[str, Any]) -> None:
        """Queue replies: a dict is sent as its JSON text, a string as it is (malformed answers included)."""
        self.replies += [r if isinstance(r, str) else json.dumps(r) for r in replies]

    def chats(self) -> list[dict[str, Any]]:
        return [r["body"] for r in self.requests if r["path"] == "/api/chat"]

    def holds(self, model: str) -> bool:
        return model in self.models or f"{model}:latest" in self.models

    def chat(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        model = body.get("model", "")
        if not self.holds(model):
            return 404, {"error": f"model '{model}' not found"}
        if body.get("stream") is not False:
            return 400, {"error": "the stub answers only non-streaming chats"}
        if not self.replies:
            return 500, {"error": "the stub has no scripted reply left"}
        content = self.replies.pop(0)
        time.sleep(self.delay_s)
        return 200, {
            "model": model,
            "created_at": CREATED_AT,
            "message": {"role": "assistant", "content": content},
            "done": True,
            "done_reason": "stop",
            "total_duration": 1_000_000,
            "prompt_eval_count": 1,
            "eval_count": 1,
        }

    def tags(self) -> dict[str, Any]:
        return {
            "models": [
                {"name": m, "model": m, "modified_at": CREATED_AT, "size": 1, "digest": "0" * 64, "details": {}}
                for m in self.models
            ]
        }


def handler_for(stub: OllamaStub) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive, as httpx expects

        def do_GET(self) -> None:
            stub.requests.append({"method": "GET", "path": self.path, "body": None})
            if self.path == "/api/tags":
                self.reply(200, stub.tags())
            elif self.path == "/api/version":
                self.reply(200, {"version": "0.0.0-stub"})
            else:
                self.reply(404, {"error": f"no route {self.path}"})

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            try:
                body = json.loads(self.rfile.read(length) or b"{}")
            except json.JSONDecodeError:
                self.reply(400, {"error": "the request body is not JSON"})
                return
            stub.requests.append({"method": "POST", "path": self.path, "body": body})
            if self.path == "/api/chat":
                self.reply(*stub.chat(body))
            else:
                self.reply(404, {"error": f"no route {self.path}"})

        def reply(self, status: int, payload: dict[str, Any]) -> None:
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json; charset=utf-8")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: Any) -> None:  # quiet: pytest shows failures, not traffic
            pass

    return Handler


@contextmanager
def serve(stub: OllamaStub) -> Iterator[OllamaStub]:
    """Runs `stub` on a free loopback port (its `.host` is then the URL) until the block ends. A test file's
    fixture is `with serve(OllamaStub()) as stub: yield stub` (a fixture imported from here would shadow the
    test functions' argument of the same name, which ruff flags)."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler_for(stub))
    server.daemon_threads = True
    stub.host = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield stub
    finally:
        server.shutdown()
        server.server_close()
