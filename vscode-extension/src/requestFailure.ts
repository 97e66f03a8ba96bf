// How a request the extension sent to the server ended, when it did not end with an answer. No `vscode` import.
//
// While the extension stops or restarts the server, the requests still in flight end with an error: the server
// cancels them on shutdown (pygls answers `Request with id "8" is canceled`, code RequestCancelled), the connection
// rejects them when it is disposed (PendingResponseRejected), or the client refuses them (ConnectionInactive).
// Those are the extension's own doing and are not shown to the user.

/** JSON-RPC and LSP error codes (vscode-jsonrpc ErrorCodes, vscode-languageserver-protocol LSPErrorCodes). */
export const ERROR_CODES = {
  RequestCancelled: -32800,
  ServerCancelled: -32802,
  PendingResponseRejected: -32097,
  ConnectionInactive: -32096,
} as const;

export type RequestFailure =
  /** the extension stopped or restarted the server meanwhile: say nothing */
  | { kind: "stopped-by-us" }
  /** the server cancelled the request (not because the extension stopped it): no error to show */
  | { kind: "cancelled" }
  /** the connection went away although the extension did not stop the server: it exited or crashed */
  | { kind: "server-gone"; message: string }
  | { kind: "error"; message: string };

/** `error` from a request to a server that the extension is stopping (or has stopped) when `stopping`. */
export function classifyRequestFailure(error: unknown, stopping: boolean): RequestFailure {
  const code = isObject(error) && typeof error.code === "number" ? error.code : undefined;
  // vscode.CancellationError (what vscode-languageclient turns a cancelled request into) is named "Canceled"
  const cancelled =
    code === ERROR_CODES.RequestCancelled ||
    code === ERROR_CODES.ServerCancelled ||
    (error instanceof Error && error.name === "Canceled");
  const gone =
    code === ERROR_CODES.PendingResponseRejected || code === ERROR_CODES.ConnectionInactive || error instanceof ServerStoppedError;
  if (stopping && (cancelled || gone)) {
    return { kind: "stopped-by-us" };
  }
  if (cancelled) {
    return { kind: "cancelled" };
  }
  if (gone) {
    return { kind: "server-gone", message: "the Argus language server stopped before it answered (see the Argus log)" };
  }
  return { kind: "error", message: error instanceof Error ? error.message : String(error) };
}

/** What executeServerCommand throws: the failure, classified, and the error it came from. */
export class ServerRequestError extends Error {
  constructor(
    readonly failure: RequestFailure,
    readonly cause: unknown,
  ) {
    super(failure.kind === "error" || failure.kind === "server-gone" ? failure.message : failure.kind);
    this.name = "ServerRequestError";
  }
}

/** A request whose server process ended before it answered (the extension stopped it, or it exited). */
export class ServerStoppedError extends Error {
  constructor() {
    super("the Argus language server stopped before it answered");
    this.name = "ServerStoppedError";
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null;
}
