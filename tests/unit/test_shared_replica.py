"""This machine's side of the team record (lore_sidecar/shared/replica.py), the parts that
need no database: which operations travel to the team (docs/team.md: knowledge nodes and
facts always, conversations only for the projects named in `shareMessages`, usage on its own
stream), and whose cursor a store keeps when it opens (only its own team's)."""

from __future__ import annotations

import json

from lore_sidecar.shared.record import SharedRecord
from lore_sidecar.shared.replica import Replica
from lore_sidecar.store.spool import Spool


def replica(store, team: str = "team-a", share: tuple[str, ...] = ()) -> Replica:
    # An address nothing listens on: nothing here connects (a connection would fail loudly).
    record = SharedRecord("postgresql://127.0.0.1:9/none", team, "m-test", connect_timeout_s=1)
    return Replica(record, store=store, outbox=Spool(store / "shared-outbox"), op_result=lambda op_id: None,
                   settle=lambda *a: None, roots=lambda: [], share_messages=share)


def test_nodes_and_facts_travel_usage_goes_its_own_way_and_conversations_only_where_named(tmp_path):
    r = replica(tmp_path, share=("shop",))
    travels = [{"kind": "nodeOp", "method": m, "project": "/home/a/shop"}
               for m in ("createNode", "updateNode", "deleteNode", "moveNode", "retain", "forget")]
    travels += [{"kind": k, "project": "/home/a/web"} for k in ("assertFact", "invalidateFact", "distillation")]
    travels.append({"kind": "recordMessages", "project": "/home/a/shop"})
    assert [op for op in travels if not r.shares(op)] == []
    stays = [{"kind": "nodeOp", "method": "countUse", "project": "/home/a/shop"},  # the usage stream's
             {"kind": "nodeOp", "method": "logRecall", "project": "/home/a/shop"},
             {"kind": "recordMessages", "project": "/home/a/web"},  # not named in shareMessages
             {"kind": "nodeOp", "method": "createNode"},  # no project: nothing to share it in
             {"kind": "reindex", "project": "/home/a/shop"}]
    assert [op for op in stays if r.shares(op)] == []
    # the default shares no conversation at all
    assert not replica(tmp_path / "other").shares({"kind": "recordMessages", "project": "/home/a/shop"})


def test_a_store_keeps_the_cursor_of_its_own_team_and_starts_over_for_another(tmp_path):
    (tmp_path / "shared.json").write_text(json.dumps({"team": "team-a", "cursor": {"shop": 41, "*usage": 7}}))
    assert replica(tmp_path, "team-a").status()["cursor"] == {"shop": 41, "*usage": 7}
    assert replica(tmp_path, "team-b").status()["cursor"] == {}
    st = replica(tmp_path, "team-a").status()
    assert (st["backend"], st["team"], st["connected"], st["lagMs"], st["pending"]) == (
        "postgresql", "team-a", False, None, 0)


# -- independent review, fresh round 5 (tools/rounds/2026-12-07-fresh5.py) --------------------------

def test_an_outbox_push_while_the_record_is_still_away_keeps_every_write_for_later(tmp_path):
    """docs/team.md: a write acknowledged while the record was away is pushed, exactly once,
    when it is back. A push that finds it still away stops and says so (sharedUnreachable):
    the write stays in the outbox, nothing is settled as refused. The control: the write was
    in the outbox to begin with, and it is the same one after."""
    import pytest

    from lore_sidecar.errors import LoreError

    settled = []
    record = SharedRecord("postgresql://127.0.0.1:9/none", "team-a", "m-test", connect_timeout_s=1)
    r = Replica(record, store=tmp_path, outbox=Spool(tmp_path / "shared-outbox"), op_result=lambda op_id: None,
                settle=lambda *a: settled.append(a), roots=lambda: [])
    op = {"opId": "op-offline-1", "kind": "nodeOp", "method": "createNode", "project": "/home/a/shop",
          "args": {"uri": "project://shop/gotcha/offline", "content": "written on a plane"}}
    r.outbox.put(op)
    assert r.status()["pending"] == 1  # the control
    with pytest.raises(LoreError) as away:
        r.push_outbox()
    assert away.value.kind == "sharedUnreachable"
    assert settled == [] and r.status()["pending"] == 1
    [kept] = r.outbox.pending(10)
    assert r.outbox.read(kept) == op
