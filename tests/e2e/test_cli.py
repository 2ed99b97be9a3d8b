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
    run("--store-dir", store, "indexer", "--stop", "--workspace", str(workspace))  # recall's background embedder
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
    first = hook("UserPromptSubmit", {"session_id": "s1", "cwd": str(workspace), "prompt": "The nightly export needs the zephyrine bucket grant"})
    assert first.returncode == 0 and first.stdout == ""
    wait_for_daemon(store)
    second = hook("UserPromptSubmit", {"session_id": "s2", "cwd": str(workspace), "prompt": "why does the zephyrine export fail?"})
    out = json.loads(second.stdout)["hookSpecificOutput"]
    assert out["hookEventName"] == "UserPromptSubmit"
    assert "<recall session_id=\"s2\"" in out["additionalContext"] and "session://s1/" in out["additionalContext"]
    assert "zephyrine bucket grant" in out["additionalContext"]  # the quoted excerpt
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


# -- newcomer paths: every mistake gets one clear line and a non-zero exit ----------------------------
def one_line_refusal(out: subprocess.CompletedProcess, *words: str) -> None:
    assert out.returncode == 2, (out.returncode, out.stderr)
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in out.stderr, out.stderr
    assert all(w in lines[0] for w in words), lines[0]


def test_bad_arguments_are_refused_in_one_line_beside_the_same_verb_succeeding(tmp_path, workspace):
    store = str(tmp_path / "store")
    ws = ["--workspace", str(workspace)]
    one_line_refusal(run("recall", "tax", "--limit", "0", "--store-dir", store, *ws), "--limit", "1..200")
    one_line_refusal(run("recall", "tax", "--limit", "-5", "--store-dir", store, *ws), "--limit")
    one_line_refusal(run("recall", "tax", "--sources", "bogus", "--store-dir", store, *ws), "bogus", "messages")
    one_line_refusal(run("status", "--store-dir", store, "--workspace", str(tmp_path / "nonexistent")), "no such folder")
    assert not (tmp_path / "store").exists()  # nothing was created for a refused call
    # Control: the same verb with good arguments, global options after the verb.
    ok = run("recall", "tax rate", "--limit", "3", "--sources", "files", *ws, "--store-dir", store)
    assert ok.returncode == 0 and "src/billing.py" in ok.stdout, ok.stderr
    assert (tmp_path / "store" / "lore.db").exists()


def test_unusable_paths_get_one_line_not_a_traceback(tmp_path, workspace):
    store = str(tmp_path / "store")
    ws = ["--workspace", str(workspace)]
    one_line_refusal(run("export", "--out", "/missing/dir/x.md", "--store-dir", store, *ws), "outside")
    a_file = tmp_path / "a-file"
    a_file.write_text("not a store")
    one_line_refusal(run("status", "--store-dir", str(a_file), *ws), str(a_file), "folder")
    # Control: export where it belongs.
    assert run("export", "--store-dir", store, *ws).returncode == 0
    assert (workspace / ".lore.md").exists()


def test_the_cli_creates_lists_and_shows_knowledge_nodes_and_export_writes_them(tmp_path, workspace):
    store = ["--store-dir", str(tmp_path / "store"), "--workspace", str(workspace)]
    uri = f"project://{workspace.name}/decision/queue"
    made = run("node", "create", uri, "Jobs go through the Redis queue, never cron", "--category", "decision",
               "--priority", "1", *store)
    assert made.returncode == 0 and f"created {uri}" in made.stdout, made.stderr
    assert uri in run("node", "list", *store).stdout
    shown = run("node", "show", uri, *store).stdout
    assert "Redis queue" in shown and "decision, p1" in shown
    one_line_refusal(run("node", "show", f"project://{workspace.name}/decision/nope", *store), "notFound")
    one_line_refusal(run("node", "create", uri, "again", *store), "nodeExists")
    assert "wrote 1 nodes" in run("export", *store).stdout
    assert uri in (workspace / ".lore.md").read_text()


def test_hook_help_names_every_event():
    text = run("hook", "--help").stdout
    assert all(e in text for e in ("SessionStart", "UserPromptSubmit", "PostToolUse", "Stop", "SessionEnd"))


def test_the_demo_fails_fast_on_a_missing_or_empty_folder(tmp_path):
    t0 = time.monotonic()
    one_line_refusal(run("demo", str(tmp_path / "missing")), "no such folder")
    (tmp_path / "empty" / ".hidden").mkdir(parents=True)
    one_line_refusal(run("demo", str(tmp_path / "empty")), "no files to index")
    assert time.monotonic() - t0 < 60


def test_log_settings_from_the_environment_take_effect(tmp_path, workspace):
    log_file = tmp_path / "lore.log"
    out = subprocess.run([sys.executable, "-m", "lore_sidecar", "status", "--store-dir", str(tmp_path / "store"),
                          "--workspace", str(workspace)], capture_output=True, text=True, timeout=120,
                         env={**os.environ, "LORE_LOG_LEVEL": "INFO", "LORE_LOG_FILE": str(log_file)})
    assert out.returncode == 0, out.stderr
    assert " INFO " in log_file.read_text()
    # Control: without them nothing is written there and stderr stays quiet at WARNING.
    quiet = run("status", "--store-dir", str(tmp_path / "store2"), "--workspace", str(workspace))
    assert " INFO " not in quiet.stderr
