// The active interpreter of the Python extension (ms-python.python), when it is installed.

import * as vscode from "vscode";

const PYTHON_EXTENSION = "ms-python.python";

interface EnvironmentPath {
  path: string;
}
interface ResolvedEnvironment {
  executable?: { uri?: vscode.Uri };
}
interface PythonExtensionApi {
  environments?: {
    getActiveEnvironmentPath(resource?: vscode.Uri): EnvironmentPath;
    resolveEnvironment(environment: EnvironmentPath): Promise<ResolvedEnvironment | undefined>;
    onDidChangeActiveEnvironmentPath: vscode.Event<unknown>;
  };
  settings?: {
    getExecutionDetails(resource?: vscode.Uri): { execCommand: string[] | undefined };
    onDidChangeExecutionDetails?: vscode.Event<unknown>;
  };
}

async function api(): Promise<PythonExtensionApi | undefined> {
  const extension = vscode.extensions.getExtension<PythonExtensionApi>(PYTHON_EXTENSION);
  if (extension === undefined) {
    return undefined;
  }
  return extension.isActive ? extension.exports : await extension.activate();
}

/** The interpreter the Python extension has selected for `resource`, or undefined. Never throws. */
export async function pythonExtensionInterpreter(resource: vscode.Uri | undefined, log: (line: string) => void): Promise<string | undefined> {
  try {
    const python = await api();
    if (python?.environments !== undefined) {
      const active = python.environments.getActiveEnvironmentPath(resource);
      const resolved = await python.environments.resolveEnvironment(active);
      return resolved?.executable?.uri?.fsPath ?? active.path;
    }
    return python?.settings?.getExecutionDetails(resource).execCommand?.[0];
  } catch (error) {
    log(`could not ask the Python extension for its interpreter: ${String(error)}`);
    return undefined;
  }
}

/** Calls `listener` when the Python extension's selected interpreter changes. */
export async function onPythonInterpreterChange(listener: () => void): Promise<vscode.Disposable | undefined> {
  try {
    const python = await api();
    const event = python?.environments?.onDidChangeActiveEnvironmentPath ?? python?.settings?.onDidChangeExecutionDetails;
    return event?.(() => listener());
  } catch {
    return undefined;
  }
}
