"""The human verbs run the same engine as the server."""

from __future__ import annotations

import json
import subprocess
import sys


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


def test_hook_injects_recall_from_an_earlier_session_and_fails_open(tmp_path, workspace):
    store = str(tmp_path / "store")

    def hook(event: str, payload) -> subprocess.CompletedProcess:
        data = payload if isinstance(payload, str) else json.dumps(payload)
        return subprocess.run([sys.executable, "-m", "lore_sidecar", "--store-dir", store, "hook", event],
                              input=data, capture_output=True, text=True, timeout=120)

    first = hook("UserPromptSubmit", {"session_id": "s1", "cwd": str(workspace), "prompt": "The nightly export needs the zephyrine bucket policy"})
    assert first.returncode == 0
    second = hook("UserPromptSubmit", {"session_id": "s2", "cwd": str(workspace), "prompt": "why does the zephyrine export fail?"})
    out = json.loads(second.stdout)["hookSpecificOutput"]
    assert out["hookEventName"] == "UserPromptSubmit"
    assert "<recall session_id=\"s2\"" in out["additionalContext"] and "session://s1/" in out["additionalContext"]
    # Nothing relevant: no output at all (the host injects nothing).
    quiet = hook("UserPromptSubmit", {"session_id": "s3", "cwd": str(workspace), "prompt": "qwxzzv plorfk"})
    assert quiet.returncode == 0 and quiet.stdout == ""
    # Broken input: still exit 0, nothing printed.
    broken = hook("UserPromptSubmit", "{not json")
    assert broken.returncode == 0 and broken.stdout == ""
    start = hook("SessionStart", {"session_id": "s4", "cwd": str(workspace)})
    assert start.returncode == 0 and "Long-term memory" in json.loads(start.stdout)["hookSpecificOutput"]["additionalContext"]
