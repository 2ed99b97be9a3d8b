"""Conversation memory end to end: a real sidecar over stdio, the real Anthropic SDK talking
to a fake Messages server on 127.0.0.1, a 60-message coding session with a long tool
output and a planted fake AWS key."""

from __future__ import annotations

import json
import os
import re
import time
from pathlib import Path

import pytest

from lore_sidecar.client import StdioClient, sidecar_command
from tests.support.fake_anthropic import FakeAnthropic

FAKE_KEY = "AKIAIOSFODNN7EXAMPLE"  # AWS's documented example access key id
ERROR = "sqlite3.OperationalError: database is locked"
ERROR_PATH = "src/shop/store.py"
SESSION = "sess-memory-1"
MEMORY_OPTIONS = {
    "distillIdleMs": 600_000,  # segments form only on lore/distill here: deterministic bodies
    "metaThreshold": 8,
    "metaKeep": 5,
    "curateEvery": 3,
    "watch": False,
}
CURATED = {
    "op": "create", "uri": "project://anything/decision/sqlite-busy-timeout",
    "content": "Every SQLite connection sets busy_timeout to 10 s because concurrent writers hit 'database is locked'.",
    "category": "decision", "priority": 1, "disclosure": "when opening SQLite connections",
    "sources": [ERROR_PATH],
}


def responder(body: dict) -> str:
    """A deterministic stand-in for the model, keyed on which prompt it was sent."""
    system = body["system"][0]["text"]
    prompt = body["messages"][0]["content"]
    if system.startswith("You keep the working memory"):
        errors = re.findall(r"errors: ([^;\]]+)", prompt)
        paths = re.findall(r"paths: ([^;\]]+)", prompt)
        lines = [f"- tool output showed {e.strip()}" for e in errors] + [f"- paths involved: {p.strip()}" for p in paths]
        turns = re.findall(r"^\[[^\]]*\] (?:user|assistant): (.{0,80})", prompt, re.M)
        lines += [f"- discussed: {t}" for t in turns[:2]]
        return "\n".join(lines) + "\nENTITIES:\nsrc/shop/store.py | file | store.py, persistence layer"
    if system.startswith("You consolidate"):
        kept = dict.fromkeys(line for line in prompt.splitlines() if line.startswith("- "))
        return "\n".join(kept)
    if system.startswith("You curate"):
        return json.dumps({"nodes": [CURATED]})
    return "unexpected prompt"


def session_messages() -> list[dict]:
    long_output = "\n".join(
        [f"test_{i:03d} PASSED" for i in range(400)]
        + [f'  File "{ERROR_PATH}", line 187, in save_order', f"    {ERROR}"]
        + [f"test_{i:03d} PASSED" for i in range(400, 460)]
    )
    msgs = []
    for i in range(60):
        t = f"2026-11-30T10:{i // 60:02d}:{i % 60:02d}Z"
        if i == 7:
            msgs.append({"id": f"m{i:02d}", "role": "tool", "toolName": "bash", "content": long_output, "createdAt": t})
        elif i == 3:
            msgs.append({"id": f"m{i:02d}", "role": "user", "createdAt": t,
                         "content": f"the CI box has export AWS_ACCESS_KEY_ID={FAKE_KEY} set, run the tests with it"})
        elif i % 2 == 0:
            msgs.append({"id": f"m{i:02d}", "role": "user", "createdAt": t,
                         "content": f"step {i}: let's keep working on the order checkout flow, part {i}"})
        else:
            msgs.append({"id": f"m{i:02d}", "role": "assistant", "createdAt": t,
                         "content": f"Done with part {i - 1}: I updated {ERROR_PATH} and ran pytest -q again."})
    assert len(long_output) > 4000 and any(FAKE_KEY in m["content"] for m in msgs)
    return msgs


def make_project(root: Path) -> Path:
    (root / ".git").mkdir(parents=True)
    (root / "src/shop").mkdir(parents=True)
    (root / ERROR_PATH).write_text("import sqlite3\n\ndef save_order(conn, order):\n    conn.execute('INSERT ...')\n")
    (root / "README.md").write_text("# shop\n\nA small shop.\n")
    return root


def spawn(store: Path, ws: Path, env: dict[str, str], **options) -> StdioClient:
    c = StdioClient(sidecar_command(), env=env)
    c.initialize(ws, options={"storeDir": str(store), **MEMORY_OPTIONS, **options})
    c.request("lore/status")
    return c


