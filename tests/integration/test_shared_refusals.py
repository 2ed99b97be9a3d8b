"""The team record's refusals kept and counted where they belong (docs/team.md), on a real
PostgreSQL: an offline write the record refuses on arrival is kept with its refusal, and a
node moved between scopes counts in the budget of the scope it is in now."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import psycopg
import pytest

from tests.integration.test_shared import _allow, _database, _wait, close, converge, machines


def _kept(store: Path, op_id: str) -> dict | None:
    """The outcome a machine's store keeps for one of its operations (applied_ops)."""
    import sqlite3

    db = sqlite3.connect(f"file:{store / 'lore.db'}?mode=ro", uri=True)
    try:
        row = db.execute("SELECT result FROM applied_ops WHERE op_id=?", (op_id,)).fetchone()
    finally:
        db.close()
    return json.loads(row[0]) if row else None


def test_an_offline_write_the_record_refuses_on_arrival_is_kept_with_its_refusal(tmp_path, pg_cluster):
    """docs/team.md: an operation the record refuses on arrival (someone else took the URI
    meanwhile) is logged and kept with its refusal; nothing is silently dropped. Two machines
    create the same URI while the record is away; the control: one push wins (its operation
    is in the log, its store keeps a result without an error); the other is refused there and
    its store keeps that refusal under its operation id."""
    name = f"refused_{uuid.uuid4().hex[:8]}"
    url = _database(pg_cluster.url, name)
    cs = machines(tmp_path, url, "t", 2)
    uri, online = "project://shop/decision/taken-offline", "project://shop/pattern/online"
    try:
        cs[0].request("lore/createNode", {"uri": online, "content": "written online", "category": "pattern"})
        assert converge(cs, {online}, timeout=20)[1] == {online}
        _allow(pg_cluster.url, name, False)
        acked = [c.request("lore/createNode", {"uri": uri, "content": f"taken by machine {i}", "category": "decision"})
                 for i, c in enumerate(cs)]
        _allow(pg_cluster.url, name, True)
        pushed = _wait(lambda: all(c.request("lore/status")["shared"]["pending"] == 0 for c in cs))
        seen = converge(cs, {uri}, timeout=30)
    finally:
        close(cs)
    with psycopg.connect(url) as conn:
        logged = {r[0] for r in conn.execute("SELECT op_id FROM lore_ops").fetchall()}
    kept = [_kept(tmp_path / f"m{i}" / "store", a["opId"]) for i, a in enumerate(acked)]
    assert all(a["durable"] is True and a["applied"] is False for a in acked)  # both acknowledged offline
    assert pushed and all(uri in s for s in seen)
    won = [a["opId"] in logged for a in acked]
    assert won.count(True) == 1, (won, kept)
    winner, loser = won.index(True), won.index(False)
    assert kept[winner] is not None and "error" not in kept[winner], kept
    assert kept[loser] is not None and kept[loser]["error"]["kind"] == "nodeExists", kept


def test_a_node_moved_into_the_global_scope_counts_in_the_global_budget_afterwards(pg_cluster):
    """The record's live nodes must say where each node counts now: a project node moved to
    the global scope takes one of the global priority-0 slots, so with four global ones and
    the moved one the next global create is refused (priorityBudget), as on one machine. It
    used to keep its project in `lore_nodes`, so the global count missed it and a sixth
    global priority-0 node got in. The control: once one global node is forgotten, the same
    create passes."""
    from lore_sidecar.errors import LoreError
    from lore_sidecar.shared.record import SharedRecord

    tag = uuid.uuid4().hex[:8]
    rec = SharedRecord(pg_cluster.url, f"g-{tag}", "m")
    n = iter(range(1000))

    def op(method: str, **args) -> int:
        return rec.append({"opId": f"{tag}-{next(n)}", "kind": "nodeOp", "method": method, "project": "/x/shop",
                           "args": args}, "shop")

    try:
        for k in range(4):
            op("createNode", uri=f"preferences://user/g{k}", content="g", category="preference", priority=0)
        op("createNode", uri="project://shop/decision/moved", content="m", category="decision", priority=0)
        op("updateNode", uri="project://shop/decision/moved", changes={"scope": "global"})
        with pytest.raises(LoreError) as full:
            op("createNode", uri="preferences://user/g4", content="g", category="preference", priority=0)
        op("forget", uri="preferences://user/g0")
        op("createNode", uri="preferences://user/g4", content="g", category="preference", priority=0)  # the control
    finally:
        rec.close()
    assert full.value.kind == "priorityBudget"
