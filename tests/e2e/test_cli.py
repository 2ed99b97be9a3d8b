"""The human verbs run the same engine as the server."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from lore_sidecar.client import StdioClient, sidecar_command
from tests.support.harness import stop_hook_daemons, wait_for_daemon


def run(*args: str, cwd=None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "lore_sidecar", *args], capture_output=True, text=True, timeout=120, cwd=cwd)


def test_recall_status_and_reindex_verbs(tmp_path, workspace):
    store = str(tmp_path / "store")
    out = run("--store-dir", store, "recall", "invoice tax rate", "--workspace", str(workspace))
    assert out.returncode == 0, out.stderr
    assert "src/billing.py" in out.stdout and "cues: invoice · tax · rate" in out.stdout
    raw = json.loads(run("--store-dir", store, "recall", "zebracornflakes", "--workspace", str(workspace), "--json").stdout)
    assert raw["hits"] == [] and raw["total"] == 0  # control: ignored files stay out
    status = json.loads(run("--store-dir", store, "status", "--workspace", str(workspace)).stdout)
    assert status["counts"]["files"] == 4 and status["role"] == "writer"
    rebuilt = json.loads(run("--store-dir", store, "reindex", "--workspace", str(workspace)).stdout)
    assert rebuilt["files"] == 4 and rebuilt["chunks"] >= 4


def test_facts_verbs(tmp_path, workspace):
    store = str(tmp_path / "store")
    ws = ["--workspace", str(workspace)]
    out = run("--store-dir", store, "facts", "assert", "payments service", "uses", "Stripe", "--valid-from", "2024-01-01", *ws)
    assert out.returncode == 0, out.stderr
    assert run("--store-dir", store, "facts", "assert", "Payments Service", "uses", "Adyen", "--valid-from", "2025-03-01", *ws).returncode == 0
    now = run("--store-dir", store, "facts", "query", "--subject", "payments service", *ws).stdout
    assert "Adyen" in now and "Stripe" not in now
    then = json.loads(run("--store-dir", store, "facts", "query", "--subject", "payments service", "--as-of", "2024-06-01", "--json", *ws).stdout)
    assert [f["object"] for f in then["facts"]] == ["Stripe"]
    timeline = run("--store-dir", store, "facts", "timeline", "payments service", *ws).stdout
    assert timeline.index("Stripe") < timeline.index("Adyen")
    refused = run("--store-dir", store, "facts", "invalidate", "payments service", "uses", "--valid-until", "2020-01-01", *ws)
    assert refused.returncode == 2 and "closeBeforeStart" in refused.stderr
    closed = run("--store-dir", store, "facts", "invalidate", "payments service", "uses", "--valid-until", "2025-06-01", *ws)
    assert closed.returncode == 0 and "closed f" in closed.stdout  # control: a valid close
    assert "no facts" in run("--store-dir", store, "facts", "query", "--subject", "payments service", *ws).stdout


def hook_cmd(store: str, event: str, payload, **env: str) -> subprocess.CompletedProcess:
    data = payload if isinstance(payload, str) else json.dumps(payload)
    return subprocess.run([sys.executable, "-m", "lore_sidecar", "--store-dir", store, "hook", event],
                          input=data, capture_output=True, text=True, timeout=120,
                          env={**os.environ, "LORE_HOOK_IDLE_MS": "4000", **env})


@pytest.fixture
def hook_store(tmp_path):
    store = str(tmp_path / "store")
    yield store
    stop_hook_daemons(store)


def test_hook_injects_recall_from_an_earlier_session_and_fails_open(hook_store, workspace):
    store = hook_store

    def hook(event: str, payload) -> subprocess.CompletedProcess:
        return hook_cmd(store, event, payload)

    # No daemon yet: this call is served degraded (the prompt goes to the spool) and
    # starts the daemon, which applies the spool once it is the writer.
    first = hook("UserPromptSubmit", {"session_id": "s1", "cwd": str(workspace), "prompt": "The nightly export needs the zephyrine bucket policy"})
    assert first.returncode == 0 and first.stdout == ""
    wait_for_daemon(store)
    second = hook("UserPromptSubmit", {"session_id": "s2", "cwd": str(workspace), "prompt": "why does the zephyrine export fail?"})
    out = json.loads(second.stdout)["hookSpecificOutput"]
    assert out["hookEventName"] == "UserPromptSubmit"
    assert "<recall session_id=\"s2\"" in out["additionalContext"] and "session://s1/" in out["additionalContext"]
    assert "zephyrine bucket policy" in out["additionalContext"]  # the quoted excerpt
    # Nothing relevant: no output at all (the host injects nothing).
    quiet = hook("UserPromptSubmit", {"session_id": "s3", "cwd": str(workspace), "prompt": "qwxzzv plorfk"})
    assert quiet.returncode == 0 and quiet.stdout == ""
    # Broken input: still exit 0, nothing printed.
    broken = hook("UserPromptSubmit", "{not json")
    assert broken.returncode == 0 and broken.stdout == ""
    start = hook("SessionStart", {"session_id": "s4", "cwd": str(workspace)})
    assert start.returncode == 0 and "Long-term memory" in json.loads(start.stdout)["hookSpecificOutput"]["additionalContext"]


def test_hook_without_a_daemon_recalls_lexically_and_spools_the_prompt(hook_store, workspace):
    store = hook_store
    c = StdioClient(sidecar_command("--store-dir", store))
    c.initialize(workspace, options={"watch": False})
    c.request("lore/recordMessages", {"sessionId": "s1", "messages": [
        {"id": "m1", "role": "user", "content": "the quokka cache is flushed nightly by cron"}]})
    c.request("lore/recall", {"query": "quokka"})  # read-your-writes: indexed now
    c.close()
    out = hook_cmd(store, "UserPromptSubmit", {"session_id": "s2", "cwd": str(workspace), "prompt": "when is the quokka cache flushed?"},
                   LORE_HOOK_DAEMON="0")
    ctx = json.loads(out.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "session://s1/m1" in ctx
    assert list((Path(store) / "spool").glob("*.op.json"))  # the prompt, durable, for the writer
    assert not (Path(store) / "hook.sock").exists()  # and no daemon was started
    # Control: a prompt about something never said gets nothing.
    none = hook_cmd(store, "UserPromptSubmit", {"session_id": "s2", "cwd": str(workspace), "prompt": "plorfk wuzzle"},
                    LORE_HOOK_DAEMON="0")
    assert none.stdout == ""
    # The next writer applies the spooled prompt: it becomes searchable.
    c = StdioClient(sidecar_command("--store-dir", store))
    c.initialize(workspace, options={"watch": False})
    deadline = time.monotonic() + 20
    while not c.request("lore/recall", {"query": "when is the quokka cache flushed", "sources": ["messages"]})["hits"][0]["uri"].startswith("session://s2/"):
        assert time.monotonic() < deadline
        time.sleep(0.1)
    c.close()
