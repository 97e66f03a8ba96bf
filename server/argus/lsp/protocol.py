"""The wire between the client and the server: frames in, messages handled, the answers the protocol owes.

- `FrameDecoder` turns the byte stream into JSON bodies. A broken frame (a wrong Content-Length, bytes between
  frames, a header without its body, a body that is not JSON) is dropped with one log line, and reading goes on at
  the next `Content-Length:` header, so the frames after it are still answered.
- `strict_converter`: lsprotocol's converter, except that a value must have its field's JSON type (cattrs turns
  "3", 1.5 and true into the integer 3, 1 and 1, and the string "x" into a list of characters).
- `ArgusProtocol` answers every request: parameters that do not fit the method's type get InvalidParams, a
  method nobody handles MethodNotFound, any request after `shutdown` InvalidRequest (notifications then are
  dropped, except `exit`). A closed output stops the writing, with one log line, instead of a traceback for
  every message that follows.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import re
import threading
from collections.abc import Awaitable, Callable, Generator
from typing import Any, Protocol

import attrs
import cattrs
from cattrs.cols import is_sequence, list_structure_factory
from lsprotocol import types
from pygls.exceptions import (
    JsonRpcException,
    JsonRpcInternalError,
    JsonRpcInvalidParams,
    JsonRpcInvalidRequest,
    JsonRpcMethodNotFound,
)
from pygls.protocol import (
    JsonRPCNotification,
    JsonRPCRequestMessage,
    JsonRPCResponseMessage,
    LanguageServerProtocol,
    default_converter,
    lsp_method,
)


class Stopping(Protocol):
    """What the protocol tells argus.lsp.lifecycle.Lifecycle."""

    ending: bool

    def client_gone(self, why: str) -> None: ...

    def exit(self, status: int, why: str) -> None: ...


class Served(Protocol):
    """What the protocol needs of the server it serves (argus.lsp.server.ArgusServer), beyond pygls'."""

    lifecycle: Stopping

    def cancel_work_of_request(self, msg_id: object) -> None: ...


logger = logging.getLogger(__name__)


# ---- frames -------------------------------------------------------------------------------------------------
# A raw CR LF cannot occur inside a JSON string, so this never matches inside a well-formed body.
HEADER = re.compile(rb"Content-Length:[ \t]*(\d+)[ \t]*\r\n", re.IGNORECASE)
OTHER_HEADER = re.compile(rb"[A-Za-z][A-Za-z0-9-]*:[^\r\n]*\r\n")
HEADER_LIMIT = 4096  # bytes of header lines before the blank line that ends them
TAIL = 64  # bytes kept from junk without a header: they may be the start of one
JUNK_LIMIT = 1 << 20  # junk kept while waiting for a header before the rest is dropped
BODY_LIMIT = 1 << 30