def env_for(fake: FakeAnthropic | None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "ANTHROPIC_API_KEY"}
    if fake is not None:
        env.update(ANTHROPIC_API_KEY="sk-test-not-a-real-key", ANTHROPIC_BASE_URL=fake.url)
    return env


def run_session(tmp: Path, fake: FakeAnthropic | None) -> tuple[StdioClient, Path, list[str]]:
    ws = make_project(tmp / "shop")
    store = tmp / "store"
    c = spawn(store, ws, env_for(fake))
    created: list[str] = []
    msgs = session_messages()
    for start in range(0, 60, 5):
        r = c.request("lore/recordMessages", {"sessionId": SESSION, "harness": "test", "messages": msgs[start:start + 5]})
        assert r["recorded"] == 5
        created += c.request("lore/distill", {"sessionId": SESSION})["created"]
    return c, store, created


def store_bytes(store: Path) -> list[tuple[Path, bytes]]:
    return [(p, p.read_bytes()) for p in store.rglob("*") if p.is_file()]


@pytest.mark.slow
def test_a_session_distils_consolidates_curates_and_never_keeps_the_secret(tmp_path):
    with FakeAnthropic(responder) as fake:
        c, store, created = run_session(tmp_path / "a", fake)
        try:
            st = c.request("lore/status")
            assert st["distiller"]["mode"] == "llm" and st["distiller"]["lastError"] is None
            gen0 = [u for u in created if u.startswith("distillation://")]
            # 12 segments of 5 messages; at the 9th the meta pass consolidates 4 into gen 1.
            metas = [c.request("lore/getNode", {"uri": u}) for u in gen0]
            gens = [m["metadata"]["generation"] for m in metas]
            assert gens.count(0) == 12 and gens.count(1) == 1, gens
            meta = next(m for m in metas if m["metadata"]["generation"] == 1)
            assert meta["metadata"]["covers"] == 20 and meta["metadata"]["mode"] == "llm"
            consolidated = [m for m in metas if m["metadata"]["consolidatedInto"] == meta["uri"]]
            assert len(consolidated) == 4  # kept, searchable, pointing at their consolidation
            assert st["counts"]["distillations"] == 13

            # The curator's node, with its history naming the runtime that made it.
            node_uri = "project://shop/decision/sqlite-busy-timeout"
            assert node_uri in created
            node = c.request("lore/getNode", {"uri": node_uri})
            assert node["metadata"]["category"] == "decision" and node["metadata"]["priority"] == 1
            assert node["metadata"]["sources"][0]["path"] == ERROR_PATH
            history = c.request("lore/nodeHistory", {"uri": node_uri})["entries"]
            assert [(h["action"], h["runtime"]) for h in history] == [("create", "curator")]

            # Recall finds the distilled detail: the exact error and the file path.
            hits = c.request("lore/recall", {"query": "database is locked", "sources": ["distillations"]})["hits"]
            assert hits and ERROR in c.request("lore/getNode", {"uri": hits[0]["uri"]})["content"]
            assert ERROR_PATH in c.request("lore/getNode", {"uri": hits[0]["uri"]})["content"]
            know = c.request("lore/recall", {"query": "busy_timeout sqlite", "sources": ["knowledge"]})["hits"]
            assert know[0]["uri"] == node_uri and know[0]["category"] == "decision" and know[0]["priority"] == 1
            # Control for the source filter: a word only in messages is not a distillation hit.
            assert c.request("lore/recall", {"query": "checkout", "sources": ["messages"]})["hits"]

            # Entities: the LLM's alias expands a query to the canonical path.
            ent = c.request("lore/getNode", {"uri": "entity://src/shop/store.py"})
            assert "store.py" in ent["metadata"]["aliases"]
            # "persistence" is in no distillation: only the alias leads to them.
            alias_hits = c.request("lore/recall", {"query": "persistence layer", "sources": ["distillations"]})["hits"]
            assert alias_hits and all("persistence" not in h["snippet"] for h in alias_hits)

            # A lead opened with its queryId counts as used, once, for its runtime.
            q = c.request("lore/recall", {"query": "busy_timeout", "sources": ["knowledge"]})
            for _ in range(2):
                c.request("lore/getNode", {"uri": node_uri, "queryId": q["queryId"], "harness": "pi"})
            assert c.request("lore/status")["usage"]["used"] == {"pi": 1}
            assert c.request("lore/getNode", {"uri": node_uri})["metadata"]["uses"] == 1
            usage = st["distiller"]["usage"]
            assert usage["calls"] == len(fake.bodies) and usage["cacheRead"] > 0
        finally:
            c.close()
        stderr = "\n".join(c.stderr_lines)
        # The planted key: nowhere in the store, the logs, or anything sent to the model.
        assert FAKE_KEY not in stderr
        assert all(FAKE_KEY.encode() not in data for _, data in store_bytes(store))
        assert all(FAKE_KEY.encode() not in raw for raw in fake.raw)
        # Control: the redaction marker is there, so the message itself was kept.
        assert any(b"[REDACTED:aws-access-key]" in data for p, data in store_bytes(store) if p.name.startswith("lore.db"))
        bodies_a = list(fake.raw)
        systems = {json.dumps(b["system"]) for b in fake.bodies if "working memory" in b["system"][0]["text"]}
        assert len(systems) == 1  # one byte-identical cached prefix for every distillation call
        assert all(b["system"][-1].get("cache_control") == {"type": "ephemeral"} for b in fake.bodies)

    with FakeAnthropic(responder) as fake_b:
        c2, _, _ = run_session(tmp_path / "b", fake_b)
        c2.close()
        assert fake_b.raw == bodies_a  # the same session sends the same bytes: cache friendly


