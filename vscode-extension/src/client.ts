// The language client's lifecycle: resolve the server command, start it over stdio, explain a failed start,
// restart on demand.

import { execFile } from "child_process";
import * as vscode from "vscode";
import {
  CloseAction,
  ErrorAction,
  ExecuteCommandRequest,
  LanguageClient,
  State,
  type LanguageClientOptions,
  type ServerOptions,
} from "vscode-languageclient/node";

import { commandsToRegisterFromServer, GATE_RESULT_NOTIFICATION } from "./protocol";
import { onPythonInterpreterChange, pythonExtensionInterpreter } from "./pythonExtension";
import { describeLaunch, resolveServerLaunch, type ServerLaunch } from "./serverCommand";
import { initializationOptions, readSettings, type ArgusSettings } from "./settings";
import { explainStartupProblem, PROBE_ARGS, type ProbeResult } from "./startupProblem";

export type ServerState = "starting" | "running" | "stopped" | "failed";

/** The settings for `resource` (or the first workspace folder), with invalid values reported to `log`. */
export function settingsFor(resource: vscode.Uri | undefined, log: (line: string) => void): ArgusSettings {
  const scope = resource ?? vscode.workspace.workspaceFolders?.[0]?.uri;
  const config = vscode.workspace.getConfiguration("argus", scope);
  const problems: string[] = [];
  const settings = readSettings((key) => config.get(key), problems);
  problems.forEach(log);
  return settings;
}

export class ArgusClient implements vscode.Disposable {
  private client: LanguageClient | undefined;
  private pythonWatch: vscode.Disposable | undefined;
  private readonly stateEmitter = new vscode.EventEmitter<ServerState>();
  private readonly gateEmitter = new vscode.EventEmitter<unknown>();
  /** A gate run ended (`argus/gateResult`): any run, including those this extension did not ask for (a skill,
   * gate on save); for argus.runGate it comes just before the command's answer, with the same content. */
  readonly onGateResult = this.gateEmitter.event;
  readonly onDidChangeState = this.stateEmitter.event;
  private current: ServerState = "stopped";
  /** The client a pending restart will stop. */
  private retiring: LanguageClient | undefined;
  /** Serializes start/stop so that two quick restarts never run two servers. */
  private queue: Promise<void> = Promise.resolve();

  constructor(private readonly output: vscode.LogOutputChannel) {}

  get state(): ServerState {
    return this.current;
  }

  get languageClient(): LanguageClient | undefined {
    return this.client?.state === State.Running ? this.client : undefined;
  }

  /** The commands the running server offers over workspace/executeCommand. */
  get serverCommands(): string[] {
    return this.client?.initializeResult?.capabilities.executeCommandProvider?.commands ?? [];
  }

  start(): Promise<void> {
    return this.enqueue(() => this.doStart());
  }

  restart(reason: string): Promise<void> {
    // at once, not when the queue gets here: the settings change that asked for this restart must not reach
    // the client being stopped
    this.retiring = this.client;
    return this.enqueue(async () => {
      this.output.info(`restarting the server: ${reason}`);
      await this.doStop();
      await this.doStart();
    });
  }

  stop(): Promise<void> {
    return this.enqueue(() => this.doStop());
  }

  async executeServerCommand(command: string, args: unknown[]): Promise<unknown> {
    const client = this.languageClient;
    if (client === undefined) {
      throw new Error("the Argus language server is not running (see the Argus log)");
    }
    return client.sendRequest(ExecuteCommandRequest.type, { command, arguments: args });
  }

  dispose(): void {
    this.pythonWatch?.dispose();
    void this.stop();
    this.stateEmitter.dispose();
    this.gateEmitter.dispose();
  }

  private enqueue(step: () => Promise<void>): Promise<void> {
    this.queue = this.queue.then(step, step);
    return this.queue;
  }

  private setState(state: ServerState): void {
    this.current = state;
    this.stateEmitter.fire(state);
  }

