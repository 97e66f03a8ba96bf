// The version a resolved code action's edit was made for, checked against the document before VS Code applies
// it. VS Code's language client drops the version of a code action's edit, so without this an edit the server
// made for version 7 would be applied by position to version 8 if a keystroke landed between the resolve and
// the apply. The server names the version in the action's data (argus.lsp.code_actions).

/** What the server puts in a code action's data: the document and the version its edit is for. */
export interface EditOrigin {
  uri: string;
  version: number;
}

/** The origin of an action's edit from its data, or undefined when the data carries none. */
export function editOrigin(data: unknown): EditOrigin | undefined {
  if (typeof data !== "object" || data === null) {
    return undefined;
  }
  const { uri, version } = data as { uri?: unknown; version?: unknown };
  if (typeof uri !== "string" || typeof version !== "number" || !Number.isInteger(version)) {
    return undefined;
  }
  return { uri, version };
}

/** Why the edit must not be applied to a document now at `current` (undefined: it may). */
export function staleEditReason(origin: EditOrigin, current: number | undefined): string | undefined {
  if (current === undefined) {
    return "the document is not open";
  }
  if (current !== origin.version) {
    return `the document changed while the edit was made (it was for version ${origin.version}, the document is at ${current})`;
  }
  return undefined;
}
