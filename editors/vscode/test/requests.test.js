// The extension's request code (out/lore.js, compiled by tsc) against the real sidecar,
// over vscode-jsonrpc — the same JSON-RPC stack vscode-languageclient uses, strict framing
// included. VS Code itself cannot run offline here.
//
//   LORE_SIDECAR_CMD="python -m lore_sidecar --stdio --store-dir /tmp/s" WORKSPACE=/path node test/requests.test.js
//
// Prints one JSON line with what it saw; exits 1 on a failed check.

const { spawn } = require("node:child_process");
const assert = require("node:assert/strict");
const rpc = require("vscode-jsonrpc/node");
const lore = require("../out/lore.js");

async function main() {
  const [cmd, ...args] = (process.env.LORE_SIDECAR_CMD || "lore-sidecar --stdio").split(" ");
  const workspace = process.env.WORKSPACE;
  const child = spawn(cmd, args, { cwd: workspace, stdio: ["pipe", "pipe", "inherit"] });
  const conn = rpc.createMessageConnection(new rpc.StreamMessageReader(child.stdout), new rpc.StreamMessageWriter(child.stdin));
  const notes = [];
  conn.onNotification((method) => notes.push(method));
  conn.onRequest(() => null); // e.g. window/workDoneProgress/create
  conn.listen();
  const uri = "file://" + workspace;
  await conn.sendRequest("initialize", {
    processId: process.pid, rootUri: uri, capabilities: {},
    workspaceFolders: [{ uri, name: "ws" }], initializationOptions: { watch: false },
  });
  conn.sendNotification("initialized", {});

  let indexed = 0;
  lore.onChanges(conn, () => indexed++);
  const kept = await lore.remember(conn, "Invoices round tax half-even per line");
  assert.match(kept, /^project:\/\/ws\/note\/invoices-round-tax-half-even/);
  const items = await lore.recallItems(conn, "invoices half-even rounding");
  assert.ok(items.length > 0, "recall found nothing");
  const top = items.find((i) => i.hit.uri === kept);
  assert.ok(top, "the remembered node is not among the hits");
  assert.match(top.label, /\$\(book\)/);
  const content = await lore.openNode(conn, kept);
  assert.equal(content, "Invoices round tax half-even per line");
  const status = await lore.statusText(conn);
  assert.match(status.text, /lore: writer · \d+ msgs · 1 knowledge/);
  const none = await lore.recallItems(conn, "zyzzogeton");
  assert.equal(none.length, 0); // control: nothing relevant, nothing listed

  await conn.sendRequest("shutdown");
  conn.sendNotification("exit");
  process.stdout.write(JSON.stringify({ kept, hits: items.length, status: status.text, notifications: notes }) + "\n");
  setTimeout(() => process.exit(0), 200);
}

main().catch((err) => {
  process.stderr.write(String(err && err.stack || err) + "\n");
  process.exit(1);
});
