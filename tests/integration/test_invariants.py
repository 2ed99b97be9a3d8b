"""The invariants of DESIGN.md §2, each held by a test that fails when the invariant is
removed (the mutation each one guards is listed in docs/architecture.md)."""

from __future__ import annotations

import json
import os
import threading
import time

import pytest

from lore_sidecar.errors import LoreError
from lore_sidecar.model import NewMessage
from lore_sidecar.store.db import Database
from lore_sidecar.store.lock import WriterLock
from lore_sidecar.store.records import Records
from tests.integration.test_store_and_index import engine_for, record
from tests.support import crashfs


def message(i: int, text: str, created_at: str | None = None) -> NewMessage:
    return NewMessage(session_id="s", msg_id=f"m{i}", role="user", text=text, created_at=created_at or "2026-01-01T00:00:00Z",
                      harness="test", tool_name=None, tool_call_id=None, content_json=json.dumps(text))


# -- one writer: the epoch fence -------------------------------------------------------------------
def test_a_writer_whose_epoch_was_superseded_cannot_commit_and_is_told_staleEpoch(tmp_path):
    """Two instances both believe they hold an epoch (a paused writer woke up after another
    claimed the store): the older one's write transaction is refused and leaves nothing."""
    path = tmp_path / "lore.db"
    old, new = Database(path, writable=True), Database(path, writable=True)
    try:
        a, b = Records(old), Records(new)
        old.claim_epoch(1)
        project = a.ensure_project(str(tmp_path))
        new.claim_epoch(2)
        with pytest.raises(LoreError) as refused:
            a.insert_messages(project.id, [message(1, "from the paused writer")])
        assert refused.value.kind == "staleEpoch" and refused.value.retryable
        assert b.counts(None)["messages"] == 0
        # Control: the current epoch's identical write commits.
        b.insert_messages(project.id, [message(1, "from the current writer")])
        assert b.counts(None)["messages"] == 1
    finally:
        old.close()
        new.close()


# -- durability: an acknowledged spool write survives a power cut -------------------------------------
def test_an_acknowledged_follower_write_survives_a_power_cut_at_the_moment_of_the_reply(tmp_path, workspace):
    store = tmp_path / "store"
    engine_for(store, [str(workspace)]).close()  # the store exists; now nobody writes
    holder = WriterLock(store / "writer.lock")
    assert holder.try_acquire()  # a writer that is alive but busy: the follower must spool
    beat = threading.Event()
    threading.Thread(target=lambda: [holder.heartbeat() for _ in iter(lambda: beat.wait(0.1), True)], daemon=True).start()
    follower = engine_for(store, [str(workspace)], applyWaitMs=0)
    try:
        assert not follower.role.writer
        with crashfs.tracking([store / "spool"]) as disk:
            out = record(follower, "cut", ["the release train leaves on thursdays"])
            assert out["durable"] and not out["applied"]
            lost = disk.crash()  # the machine dies as the reply is sent
        assert lost == []
    finally:
        follower.close()
        beat.set()
        holder.release()
    writer = engine_for(store, [str(workspace)])
    try:
        deadline = time.monotonic() + 10
        while writer.records.counts(None)["messages"] == 0 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert writer.records.existing_message_ids("cut", out["ids"]) == set(out["ids"])
    finally:
        writer.close()


def test_control_the_power_cut_model_does_take_away_an_unsynced_file(tmp_path):
    with crashfs.tracking([tmp_path]) as disk:
        fd = os.open(tmp_path / "x", os.O_WRONLY | os.O_CREAT)
        os.write(fd, b"data")
        os.close(fd)
        os.replace(tmp_path / "x", tmp_path / "y")
        assert disk.crash() == [str((tmp_path / "y").resolve())]
    assert not (tmp_path / "y").exists()


# -- rebuildable indexes: ties ------------------------------------------------------------------------
def test_a_rebuilt_index_ranks_a_thousand_tied_messages_exactly_like_the_live_one(tmp_path, workspace):
    e = engine_for(tmp_path / "store", [str(workspace)])
    try:
        # Ten texts, a hundred copies each: every query below meets hundreds of equal scores.
        texts = [f"deploy the {w} service to staging" for w in
                 ("billing", "search", "auth", "email", "queue", "cache", "gateway", "ledger", "export", "report")]
        for start in range(0, 1000, 250):
            record(e, "ties", [texts[i % 10] for i in range(start, start + 250)], start=start)
        e.index.wait(60)
        queries = ["deploy staging", "billing service", "deploy the ledger service", "staging"]
        def ranked():
            return {(q, lex, limit): [h.uri for h in e.recall(q, limit=limit, sources=["messages"], lexical_only=lex).hits]
                    for q in queries for lex in (True, False) for limit in (4, 10)}
        live = ranked()
        e.index.rebuild("all")
        assert ranked() == live
        assert all(len(v) == k[2] for k, v in live.items())
    finally:
        e.close()


