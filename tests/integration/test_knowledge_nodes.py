"""Knowledge nodes over the protocol: every operation, its history, and writes through a
follower (durable in the spool, applied once by the writer, refused before spooling)."""

from __future__ import annotations

import pytest

from bench.fleet import Fleet

pytestmark = pytest.mark.usefixtures("backend")  # each test on both record backends



@pytest.fixture
def fleet(tmp_path, workspace):
    f = Fleet(tmp_path / "store", workspace, watch=False)
    yield f
    f.close()


def test_node_lifecycle_update_move_forget_and_history(fleet):
    c = fleet.spawn()
    uri = "project://proj/decision/db"
    made = c.request("lore/createNode", {"uri": uri, "content": "Use SQLite WAL", "category": "decision",
                                         "disclosure": "when touching storage and when deploying", "harness": "nvim"})
    assert made["version"] == 1 and made["warnings"]  # two situations strung together
    assert c.request_full("lore/createNode", {"uri": uri, "content": "again"})["error"]["data"]["kind"] == "nodeExists"
    up = c.request("lore/updateNode", {"uri": uri, "content": "Use SQLite WAL, synchronous=FULL", "expectedVersion": 1})
    assert up["version"] == 2 and up["warnings"]  # the disclosure is unchanged
    stale = c.request_full("lore/updateNode", {"uri": uri, "content": "x", "expectedVersion": 1})
    assert stale["error"]["data"] == {"kind": "versionConflict", "retryable": False, "uri": uri, "version": 2}
    moved = c.request("lore/moveNode", {"uri": uri, "newUri": "project://proj/architecture/db"})
    assert moved == {**moved, "uri": "project://proj/architecture/db", "version": 3}
    assert c.request_full("lore/getNode", {"uri": uri})["error"]["data"]["kind"] == "notFound"
    gone = c.request("lore/forget", {"uri": "project://proj/architecture/db", "reason": "moved to Postgres"})
    assert gone["forgotten"] is True
    entries = c.request("lore/nodeHistory", {"uri": "project://proj/architecture/db"})["entries"]
    assert [(e["action"], e["version"]) for e in entries] == [("create", 1), ("update", 2), ("move", 3), ("delete", 4)]
    assert entries[0]["runtime"] == "nvim" and entries[-1]["node"]["reason"] == "moved to Postgres"
    assert entries[2]["node"]["from"] == uri
    # The URI is free again after a soft delete; the history of both nodes stays readable.
    assert c.request("lore/createNode", {"uri": "project://proj/architecture/db", "content": "Postgres 16"})["version"] == 1
    assert len(c.request("lore/nodeHistory", {"uri": "project://proj/architecture/db"})["entries"]) == 5


def test_retain_suppression_expiry_and_domains(fleet):
    c = fleet.spawn()
    r = c.request("lore/retain", {"content": "Prefer tabs in Makefiles", "title": "tabs in makefiles", "category": "preference"})
    assert r["created"] is True and r["uri"] == f"project://{fleet.workspace.name}/preference/tabs-in-makefiles"
    r2 = c.request("lore/retain", {"content": "Tabs in Makefiles, always", "title": "tabs in makefiles", "category": "preference"})
    assert r2["created"] is False and r2["uri"] == r["uri"] and r2["version"] == 2
    g = c.request("lore/createNode", {"uri": "preferences://user/editor", "content": "The user edits in Neovim"})
    assert g["version"] == 1
    c.request("lore/createNode", {"uri": "project://x/gotcha/old", "content": "Makefiles on the old CI image",
                                  "expiresAt": "2020-01-01T00:00:00Z"})
    hits = c.request("lore/recall", {"query": "makefiles", "sources": ["knowledge"]})["hits"]
    assert [h["uri"] for h in hits] == [r["uri"]]  # the expired node is not surfaced
    assert c.request("lore/recall", {"query": "neovim", "sources": ["knowledge"]})["hits"][0]["uri"] == "preferences://user/editor"
    c.request("lore/updateNode", {"uri": r["uri"], "suppressed": True})
    assert c.request("lore/recall", {"query": "makefiles", "sources": ["knowledge"]})["hits"] == []
    assert c.request("lore/getNode", {"uri": r["uri"]})["metadata"]["suppressed"] is True  # kept
    domains = {d["domain"]: d for d in c.request("lore/listDomains", {})["domains"]}
    assert domains["preferences://user"]["scope"] == "global" and domains["project://x"]["nodes"] == 1
    bad = c.request_full("lore/createNode", {"uri": "project://x/a", "content": "c", "priority": 9})
    assert bad["error"]["code"] == -32602
    bad = c.request_full("lore/createNode", {"uri": "session://s/m", "content": "c"})
    assert bad["error"]["data"]["kind"] == "invalidUri"


def test_a_follower_writes_nodes_through_the_spool_and_refuses_early(fleet):
    writer = fleet.spawn()
    follower = fleet.spawn()
    assert follower.request("lore/status")["role"] == "follower"
    for i in range(5):
        out = follower.request("lore/createNode", {"uri": f"project://p/rules/r{i}", "content": f"rule {i}", "priority": 0})
        assert out["applied"] is True and out["durable"] is True and out["version"] == 1
    assert writer.request("lore/getNode", {"uri": "project://p/rules/r4"})["content"] == "rule 4"
    # The budget is the writer's to check (it needs the store): the refusal comes back to the sender.
    refused = follower.request_full("lore/createNode", {"uri": "project://p/rules/r5", "content": "x", "priority": 0})
    assert refused["error"]["data"]["kind"] == "priorityBudget"
    # Refusals that need no store never reach the spool.
    bad = follower.request_full("lore/createNode", {"uri": "nonsense", "content": "x"})
    assert bad["error"]["data"]["kind"] == "invalidUri"
    assert follower.request("lore/status")["election"]["spoolPending"] == 0
    history = writer.request("lore/nodeHistory", {"uri": "project://p/rules/r0"})["entries"]
    assert [(e["action"], e["runtime"]) for e in history] == [("create", "client")]
    assert follower.request("lore/status")["counts"]["knowledge"] == 5