class FrameDecoder:
    """Bytes in, JSON bodies out, resynchronising on the next header after a broken frame."""

    def __init__(self, report: Callable[[str], None] | None = None) -> None:
        self._buffer = bytearray()
        self._body: tuple[int, int] | None = None  # (start, end) in the buffer of the body being read
        self._scanned = 0  # how far the search for a stray header inside that body got
        self._quiet = False  # the junk being skipped is the rest of a frame already reported
        self._report = report or (lambda problem: logger.warning("skipped a broken frame: %s", problem))

    def feed(self, data: bytes) -> list[Any]:
        self._buffer += data
        bodies = []
        while (step := self._read_body() if self._body else self._read_header()) is not None:
            if step is not _SKIPPED:
                bodies.append(step)
        return bodies

    def _broken(self, problem: str, drop: int) -> object:
        del self._buffer[:drop]
        self._body = None
        if not self._quiet:
            self._report(problem)
        self._quiet = True
        return _SKIPPED

    def _read_header(self) -> object | None:
        buffer = self._buffer
        match = HEADER.search(buffer)
        if match is None:
            if len(buffer) > JUNK_LIMIT:
                return self._skip_junk(len(buffer) - TAIL)
            return None
        if match.start() > 0:
            return self._skip_junk(match.start())
        self._quiet = False
        at = match.end()
        while buffer[at : at + 2] != b"\r\n":
            if len(buffer) < at + 2 or (line_end := buffer.find(b"\r\n", at)) < 0:
                return self._broken("a header longer than 4 KiB", match.end()) if at > HEADER_LIMIT else None
            if not OTHER_HEADER.fullmatch(buffer, at, line_end + 2) or HEADER.match(buffer, at):
                return self._broken("a Content-Length header without its body", at)
            at = line_end + 2
        length = int(match.group(1))
        if length > BODY_LIMIT:
            return self._broken(f"a Content-Length of {length} bytes", at + 2)
        self._body = (at + 2, at + 2 + length)
        self._scanned = at + 2
        return _SKIPPED

    def _skip_junk(self, end: int) -> object:
        if not self._buffer[:end].strip():  # blank lines between frames are harmless
            del self._buffer[:end]
            return _SKIPPED
        return self._broken(f"{end} bytes that are not a frame", end)

    def _read_body(self) -> object | None:
        start, end = self._body
        buffer = self._buffer
        if len(buffer) < end:
            # a header where the body should be: the Content-Length was too long, or the body never came
            stray = HEADER.search(buffer, max(start, self._scanned - TAIL))
            if stray is not None:
                return self._broken(f"a Content-Length of {end - start} runs into the next frame", stray.start())
            self._scanned = len(buffer)
            return None
        try:
            body = json.loads(bytes(buffer[start:end]))
        except (ValueError, RecursionError):
            # keep what followed the header: the next frame may begin inside what was taken for this body
            if (stray := HEADER.search(buffer, start, end + TAIL)) is not None and stray.start() < end:
                return self._broken(f"a Content-Length of {end - start} runs into the next frame", start)
            return self._broken(f"a body of {end - start} bytes that is not JSON", start)
        del buffer[:end]
        self._body = None
        return body


_SKIPPED = object()


async def serve(read: Callable[[], Awaitable[bytes]], protocol: ArgusProtocol) -> None:
    """Hand what `read` returns to `protocol`, one decoded frame at a time, until it returns b"" (end of input)."""
    decoder = FrameDecoder()
    while chunk := await read():
        for body in decoder.feed(chunk):
            try:
                protocol.receive(body)
            except Exception:  # a bug in handling one message must not stop the reading
                logger.exception("could not handle a message")


def stdin_reader(fd: int = 0) -> Callable[[], Awaitable[bytes]]:
    """The next chunk of stdin, read by a daemon thread: unlike pygls' thread pool, nothing waits for it at exit,
    and stdin need not be something the event loop can poll (a file, a terminal)."""
    loop = asyncio.get_running_loop()
    chunks: asyncio.Queue[bytes] = asyncio.Queue()

    def pump() -> None:
        while True:
            try:
                chunk = os.read(fd, 1 << 16)
            except OSError:
                chunk = b""
            try:
                loop.call_soon_threadsafe(chunks.put_nowait, chunk)
            except RuntimeError:  # the loop has closed
                return
            if not chunk:
                return

    threading.Thread(target=pump, name="argus-stdin", daemon=True).start()
    return chunks.get


# ---- types --------------------------------------------------------------------------------------------------
def _strict(json_type: str, fits: Callable[[Any], bool]) -> Callable[[Any, type], Any]:
    def structure(value: Any, kind: type) -> Any:
        if not fits(value):
            raise TypeError(f"expected {json_type}, got {type(value).__name__}")
        return kind(value)  # kind is the field's type: an int, or an IntEnum (which checks the value)

    return structure


def _is_integer(value: Any) -> bool:
    if isinstance(value, bool):
        return False
    return isinstance(value, int) or (isinstance(value, float) and value.is_integer())


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _array_factory(kind: type, converter: cattrs.Converter) -> Callable[[Any, type], Any]:
    structure_items = list_structure_factory(kind, converter)

    def structure(value: Any, target: type) -> Any:
        if not isinstance(value, list):
            raise TypeError(f"expected an array, got {type(value).__name__}")
        return structure_items(value, target)

    return structure


def strict_converter() -> cattrs.Converter:
    converter = default_converter()
    converter.register_structure_hook(int, _strict("an integer", _is_integer))
    converter.register_structure_hook(float, _strict("a number", _is_number))
    converter.register_structure_hook(bool, _strict("a boolean", lambda value: isinstance(value, bool)))
    converter.register_structure_hook(str, _strict("a string", lambda value: isinstance(value, str)))
    converter.register_structure_hook_factory(is_sequence, _array_factory)
    return converter


