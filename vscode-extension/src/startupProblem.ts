// Why the server did not start, in words a user can act on. No `vscode` import.

import { describeLaunch, type ServerLaunch } from "./serverCommand";

/** The outcome of running the launch's program once on its own (`<python> -c "import argus.lsp.server"`). */
export interface ProbeResult {
  /** Set when the program could not be started at all (ENOENT, EACCES). */
  spawnErrorCode?: string;
  exitCode: number | null;
  stderr: string;
}

export const PROBE_ARGS = ["-c", "import argus.lsp.server"];

export const INSTALL_HINT =
  "Install it into that interpreter with `pip install -e .` from the Argus repository, " +
  "or point the setting argus.server.pythonPath at a Python that has it (e.g. the repository's .venv/bin/python).";

export interface StartupProblem {
  /** One line for the notification. */
  message: string;
  /** The setting most likely to fix it. */
  setting: "argus.server.pythonPath" | "argus.server.command";
}

export function explainStartupProblem(launch: ServerLaunch, probe: ProbeResult): StartupProblem {
  const setting = launch.source === "argus.server.command" ? "argus.server.command" : "argus.server.pythonPath";
  if (probe.spawnErrorCode === "ENOENT") {
    const what = launch.python !== undefined ? "Python interpreter" : "server command";
    return {
      message: `Argus: the ${what} \`${launch.command}\` was not found (chosen by ${launch.source}). ` +
        (launch.python !== undefined
          ? "Set argus.server.pythonPath to a Python with the argus package installed."
          : "Fix argus.server.command, or clear it to run `python -m argus serve`."),
      setting,
    };
  }
  if (probe.spawnErrorCode !== undefined) {
    return { message: `Argus: could not run \`${launch.command}\` (${probe.spawnErrorCode}).`, setting };
  }
  const missing = /No module named '([\w.]+)'/.exec(probe.stderr)?.[1];
  if (launch.python !== undefined && missing !== undefined) {
    if (missing === "argus" || missing.startsWith("argus.")) {
      return {
        message: `Argus: the Python at \`${launch.python}\` does not have the argus package (No module named '${missing}'). ${INSTALL_HINT}`,
        setting,
      };
    }
    return {
      message: `Argus: the argus package at \`${launch.python}\` is missing its dependency '${missing}'. ` +
        "Reinstall it with `pip install -e .` from the Argus repository.",
      setting,
    };
  }
  if (probe.exitCode !== 0) {
    const last = lastLine(probe.stderr);
    return {
      message: `Argus: \`${describeLaunch(launch)}\` failed${last ? `: ${last}` : ` with exit code ${probe.exitCode}`}. See the Argus log.`,
      setting,
    };
  }
  return {
    message: `Argus: the language server (${describeLaunch(launch)}) stopped during startup. See the Argus log.`,
    setting,
  };
}

function lastLine(text: string): string {
  const lines = text.split(/\r?\n/).map((l) => l.trim()).filter((l) => l.length > 0);
  return lines.length > 0 ? lines[lines.length - 1] : "";
}
