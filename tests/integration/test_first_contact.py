"""First contact (issue 37): answers never wait for the meaning index.

A CLI call in a fresh repository answers from the words and says what meaning is still to
come; a detached background indexer takes the writer role when the call exits, embeds the
rest and exits when done; a call made meanwhile answers as a follower; `lore/ask` and
`lore/recall` asked before the first scan finished say the workspace is still being indexed.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from lore_sidecar.client import StdioClient, sidecar_command
from lore_sidecar.engine.ask.retrieval import NOTHING
from lore_sidecar.store.indexer_lock import info

NONSENSE = "quixotic zeppelin marmalade"  # matches nothing in any workspace below


def cli(store: Path, *args: str, workspace: Path, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "lore_sidecar", "--store-dir", str(store), *args,
                           "--workspace", str(workspace)], capture_output=True, text=True, timeout=180,
                          env=env)


def repo(root: Path, files: int, functions: int = 1) -> Path:
    """A fresh Python repository: `files` modules of `functions` functions each."""
    (root / ".git").mkdir(parents=True)
    for i in range(files):
        body = "".join(f'def handler_{i}_{j}(request):\n    """Parse the invoice ledger entry {i}.{j}."""\n'
                       f"    total = request.amount * {j + 1}\n    return total\n\n\n" for j in range(functions))
        (root / f"mod_{i:04d}.py").write_text(body)
    return root


def wait_until(predicate, timeout: float, what: str):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.2)
    raise AssertionError(f"timed out waiting for {what}")


def status(store: Path, workspace: Path) -> dict:
    out = cli(store, "status", "--json", workspace=workspace)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def stop_indexer(store: Path) -> None:
    running = info(store)
    if running and running.get("pid"):
        try:
            os.kill(int(running["pid"]), 15)
        except ProcessLookupError:
            pass
    wait_until(lambda: info(store) is None, 60, "the background indexer to stop")


@pytest.mark.slow
def test_a_cli_recall_in_a_fresh_repo_answers_by_words_while_the_background_indexer_embeds_then_exits(tmp_path):
    ws, store = repo(tmp_path / "ws", 30), tmp_path / "store"
    try:
        out = cli(store, "recall", "invoice ledger entry", "--json", workspace=ws)
        assert out.returncode == 0, out.stderr
        first = json.loads(out.stdout)
        # Answered by the words, while nothing is embedded yet: the call never waited for it.
        assert first["hits"] and all(Path(h["path"]).name.startswith("mod_") for h in first["hits"])
        assert first["indexing"]["meaning"]["chunksToGo"] > 0 and first["densePartial"]
        assert "meaning index" in out.stderr and "chunks to go" in out.stderr
        # The background indexer took over, embedded the rest and exited by itself.
        wait_until(lambda: info(store) is None, 150, "the background indexer to finish")
        level = status(store, ws)
        assert level["vectorLag"] == 0 and level["indexing"]["meaning"]["chunksToGo"] == 0
        assert level["indexing"]["message"] is None and level["backgroundIndexer"] is None
        # Control: with the meaning index level, a recall says nothing is coming and starts nothing.
        again = cli(store, "recall", "invoice ledger entry", "--json", workspace=ws)
        assert json.loads(again.stdout)["indexing"]["message"] is None and "chunks to go" not in again.stderr
        assert info(store) is None
    finally:
        stop_indexer(store)


@pytest.mark.slow
def test_a_cli_call_while_the_background_indexer_holds_the_writer_role_answers_as_a_follower(tmp_path):
    ws, store = repo(tmp_path / "ws", 250, functions=8), tmp_path / "store"  # ~2,000 chunks: it embeds a while
    try:
        assert cli(store, "recall", "invoice", "--json", workspace=ws).returncode == 0
        held = wait_until(lambda: (s := status(store, ws))["backgroundIndexer"] and s["backgroundIndexer"]["pid"]
                          == s["writerPid"] and s, 60, "the background indexer to take the writer role")
        assert held["role"] == "follower" and held["vectorLag"] > 0
        out = cli(store, "recall", "handler_7_3 invoice ledger entry", "--json", workspace=ws)
        assert out.returncode == 0, out.stderr
        hits = json.loads(out.stdout)["hits"]
        assert hits and Path(hits[0]["path"]).name == "mod_0007.py"  # answered from the writer's published index
        assert f"background indexer pid {held['writerPid']} is embedding" in out.stderr
        # Stoppable: `indexer --stop` ends it, and the next call is the writer again.
        stopped = cli(store, "indexer", "--stop", workspace=ws)
        assert f"stopped the background indexer (pid {held['writerPid']})" in stopped.stdout
        assert info(store) is None
        after = status(store, ws)
        assert after["role"] == "writer" and after["backgroundIndexer"] is None
        assert after["indexing"]["meaning"]["chunksToGo"] > 0  # what it had not embedded is still owed, and said
    finally:
        stop_indexer(store)


@pytest.mark.slow
def test_lore_ask_and_recall_right_after_initialized_say_the_workspace_is_still_being_indexed(tmp_path):
    ws, store = repo(tmp_path / "ws", 1500), tmp_path / "store"  # a first scan of seconds, not milliseconds
    c = StdioClient(sidecar_command("--store-dir", str(store)))
    try:
        c.initialize(ws)
        early = c.request("lore/ask", {"question": NONSENSE}, timeout=120)
        early_recall = c.request("lore/recall", {"query": "invoice ledger entry"}, timeout=120)
        assert early["mode"] == "retrieval" and early["indexing"]["stillIndexing"]
        assert "still being indexed" in early["answer"] and NOTHING not in early["answer"]
        assert early_recall["indexing"]["stillIndexing"]
        wait_until(lambda: not c.request("lore/status", {})["indexing"]["stillIndexing"], 120, "the first scan")
        # Control: once the scan is done the same question is answered plainly.
        late = c.request("lore/ask", {"question": NONSENSE}, timeout=120)
        assert late["answer"] == NOTHING and not late["indexing"]["stillIndexing"]
        assert not c.request("lore/recall", {"query": "invoice ledger entry"})["indexing"]["stillIndexing"]
    finally:
        c.close()


@pytest.mark.slow
def test_shared_url_without_psycopg_says_install_the_team_extra_in_status_and_doctor(tmp_path, workspace):
    blocker = tmp_path / "blocker" / "psycopg"
    blocker.mkdir(parents=True)
    (blocker / "__init__.py").write_text("raise ImportError('psycopg is not installed (blocked for this test)')\n")
    store = tmp_path / "store"
    base = {**os.environ, "LORE_SHARED_URL": "postgresql://lore@127.0.0.1:1/lore"}
    without = {**base, "PYTHONPATH": os.pathsep.join([str(blocker.parent), os.environ.get("PYTHONPATH", "")])}
    told = json.loads(cli(store, "status", "--json", workspace=workspace, env=without).stdout)["shared"]
    assert "install lore-sidecar[team]" in told["lastError"] and not told["connected"]
    doctor = json.loads(cli(store, "doctor", "--json", workspace=workspace, env=without).stdout)
    team = next(c for c in doctor["checks"] if c["name"] == "team backend")
    assert team["state"] == "fail" and "lore-sidecar[team]" in team["fix"] and not doctor["healthy"]
    # Control: with psycopg importable the same set-up names no missing extra.
    plain = json.loads(cli(store, "status", "--json", workspace=workspace, env=base).stdout)["shared"]
    assert "lore-sidecar[team]" not in (plain["lastError"] or "")
    doctor = json.loads(cli(store, "doctor", "--json", workspace=workspace, env=base).stdout)
    assert next(c for c in doctor["checks"] if c["name"] == "team backend")["state"] == "ok"
