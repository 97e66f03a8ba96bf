// The language client's lifecycle: resolve the server command, start it over stdio, explain a failed start,
// restart on demand, and end the old server before a new one starts.

import { execFile, type ChildProcess } from "child_process";
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

import { editOrigin, staleEditReason } from "./editGuard";
import { commandsToRegisterFromServer, GATE_RESULT_NOTIFICATION } from "./protocol";
import { onPythonInterpreterChange, pythonExtensionInterpreter } from "./pythonExtension";
import { classifyRequestFailure, ServerRequestError, ServerStoppedError } from "./requestFailure";
import { describeLaunch, resolveServerLaunch, type ServerLaunch } from "./serverCommand";
import { endServerProcess, spawnServer } from "./serverProcess";
import { initializationOptions, readSettings, type ArgusSettings } from "./settings";
import { explainStartupProblem, PROBE_ARGS, type ProbeResult } from "./startupProblem";

export type ServerState = "starting" | "running" | "stopped" | "failed";

/** A server process the extension started, and a promise that settles when it exits. */
interface ServerProcess {
  child: ChildProcess;
  exited: Promise<void>;
}

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
  /** Clients the extension has decided to stop (a restart, a stop): what their requests end with is its own
   * doing, and not shown to the user. */
  private readonly retired = new WeakSet<LanguageClient>();
  /** Each client's server process (the latest, when the client restarted it after a crash). */
  private readonly processes = new WeakMap<LanguageClient, ServerProcess>();
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
    // the client being stopped, and the requests it cancels are no news to the user
    this.retire(this.client);
    return this.enqueue(async () => {
      this.output.info(`restarting the server: ${reason}`);
      await this.doStop();
      await this.doStart();
    });
  }

  stop(): Promise<void> {
    this.retire(this.client);
    return this.enqueue(() => this.doStop());
  }

  /** workspace/executeCommand on the running server (see `guard` for how it fails). */
  async executeServerCommand(command: string, args: unknown[]): Promise<unknown> {
    const client = this.languageClient;
    if (client === undefined) {
      throw new Error("the Argus language server is not running (see the Argus log)");
    }
    return this.guard(client, command, client.sendRequest(ExecuteCommandRequest.type, { command, arguments: args }));
  }

  /** The answer of `request`, which the extension sent to `client`'s server. A failure is thrown as a
   * ServerRequestError saying what it was: cancelled by the extension's own stop or restart, cancelled by the
   * server, the server gone, or an error. A server process that ends without answering ends the request too. */
  async guard<R>(client: LanguageClient, what: string, request: Promise<R>): Promise<R> {
    const exited = this.processes.get(client)?.exited.then(() => Promise.reject(new ServerStoppedError()));
    try {
      return await (exited !== undefined ? Promise.race([request, exited]) : request);
    } catch (error) {
      const failure = classifyRequestFailure(error, this.retired.has(client));
      if (failure.kind === "stopped-by-us") {
        this.output.info(`${what} ended with the server's stop: ${error instanceof Error ? error.message : String(error)}`);
      }
      throw new ServerRequestError(failure, error);
    }
  }

  dispose(): void {
    this.pythonWatch?.dispose();
    void this.stop();
    this.stateEmitter.dispose();
    this.gateEmitter.dispose();
  }

  private retire(client: LanguageClient | undefined): void {
    if (client !== undefined) {
      this.retired.add(client);
    }
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

    // The extension starts the process itself, so that a stop can wait for it to exit (serverProcess.ts).
    const serverOptions: ServerOptions = async () => {
      const options = { cwd: folder?.uri.fsPath, env: { ...process.env, PYTHONUNBUFFERED: "1" } };
      const child = await spawnServer(launch.command, launch.args, options, (line) => this.output.warn(line));
      this.processes.set(client, { child, exited: new Promise((resolve) => child.once("exit", () => resolve())) });
      return child;
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
          didChangeConfiguration: (sections, next) => (this.retired.has(client) ? Promise.resolve() : next(sections)),
        },
        // the edit of a picked code action, made by the server at resolve for the version it names in data:
        // applied only to that version (the language client would drop the version and apply by position)
        resolveCodeAction: async (item, token, next) => {
          const resolved = await next(item, token);
          const origin = editOrigin((resolved as { data?: unknown } | null | undefined)?.data);
          if (!resolved?.edit || origin === undefined) {
            return resolved;
          }
          const uri = vscode.Uri.parse(origin.uri).toString();
          const document = vscode.workspace.textDocuments.find((d) => d.uri.toString() === uri);
          const reason = staleEditReason(origin, document?.version);
          if (reason === undefined) {
            return resolved;
          }
          resolved.edit = undefined;
          void vscode.window.showWarningMessage(`${resolved.title}: not applied, ${reason}. Nothing was changed.`);
          return resolved;
        },
        // the server's own commands (a library skill's argus.applySkill, ...) that a restart cuts short
        executeCommand: async (command, args, next) => {
          try {
            return await next(command, args);
          } catch (error) {
            if (classifyRequestFailure(error, this.retired.has(client)).kind === "stopped-by-us") {
              this.output.info(`${command} ended with the server's stop`);
              return undefined;
            }
            throw error;
          }
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
          if (!initialized || this.retired.has(client)) {
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
      this.retire(client);
      await client.dispose().catch(() => undefined);
      await this.endProcess(client);
      this.setState("failed");
      await this.reportStartupProblem(launch);
    }
  }

  /** shutdown and exit (2 s for both), then the process must exit within 2 s, else it is terminated (and
   * killed 1 s later): the next server starts only once the old one is gone. */
  private async doStop(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    if (client !== undefined) {
      this.retire(client);
      if (client.needsStop()) {
        await client.stop(2000).catch((error) => this.output.warn(`stopping the server: ${String(error)}`));
      }
      await this.endProcess(client);
    }
    this.setState("stopped");
  }

  private async endProcess(client: LanguageClient): Promise<void> {
    const server = this.processes.get(client);
    if (server === undefined) {
      return;
    }
    this.processes.delete(client);
    const ending = await endServerProcess(server.child);
    if (ending !== "exited") {
      this.output.warn(`the server (pid ${server.child.pid}) did not exit within 2 s of shutdown: ${ending}`);
    } else {
      this.output.info(`the server (pid ${server.child.pid}) exited`);
    }
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
