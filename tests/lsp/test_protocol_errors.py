"""What the server does with input no well-behaved client sends, over raw stdio: a broken frame is skipped with one
log line and the next one is answered; a request whose parameters do not match its type gets InvalidParams, an
unknown method MethodNotFound, a request after `shutdown` InvalidRequest (JSON-RPC and LSP error codes)."""

from __future__ import annotations

import pytest
from lsp_support import EXAMPLES
from raw_stdio import RawServer, frame, notification, request

INVALID_REQUEST, METHOD_NOT_FOUND, INVALID_PARAMS = -32600, -32601, -32602

DOC = {"uri": "file:///tmp/never-opened.argus"}
HERE = {"line": 0, "character": 0}
HOVER = {"textDocument": DOC, "position": HERE}
SETTINGS = "argus.settings"


@pytest.fixture
async def server():
    raw = await RawServer.start()
    await raw.initialize()
    yield raw
    await raw.close()


def symbols(msg_id: int | str) -> dict:
    return request(msg_id, "textDocument/documentSymbol", {"textDocument": DOC})


def assert_quiet_except(raw: RawServer, lines: int) -> None:
    """The server's stderr has exactly `lines` lines, and no traceback."""
    text = raw.stderr.decode("utf-8", "replace")
    assert "Traceback" not in text, text
    assert len(raw.stderr_lines()) == lines, text


# ---- framing -----------------------------------------------------------------------------------------------
GOOD = frame(symbols(1))
BROKEN_FRAMES = {
    "content-length too long": frame(symbols(0), declared=len(frame(symbols(0))) + 40),
    "content-length too short": frame(symbols(0), declared=20),
    "garbage between messages": b"this is not a header\r\n\r\n{}\r\nnor this",
    "a header without its body": b"Content-Length: 80\r\n\r\n",
    "a body that is not JSON": frame(b'{"jsonrpc": "2.0", "id": 0, "method": nope}'),
    "a content-length that is not a number": b"Content-Length: twelve\r\n\r\n{}",
}


@pytest.mark.parametrize("broken", list(BROKEN_FRAMES))
async def test_after_a_broken_frame_the_next_request_is_answered(server: RawServer, broken: str):
    server.write(BROKEN_FRAMES[broken] + GOOD)
    answer = await server.response(1, timeout=10)
    assert answer["result"] == []
    server.send(symbols(2))  # and it goes on answering
    assert (await server.response(2, timeout=10))["result"] == []
    assert_quiet_except(server, lines=1)  # one line for the broken frame


async def test_each_broken_frame_is_logged_once_and_the_stream_stays_in_step(server: RawServer):
    stream = b"".join(BROKEN_FRAMES[name] + frame(symbols(k)) for k, name in enumerate(BROKEN_FRAMES, start=1))
    server.write(stream)
    for k in range(1, len(BROKEN_FRAMES) + 1):
        assert (await server.response(k, timeout=10))["result"] == []
    assert_quiet_except(server, lines=len(BROKEN_FRAMES))


async def test_a_message_split_across_writes_is_read_whole(server: RawServer):
    data = GOOD
    for start in range(0, len(data), 7):
        server.write(data[start : start + 7])
        await server.process.stdin.drain()
    assert (await server.response(1))["result"] == []
    assert_quiet_except(server, lines=0)


