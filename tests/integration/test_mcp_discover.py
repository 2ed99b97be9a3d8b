"""An MCP 2026-07-28 client (Copilot CLI 1.0.102) opens with `server/discover`, not
`initialize`, and gives up on a server that has not answered within ~9 s — then falls back to
`initialize`, which the SDK refuses on a connection already serving 2026-07-28: a slow start
cost it every lore tool. The kept handshake answers that opening too."""

from __future__ import annotations

import json
import subprocess
import sys

META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "copilot-cli", "version": "1.0.102"},
        "io.modelcontextprotocol/clientCapabilities": {}}


def _discover(store, workspace, *, then=()):
    """Raw lines: server/discover, tools/list (each carrying `_meta`), then `then`; replies by id."""
    msgs = [{"jsonrpc": "2.0", "id": 0, "method": "server/discover", "params": {"_meta": META}},
            {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": META}}, *then]
    proc = subprocess.Popen([sys.executable, "-m", "lore_sidecar", "mcp", "--store-dir", str(store)], cwd=workspace,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    replies: dict[int, list[str]] = {}
    try:
        for m in msgs:
            proc.stdin.write((json.dumps(m) + "\n").encode())
            proc.stdin.flush()
            line = proc.stdout.readline().decode()
            replies.setdefault(json.loads(line)["id"], []).append(line)
        proc.stdin.close()
        for line in filter(None, proc.stdout.read().decode().splitlines()):
            replies.setdefault(json.loads(line).get("id"), []).append(line)
    finally:
        proc.kill()
        proc.wait()
    return replies


def test_a_kept_discover_opening_is_answered_at_once_and_the_session_still_works(tmp_path, workspace):
    store = tmp_path / "store"
    first = _discover(store, workspace)
    assert '"jsonrpc":"2.0"' in first[0][0]  # the SDK answered (compact JSON) ...
    kept = json.loads(next((store / "mcp").glob("handshake-*.json")).read_text())
    assert set(kept["server/discover"]) == {"2026-07-28"} and set(kept["tools/list@"]) == {"2026-07-28"}  # ... and was kept
    create = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"_meta": META,
              "name": "lore_create_node", "arguments": {"uri": "project://proj/decision/db", "content": "SQLite in WAL"}}}
    second = _discover(store, workspace, then=[create])
    # Answered from the kept handshake (this package's JSON), once each, the same content; the
    # SDK's own session is set up all the same: the tool call works.
    assert '"jsonrpc": "2.0"' in second[0][0] and '"jsonrpc": "2.0"' in second[1][0]
    assert {k: len(v) for k, v in second.items()} == {0: 1, 1: 1, 2: 1}
    for rid in (0, 1):
        assert json.loads(second[rid][0])["result"] == json.loads(first[rid][0])["result"]
    assert "resultType" in json.loads(second[1][0])["result"]  # the 2026 tools/list, not a 2025 one
    assert "version 1" in json.loads(second[2][0])["result"]["content"][0]["text"]
