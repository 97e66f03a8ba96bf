// "Argus: Show Skills at Cursor": every skill the server knows for the cursor, the ones that do not apply
// included with the precondition that failed (VS Code's own menu shows those greyed out, without the reason).

import * as vscode from "vscode";
import { CodeActionRequest, CodeActionResolveRequest, CodeActionTriggerKind, type CodeAction } from "vscode-languageclient/node";

import type { ArgusClient } from "./client";
import { editOrigin, staleEditReason } from "./editGuard";
import { SKILL_KIND } from "./protocol";
import { skillItems, type SkillItem } from "./skillItems";

export async function showSkills(argus: ArgusClient, editor: vscode.TextEditor): Promise<void> {
  const client = argus.languageClient;
  if (client === undefined) {
    throw new Error("the Argus language server is not running (see the Argus log)");
  }
  const request = client.sendRequest(CodeActionRequest.type, {
    textDocument: { uri: client.code2ProtocolConverter.asUri(editor.document.uri) },
    range: client.code2ProtocolConverter.asRange(editor.selection),
    context: { diagnostics: [], only: [SKILL_KIND], triggerKind: CodeActionTriggerKind.Invoked },
  });
  const answer = await argus.guard(client, CodeActionRequest.method, request);
  const actions = (answer ?? []).filter((a): a is CodeAction => "title" in a && !("command" in a && typeof a.command === "string"));
  const items = skillItems(actions, SKILL_KIND);
  if (items.length === 0) {
    void vscode.window.showInformationMessage("No Argus skill applies at the cursor: try a `for` loop with a `dot`, or a `tile` or `policy` setting.");
    return;
  }
  const picked = await vscode.window.showQuickPick<SkillItem & vscode.QuickPickItem>(items, {
    title: "Argus skills at the cursor",
    placeHolder: "Apply a skill (the ones that do not apply say why)",
    matchOnDescription: true,
    matchOnDetail: true,
  });
  if (picked === undefined) {
    return;
  }
  let action = actions[picked.index];
  if (!picked.applicable) {
    void vscode.window.showInformationMessage(`${action.title}: ${action.disabled?.reason ?? "does not apply here"}`);
    return;
  }
  if (action.edit === undefined && action.command === undefined) {
    // the server makes the edit when the action is picked, on the text as it is now (argus.lsp.code_actions)
    const resolving = client.sendRequest(CodeActionResolveRequest.type, action);
    action = (await argus.guard(client, CodeActionResolveRequest.method, resolving)) ?? action;
    const origin = editOrigin(action.data);
    const reason = origin && staleEditReason(origin, editor.document.version);
    if (action.edit === undefined) {
      return; // the server refused it and said why (the lines it edits changed)
    }
    if (reason !== undefined) {
      void vscode.window.showWarningMessage(`${action.title}: not applied, ${reason}. Nothing was changed.`);
      return;
    }
  }
  if (action.edit !== undefined) {
    const edit = await client.protocol2CodeConverter.asWorkspaceEdit(action.edit);
    if (!(await vscode.workspace.applyEdit(edit))) {
      throw new Error(`VS Code refused the edit of "${action.title}" (the document changed meanwhile?)`);
    }
  }
  if (action.command !== undefined) {
    await vscode.commands.executeCommand(action.command.command, ...(action.command.arguments ?? []));
  }
}
