"""The session lifecycle over stdio: boot block, directives, sessionEnd capture (idempotent),
usage per runtime, and a hook that never blocks a prompt past its timeout."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from lore_sidecar.client import StdioClient, sidecar_command
from lore_sidecar.engine.capture.transcripts import prompt_id
from lore_sidecar.hook.events import socket_path
from tests.support.harness import stop_hook_daemons


@pytest.fixture
def sidecar(tmp_path, workspace):
    c = StdioClient(sidecar_command("--store-dir", str(tmp_path / "store")))
    c.initialize(workspace, options={"watch": False})
    yield c
    c.close()


def test_session_start_carries_the_boot_block_and_prompts_carry_directives(sidecar, workspace):
    c = sidecar
    c.request("lore/createNode", {"uri": f"project://{workspace.name}/decision/db", "content": "SQLite in WAL mode",
                                  "category": "decision", "priority": 0})
    c.request("lore/createNode", {"uri": f"project://{workspace.name}/note/trivia", "content": "The logo is teal",
                                  "priority": 3})
    c.request("lore/createNode", {"uri": "preferences://user/push", "content": "Never force-push to main",
                                  "category": "preference", "disclosure": "when pushing to git remotes"})
    start = c.request("lore/sessionStart", {"sessionId": "s1", "harness": "pi", "cwd": str(workspace)})
    ctx = start["context"]
    boot = ctx[ctx.index("<boot project="):ctx.index("</boot>")]
    assert "SQLite in WAL mode" in boot and start["boot"] == 1
    assert "The logo is teal" not in boot  # priority 3 is not boot material
    push = c.request("lore/promptSubmit", {"sessionId": "s1", "prompt": "pushing the branch to the git remote now"})
    assert "<directives" in push["context"] and "Never force-push to main" in push["context"]
    other = c.request("lore/promptSubmit", {"sessionId": "s1", "prompt": "rename the invoice total helper"})
    assert "Never force-push" not in other["context"]  # its disclosure is not in scope here


def test_session_end_captures_a_claude_transcript_once(sidecar, workspace, tmp_path):
    c = sidecar
    prompt = "move the nightly export to the zephyrine bucket"
    c.request("lore/recordMessages", {"sessionId": "cc-1", "messages": [
        {"id": prompt_id(prompt), "role": "user", "content": prompt}]})  # what the prompt hook recorded
    lines = [
        {"type": "summary", "summary": "export work"},
        {"type": "user", "uuid": "u1", "timestamp": "2026-11-30T10:00:00Z", "message": {"role": "user", "content": prompt}},
        {"type": "assistant", "uuid": "a1", "timestamp": "2026-11-30T10:00:05Z",
         "message": {"role": "assistant", "content": [{"type": "text", "text": "Moved it; the bucket policy needed s3:PutObject."}]}},
        {"type": "user", "uuid": "t1", "timestamp": "2026-11-30T10:00:06Z",
         "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "x", "content": "ok"}]}},
    ]
    path = workspace / "transcript.jsonl"
    path.write_text("\n".join(json.dumps(x) for x in lines) + "\nnot json\n")
    # The same transcript outside the workspace (and the harnesses' folders) is not read.
    outside = tmp_path / "transcript.jsonl"
    outside.write_text(path.read_text())
    refused = c.request_full("lore/sessionEnd", {"sessionId": "cc-1", "transcriptPath": str(outside)})
    assert refused["error"]["data"]["kind"] == "outsideWorkspace"
    first = c.request("lore/sessionEnd", {"sessionId": "cc-1", "transcriptPath": str(path), "harness": "claude-code"})
    assert (first["captured"], first["recorded"], first["duplicates"]) == (3, 2, 1)  # the prompt was already there
    again = c.request("lore/sessionEnd", {"sessionId": "cc-1", "transcriptPath": str(path)})
    assert (again["recorded"], again["duplicates"]) == (0, 3)
    hits = c.request("lore/recall", {"query": "bucket policy PutObject"})["hits"]
    assert hits and hits[0]["uri"] == "session://cc-1/a1"
    missing = c.request_full("lore/sessionEnd", {"sessionId": "cc-1", "transcriptPath": str(workspace / "nope.jsonl")})
    assert missing["error"]["data"]["kind"] == "invalidTranscript"


@pytest.mark.usefixtures("backend")  # on both record backends
def test_usage_counts_leads_shown_and_opened_per_runtime(sidecar):
    c = sidecar
    c.request("lore/recordMessages", {"sessionId": "old", "messages": [
        {"id": "m1", "role": "user", "content": "the flamingo service retries three times"}]})
    shown = c.request("lore/promptSubmit", {"sessionId": "new", "prompt": "how often does flamingo retry?", "harness": "codex"})
    assert shown["leads"] >= 1
    c.request("lore/getNode", {"uri": "session://old/m1", "queryId": shown["queryId"], "harness": "codex"})
    usage = c.request("lore/status")["usage"]
    assert usage["recalled"]["codex"] == shown["leads"] and usage["used"] == {"codex": 1}
    # Control: a prompt with nothing relevant shows nothing and counts nothing.
    c.request("lore/promptSubmit", {"sessionId": "new", "prompt": "plorfk wuzzle", "harness": "pi"})
    assert "pi" not in c.request("lore/status")["usage"]["recalled"]


def test_a_hung_daemon_cannot_hold_up_the_prompt(tmp_path, workspace):
    store = tmp_path / "store"
    store.mkdir()
    path = socket_path(store)
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(str(path))
    server.listen(8)
    stop = threading.Event()

    def hang() -> None:  # accepts, reads, never answers
        held = []
        server.settimeout(0.2)
        while not stop.is_set():
            try:
                held.append(server.accept()[0])
            except OSError:
                continue
        for conn in held:
            conn.close()

    threading.Thread(target=hang, daemon=True).start()
    try:
        event = {"session_id": "s1", "cwd": str(workspace), "prompt": "remember the walrus cache key"}
        # The daemon never answers: a hook that waited for it would never return, so the
        # subprocess deadline (generous, not a speed check) is what a hold-up would hit.
        out = subprocess.run([sys.executable, "-m", "lore_sidecar", "--store-dir", str(store), "hook", "UserPromptSubmit"],
                             input=json.dumps(event), capture_output=True, text=True, timeout=60,
                             env={**os.environ, "LORE_HOOK_TIMEOUT_MS": "700"})
    finally:
        stop.set()
        server.close()
        stop_hook_daemons(store)
    assert out.returncode == 0 and out.stdout == ""
    spooled = [json.loads(f.read_text()) for f in (Path(store) / "spool").glob("*.op.json")]
    assert any("walrus cache key" in json.dumps(op) for op in spooled), (out.stderr, spooled)  # kept, durably


@pytest.mark.parametrize("broken", [False, True], ids=["control", "unreadable-record"])
def test_the_degraded_hook_spools_the_prompt_before_it_opens_anything_for_recall(tmp_path, workspace, broken):
    """Capture comes first: a record the degraded path cannot open for recall (corrupt, or as
    good as unopenable on a loaded machine whose deadline ran out) must not lose the prompt.
    The control is a store that opens: the prompt is spooled there too."""
    store = tmp_path / "store"
    boot = StdioClient(sidecar_command("--store-dir", str(store)))
    boot.initialize(workspace, options={"watch": False})
    boot.request("lore/status")  # the store is open (an exit during the open leaves it unmade)
    boot.close()
    if broken:
        (store / "lore.db").write_bytes(b"this is not a SQLite database" * 64)
        for extra in store.glob("lore.db-*"):
            extra.unlink()
    before = set((store / "spool").glob("*.op.json"))
    event = {"session_id": "s1", "cwd": str(workspace), "prompt": "remember the narwhal build flag"}
    out = subprocess.run([sys.executable, "-m", "lore_sidecar", "--store-dir", str(store), "hook", "UserPromptSubmit"],
                         input=json.dumps(event), capture_output=True, text=True, timeout=60,
                         env={**os.environ, "LORE_HOOK_DAEMON": "0", "LORE_HOOK_TIMEOUT_MS": "20000"})
    assert out.returncode == 0, out.stderr
    assert ("DatabaseError" in out.stderr or "not a database" in out.stderr) == broken, out.stderr
    spooled = [json.loads(f.read_text()) for f in set((store / "spool").glob("*.op.json")) - before]
    assert [op["kind"] for op in spooled] == ["recordMessages"], (out.stderr, spooled)
    assert "narwhal build flag" in json.dumps(spooled[0]["messages"])


def test_the_degraded_hooks_recall_leaves_out_the_asking_sessions_own_messages(tmp_path, workspace):
    """hook/fallback.py: the leads a prompt gets on the degraded path are earlier work, never
    the asking session's own turns (the host holds those already). Two sessions said the same
    thing; the control: the other session's message is a lead."""
    store = tmp_path / "store"
    c = StdioClient(sidecar_command("--store-dir", str(store)))
    c.initialize(workspace, options={"watch": False})
    try:
        for sid in ("earlier", "s1"):
            c.request("lore/recordMessages", {"sessionId": sid, "messages": [
                {"id": f"{sid}-1", "role": "user", "content": "the narwhal build flag turns on the arctic cache"}]})
        hits = c.request("lore/recall", {"query": "narwhal build flag arctic cache", "sources": ["messages"]})["hits"]
        assert {h["sessionId"] for h in hits} >= {"earlier", "s1"}, hits  # both are found by these words
    finally:
        c.close()
    event = {"session_id": "s1", "cwd": str(workspace), "prompt": "what does the narwhal build flag do to the arctic cache?"}
    out = subprocess.run([sys.executable, "-m", "lore_sidecar", "--store-dir", str(store), "hook", "UserPromptSubmit"],
                         input=json.dumps(event), capture_output=True, text=True, timeout=60,
                         env={**os.environ, "LORE_HOOK_DAEMON": "0", "LORE_HOOK_TIMEOUT_MS": "20000"})
    assert out.returncode == 0, out.stderr
    context = json.loads(out.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "session://earlier/" in context, context
    assert "session://s1/" not in context, context
