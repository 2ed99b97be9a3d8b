// The extension's requests and notifications, free of the `vscode` module so they can be
// tested against the real sidecar over vscode-jsonrpc (test/requests.test.js).

/** What both vscode-languageclient's LanguageClient and a vscode-jsonrpc connection offer. */
export interface Sender {
  sendRequest<R>(method: string, params: unknown): Promise<R>;
  onNotification(method: string, handler: (params: any) => void): unknown;
}

export interface Hit {
  uri: string;
  source: string;
  score: number;
  snippet: string;
  cues: string[];
  title?: string | null;
  path?: string | null;
  range?: { startLine: number; endLine: number } | null;
  category?: string | null;
  priority?: number | null;
  stale?: { path: string; reason: string } | null;
}

export interface RecallItem {
  label: string;
  description: string;
  detail: string;
  hit: Hit;
}

const ICONS: Record<string, string> = {
  messages: "$(comment-discussion)",
  distillations: "$(note)",
  knowledge: "$(book)",
  facts: "$(law)",
  files: "$(file-code)",
  entities: "$(symbol-class)",
};

/** Recall hits as quick-pick items. */
export async function recallItems(sender: Sender, query: string, limit = 20): Promise<RecallItem[]> {
  const result = await sender.sendRequest<{ hits: Hit[] }>("lore/recall", { query, limit });
  return result.hits.map((hit) => ({
    label: `${ICONS[hit.source] ?? ""} ${hit.title ?? hit.uri}`.trim(),
    description: `${hit.source} · ${hit.score.toFixed(3)}${hit.stale ? " · possibly stale" : ""}`,
    detail: hit.snippet.replace(/\s+/g, " ").slice(0, 200),
    hit,
  }));
}

/** Keep text as a knowledge node; returns its URI. */
export async function remember(sender: Sender, text: string, title?: string): Promise<string> {
  const result = await sender.sendRequest<{ uri: string }>("lore/retain", {
    content: text,
    title: title ?? text.replace(/\s+/g, " ").slice(0, 60),
    harness: "vscode",
  });
  return result.uri;
}

/** The full content of a hit (a message, node, distillation, fact or file range). */
export async function openNode(sender: Sender, uri: string, queryId?: string): Promise<string> {
  const node = await sender.sendRequest<{ content: string }>("lore/getNode", { uri, queryId, harness: "vscode" });
  return node.content;
}

/** The status bar text, e.g. `$(database) lore: writer · 120 msgs · 6 knowledge`. */
export async function statusText(sender: Sender): Promise<{ text: string; tooltip: string }> {
  const s = await sender.sendRequest<any>("lore/status", {});
  const c = s.counts ?? {};
  return {
    text: `$(database) lore: ${s.role} · ${c.messages ?? 0} msgs · ${c.knowledge ?? 0} knowledge`,
    tooltip: [
      `store ${s.storeDir}`,
      `project ${s.project?.root}`,
      `files ${c.files ?? 0}, chunks ${c.chunks ?? 0}, facts ${c.facts ?? 0}, distillations ${c.distillations ?? 0}`,
      `embedder ${s.embedder?.name}, distiller ${s.distiller?.mode}`,
    ].join("\n"),
  };
}

/** Call `refresh` whenever the sidecar commits (lore/indexUpdated) or changes role. */
export function onChanges(sender: Sender, refresh: () => void): void {
  sender.onNotification("lore/indexUpdated", () => refresh());
  sender.onNotification("lore/writerChanged", () => refresh());
}