@pytest.fixture(scope="module")
def keyless(tmp_path_factory):
    """The session run without a key, once for the two tests below: they only read it (a
    recall without a session or runtime, and a getNode without a queryId, write nothing)."""
    c, store, _ = run_session(tmp_path_factory.mktemp("keyless"), None)
    try:
        yield c, store
    finally:
        c.close()


def test_without_a_key_the_same_session_distils_extractively_and_says_so(keyless):
    c, store = keyless
    st = c.request("lore/status")
    assert st["distiller"]["mode"] == "extractive"
    assert "noApiKey" in st["distiller"]["reason"] and st["distiller"]["curator"]["mode"] == "off"
    assert st["counts"]["distillations"] >= 12 and st["counts"]["knowledge"] == 0
    hits = c.request("lore/recall", {"query": "database is locked", "sources": ["distillations"]})["hits"]
    content = c.request("lore/getNode", {"uri": hits[0]["uri"]})["content"]
    assert ERROR in content and ERROR_PATH in content
    assert c.request("lore/getNode", {"uri": hits[0]["uri"]})["metadata"]["mode"] == "extractive"
    # The store is open (the database and its WAL both read); a file the sidecar drops as it
    # is read (an index merge) held nothing the files left do not.
    for path in store.rglob("*"):
        try:
            assert FAKE_KEY.encode() not in path.read_bytes(), path
        except (FileNotFoundError, IsADirectoryError):
            continue


def test_without_a_key_an_alias_finds_nothing_it_never_learnt(keyless):
    """Control for the alias test above: the extractive run never learns the LLM's alias."""
    c, _ = keyless
    assert c.request("lore/recall", {"query": "persistence layer", "sources": ["distillations"]})["hits"] == []
    assert c.request("lore/recall", {"query": "store.py", "sources": ["distillations"]})["hits"]


def test_a_model_that_refuses_the_key_falls_back_to_extractive_and_says_why(tmp_path):
    with FakeAnthropic(responder) as fake:
        fake.script = [401] * 50
        ws = make_project(tmp_path / "shop")
        c = spawn(tmp_path / "store", ws, env_for(fake))
        try:
            c.request("lore/recordMessages", {"sessionId": SESSION, "messages": session_messages()[:10]})
            out = c.request("lore/distill", {})
            st = c.request("lore/status")
            assert out["created"] and st["distiller"]["mode"] == "llm"
            assert st["distiller"]["fallbacks"] >= 1 and st["distiller"]["lastError"].startswith("authFailed")
            node = c.request("lore/getNode", {"uri": out["created"][0]})
            assert node["metadata"]["mode"] == "extractive" and ERROR in node["content"]
            # Control: once the model answers again, the next segment is the model's.
            fake.script = []
            c.request("lore/recordMessages", {"sessionId": SESSION, "messages": session_messages()[10:20]})
            again = c.request("lore/distill", {})["created"]
            assert c.request("lore/getNode", {"uri": again[0]})["metadata"]["mode"] == "llm"
            assert c.request("lore/status")["distiller"]["lastError"] is None
        finally:
            c.close()