# ---- parameters that do not match the method's type --------------------------------------------------------
BAD_PARAMS = {
    "hover, line a word": ("textDocument/hover", {**HOVER, "position": {"line": "x", "character": 0}}),
    "hover, line a numeric string": ("textDocument/hover", {**HOVER, "position": {"line": "3", "character": 0}}),
    "hover, line a fraction": ("textDocument/hover", {**HOVER, "position": {"line": 1.5, "character": 0}}),
    "hover, line negative": ("textDocument/hover", {**HOVER, "position": {"line": -1, "character": 0}}),
    "hover, line a boolean": ("textDocument/hover", {**HOVER, "position": {"line": True, "character": 0}}),
    "hover, position null": ("textDocument/hover", {**HOVER, "position": None}),
    "hover, uri a number": ("textDocument/hover", {**HOVER, "textDocument": {"uri": 5}}),
    "hover, textDocument a string": ("textDocument/hover", {**HOVER, "textDocument": DOC["uri"]}),
    "hover, params an array": ("textDocument/hover", [DOC, HERE]),
    "hover, params a string": ("textDocument/hover", "hover"),
    "hover, no params": ("textDocument/hover", None),
    "completion, unknown trigger kind": ("textDocument/completion", {**HOVER, "context": {"triggerKind": 99}}),
    "definition, no position": ("textDocument/definition", {"textDocument": DOC}),
    "signature help, character a string": (
        "textDocument/signatureHelp",
        {**HOVER, "position": {"line": 0, "character": "0"}},
    ),
    "code action, diagnostics an object": (
        "textDocument/codeAction",
        {"textDocument": DOC, "range": {"start": HERE, "end": HERE}, "context": {"diagnostics": {}}},
    ),
    "code action, a diagnostic a number": (
        "textDocument/codeAction",
        {"textDocument": DOC, "range": {"start": HERE, "end": HERE}, "context": {"diagnostics": [5]}},
    ),
    "code lens, uri null": ("textDocument/codeLens", {"textDocument": {"uri": None}}),
    "document symbol, no textDocument": ("textDocument/documentSymbol", {}),
    "semantic tokens, textDocument a list": ("textDocument/semanticTokens/full", {"textDocument": [DOC]}),
    "execute command, command a number": ("workspace/executeCommand", {"command": 5}),
    "execute command, arguments a string": (
        "workspace/executeCommand",
        {"command": "argus.settings", "arguments": "x"},
    ),
    "execute command, an unknown command": ("workspace/executeCommand", {"command": "argus.noSuchCommand"}),
}


async def test_every_request_with_badly_typed_params_gets_invalid_params(server: RawServer):
    for msg_id, (method, params) in enumerate(BAD_PARAMS.values(), start=100):
        server.send(request(msg_id, method, params))
    server.send(symbols(1))  # a good request among them is answered as usual
    answers = {name: await server.response(msg_id) for msg_id, name in enumerate(BAD_PARAMS, start=100)}
    codes = {name: answer.get("error", {}).get("code") for name, answer in answers.items()}
    assert codes == dict.fromkeys(BAD_PARAMS, INVALID_PARAMS)
    assert (await server.response(1))["result"] == []
    text = server.stderr.decode("utf-8", "replace")
    assert "Traceback" not in text, text


async def test_an_unknown_method_gets_method_not_found(server: RawServer):
    server.send(request(7, "argus/noSuchMethod", {"x": 1}))
    server.send(request(8, "$/noSuchRequest"))
    assert (await server.response(7))["error"]["code"] == METHOD_NOT_FOUND
    assert (await server.response(8))["error"]["code"] == METHOD_NOT_FOUND


async def test_a_notification_sent_as_a_request_gets_invalid_request(server: RawServer):
    server.send(request(9, "workspace/didChangeConfiguration", {"settings": {}}))
    assert (await server.response(9))["error"]["code"] == INVALID_REQUEST


async def test_a_notification_with_bad_params_is_dropped_and_the_server_goes_on(server: RawServer):
    server.send(notification("textDocument/didOpen", {"textDocument": {"uri": 5, "version": "one"}}))
    server.send(symbols(1))
    assert (await server.response(1))["result"] == []
    assert_quiet_except(server, lines=1)


# ---- after shutdown ----------------------------------------------------------------------------------------
async def test_after_shutdown_requests_are_refused_notifications_dropped_and_exit_obeyed(server: RawServer):
    server.send(request("bye", "shutdown"))
    assert (await server.response("bye", timeout=1.0)) == {"jsonrpc": "2.0", "id": "bye", "result": None}
    server.send(symbols(1))
    server.send(request(2, "textDocument/hover", HOVER))
    server.send(request(3, "argus/noSuchMethod"))
    for msg_id in (1, 2, 3):
        assert (await server.response(msg_id, timeout=1.0))["error"]["code"] == INVALID_REQUEST
    text = (EXAMPLES / "buggy" / "matmul_next_k.argus").read_text()
    item = {"uri": "file:///tmp/after-shutdown.argus", "languageId": "argus", "version": 1, "text": text}
    server.send(notification("textDocument/didOpen", {"textDocument": item}))
    server.send(request(4, "shutdown"))  # answered (refused) only after the didOpen was read
    assert (await server.response(4, timeout=1.0))["error"]["code"] == INVALID_REQUEST
    assert server.notifications("textDocument/publishDiagnostics") == []
    server.send(notification("exit"))
    assert await server.exit_code(timeout=2.0) == 0
