// lore-sidecar for OpenCode: long-term memory across sessions.
//
// Install: copy `editors/opencode/lore.ts` to `.opencode/plugin/lore.ts` and
// `editors/shared/lore-client.ts` to `.opencode/shared/lore-client.ts` in your project (or
// the same layout under ~/.config/opencode). Needs `lore-sidecar` on PATH (or
// LORE_SIDECAR_CMD).
//
// What it does: spawns the sidecar once per OpenCode process; for every user message records
// it and asks for the `<recall>` block for it (plus, first in a session, the session-start
// text), which the system-prompt transform then adds; records tool outputs; captures the
// whole session (assistant replies included) when it goes idle; adds a `lore_recall` tool.
// Every step fails open: if memory is slow or down, OpenCode carries on without it.

import type { Plugin } from "@opencode-ai/plugin";
import { tool } from "@opencode-ai/plugin";
import { LoreClient, textOf } from "../shared/lore-client.ts";

export const LorePlugin: Plugin = async ({ directory, client: opencode }) => {
  const cwd = directory || process.cwd();
  const lore = new LoreClient({ cwd, log: (m) => process.stderr.write(m + "\n") });
  const started = new Set<string>();
  const pending = new Map<string, string>(); // sessionID -> text for the next system prompt

  const partsText = (parts: any[]) => textOf((parts ?? []).filter((p) => p?.type === "text" && !p.synthetic));

  return {
    "chat.message": async (input, output) => {
      const sessionId = input.sessionID;
      const prompt = partsText(output.parts as any[]);
      const blocks: string[] = [];
      if (!started.has(sessionId)) {
        started.add(sessionId);
        const start = await lore.call("lore/sessionStart", { sessionId, harness: "opencode", cwd });
        if (start?.context) blocks.push(start.context);
      }
      const recall = await lore.call("lore/promptSubmit", { sessionId, prompt, harness: "opencode", project: cwd });
      if (recall?.context) blocks.push(recall.context);
      if (blocks.length) pending.set(sessionId, blocks.join("\n\n"));
      if (prompt.trim()) {
        await lore.call("lore/recordMessages", {
          sessionId, harness: "opencode", project: cwd,
          messages: [{ id: (output.message as any)?.id ?? input.messageID, role: "user", content: prompt }],
        });
      }
    },

    "experimental.chat.system.transform": async (input, output) => {
      const text = input.sessionID ? pending.get(input.sessionID) : undefined;
      if (text) output.system.push(text);
    },

    "tool.execute.after": async (input, output) => {
      await lore.call("lore/recordMessages", {
        sessionId: input.sessionID, harness: "opencode", project: cwd,
        messages: [{ id: `tool-${input.callID}`, role: "tool", toolName: input.tool, toolCallId: input.callID,
                     content: String(output.output ?? "").slice(0, 200_000) }],
      });
    },

    event: async ({ event }) => {
      if ((event as any).type !== "session.idle") return;
      const sessionId = (event as any).properties?.sessionID;
      if (!sessionId) return;
      pending.delete(sessionId);
      try {
        const res: any = await opencode.session.messages({ path: { id: sessionId } });
        const transcript = (res?.data ?? [])
          .map((m: any) => ({ id: m.info?.id, role: m.info?.role, content: partsText(m.parts) }))
          .filter((m: any) => m.id && (m.role === "user" || m.role === "assistant") && m.content.trim());
        if (transcript.length) await lore.call("lore/sessionEnd", { sessionId, harness: "opencode", project: cwd, transcript });
      } catch {
        // fail open: capture is best effort
      }
    },

    tool: {
      lore_recall: tool({
        description: "Search long-term memory (earlier sessions, curated project knowledge, facts, the workspace) for leads.",
        args: { query: tool.schema.string().describe("What to look for, in plain words") },
        async execute(args) {
          const result = await lore.call("lore/recall", { query: args.query, limit: 8, project: cwd });
          const lines = (result?.hits ?? []).map((h: any) => `${h.score.toFixed(3)} ${h.uri}\n  ${h.snippet}`);
          return lines.join("\n") || "nothing relevant in memory";
        },
      }),
    },
  };
};
