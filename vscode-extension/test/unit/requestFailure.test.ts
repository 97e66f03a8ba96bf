import assert from "node:assert/strict";
import { describe, it } from "node:test";

import { classifyRequestFailure, ERROR_CODES, ServerRequestError, ServerStoppedError } from "../../src/requestFailure";

// what vscode-jsonrpc rejects a request with: a ResponseError, an Error with a numeric code
const responseError = (code: number, message: string) => Object.assign(new Error(message), { code });
// pygls's answer to a request it cancelled on shutdown, as the user saw it after "Restart Language Server"
const canceledBy = responseError(ERROR_CODES.RequestCancelled, 'Request with id "8" is canceled');
// vscode.CancellationError, which vscode-languageclient throws for a cancelled request
const vscodeCanceled = Object.assign(new Error("Canceled"), { name: "Canceled" });

describe("classifyRequestFailure", () => {
  it("says nothing about a request the extension's own stop or restart ended", () => {
    for (const error of [
      canceledBy,
      responseError(ERROR_CODES.ServerCancelled, "server cancelled"),
      responseError(ERROR_CODES.PendingResponseRejected, "Pending response rejected since connection got disposed"),
      responseError(ERROR_CODES.ConnectionInactive, "Client is not running"),
      vscodeCanceled,
      new ServerStoppedError(),
    ]) {
      assert.deepEqual(classifyRequestFailure(error, true), { kind: "stopped-by-us" }, error.message);
    }
  });

  it("tells a cancellation by the server from a server that went away, when the extension did not stop it", () => {
    assert.deepEqual(classifyRequestFailure(canceledBy, false), { kind: "cancelled" });
    assert.deepEqual(classifyRequestFailure(vscodeCanceled, false), { kind: "cancelled" });
    for (const error of [responseError(ERROR_CODES.PendingResponseRejected, "Pending response rejected"), new ServerStoppedError()]) {
      const failure = classifyRequestFailure(error, false);
      assert.equal(failure.kind, "server-gone");
      assert.ok(failure.kind === "server-gone" && !failure.message.includes("Pending"), "the user reads why, not the RPC's words");
    }
  });

  it("keeps any other error, stopping or not, with its message", () => {
    const internal = responseError(-32603, "RuntimeError: dictionary changed size during iteration");
    assert.deepEqual(classifyRequestFailure(internal, true), { kind: "error", message: "RuntimeError: dictionary changed size during iteration" });
    assert.deepEqual(classifyRequestFailure("no such kernel", false), { kind: "error", message: "no such kernel" });
  });
});

describe("ServerRequestError", () => {
  it("carries the failure and the error it came from", () => {
    const error = new ServerRequestError(classifyRequestFailure(canceledBy, true), canceledBy);
    assert.equal(error.failure.kind, "stopped-by-us");
    assert.equal(error.cause, canceledBy);
    assert.ok(!error.message.includes("Request with id"));
  });
});
