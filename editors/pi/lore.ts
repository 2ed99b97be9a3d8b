// lore-sidecar for Pi (https://github.com/badlogic/pi-mono): long-term memory across sessions.
//
// Install: copy this folder's lore.ts and ../shared/lore-client.ts keeping their relative
// layout, e.g. into `.pi/extensions/` of a project (auto-discovered), or run
// `pi -e /path/to/editors/pi/lore.ts`. Needs `lore-sidecar` on PATH (or LORE_SIDECAR_CMD).
//
// What it does: spawns the sidecar at session start and asks for the session-start text
// (guidance, boot block, startup recall); before each prompt injects the `<recall>` block
// for it into the system prompt; records every user, assistant and tool message; registers
// a `lore_recall` tool; captures and shuts the sidecar down at session shutdown. Every step
// fails open: if memory is slow or down, Pi carries on without it.
//
// With LORE_ASSEMBLE=1, each model request also goes through `lore/assembleContext` in
// process (no gateway needed): the payload Pi built is replaced by the one lore assembles
// (cache breakpoints, and once the history is long a byte-stable distilled prefix + a raw
// window), and the provider's usage is fed back with `lore/recordUsage`.

import type { ExtensionAPI } from "@mariozechner/pi-coding-agent";
import { Type } from "typebox";
import { LoreClient, textOf } from "../shared/lore-client.ts";

export default function lore(pi: ExtensionAPI) {
  let client: LoreClient | undefined;
  let sessionId = "";
  let cwd = process.cwd();
  let starting: Promise<any> | undefined; // the session-start text, once the sidecar answers
  let seq = 0;

  pi.on("session_start", async (_event, ctx) => {
    cwd = ctx.cwd ?? process.cwd();
    sessionId = ctx.sessionManager.getSessionId?.() ?? `pi-${Date.now()}`;
    client = new LoreClient({ cwd, log: (m) => process.stderr.write(m + "\n") });
    // Not awaited: the sidecar may take seconds to open its store (LoreClient waits for it,
    // bounded); the session starts at once and the first prompt waits for the text.
    starting = client.call("lore/sessionStart", { sessionId, harness: "pi", cwd });
  });

  pi.on("before_agent_start", async (event) => {
    const [start, recall] = await Promise.all([
      starting,
      client?.call("lore/promptSubmit", { sessionId, prompt: event.prompt ?? "", harness: "pi", project: cwd }),
    ]);
    starting = undefined; // the session-start text goes in once
    const parts = [start?.context ?? "", recall?.context ?? ""].filter(Boolean);
    if (parts.length === 0) return;
    return { systemPrompt: `${event.systemPrompt}\n\n${parts.join("\n\n")}` };
  });

  pi.on("message_end", async (event) => {
    const m: any = event.message;
    const role = m?.role === "toolResult" ? "tool" : m?.role;
    if (!client || !["user", "assistant", "tool"].includes(role)) return;
    const text = textOf(m.content);
    if (!text.trim()) return;
    await client.call("lore/recordMessages", {
      sessionId,
      harness: "pi",
      project: cwd,
      messages: [{ id: `${sessionId}-${m.timestamp ?? Date.now()}-${seq++}`, role, content: text, toolName: m.toolName }],
    });
  });

  const assemble = process.env.LORE_ASSEMBLE === "1";

  pi.on("before_provider_request", async (event: any) => {
    const payload = event?.payload;
    if (!assemble || !client || !payload || typeof payload !== "object") return undefined;
    const api = Array.isArray(payload.input) ? "openai-responses"
      : (payload.system !== undefined || String(payload.model ?? "").startsWith("claude")) ? "anthropic-messages"
      : "openai-chat";
    const result = await client.call("lore/assembleContext", { sessionId, body: payload, api, harness: "pi", project: cwd });
    return result?.body ?? undefined; // fail open: Pi's own payload
  });

  pi.on("message_end", async (event: any) => {
    const u = event?.message?.role === "assistant" ? event.message.usage : undefined;
    if (!assemble || !client || !u) return;
    await client.call("lore/recordUsage", { sessionId, usage: {
      inputTokens: u.input ?? 0, cacheReadInputTokens: u.cacheRead ?? 0, cacheCreationInputTokens: u.cacheWrite ?? 0,
      outputTokens: u.output ?? 0 } });
  });

  pi.registerTool({
    name: "lore_recall",
    label: "Recall memory",
    description: "Search long-term memory (earlier sessions, curated project knowledge, facts, the workspace) for leads.",
    parameters: Type.Object({ query: Type.String({ description: "What to look for, in plain words" }) }),
    async execute(_id, params: any) {
      const result = await client?.call("lore/recall", { query: params.query, limit: 8, project: cwd });
      const lines = (result?.hits ?? []).map((h: any) => `${h.score.toFixed(3)} ${h.uri}\n  ${h.snippet}`);
      return { content: [{ type: "text", text: lines.join("\n") || "nothing relevant in memory" }], details: {} };
    },
  });

  pi.on("session_shutdown", async () => {
    await client?.call("lore/sessionEnd", { sessionId, harness: "pi", project: cwd });
    await client?.close();
    client = undefined;
  });
}