  private async doStart(): Promise<void> {
    const folder = vscode.workspace.workspaceFolders?.[0];
    const log = (line: string) => this.output.warn(line);
    const settings = settingsFor(folder?.uri, log);
    const needsPythonExtension = settings.server.command.length === 0 && settings.server.pythonPath === "";
    const launch = resolveServerLaunch(settings.server, {
      workspaceFolder: folder?.uri.fsPath,
      pythonExtensionInterpreter: needsPythonExtension ? await pythonExtensionInterpreter(folder?.uri, log) : undefined,
    });
    await this.watchPythonExtension(launch);
    this.output.info(`starting the server: ${describeLaunch(launch)}`);
    this.setState("starting");

    const serverOptions: ServerOptions = {
      command: launch.command,
      args: launch.args,
      options: { cwd: folder?.uri.fsPath, env: { ...process.env, PYTHONUNBUFFERED: "1" } },
    };
    let initialized = false;
    const clientOptions: LanguageClientOptions = {
      documentSelector: [
        { scheme: "file", language: "argus" },
        { scheme: "untitled", language: "argus" },
      ],
      initializationOptions: initializationOptions(settings),
      synchronize: { configurationSection: "argus" },
      middleware: {
        workspace: {
          didChangeConfiguration: (sections, next) => (client === this.retiring ? Promise.resolve() : next(sections)),
        },
      },
      outputChannel: this.output,
      traceOutputChannel: this.output,
      // A failed initialize is explained by reportStartupProblem, not by the client's raw error message.
      initializationFailedHandler: (error) => {
        this.output.error(`initialize failed: ${error instanceof Error ? error.message : String(error)}`);
        return false;
      },
      errorHandler: {
        error: () => ({ action: ErrorAction.Continue }),
        closed: () => {
          if (!initialized) {
            return { action: CloseAction.DoNotRestart, handled: true };
          }
          this.output.error("the server stopped; restarting it");
          return { action: CloseAction.Restart };
        },
      },
    };
    const client = new LanguageClient("argus", "Argus Language Server", serverOptions, clientOptions);
    this.keepExtensionCommands(client);
    client.onNotification(GATE_RESULT_NOTIFICATION, (params: unknown) => this.gateEmitter.fire(params));
    client.onDidChangeState((event) => {
      if (event.newState === State.Stopped && this.client === client && initialized) {
        this.setState("stopped");
      } else if (event.newState === State.Running && this.client === client) {
        this.setState("running");
      }
    });
    this.client = client;
    try {
      await client.start();
      // start() can resolve although initialize failed (the client stops itself first), so look at the state
      if (!client.isRunning() || client.initializeResult === undefined) {
        throw new Error("the server exited before it finished initializing");
      }
      initialized = true;
      const info = client.initializeResult?.serverInfo;
      this.output.info(`server running: ${info?.name ?? "argus"} ${info?.version ?? ""}`.trim());
      this.setState("running");
    } catch (error) {
      this.output.error(`the server did not start: ${error instanceof Error ? error.message : String(error)}`);
      this.client = undefined;
      await client.dispose().catch(() => undefined);
      this.setState("failed");
      await this.reportStartupProblem(launch);
    }
  }

  private async doStop(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    if (client !== undefined && client.needsStop()) {
      await client.stop(5000).catch((error) => this.output.warn(`stopping the server: ${String(error)}`));
    }
    this.setState("stopped");
  }

  /** The extension's own commands (argus.runGate, ...) call the server themselves; the client must not
   * register the same names again from the server's executeCommand capability. */
  private keepExtensionCommands(client: LanguageClient): void {
    const feature = client.getFeature(ExecuteCommandRequest.method);
    const register = feature.register.bind(feature);
    feature.register = (data) =>
      register({ ...data, registerOptions: { ...data.registerOptions, commands: commandsToRegisterFromServer(data.registerOptions.commands) } });
  }

  private async watchPythonExtension(launch: ServerLaunch): Promise<void> {
    this.pythonWatch?.dispose();
    this.pythonWatch = undefined;
    if (launch.source === "Python extension") {
      this.pythonWatch = await onPythonInterpreterChange(() => void this.restart("the Python extension's interpreter changed"));
    }
  }

  private async reportStartupProblem(launch: ServerLaunch): Promise<void> {
    const probe = await runProbe(launch);
    const problem = explainStartupProblem(launch, probe);
    this.output.error(problem.message);
    if (probe.stderr.trim()) {
      this.output.error(`${launch.command} ${launch.python !== undefined ? PROBE_ARGS.join(" ") : ""} printed:\n${probe.stderr.trim()}`);
    }
    // not awaited: the notification stays until the user answers, and activation must not wait for that
    void vscode.window.showErrorMessage(problem.message, "Open Settings", "Show Log", "Retry").then((choice) => {
      if (choice === "Open Settings") {
        void vscode.commands.executeCommand("workbench.action.openSettings", problem.setting);
      } else if (choice === "Show Log") {
        this.output.show(true);
      } else if (choice === "Retry") {
        void this.restart("retry after a failed start");
      }
    });
  }
}

/** Runs the interpreter once on its own (`-c "import argus.lsp.server"`), or checks that the command exists. */
function runProbe(launch: ServerLaunch): Promise<ProbeResult> {
  const args = launch.python !== undefined ? PROBE_ARGS : ["--version"];
  return new Promise((resolve) => {
    execFile(launch.command, args, { timeout: 30_000 }, (error, _stdout, stderr) => {
      const code = (error as NodeJS.ErrnoException | null)?.code;
      if (typeof code === "string") {
        resolve({ spawnErrorCode: code, exitCode: null, stderr: String(stderr) });
      } else {
        resolve({ exitCode: error ? (typeof code === "number" ? code : 1) : 0, stderr: String(stderr) });
      }
    });
  });
}
