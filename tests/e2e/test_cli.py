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