def _problems(error: Exception) -> str:
    """cattrs' account of what did not fit, e.g. `expected int @ params.position.line`, at most three of them."""
    if isinstance(error, cattrs.BaseValidationError):
        found = cattrs.transform_error(error, path="")
        return "; ".join(p.replace("invalid value for type, ", "").replace("@ .", "@ ") for p in found[:3])
    return str(error) or type(error).__name__


def _is_id(value: Any) -> bool:
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


# ---- the protocol -------------------------------------------------------------------------------------------
class ArgusProtocol(LanguageServerProtocol):
    """pygls' protocol, plus: every request answered (above); `exit` hands over to argus.lsp.lifecycle; and a
    `$/cancelRequest` also cancels the background work the request started (a gate run awaited by
    `workspace/executeCommand` keeps running otherwise, since pygls only cancels the future it answers through).
    """

    _server: Served  # a pygls LanguageServer too

    def __init__(self, server: Served, converter: cattrs.Converter) -> None:
        super().__init__(server, converter)
        self.output_closed = False

    @property
    def shut_down(self) -> bool:
        """Whether the client has sent `shutdown` (it is answered by now, or about to be)."""
        return self._shutdown

    # ---- in ----
    def receive(self, data: Any) -> None:
        """Handle one decoded frame."""
        if self._server.lifecycle.ending:
            return
        if not isinstance(data, dict) or data.get("jsonrpc") != self.VERSION:
            logger.warning("skipped a frame that is not a JSON-RPC 2.0 message")
            return
        if "method" in data:
            self._receive_call(data)
        elif "id" in data:
            self._receive_response(data)
        else:
            logger.warning("skipped a JSON-RPC message with neither a method nor an id")

    def _receive_call(self, data: dict[str, Any]) -> None:
        method, is_request, msg_id = data["method"], "id" in data, data.get("id")
        if is_request and not _is_id(msg_id):
            logger.warning("skipped a request whose id is neither a string nor an integer: %r", msg_id)
            return
        if not isinstance(method, str):
            if is_request:
                return self._refuse(msg_id, JsonRpcInvalidRequest(f"the method must be a string, not {method!r}"))
            logger.warning("skipped a notification whose method is not a string: %r", method)
            return
        if self._shutdown and method != types.EXIT:
            if is_request:  # LSP: after shutdown, every request is an error
                self._refuse(msg_id, JsonRpcInvalidRequest(f"{method}: the server is shutting down"))
            return
        kind = self.get_message_type(method)
        if kind is None:
            if is_request and not self._handles(method):
                return self._refuse(msg_id, JsonRpcMethodNotFound.of(method))
            data = {"params": None, **data}  # pygls' untyped messages need the field
            kind = JsonRPCRequestMessage if is_request else JsonRPCNotification
        elif is_request and "id" not in attrs.fields_dict(kind):  # handled as a notification, it would go unanswered
            return self._refuse(msg_id, JsonRpcInvalidRequest(f"{method} is a notification, not a request"))
        try:
            message = self._converter.structure(data, kind)
        except Exception as error:
            problem = f"{method}: invalid params: {_problems(error)}"
            if is_request:
                return self._refuse(msg_id, JsonRpcInvalidParams(problem))
            logger.warning("dropped a notification %s", problem)
            return
        self.handle_message(message)

    def _handles(self, method: str) -> bool:
        return method in self.fm.builtin_features or method in self.fm.features

    def _receive_response(self, data: dict[str, Any]) -> None:
        msg_id = data.get("id")
        if not _is_id(msg_id):
            logger.warning("skipped an answer whose id is neither a string nor an integer: %r", msg_id)
            return
        kind = self._result_types.pop(msg_id, None)
        if "error" in data:
            kind = types.ResponseErrorMessage
        try:
            message = self._converter.structure(data, kind or JsonRPCResponseMessage)
        except Exception as error:
            logger.warning("the client's answer to %r does not fit its type: %s", msg_id, _problems(error))
            future = self._request_futures.pop(msg_id, None)
            if future is not None and not future.done():
                future.set_exception(JsonRpcInternalError(f"a malformed answer: {_problems(error)}"))
            return
        if self._shutdown:  # what it answers was cancelled by the shutdown
            self._request_futures.pop(msg_id, None)
            return
        self.handle_message(message)

    def _send_handler_result(self, future: Any, *, msg_id: Any) -> None:
        """pygls' answer, except that a request refused on purpose (an unknown command, its arguments) is one log
        line, not a traceback."""
        if not future.cancelled() and isinstance(error := future.exception(), JsonRpcException):
            self._request_futures.pop(msg_id, None)
            self._refuse(msg_id, error)
            return
        super()._send_handler_result(future, msg_id=msg_id)

    def _refuse(self, msg_id: Any, error: JsonRpcException) -> None:
        logger.warning("refused request %r: %s", msg_id, error.message)
        self._send_response(msg_id, error=error.to_response_error())

    # ---- out ----
    def _send_data(self, data: Any) -> None:
        """pygls' writer, except that a closed output is said once and ends the server (the client is gone),
        rather than logged with a traceback for each message that follows."""
        if not data or self.output_closed or self.writer is None:
            return
        try:
            body = json.dumps(data, default=self._serialize_message).encode(self.CHARSET)
        except (TypeError, ValueError) as error:
            logger.error("could not encode a message for the client: %s", error)
            return
        header = f"Content-Length: {len(body)}\r\nContent-Type: {self.CONTENT_TYPE}; charset={self.CHARSET}\r\n\r\n"
        try:
            self.writer.write(header.encode("ascii") + body)
        except (OSError, ValueError) as error:  # a broken pipe, a reset socket, a closed file
            self.output_closed = True
            self._server.lifecycle.client_gone(f"writing to the client failed ({error})")

    # ---- lifecycle ----
    @lsp_method(types.SHUTDOWN)
    def lsp_shutdown(self, *args: Any) -> Generator[Any, Any, None]:
        if (user_handler := self.fm.features.get(types.SHUTDOWN)) is not None:
            yield user_handler, args, None
        current = self.msg_id
        # A copy: cancelling a future runs its callbacks at once, and they remove it from the dictionary.
        for msg_id, future in list(self._request_futures.items()):
            if msg_id != current and not future.done():
                future.cancel()
        self._shutdown = True

    @lsp_method(types.EXIT)
    def lsp_exit(self, *args: Any) -> None:
        self._server.lifecycle.exit(0 if self._shutdown else 1, "exit")

    def _handle_cancel_notification(self, msg_id: Any) -> None:
        super()._handle_cancel_notification(msg_id)
        self._server.cancel_work_of_request(msg_id)

    def _handle_notification(self, method_name: str, params: Any) -> None:
        """pygls' handling, without its leak: it files every notification's future under a fresh uuid in the
        table of request futures and never takes it out (only a response does that for a request), so each
        didChange kept a future, a uuid and a lock: about 3 MB per 1,000 edits, for as long as the server ran."""
        before = set(self._request_futures)
        super()._handle_notification(method_name, params)
        for key in set(self._request_futures) - before:
            future = self._request_futures[key]
            if future.done():
                self._request_futures.pop(key, None)
            else:
                future.add_done_callback(lambda _, key=key: self._request_futures.pop(key, None))

    # ---- text synchronisation ----
    # The server keeps its own copy of each document (argus.lsp.documents, edited by argus.lsp.text_sync).
    # pygls' built-ins would keep a second one, split into lines with str.splitlines, and on the way they
    # rewrite a change's range in place (a character past pygls' idea of the line's end becomes one before
    # it), so the handler would see positions the client never sent. These hand the message on untouched.
    def _user_handler(self, method: str, params: Any) -> Generator[Any, Any, None]:
        if (user_handler := self.fm.features.get(method)) is not None:
            yield user_handler, (params,), None

    @lsp_method(types.TEXT_DOCUMENT_DID_OPEN)
    def lsp_text_document__did_open(self, params: types.DidOpenTextDocumentParams) -> Generator[Any, Any, None]:
        yield from self._user_handler(types.TEXT_DOCUMENT_DID_OPEN, params)

    @lsp_method(types.TEXT_DOCUMENT_DID_CHANGE)
    def lsp_text_document__did_change(self, params: types.DidChangeTextDocumentParams) -> Generator[Any, Any, None]:
        yield from self._user_handler(types.TEXT_DOCUMENT_DID_CHANGE, params)

    @lsp_method(types.TEXT_DOCUMENT_DID_CLOSE)
    def lsp_text_document__did_close(self, params: types.DidCloseTextDocumentParams) -> Generator[Any, Any, None]:
        yield from self._user_handler(types.TEXT_DOCUMENT_DID_CLOSE, params)
