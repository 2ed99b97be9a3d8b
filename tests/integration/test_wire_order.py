"""A whole transcript piped at once (docs/protocol.md "Examples"): causal order per connection
(rpc/calls.py: a request never overtakes a write sent before it), so each `lore/recall` piped
right behind a `lore/recordMessages` finds the message just recorded; and the `shutdown` and
`exit` right behind them wait until every earlier request is answered (rpc/transport.py): every
reply is written and the exit code is 0. Independent round 4
(tools/rounds/2026-12-04-fresh4-context-gateway-ask.py)."""

from __future__ import annotations

import json
import subprocess

from lore_sidecar.client import read_frame, sidecar_command

PAIRS = 24


def frame(msg: dict) -> bytes:
    body = json.dumps(msg).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def _pipe(tmp_path, workspace, requests: list[dict]) -> tuple[dict, int]:
    """`initialize`, `initialized`, `requests`, `shutdown` (id 999999) and `exit`, piped at once:
    the replies by id, and the exit code."""
    msgs = [{"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "capabilities": {}, "rootUri": workspace.resolve().as_uri(),
        "initializationOptions": {"watch": False, "indexWorkspace": False, "distiller": "off"}}},
        {"jsonrpc": "2.0", "method": "initialized", "params": {}}, *requests,
        {"jsonrpc": "2.0", "id": 999999, "method": "shutdown"}, {"jsonrpc": "2.0", "method": "exit"}]
    proc = subprocess.Popen(sidecar_command("--store-dir", str(tmp_path / "store")), stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    try:
        proc.stdin.write(b"".join(frame(m) for m in msgs))
        proc.stdin.close()
        replies = {}
        while (msg := read_frame(proc.stdout)) is not None:
            if "id" in msg and "method" not in msg:
                replies[msg["id"]] = msg
        code = proc.wait(timeout=120)
    finally:
        proc.kill()
    return replies, code


def test_a_recall_piped_right_behind_a_write_finds_what_it_wrote(tmp_path, workspace):
    msgs = []
    for k in range(PAIRS):
        word = f"zorblax{k}quux"
        msgs.append({"jsonrpc": "2.0", "id": 2 * k + 1, "method": "lore/recordMessages", "params": {
            "sessionId": f"s{k}", "messages": [{"role": "user", "content": f"the {word} lamp is amber", "id": f"m{k}"}]}})
        msgs.append({"jsonrpc": "2.0", "id": 2 * k + 2, "method": "lore/recall", "params": {
            "query": word, "sources": ["messages"], "lexicalOnly": True}})
    replies, code = _pipe(tmp_path, workspace, msgs)  # all at once: nothing waits for a reply
    assert set(replies) == {0, 999999, *range(1, 2 * PAIRS + 1)}, sorted(replies)
    assert code == 0  # exit after shutdown
    for k in range(PAIRS):
        assert replies[2 * k + 1]["result"]["recorded"] == 1, replies[2 * k + 1]  # the control: each write landed
        hits = replies[2 * k + 2]["result"]["hits"]
        assert any(f"zorblax{k}quux" in h["snippet"] for h in hits), (k, hits)


def test_a_shutdown_piped_behind_editor_requests_waits_for_them_too(tmp_path, workspace):
    """Not only `lore/*`: a command (`workspace/executeCommand`) and a workspace symbol search
    still waiting for the store when `shutdown` arrives are answered, not cancelled. Round
    rev20 (rev20-requests-lore-only)."""
    replies, code = _pipe(tmp_path, workspace, [
        {"jsonrpc": "2.0", "id": 1, "method": "workspace/executeCommand",
         "params": {"command": "lore.status", "arguments": [{}]}},
        {"jsonrpc": "2.0", "id": 2, "method": "workspace/symbol", "params": {"query": "lamp"}}])
    assert set(replies) == {0, 1, 2, 999999}, sorted(replies)
    assert "error" not in replies[1] and "error" not in replies[2], (replies[1], replies[2])
    assert isinstance(replies[1]["result"], dict) and "settingsWarnings" in replies[1]["result"], replies[1]
    assert replies[2]["result"] == [], replies[2]
    assert code == 0

