// A small JSON-RPC client for lore-sidecar over a child process's stdio (LSP framing).
// Shared by the Pi extension and the OpenCode plugin; Node built-ins only.
//
// Fails open: every call resolves to `undefined` when the sidecar is missing, slow or
// broken, so the agent carries on without memory.

import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";

export interface LoreOptions {
  cwd: string;
  command?: string[]; // default: $LORE_SIDECAR_CMD (space-separated) or ["lore-sidecar", "--stdio"]
  timeoutMs?: number; // per request; default 3000
  // How long after it is spawned a call may wait for the sidecar to be ready: it answers
  // `initialize` at once and opens its store afterwards (imports, SQLite, the indexes: 7-8.5 s
  // on a loaded machine), and requests sent meanwhile are answered once it has. Until the
  // first answer (and at most this long) a call waits for it rather than `timeoutMs`.
  // Default: $LORE_SIDECAR_READY_MS or 20000.
  readyTimeoutMs?: number;
  initializationOptions?: Record<string, unknown>;
  log?: (msg: string) => void;
}

type Pending = { resolve: (v: unknown) => void; timer: NodeJS.Timeout };

export class LoreClient {
  private child?: ChildProcessWithoutNullStreams;
  private buffer = Buffer.alloc(0);
  private nextId = 1;
  private pending = new Map<number, Pending>();
  private ready?: Promise<boolean>;
  private dead = false;
  private readyBy = 0; // until then (ms since the epoch), and until a first answer, calls wait for the store to open
  private answered = false;

  constructor(private readonly opts: LoreOptions) {}

  /** Spawn and initialize once; false when the sidecar cannot start. */
  start(): Promise<boolean> {
    if (!this.ready) this.ready = this.boot();
    return this.ready;
  }

  private async boot(): Promise<boolean> {
    const cmd = this.opts.command ?? (process.env.LORE_SIDECAR_CMD?.split(" ").filter(Boolean) || ["lore-sidecar", "--stdio"]);
    const readyMs = this.opts.readyTimeoutMs ?? (Number(process.env.LORE_SIDECAR_READY_MS) || 20_000);
    this.readyBy = Date.now() + readyMs;
    try {
      this.child = spawn(cmd[0], cmd.slice(1), { cwd: this.opts.cwd, stdio: ["pipe", "pipe", "pipe"] });
    } catch (err) {
      this.fail(`cannot spawn ${cmd.join(" ")}: ${err}`);
      return false;
    }
    this.child.on("error", (err) => this.fail(`sidecar error: ${err}`));
    this.child.on("exit", () => this.fail("sidecar exited"));
    this.child.stderr.on("data", () => {}); // the sidecar logs there; keep the pipe drained
    this.child.stdout.on("data", (chunk: Buffer) => this.onData(chunk));
    const init = await this.request("initialize", {
      processId: process.pid,
      rootUri: "file://" + this.opts.cwd,
      workspaceFolders: [{ uri: "file://" + this.opts.cwd, name: "workspace" }],
      capabilities: {},
      initializationOptions: this.opts.initializationOptions ?? {},
    }, 30_000);
    if (init === undefined) return false;
    this.notify("initialized", {});
    return true;
  }

  /** The result, or undefined on any failure (never throws). */
  async call<T = any>(method: string, params: Record<string, unknown>, timeoutMs?: number): Promise<T | undefined> {
    if (!(await this.start())) return undefined;
    let wait = timeoutMs ?? this.opts.timeoutMs ?? 3000;
    // Trigger: a session's first requests gave up after 3 s while the sidecar was still
    // opening its store, and the first prompt's recall was silently lost. Outcome: before the
    // first answer they wait until `readyBy` (bounded: the agent is never held longer).
    if (!this.answered) wait = Math.max(wait, this.readyBy - Date.now());
    const result = (await this.request(method, params, wait)) as T | undefined;
    if (result !== undefined) this.answered = true;
    return result;
  }

  async close(): Promise<void> {
    if (!this.child || this.dead) return;
    await this.request("shutdown", null, 2000);
    this.notify("exit", null);
    this.child.stdin.end();
    setTimeout(() => this.child?.kill(), 2000).unref();
  }

  private request(method: string, params: unknown, timeoutMs: number): Promise<unknown> {
    if (this.dead || !this.child) return Promise.resolve(undefined);
    const id = this.nextId++;
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        this.opts.log?.(`lore: ${method} timed out after ${timeoutMs} ms`);
        resolve(undefined);
      }, timeoutMs);
      timer.unref?.();
      this.pending.set(id, { resolve, timer });
      this.send({ jsonrpc: "2.0", id, method, params });
    });
  }

  private notify(method: string, params: unknown): void {
    if (!this.dead && this.child) this.send({ jsonrpc: "2.0", method, params });
  }

  private send(msg: unknown): void {
    const body = Buffer.from(JSON.stringify(msg), "utf8");
    try {
      this.child!.stdin.write(`Content-Length: ${body.length}\r\n\r\n`);
      this.child!.stdin.write(body);
    } catch (err) {
      this.fail(`write failed: ${err}`);
    }
  }

  private onData(chunk: Buffer): void {
    this.buffer = Buffer.concat([this.buffer, chunk]);
    for (;;) {
      const end = this.buffer.indexOf("\r\n\r\n");
      if (end < 0) return;
      const header = this.buffer.subarray(0, end).toString("ascii");
      const m = /content-length:\s*(\d+)/i.exec(header);
      if (!m) return this.fail("bad frame header");
      const length = Number(m[1]);
      if (this.buffer.length < end + 4 + length) return;
      const body = this.buffer.subarray(end + 4, end + 4 + length).toString("utf8");
      this.buffer = this.buffer.subarray(end + 4 + length);
      let msg: any;
      try {
        msg = JSON.parse(body);
      } catch {
        continue;
      }
      if (msg.method !== undefined && msg.id !== undefined) {
        this.send({ jsonrpc: "2.0", id: msg.id, result: null }); // e.g. window/workDoneProgress/create
        continue;
      }
      const waiting = msg.id !== undefined ? this.pending.get(msg.id) : undefined;
      if (!waiting) continue;
      this.pending.delete(msg.id);
      clearTimeout(waiting.timer);
      if (msg.error) this.opts.log?.(`lore: ${msg.error.message}`);
      waiting.resolve(msg.error ? undefined : msg.result);
    }
  }

  private fail(why: string): void {
    if (this.dead) return;
    this.dead = true;
    this.opts.log?.(`lore: ${why}; continuing without memory`);
    for (const [, p] of this.pending) {
      clearTimeout(p.timer);
      p.resolve(undefined);
    }
    this.pending.clear();
  }
}

/** Plain text of a message's content (a string or content blocks). */
export function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .map((b: any) => (typeof b === "string" ? b : b?.type === "text" ? b.text : ""))
    .filter(Boolean)
    .join("\n");
}
