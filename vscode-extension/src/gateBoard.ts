// The gate's state per document, for the status bar: a run going, and the last result. The status bar shows
// the active editor's document only (argus/gateResult names the document a run was for). No `vscode` import.

import type { GateSummary } from "./gateStatus";

export interface GateState {
  /** the label of a run going (`gate vector_add`) */
  running?: string;
  /** the last run's result */
  summary?: GateSummary;
}

export class GateBoard {
  private readonly states = new Map<string, GateState>();

  started(uri: string, label: string): void {
    this.states.set(uri, { ...this.states.get(uri), running: label });
  }

  /** A run ended; `summary` undefined (nothing to show) keeps the document's previous result. */
  finished(uri: string, summary: GateSummary | undefined): void {
    const previous = this.states.get(uri)?.summary;
    this.states.set(uri, { summary: summary ?? previous });
  }

  /** The document was closed: the server forgot its runs, and so does the status bar. */
  forget(uri: string): void {
    this.states.delete(uri);
  }

  /** What the status bar shows for the active editor's document (nothing for none). */
  stateOf(uri: string | undefined): GateState {
    return (uri !== undefined ? this.states.get(uri) : undefined) ?? {};
  }
}

/** The document a gate response or argus/gateResult notification is about (its `uri`). */
export function gateResponseUri(response: unknown): string | undefined {
  if (typeof response === "object" && response !== null && typeof (response as { uri?: unknown }).uri === "string") {
    return (response as { uri: string }).uri;
  }
  return undefined;
}