# -- knowledge: the .lore.md round trip, the budget -----------------------------------------------------
def test_every_node_field_survives_the_lore_md_round_trip_into_another_store(tmp_path, workspace):
    a = engine_for(tmp_path / "a", [str(workspace)])
    try:
        name = workspace.name
        a.memory.node_op("createNode", uri=f"project://{name}/decision/db", content="SQLite in WAL mode", category="decision",
                  priority=1, disclosure="when touching storage", sources=[{"path": "README.md"}])
        a.memory.node_op("createNode", uri=f"project://{name}/note/freeze", content="Code freeze until the audit ends",
                  priority=2, expires_at="2031-01-01T00:00:00Z")
        a.memory.node_op("createNode", uri=f"project://{name}/gotcha/old", content="The old deploy script hangs", category="gotcha")
        a.memory.node_op("updateNode", uri=f"project://{name}/gotcha/old", changes={"suppressed": True})
        exported = a.memory.export_knowledge()
        uris = [f"project://{name}/{u}" for u in ("decision/db", "note/freeze", "gotcha/old")]
        before = {u: a.get_node(u).metadata for u in uris}
    finally:
        a.close()
    b = engine_for(tmp_path / "b", [str(workspace)])
    try:
        after = {u: b.get_node(u).metadata for u in uris}
    finally:
        b.close()
    assert exported["nodes"] == 3 and set(after) == set(before)
    fields = ("content", "category", "priority", "scope", "disclosure", "expiresAt", "suppressed", "sources")
    for uri, node in before.items():
        assert {f: after[uri][f] for f in fields} == {f: node[f] for f in fields}, uri
    assert after[f"project://{name}/gotcha/old"]["suppressed"] is True
    assert after[f"project://{name}/note/freeze"]["expiresAt"] == "2031-01-01T00:00:00Z"


@pytest.mark.usefixtures("backend")  # on both record backends
def test_the_priority_budget_holds_when_an_update_raises_a_priority(tmp_path, workspace):
    e = engine_for(tmp_path / "store", [str(workspace)])
    try:
        name = workspace.name
        for i in range(5):
            e.memory.node_op("createNode", uri=f"project://{name}/decision/d{i}", content=f"decision {i}", priority=0)
        e.memory.node_op("createNode", uri=f"project://{name}/note/n", content="a note", priority=3)
        with pytest.raises(LoreError) as refused:
            e.memory.node_op("updateNode", uri=f"project://{name}/note/n", changes={"priority": 0})
        assert refused.value.kind == "priorityBudget"
        assert e.memory.get(f"project://{name}/note/n").metadata["priority"] == 3  # nothing changed
        # Control: the same update to a priority with room is applied.
        assert e.memory.node_op("updateNode", uri=f"project://{name}/note/n", changes={"priority": 1})["applied"]
    finally:
        e.close()


# -- time is explicit: asOf on messages ------------------------------------------------------------------
def test_recall_as_of_a_time_hides_messages_recorded_after_it(tmp_path, workspace):
    e = engine_for(tmp_path / "store", [str(workspace)])
    try:
        e.capture.record_messages(project=None, session_id="t", harness="test", messages=[
            {"role": "user", "content": "the canary region is frankfurt", "msg_id": "early", "created_at": "2026-03-01T10:00:00Z",
             "tool_name": None, "tool_call_id": None},
            {"role": "user", "content": "the canary region is now dublin", "msg_id": "late", "created_at": "2026-05-01T10:00:00Z",
             "tool_name": None, "tool_call_id": None}])
        e.index.wait()
        then = [h.uri for h in e.recall("canary region", sources=["messages"], as_of="2026-04-01T00:00:00Z").hits]
        now = [h.uri for h in e.recall("canary region", sources=["messages"]).hits]
        assert len(then) == 1 and then[0].endswith("/early")
        assert sorted(u.rsplit("/", 1)[1] for u in now) == ["early", "late"]  # control: both exist
    finally:
        e.close()


# -- concurrency: promotion and demotion under reads ---------------------------------------------------
def test_recalls_on_four_threads_never_fail_while_the_instance_is_promoted_and_demoted_twenty_times(tmp_path, workspace):
    e = engine_for(tmp_path / "store", [str(workspace)])
    try:
        record(e, "s", [f"the payment webhook retries with backoff, attempt {i}" for i in range(200)])
        e.index.wait()
        stop = threading.Event()
        errors: list[str] = []
        counts = [0] * 4

        def reader(n: int) -> None:
            while not stop.is_set():
                try:
                    hits = e.recall("payment webhook backoff", limit=5).hits
                    if not hits:
                        errors.append("no hits")
                    counts[n] += 1
                except Exception as exc:  # noqa: BLE001 (any failure is the finding)
                    errors.append(f"{type(exc).__name__}: {exc}")

        threads = [threading.Thread(target=reader, args=(n,)) for n in range(4)]
        for t in threads:
            t.start()
        election = e.election
        for cycle in range(20):
            promoted = election.promotions
            election.step_down()
            deadline = time.monotonic() + 30
            while election.promotions == promoted and time.monotonic() < deadline:
                time.sleep(0.01)
            assert election.promotions > promoted, f"cycle {cycle}: never became the writer again"
        stop.set()
        for t in threads:
            t.join(30)
        assert election.demotions >= 20
        assert errors == []
        assert all(c > 0 for c in counts)
    finally:
        e.close()
