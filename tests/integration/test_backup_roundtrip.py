"""A backup round trip loses nothing: every tier read through the product's own requests
(and the CLI) before the backup and after a restore into a fresh store answers the same —
messages, distillations, knowledge nodes with every field and their history, facts as of
several valid times and as known at several record times, entities, usage."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from lore_sidecar.client import StdioClient, sidecar_command

T0, T1, T2, T3 = "2026-01-01T00:00:00Z", "2026-03-01T00:00:00Z", "2026-06-01T00:00:00Z", "2026-09-01T00:00:00Z"


def cli(*args: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "lore_sidecar", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=300, env={**os.environ, **(env or {})})


def spawn(ws: Path, store: Path) -> StdioClient:
    c = StdioClient(sidecar_command())
    c.initialize(ws, options={"storeDir": str(store), "watch": False, "indexWorkspace": False, "distiller": "extractive"})
    return c


def fill(c: StdioClient) -> dict[str, Any]:
    """Every tier, through requests. Returns what the snapshot needs to ask for again."""
    c.request("lore/recordMessages", {"sessionId": "s1", "harness": "pi", "messages": [
        {"id": f"m{i}", "role": "user" if i % 2 == 0 else "assistant", "createdAt": f"2026-02-0{1 + i % 9}T10:00:00Z",
         "content": f"We decided that Kestrel uses PostgreSQL for its ledger; Alice wrote src/kestrel/ledger_{i}.py"}
        for i in range(12)]})
    c.request("lore/recordMessages", {"sessionId": "s2", "messages": [
        {"id": "t1", "role": "tool", "toolName": "bash", "content": "Error: connection refused on port 5432"}]})
    distilled = c.request("lore/distill", {"sessionId": "s1"})["created"]
    assert distilled
    node = "project://ws/decision/ledger"
    c.request("lore/createNode", {"uri": node, "content": "The ledger lives in PostgreSQL", "category": "decision",
                                  "priority": 1, "disclosure": "when the ledger comes up", "scope": "project",
                                  "sources": [{"path": "src/kestrel/ledger_0.py", "sha256": "ab" * 32}],
                                  "expiresAt": "2027-05-01T00:00:00Z"})
    c.request("lore/updateNode", {"uri": node, "content": "The ledger lives in PostgreSQL 16", "expectedVersion": 1})
    c.request("lore/createNode", {"uri": "preferences://global/style", "content": "Prefer small functions",
                                  "category": "preference", "scope": "global", "priority": 3})
    c.request("lore/createNode", {"uri": "project://ws/gotcha/hidden", "content": "Hidden gotcha about queues",
                                  "category": "gotcha"})
    c.request("lore/updateNode", {"uri": "project://ws/gotcha/hidden", "suppressed": True})
    c.request("lore/createNode", {"uri": "project://ws/pattern/gone", "content": "A pattern later deleted"})
    c.request("lore/deleteNode", {"uri": "project://ws/pattern/gone"})
    c.request("lore/moveNode", {"uri": "preferences://global/style", "newUri": "preferences://global/code-style"})
    known = []  # record times between the writes, for asKnownAt
    c.request("lore/assertFact", {"subject": "kestrel", "predicate": "uses", "object": "mysql", "validFrom": T0})
    known.append(_tick())
    c.request("lore/assertFact", {"subject": "kestrel", "predicate": "uses", "object": "postgres", "validFrom": T1})
    known.append(_tick())
    c.request("lore/assertFact", {"subject": "kestrel", "predicate": "owner", "object": "alice", "validFrom": T0,
                                  "source": "inferred", "confidence": 0.7})
    c.request("lore/invalidateFact", {"subject": "kestrel", "predicate": "owner", "validUntil": T2})
    known.append(_tick())
    # Usage: a recall shown to a runtime and one of its hits opened.
    shown = c.request("lore/promptSubmit", {"sessionId": "s3", "prompt": "where does the Kestrel ledger live?",
                                            "harness": "codex"})
    q = c.request("lore/recall", {"query": "ledger PostgreSQL", "sources": ["knowledge"], "harness": "codex"})
    c.request("lore/getNode", {"uri": node, "queryId": q["queryId"], "harness": "codex"})
    assert shown["leads"] >= 1
    return {"distilled": distilled, "known": known}


def _tick() -> str:
    time.sleep(0.02)
    from datetime import UTC, datetime

    at = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    time.sleep(0.02)
    return at


def every_entity(c: StdioClient) -> list[dict[str, Any]]:
    out, offset = [], 0
    while True:
        r = c.request("lore/recall", {"query": "kestrel ledger postgresql alice src", "sources": ["entities"],
                                      "limit": 50, "offset": offset})
        out += r["hits"]
        if r["nextOffset"] is None:
            return sorted((c.request("lore/getNode", {"uri": h["uri"]}) for h in out), key=lambda n: n["uri"])
        offset = r["nextOffset"]


def snapshot(c: StdioClient, ws: Path, store: Path, made: dict[str, Any]) -> dict[str, Any]:
    """Every tier as the product answers it (no SQL)."""
    def node(uri: str) -> dict[str, Any]:
        return c.request("lore/getNode", {"uri": uri})

    nodes = c.request("lore/listNodes", {"scope": "all", "limit": 200})
    facts = {}
    for as_of in (None, T0, "2026-02-01T00:00:00Z", T1, T2, T3):
        for known_at in (None, *made["known"]):
            key = f"{as_of}|{known_at}"
            facts[key] = c.request("lore/queryFacts", {"subject": "kestrel", "asOf": as_of, "asKnownAt": known_at})
    status = c.request("lore/status")
    return {
        "messages": [node(f"session://s1/m{i}") for i in range(12)] + [node("session://s2/t1")],
        "distillations": [node(u) for u in made["distilled"]],
        "nodes": nodes,
        "nodeBodies": [node(n["uri"]) for n in nodes["nodes"]],
        "history": {u: c.request("lore/nodeHistory", {"uri": u}) for u in
                    ("project://ws/decision/ledger", "project://ws/gotcha/hidden", "project://ws/pattern/gone",
                     "preferences://global/code-style")},
        "facts": facts,
        "factHistory": c.request("lore/queryFacts", {"subject": "kestrel", "history": True}),
        "timeline": c.request("lore/timeline", {"subject": "kestrel"}),
        "entities": every_entity(c),
        "usage": status["usage"],
        "counts": status["counts"],
        "factsCli": cli("facts", "query", "--subject", "kestrel", "--history", "--store-dir", str(store), cwd=ws).stdout,
    }


@pytest.mark.slow
def test_a_backup_restored_into_a_fresh_store_answers_every_tier_as_before(tmp_path):
    ws, store, out, fresh = tmp_path / "ws", tmp_path / "store", tmp_path / "backups", tmp_path / "fresh"
    (ws / ".git").mkdir(parents=True)
    c = spawn(ws, store)
    try:
        made = fill(c)
        before = snapshot(c, ws, store, made)
    finally:
        c.close()
    # what the snapshot must hold for the comparison to mean anything
    assert before["counts"]["facts"] >= 3 and before["counts"]["entities"] >= 3 and before["entities"]
    assert before["usage"]["used"] == {"codex": 1} and before["usage"]["recalled"].get("codex", 0) >= 1
    assert any(f["object"] == "postgres" for f in before["facts"][f"{T2}|None"]["facts"])
    assert "postgres" in before["factsCli"]
    assert before["distillations"] and all(d["content"] for d in before["distillations"])
    ledger = next(n for n in before["nodeBodies"] if n["uri"] == "project://ws/decision/ledger")
    assert ledger["metadata"]["expiresAt"] and ledger["metadata"]["sources"] and ledger["metadata"]["priority"] == 1
    assert ledger["metadata"]["uses"] == 1 and ledger["metadata"]["version"] == 2
    assert any(n["suppressed"] for n in before["nodes"]["nodes"])
    assert [e["action"] for e in before["history"]["project://ws/pattern/gone"]["entries"]][-1] == "delete"

    made_backup = cli("backup", "--store-dir", str(store), "--out", str(out), "--json", cwd=ws,
                      env={"LORE_BACKUP_RECALL_EVENTS": "1"})
    assert made_backup.returncode == 0, made_backup.stderr
    r = cli("restore", json.loads(made_backup.stdout)["path"], "--store-dir", str(fresh), "--json", cwd=ws)
    assert r.returncode == 0, r.stderr
    c = spawn(ws, fresh)
    try:
        # The facts replayed from the restored journal alone (the record of facts), as
        # `reindex --scope facts` does: with no journal to read they would all be gone.
        assert c.request("lore/reindex", {"scope": "facts"}, timeout=120)["facts"] == before["counts"]["facts"]
        after = snapshot(c, ws, fresh, made)
    finally:
        c.close()
    for tier in before:
        assert after[tier] == before[tier], tier


def recall_set(c: StdioClient) -> list[list[tuple[str, float]]]:
    out = []
    for q in ("invoice total tax", "retry webhook backoff", "parse config flag", "harbour crane schedule"):
        hits = c.request("lore/recall", {"query": q, "sources": ["files", "messages"], "limit": 10})["hits"]
        out.append([(h["uri"], h["score"]) for h in hits])
    return out


@pytest.mark.slow
def test_a_restore_takes_the_proven_indexes_answers_recall_identically_and_embeds_nothing_again(tmp_path, workspace):
    store, out = tmp_path / "store", tmp_path / "backups"
    c = StdioClient(sidecar_command())
    c.initialize(workspace, options={"storeDir": str(store), "watch": False, "distiller": "off"})
    try:
        c.request("lore/recordMessages", {"sessionId": "s", "messages": [
            {"role": "user", "content": f"the harbour crane schedule moved to slot {i}"} for i in range(6)]})
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            st = c.request("lore/status")
            if st["counts"]["files"] and not st["vectorLag"] and not st["indexing"]["stillIndexing"]:
                break
            time.sleep(0.3)
        assert st["counts"]["chunks"] and st["vectorLag"] == 0
        before = recall_set(c)
    finally:
        c.close()
    assert sum(map(len, before)) >= 6 and any(u.startswith("file://") for u, _ in before[0])
    for _ in range(2):
        r = cli("backup", "--store-dir", str(store), "--out", str(out), "--json", cwd=workspace)
        assert r.returncode == 0, r.stderr
    made = sorted(out.iterdir())
    assert json.loads((made[-1] / "manifest.json").read_text())["index"]["vectorSeq"] > 0

    # The backups folder: the newest backup, said so; its indexes restored, not rebuilt.
    fresh = tmp_path / "fresh"
    r = cli("restore", str(out), "--store-dir", str(fresh), cwd=workspace)
    assert r.returncode == 0, r.stderr
    assert f"from {made[-1]}" in r.stdout and "the newest of 2 backups" in r.stdout and "indexes restored" in r.stdout
    # Nothing rebuilt or re-embedded (a rebuild gives the same bytes, so bytes prove nothing):
    # the restored writer's index folder holds the very files staged from the backup (the
    # same inodes, hard-linked into its epoch), and every backed-up Tantivy segment.
    manifest = json.loads((made[-1] / "manifest.json").read_text())
    staged = fresh / manifest["index"]["dir"]
    live = max((d for d in (fresh / "index").iterdir() if d.name.startswith("e")), key=lambda d: int(d.name[1:]))
    assert live != staged
    # (frozen graphs `.usearch`, and the graph-less deltas `.delta`: a small store has only these)
    snapshots = sorted(p.name for p in (staged / "vectors").iterdir() if p.suffix in (".usearch", ".delta"))
    assert snapshots and all(os.stat(live / "vectors" / n).st_ino == os.stat(staged / "vectors" / n).st_ino
                             for n in snapshots)
    segments = {Path(k).name for k in manifest["files"] if k.endswith(".idx")}
    assert segments and segments <= {p.name for p in (live / "text").iterdir()}
    c = StdioClient(sidecar_command())
    c.initialize(workspace, options={"storeDir": str(fresh), "watch": False, "indexWorkspace": False, "distiller": "off"})
    try:
        assert c.request("lore/status")["vectorLag"] == 0
        assert recall_set(c) == before
    finally:
        c.close()

    # A bare name (looked up in the backups folder, setting backupDir) works; a wrong path
    # is one clear line, not a Python error about manifest.json.
    # With --rebuild-indexes (a backup one did not make) the indexes come from the record
    # instead, and answer the same (DESIGN §2.1).
    by_name = cli("restore", made[0].name, "--rebuild-indexes", "--store-dir", str(tmp_path / "by-name"), "--json",
                  cwd=workspace, env={"LORE_BACKUP_DIR": str(out)})
    assert by_name.returncode == 0, by_name.stderr
    assert json.loads(by_name.stdout)["restoredFrom"] == str(made[0]) and json.loads(by_name.stdout)["indexes"] == "rebuilt"
    assert not list((tmp_path / "by-name").glob("index/*/text/" + next(iter(segments))))
    c = StdioClient(sidecar_command())
    c.initialize(workspace, options={"storeDir": str(tmp_path / "by-name"), "watch": False, "indexWorkspace": False,
                                     "distiller": "off"})
    try:
        assert recall_set(c) == before
    finally:
        c.close()
    wrong = cli("restore", str(tmp_path / "nowhere"), "--store-dir", str(tmp_path / "x"), cwd=workspace)
    assert wrong.returncode == 2 and "notFound" in wrong.stderr and "Errno" not in wrong.stderr
    assert len(wrong.stderr.strip().splitlines()) == 1 and not (tmp_path / "x").exists()
