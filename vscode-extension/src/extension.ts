// Entry point: the Argus language client, its commands, settings and status bar.

import * as vscode from "vscode";

import { ArgusClient } from "./client";
import { gateResponseUri } from "./gateBoard";
import { cancelledSummary, gateResultsIn, summarizeGateResponse } from "./gateStatus";
import { kernelAt, kernelsIn } from "./kernels";
import { REFINE, RUN_GATE } from "./protocol";
import { classifyRequestFailure, ServerRequestError, type RequestFailure } from "./requestFailure";
import { needsRestart } from "./settings";
import { showSkills } from "./skills";
import { ArgusStatusBar } from "./statusBar";

let argus: ArgusClient | undefined;

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  const output = vscode.window.createOutputChannel("Argus", { log: true });
  const status = new ArgusStatusBar();
  argus = new ArgusClient(output);
  const client = argus;
  context.subscriptions.push(output, status, client);
  context.subscriptions.push(client.onDidChangeState((state) => status.setServerState(state)));
  // every gate run's end, whoever started it, for the document it names; the status bar shows the active one's
  context.subscriptions.push(
    client.onGateResult((response) => {
      const uri = gateResponseUri(response);
      if (uri !== undefined) {
        status.gateFinished(uri, summarizeGateResponse(response));
      }
    }),
  );
  status.showFor(vscode.window.activeTextEditor);
  context.subscriptions.push(vscode.window.onDidChangeActiveTextEditor((editor) => status.showFor(editor)));
  context.subscriptions.push(vscode.workspace.onDidCloseTextDocument((document) => status.documentClosed(document.uri)));

  const register = (command: string, handler: (...args: unknown[]) => unknown) =>
    context.subscriptions.push(vscode.commands.registerCommand(command, handler));

  register("argus.showOutput", () => output.show(true));
  register("argus.restartServer", () => client.restart("asked by the user"));

  register("argus.runGate", async (...args: unknown[]) => {
    const target = await commandTarget(args);
    if (target === undefined) {
      return undefined;
    }
    const label = `gate ${target.kernel ?? "all kernels"}`;
    status.gateStarted(target.uri, label);
    output.info(`${label}: ${target.uri}`);
    try {
      const response = await client.executeServerCommand(RUN_GATE, target.kernel ? [target.uri, target.kernel] : [target.uri]);
      output.info(`${label} answered: ${JSON.stringify(response)}`);
      const summary = summarizeGateResponse(response);
      status.gateFinished(target.uri, summary);
      // a run the server refused (errors first, no gate installed) it has explained itself
      if (summary !== undefined && !summary.passed && gateResultsIn(response).length > 0) {
        void vscode.window.showWarningMessage(`Argus ${summary.text.replace(/^\$\([\w~-]+\)\s*/, "")}: ${summary.tooltip.split("\n")[0]}`);
      }
      return response;
    } catch (error) {
      const failure = failureOf(error);
      if (failure.kind === "stopped-by-us" || failure.kind === "cancelled") {
        // a restart (or the server) cancelled the run: the status bar says so, no error message
        const why = failure.kind === "stopped-by-us" ? "The language server was stopped or restarted during the run." : "The server cancelled the run.";
        status.gateFinished(target.uri, cancelledSummary(label, `${why} Run the gate again for a result.`));
      } else {
        status.gateFinished(target.uri, undefined);
        void vscode.window.showErrorMessage(`Argus gate: ${failure.message}`);
      }
      return undefined;
    }
  });

  register("argus.refine", async (...args: unknown[]) => {
    const target = await commandTarget(args);
    if (target === undefined) {
      return undefined;
    }
    if (client.languageClient !== undefined && !client.serverCommands.includes(REFINE)) {
      void vscode.window.showWarningMessage(
        `This Argus server does not offer kernel refinement (${REFINE}). Update the argus package, or use the skills at the cursor (Argus: Show Skills at Cursor).`,
      );
      return undefined;
    }
    try {
      // the server shows the loop's steps as cancellable progress, and its result as a message
      return await client.executeServerCommand(REFINE, [target.uri, target.kernel ?? null]);
    } catch (error) {
      const failure = failureOf(error);
      if (failure.kind === "error" || failure.kind === "server-gone") {
        void vscode.window.showErrorMessage(`Argus refine: ${failure.message}`);
      }
      return undefined;
    }
  });

  register("argus.showSkills", async () => {
    const editor = vscode.window.activeTextEditor;
    if (editor?.document.languageId !== "argus") {
      void vscode.window.showInformationMessage("Open an Argus file and put the cursor on a kernel, a loop or a setting.");
      return;
    }
    try {
      await showSkills(client, editor);
    } catch (error) {
      const failure = failureOf(error);
      if (failure.kind === "error" || failure.kind === "server-gone") {
        void vscode.window.showErrorMessage(`Argus skills: ${failure.message}`);
      }
    }
  });

  context.subscriptions.push(
    vscode.workspace.onDidChangeConfiguration((event) => {
      if (needsRestart((section) => event.affectsConfiguration(section))) {
        void client.restart("a server setting changed");
      } else if (event.affectsConfiguration("python.defaultInterpreterPath")) {
        void client.restart("python.defaultInterpreterPath changed");
      }
    }),
  );

  await client.start();
}

export async function deactivate(): Promise<void> {
  await argus?.stop();
}

interface CommandTarget {
  uri: string;
  kernel?: string;
}

/** The document and kernel a command is about: its arguments ([uri, kernel], as a code lens passes them), else
 * the active editor and the kernel at the cursor, else a pick. */
async function commandTarget(args: unknown[]): Promise<CommandTarget | undefined> {
  const [first, second] = args;
  if (typeof first === "string" || first instanceof vscode.Uri) {
    return { uri: first.toString(), kernel: typeof second === "string" ? second : undefined };
  }
  const editor = vscode.window.activeTextEditor;
  if (editor === undefined || editor.document.languageId !== "argus") {
    void vscode.window.showInformationMessage("Open an Argus file first.");
    return undefined;
  }
  const text = editor.document.getText();
  let kernel = kernelAt(text, editor.selection.active.line);
  if (kernel === undefined) {
    const names = kernelsIn(text).map((k) => k.name);
    if (names.length === 0) {
      void vscode.window.showInformationMessage("This file has no kernel.");
      return undefined;
    }
    kernel = await vscode.window.showQuickPick(names, { placeHolder: "Which kernel?" });
    if (kernel === undefined) {
      return undefined;
    }
  }
  return { uri: editor.document.uri.toString(), kernel };
}

/** How a request to the server failed (executeServerCommand says; anything else is an error). */
function failureOf(error: unknown): RequestFailure {
  return error instanceof ServerRequestError ? error.failure : classifyRequestFailure(error, false);
}

