// lore-sidecar for VS Code: starts the sidecar as a language server and offers
// "Lore: Recall" (a quick pick of hits; picking one opens it), "Lore: Remember Selection"
// and a status bar item kept current from the sidecar's notifications.

import * as vscode from "vscode";
import { LanguageClient, type LanguageClientOptions, type ServerOptions } from "vscode-languageclient/node";
import { onChanges, openNode, recallItems, remember, statusText } from "./lore";

let client: LanguageClient | undefined;

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  const config = vscode.workspace.getConfiguration("lore");
  const [command, ...args] = config.get<string[]>("command", ["lore-sidecar", "--stdio"]);
  const serverOptions: ServerOptions = { command, args };
  const clientOptions: LanguageClientOptions = {
    documentSelector: [{ scheme: "file" }],
    initializationOptions: config.get<object>("initializationOptions", {}),
  };
  client = new LanguageClient("lore", "lore-sidecar", serverOptions, clientOptions);
  await client.start();
  const lore = client;

  const status = vscode.window.createStatusBarItem(vscode.StatusBarAlignment.Left, 10);
  status.command = "lore.showStatus";
  const refresh = async () => {
    try {
      const s = await statusText(lore);
      status.text = s.text;
      status.tooltip = s.tooltip;
    } catch {
      status.text = "$(database) lore: unavailable";
    }
    status.show();
  };
  onChanges(lore, () => void refresh());
  void refresh();

  context.subscriptions.push(
    status,
    vscode.commands.registerCommand("lore.recallQuickPick", async () => {
      const query = await vscode.window.showInputBox({ prompt: "Recall from memory", placeHolder: "what are you looking for?" });
      if (!query) return;
      const items = await recallItems(lore, query);
      const picked = await vscode.window.showQuickPick(items, { matchOnDescription: true, matchOnDetail: true });
      if (!picked) return;
      const hit = picked.hit;
      if (hit.path && hit.range) {
        const doc = await vscode.workspace.openTextDocument(hit.path);
        const range = new vscode.Range(hit.range.startLine - 1, 0, hit.range.endLine - 1, 0);
        await vscode.window.showTextDocument(doc, { selection: range });
      } else {
        const content = await openNode(lore, hit.uri);
        const doc = await vscode.workspace.openTextDocument({ content: `<!-- ${hit.uri} -->\n${content}`, language: "markdown" });
        await vscode.window.showTextDocument(doc, { preview: true });
      }
    }),
    vscode.commands.registerCommand("lore.remember", async () => {
      const editor = vscode.window.activeTextEditor;
      const selected = editor?.document.getText(editor.selection) ?? "";
      const text = selected.trim() || (await vscode.window.showInputBox({ prompt: "What should memory keep?" })) || "";
      if (!text.trim()) return;
      const uri = await remember(lore, text);
      vscode.window.showInformationMessage(`lore: remembered as ${uri}`);
    }),
    vscode.commands.registerCommand("lore.showStatus", async () => {
      const s = await statusText(lore);
      vscode.window.showInformationMessage(s.tooltip.replace(/\n/g, " · "));
    }),
  );
}

export async function deactivate(): Promise<void> {
  await client?.stop();
}
