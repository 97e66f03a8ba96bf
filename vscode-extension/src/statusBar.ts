// One status bar item: the server's state, then the gate's state of the active editor's document.

import * as vscode from "vscode";

import type { ServerState } from "./client";
import { GateBoard } from "./gateBoard";
import type { GateSummary } from "./gateStatus";

export class ArgusStatusBar implements vscode.Disposable {
  private readonly item = vscode.window.createStatusBarItem("argus.status", vscode.StatusBarAlignment.Left, 10);
  private server: ServerState = "stopped";
  private readonly gates = new GateBoard();
  /** The active editor's document, when it is an Argus file. */
  private active: string | undefined;

  constructor() {
    this.item.name = "Argus";
    this.render();
  }

  setServerState(state: ServerState): void {
    this.server = state;
    this.render();
  }

  gateStarted(uri: string, label: string): void {
    this.gates.started(key(uri), label);
    this.render();
  }

  /** A gate run of the document `uri` ended (`summary` undefined: nothing new to show). */
  gateFinished(uri: string, summary: GateSummary | undefined): void {
    this.gates.finished(key(uri), summary);
    this.render();
  }

  documentClosed(uri: vscode.Uri): void {
    this.gates.forget(uri.toString());
    this.render();
  }

  /** Shown only while an Argus file is the active editor, with that file's gate result. */
  showFor(editor: vscode.TextEditor | undefined): void {
    this.active = editor?.document.languageId === "argus" ? editor.document.uri.toString() : undefined;
    if (this.active !== undefined) {
      this.item.show();
    } else {
      this.item.hide();
    }
    this.render();
  }

  dispose(): void {
    this.item.dispose();
  }

  private render(): void {
    this.item.backgroundColor = undefined;
    if (this.server === "failed") {
      this.item.text = "$(error) Argus";
      this.item.tooltip = "The Argus language server did not start. Click for the log.";
      this.item.command = "argus.showOutput";
      this.item.backgroundColor = new vscode.ThemeColor("statusBarItem.errorBackground");
      return;
    }
    if (this.server === "starting") {
      this.item.text = "$(sync~spin) Argus";
      this.item.tooltip = "Starting the Argus language server…";
      this.item.command = "argus.showOutput";
      return;
    }
    if (this.server === "stopped") {
      this.item.text = "$(circle-slash) Argus";
      this.item.tooltip = "The Argus language server is stopped. Click to restart it.";
      this.item.command = "argus.restartServer";
      return;
    }
    const gate = this.gates.stateOf(this.active);
    if (gate.running !== undefined) {
      this.item.text = `$(sync~spin) ${gate.running}`;
      this.item.tooltip = "The gate is running (cancel it from the progress notification or the code lens).";
      this.item.command = "argus.showOutput";
      return;
    }
    if (gate.summary !== undefined) {
      this.item.text = gate.summary.text;
      this.item.tooltip = `${gate.summary.tooltip}\n\nClick to run the gate again.`;
      this.item.command = "argus.runGate";
      if (!gate.summary.passed) {
        this.item.backgroundColor = new vscode.ThemeColor("statusBarItem.warningBackground");
      }
      return;
    }
    this.item.text = "$(check) Argus";
    this.item.tooltip = "Argus language server running. Click to run the gate for the kernel at the cursor.";
    this.item.command = "argus.runGate";
  }
}

/** The server echoes the URI the client sent; parsing it again gives the form `document.uri.toString()` has. */
function key(uri: string): string {
  try {
    return vscode.Uri.parse(uri, true).toString();
  } catch {
    return uri;
  }
}