def test_distillation_runs_by_itself_once_a_session_goes_quiet(tmp_path):
    ws = make_project(tmp_path / "shop")
    c = spawn(tmp_path / "store", ws, env_for(None), distillIdleMs=200)
    try:
        msgs = session_messages()[:6]
        c.request("lore/recordMessages", {"sessionId": "quiet", "messages": msgs})
        deadline = time.monotonic() + 20
        while c.request("lore/status")["counts"]["distillations"] == 0:
            assert time.monotonic() < deadline, "no distillation after the session went quiet"
            time.sleep(0.1)
        # Control: too few messages for a segment stay undistilled however long we wait.
        c.request("lore/recordMessages", {"sessionId": "short", "messages": [
            {"id": "x1", "role": "user", "content": "see src/shop/store.py for the error"}]})
        time.sleep(1.0)
        assert c.request("lore/status")["counts"]["distillations"] == 1
    finally:
        c.close()


@pytest.fixture
def sidecar(tmp_path):
    ws = make_project(tmp_path / "shop")
    c = spawn(tmp_path / "store", ws, env_for(None), watch=True)
    yield c, ws
    c.close()


def node(uri: str, priority: int, **kw) -> dict:
    return {"uri": uri, "content": f"knowledge at {uri}", "priority": priority, **kw}


def test_the_priority_budget_refuses_the_sixth_priority_zero_node(sidecar):
    c, _ = sidecar
    for i in range(5):
        assert c.request("lore/createNode", node(f"project://shop/rules/r{i}", 0))["version"] == 1
    refused = c.request_full("lore/createNode", node("project://shop/rules/r5", 0))
    assert refused["error"]["code"] == -32803
    assert refused["error"]["data"]["kind"] == "priorityBudget" and refused["error"]["data"]["budget"] == 5
    missing = c.request_full("lore/getNode", {"uri": "project://shop/rules/r5"})  # nothing was written
    assert missing["error"]["data"]["kind"] == "notFound"
    # Controls: the same node at priority 1 is accepted; deleting one frees a place at 0.
    assert c.request("lore/createNode", node("project://shop/rules/r6", 1))["version"] == 1
    c.request("lore/deleteNode", {"uri": "project://shop/rules/r0"})
    assert c.request("lore/createNode", node("project://shop/rules/r5", 0))["version"] == 1
    history = c.request("lore/nodeHistory", {"uri": "project://shop/rules/r0"})["entries"]
    assert [h["action"] for h in history] == ["create", "delete"]  # soft: kept in history


def test_a_file_edit_marks_the_node_citing_it_stale(sidecar):
    c, ws = sidecar
    c.request("lore/reindex", {"scope": "workspace"})
    c.request("lore/createNode", {"uri": "project://shop/gotcha/store", "content": "save_order needs a transaction",
                                  "category": "gotcha", "sources": [{"path": ERROR_PATH}]})
    c.request("lore/createNode", {"uri": "project://shop/arch/readme", "content": "the readme describes the shop",
                                  "sources": [{"path": "README.md"}]})
    before = c.request("lore/getNode", {"uri": "project://shop/gotcha/store"})["metadata"]
    assert before["stale"] is None and len(before["sources"][0]["sha256"]) == 64
    (ws / ERROR_PATH).write_text("import sqlite3\n\ndef save_order(conn, order):\n    with conn:\n        pass\n")
    deadline = time.monotonic() + 15
    while (stale := c.request("lore/getNode", {"uri": "project://shop/gotcha/store"})["metadata"]["stale"]) is None:
        assert time.monotonic() < deadline, "the edit never flagged the node"
        time.sleep(0.1)
    assert stale["path"] == ERROR_PATH and stale["reason"] == "changed"
    hits = c.request("lore/recall", {"query": "save_order transaction", "sources": ["knowledge"]})["hits"]
    assert hits[0]["stale"]["path"] == ERROR_PATH and "possibly stale" in hits[0]["title"]
    # Control: the node citing an untouched file is not stale.
    assert c.request("lore/getNode", {"uri": "project://shop/arch/readme"})["metadata"]["stale"] is None
    # Re-confirming (an update) clears the flag and records the file as it is now.
    c.request("lore/updateNode", {"uri": "project://shop/gotcha/store", "content": "save_order runs in a transaction"})
    after = c.request("lore/getNode", {"uri": "project://shop/gotcha/store"})["metadata"]
    assert after["stale"] is None and after["sources"][0]["sha256"] != before["sources"][0]["sha256"]


