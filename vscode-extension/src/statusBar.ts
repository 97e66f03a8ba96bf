// One status bar item: the server's state, then the last gate result.

import * as vscode from "vscode";

import type { ServerState } from "./client";
import type { GateSummary } from "./gateStatus";

export class ArgusStatusBar implements vscode.Disposable {
  private readonly item = vscode.window.createStatusBarItem("argus.status", vscode.StatusBarAlignment.Left, 10);
  private server: ServerState = "stopped";
  private gate: GateSummary | undefined;
  private running: string | undefined;

  constructor() {
    this.item.name = "Argus";
    this.render();
  }

  setServerState(state: ServerState): void {
    this.server = state;
    this.render();
  }

  gateStarted(label: string): void {
    this.running = label;
    this.render();
  }

  gateFinished(summary: GateSummary | undefined): void {
    this.running = undefined;
    if (summary !== undefined) {
      this.gate = summary;
    }
    this.render();
  }

  /** Shown only while an Argus file is the active editor. */
  showFor(editor: vscode.TextEditor | undefined): void {
    if (editor?.document.languageId === "argus") {
      this.item.show();
    } else {
      this.item.hide();
    }
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
    if (this.running !== undefined) {
      this.item.text = `$(sync~spin) ${this.running}`;
      this.item.tooltip = "The gate is running (cancel it from the progress notification or the code lens).";
      this.item.command = "argus.showOutput";
      return;
    }
    if (this.gate !== undefined) {
      this.item.text = this.gate.text;
      this.item.tooltip = `${this.gate.tooltip}\n\nClick to run the gate again.`;
      this.item.command = "argus.runGate";
      if (!this.gate.passed) {
        this.item.backgroundColor = new vscode.ThemeColor("statusBarItem.warningBackground");
      }
      return;
    }
    this.item.text = "$(check) Argus";
    this.item.tooltip = "Argus language server running. Click to run the gate for the kernel at the cursor.";
    this.item.command = "argus.runGate";
  }
}
