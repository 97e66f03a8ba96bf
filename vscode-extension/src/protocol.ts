// Names shared with the server (server/argus/lsp). No `vscode` import.

/** workspace/executeCommand: run the gate for [uri, kernel?]; answers {uri, version, kernels, cancelled, error, results}. */
export const RUN_GATE = "argus.runGate";
/** workspace/executeCommand: ask the agent to refine [uri, kernel?] (only when the server lists it). */
export const REFINE = "argus.refine";
/** Notification the server sends when any gate run ends (argus.runGate, a skill's argus.applySkill, on save): the
 * same payload as the answer of argus.runGate. The client shows it in the status bar. */
export const GATE_RESULT_NOTIFICATION = "argus/gateResult";
/** The code action kind of optimization skills (server/argus/lsp/code_actions.py SKILL_KIND). */
export const SKILL_KIND = "refactor.rewrite";

/** Commands this extension registers in VS Code itself. The server may offer the same names over
 * executeCommand; the client must not register those a second time (VS Code refuses a duplicate command). */
export const EXTENSION_COMMANDS = [
  "argus.runGate",
  "argus.refine",
  "argus.showSkills",
  "argus.restartServer",
  "argus.showOutput",
] as const;

export function commandsToRegisterFromServer(serverCommands: readonly string[] | undefined): string[] {
  const owned = new Set<string>(EXTENSION_COMMANDS);
  return (serverCommands ?? []).filter((command) => !owned.has(command));
}