def test_one_rescan_that_changes_several_cited_files_marks_each_citing_node_stale(tmp_path):
    """A scan writes its files a batch at a time and tells staleness of the whole batch at
    once: every node citing any of them is flagged, with its own file and reason."""
    ws = make_project(tmp_path / "shop")
    for name in ("a", "b", "c", "d"):
        (ws / f"src/shop/{name}.py").write_text(f"def {name}():\n    return '{name}'\n")
    c = spawn(tmp_path / "store", ws, env_for(None), watch=False)
    try:
        c.request("lore/reindex", {"scope": "workspace"})
        for name in ("a", "b", "c", "d"):
            c.request("lore/createNode", {"uri": f"project://shop/gotcha/{name}", "content": f"{name} returns its name",
                                          "category": "gotcha", "sources": [{"path": f"src/shop/{name}.py"}]})
        (ws / "src/shop/a.py").write_text("def a():\n    return 'A'\n")
        (ws / "src/shop/c.py").write_text("def c():\n    return 'C'\n")
        (ws / "src/shop/d.py").unlink()
        c.request("lore/reindex", {"scope": "workspace"})  # one scan: a and c in one batch, d deleted
        stale = {n: c.request("lore/getNode", {"uri": f"project://shop/gotcha/{n}"})["metadata"]["stale"] for n in "abcd"}
        assert stale["a"] == {**stale["a"], "path": "src/shop/a.py", "reason": "changed"}
        assert stale["c"] == {**stale["c"], "path": "src/shop/c.py", "reason": "changed"}
        assert stale["d"] == {**stale["d"], "path": "src/shop/d.py", "reason": "missing"}
        assert stale["b"] is None  # control: the node citing the untouched file
    finally:
        c.close()


@pytest.mark.slow
def test_export_then_import_into_a_fresh_store_reproduces_the_nodes(tmp_path):
    ws = make_project(tmp_path / "shop")
    c = spawn(tmp_path / "store-a", ws, env_for(None))
    try:
        c.request("lore/createNode", {"uri": "project://shop/decision/db", "content": "SQLite in WAL mode.\n\n## not a heading",
                                      "category": "decision", "priority": 1, "disclosure": "when touching storage",
                                      "sources": [{"path": ERROR_PATH}]})
        c.request("lore/retain", {"content": "Prefer small pure functions for rules", "title": "pure rules",
                                  "category": "pattern"})
        c.request("lore/createNode", {"uri": "project://shop/gotcha/ci", "content": "CI has 2 cores", "category": "gotcha"})
        out = c.request("lore/exportKnowledge", {})
        before = {u: c.request("lore/getNode", {"uri": u})["metadata"] for u in
                  ("project://shop/decision/db", "project://shop/pattern/pure-rules", "project://shop/gotcha/ci")}
    finally:
        c.close()
    text = (ws / ".lore.md").read_text()
    assert out["nodes"] == 3 and text.index("decision/db") < text.index("gotcha/ci") < text.index("pattern/pure-rules")
    fresh = spawn(tmp_path / "store-b", ws, env_for(None))
    try:
        assert fresh.request("lore/status")["counts"]["knowledge"] == 3
        fields = ("content", "category", "priority", "disclosure", "scope", "sources", "expiresAt")
        for uri, meta in before.items():
            got = fresh.request("lore/getNode", {"uri": uri})["metadata"]
            assert {f: got[f] for f in fields} == {f: meta[f] for f in fields}
            h = fresh.request("lore/nodeHistory", {"uri": uri})["entries"]
            assert [(e["action"], e["runtime"]) for e in h] == [("create", "import")]
        # Exporting again from the fresh store gives the same bytes (stable ordering).
        again = fresh.request("lore/exportKnowledge", {"path": str(ws / "docs-again.md")})
        assert Path(again["path"]).read_text() == text
        # Outside the workspace nothing is written, and the refusal says why.
        refused = fresh.request_full("lore/exportKnowledge", {"path": str(tmp_path / "again.md")})
        assert refused["error"]["data"]["kind"] == "outsideWorkspace" and not (tmp_path / "again.md").exists()
    finally:
        fresh.close()
