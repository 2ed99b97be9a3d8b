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
    replay = cli("reindex", "--scope", "facts", "--store-dir", str(fresh), "--json", cwd=ws)
    assert replay.returncode == 0, replay.stderr
    c = spawn(ws, fresh)
    try:
        after = snapshot(c, ws, fresh, made)
    finally:
        c.close()
    for tier in before:
        assert after[tier] == before[tier], tier
