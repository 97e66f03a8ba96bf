// How the language server process is started: the configured command, else `<python> -m argus serve` with
// the configured interpreter, the Python extension's interpreter, or python3. No `vscode` import.

import * as os from "os";
import * as path from "path";

import type { ServerSettings } from "./settings";

export type LaunchSource = "argus.server.command" | "argus.server.pythonPath" | "Python extension" | "default";

export interface ServerLaunch {
  command: string;
  args: string[];
  /** Which setting chose this command, for the log and for error messages. */
  source: LaunchSource;
  /** The interpreter, when the server is run as `<python> -m argus serve`. */
  python?: string;
}

export const DEFAULT_PYTHON = "python3";
export const SERVER_MODULE_ARGS = ["-m", "argus", "serve"];

export interface LaunchContext {
  workspaceFolder?: string;
  home?: string;
  /** The active interpreter of the Python extension, when that extension is installed and has one. */
  pythonExtensionInterpreter?: string;
}

/** Expands `${workspaceFolder}`, `${userHome}`, `${env:NAME}` and a leading `~`. */
export function expandVariables(value: string, context: LaunchContext, env: NodeJS.ProcessEnv = process.env): string {
  const home = context.home ?? os.homedir();
  let out = value.replace(/\$\{(workspaceFolder|userHome|env:([A-Za-z_][A-Za-z0-9_]*))\}/g, (whole, name: string, envName?: string) => {
    if (envName !== undefined) {
      return env[envName] ?? "";
    }
    if (name === "userHome") {
      return home;
    }
    return context.workspaceFolder ?? whole;
  });
  if (out === "~" || out.startsWith("~/")) {
    out = path.join(home, out.slice(1));
  }
  return out;
}

export function resolveServerLaunch(settings: ServerSettings, context: LaunchContext = {}): ServerLaunch {
  const command = settings.command.map((part) => expandVariables(part, context)).filter((part) => part.length > 0);
  if (command.length > 0) {
    return { command: command[0], args: command.slice(1), source: "argus.server.command" };
  }
  const fromSetting = settings.pythonPath ? expandVariables(settings.pythonPath, context) : "";
  if (fromSetting) {
    return launchWith(resolveRelative(fromSetting, context), "argus.server.pythonPath");
  }
  if (context.pythonExtensionInterpreter) {
    return launchWith(context.pythonExtensionInterpreter, "Python extension");
  }
  return launchWith(DEFAULT_PYTHON, "default");
}

function launchWith(python: string, source: LaunchSource): ServerLaunch {
  return { command: python, args: [...SERVER_MODULE_ARGS], source, python };
}

/** A relative interpreter path with a directory part (`.venv/bin/python`) is taken from the workspace folder. */
function resolveRelative(python: string, context: LaunchContext): string {
  if (path.isAbsolute(python) || !python.includes("/") || !context.workspaceFolder) {
    return python;
  }
  return path.join(context.workspaceFolder, python);
}

export function describeLaunch(launch: ServerLaunch): string {
  const quote = (s: string) => (/^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`);
  return `${[launch.command, ...launch.args].map(quote).join(" ")} (from ${launch.source})`;
}
