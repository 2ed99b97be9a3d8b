"""Many sidecars, one store: real processes over the real stdio protocol."""

from __future__ import annotations

import signal
import sqlite3
import threading
import time

import pytest

from bench.fleet import Fleet, record, stored_ids
from lore_sidecar.client import StdioClient, sidecar_command


@pytest.fixture
def fleet(tmp_path, workspace):
    f = Fleet(tmp_path / "store", workspace)
    yield f
    f.close()


def poll(probe, done, timeout: float = 10):
    """`probe()` again every 50 ms until `done` holds for its value or `timeout` passes; the last value."""
    deadline = time.monotonic() + timeout
    value = probe()
    while not done(value) and time.monotonic() < deadline:
        time.sleep(0.05)
        value = probe()
    return value


def drained(client) -> None:
    """Wait (up to 10 s) until this sidecar's spool has no operation left to apply."""
    poll(lambda: client.request("lore/status")["election"]["spoolPending"], lambda pending: not pending)


def test_a_follower_write_is_durable_applied_and_visible_everywhere(fleet):
    # The writer applies within milliseconds when the machine is idle; on a loaded CI machine
    # it may be busy with its first scan for more than the 2 s default. "applied" still
    # needs the writer to apply it, just with room to do so.
    fleet.options["applyWaitMs"] = 15_000
    fleet.options["readWaitMs"] = 15_000  # (CI failed once at 2 s: a read right after missed the write)
    writer = fleet.spawn()
    follower = fleet.spawn()
    assert writer.request("lore/status")["role"] == "writer"
    st = follower.request("lore/status")
    assert st["role"] == "follower" and st["writerPid"] == writer.proc.pid and st["epoch"] == 1

    r = record(follower, "s1", ["f1"], "the flamingo migration plan")
    assert r["durable"] is True and r["applied"] is True
    assert (r["recorded"], r["duplicates"], r["ids"]) == (1, 0, ["f1"])
    for c in (writer, follower):  # read-your-writes on the follower; the writer sees it too
        hits = c.request("lore/recall", {"query": "flamingo migration"})["hits"]
        assert [h["uri"] for h in hits] == ["session://s1/f1"]
    # Sent again through the follower: applied once, reported as a duplicate.
    again = record(follower, "s1", ["f1"], "the flamingo migration plan")
    assert (again["recorded"], again["duplicates"], again["applied"]) == (0, 1, True)
    assert stored_ids(fleet.store).count(("s1", "f1")) == 1
    # Control: the same query for a word nobody wrote finds nothing on either side.
    assert follower.request("lore/recall", {"query": "pelican"})["hits"] == []
    # Bad input through a follower is refused before anything is spooled.
    bad = follower.request_full("lore/recordMessages", {"sessionId": "s1", "messages": [{"role": "boss", "content": "x"}]})
    assert bad["error"]["code"] == -32602
    assert follower.request("lore/status")["election"]["spoolPending"] == 0


def test_an_acknowledged_write_survives_when_every_process_dies(fleet):
    """A follower acknowledges while no writer can apply (the writer is stopped); then both
    processes die. A sidecar started later applies the spooled write exactly once."""
    writer = fleet.spawn()
    fleet.options["applyWaitMs"] = 200
    follower = fleet.spawn()
    fleet.kill(writer, signal.SIGSTOP)
    r = record(follower, "s2", ["lonely-1", "lonely-2"], "written while nobody could apply it")
    assert r["durable"] is True and r["applied"] is False and r["recorded"] == 2
    assert ("s2", "lonely-1") not in stored_ids(fleet.store)
    fleet.kill(follower)
    fleet.kill(writer)
    fresh = fleet.spawn()
    drained(fresh)
    ids = stored_ids(fleet.store)
    assert ids.count(("s2", "lonely-1")) == 1 and ids.count(("s2", "lonely-2")) == 1
    # Applied is stored; the text index commits just after, on its own thread.
    want = {"session://s2/lonely-1", "session://s2/lonely-2"}
    found = poll(lambda: {h["uri"] for h in fresh.request(
        "lore/recall", {"query": "nobody could apply", "sources": ["messages"]})["hits"]}, lambda uris: uris == want)
    assert found == want


def test_the_writer_dies_and_a_follower_takes_over(fleet):
    writer = fleet.spawn()
    follower = fleet.spawn()
    record(writer, "s3", ["before"], "written by the first writer")
    t_kill = fleet.kill(writer)
    note = follower.wait_notification("lore/writerChanged", timeout=10)
    assert note["params"] == {"role": "writer", "writerPid": follower.proc.pid, "epoch": 2}
    claimed = fleet.wait_for_epoch(1)
    assert claimed["pid"] == follower.proc.pid and claimed["claimed_ns"] - t_kill < 5e9
    r = record(follower, "s3", ["after"], "written by the second writer")
    assert r["applied"] is True and "opId" not in r  # applied directly, not spooled
    st = follower.request("lore/status")
    assert (st["role"], st["epoch"], st["indexEpoch"]) == ("writer", 2, 2)
    hits = follower.request("lore/recall", {"query": "written writer", "sources": ["messages"]})["hits"]
    assert {h["uri"] for h in hits} == {"session://s3/before", "session://s3/after"}
    # The new writer also took over the workspace index.
    assert follower.request("lore/recall", {"query": "compute invoice total", "sources": ["files"]})["hits"]


def test_a_paused_writer_is_replaced_and_never_commits_with_its_old_epoch(fleet):
    # 2 s, not the least allowed: on a loaded machine a live writer's heartbeat thread can be
    # late by a second, and a follower would then break a healthy writer's lock (epoch churn).
    fleet.options["writerStaleMs"] = 2000
    a = fleet.spawn()
    b = fleet.spawn()
    record(a, "s4", ["a-before"], "before the pause")
    assert a.request("lore/recall", {"query": "pause", "sources": ["messages"]})["hits"]
    # Pause it while idle: a writer stopped inside a SQLite transaction keeps SQLite's own
    # write lock and nobody can take over until it wakes (that case is covered by the
    # SIGKILL soak, where the OS releases everything).
    time.sleep(2.5)
    fleet.kill(a, signal.SIGSTOP)
    t_stop = time.monotonic()
    note = b.wait_notification("lore/writerChanged", timeout=15)
    assert note["params"]["role"] == "writer" and note["params"]["epoch"] == 2
    record(b, "s4", ["b-during"], "while the old writer sleeps")
    time.sleep(max(0.0, 10.0 - (time.monotonic() - t_stop)))
    fleet.kill(a, signal.SIGCONT)
    # The woken ex-writer is asked to write at once, before it has looked around: the store
    # refuses its epoch, so the write goes through the spool to the new writer instead.
    r = record(a, "s4", ["a-after"], "after the pause")
    assert r["durable"] is True and r["applied"] is True
    st = a.request("lore/status")
    assert (st["role"], st["epoch"], st["writerPid"]) == ("follower", 2, b.proc.pid)
    a.wait_notification("lore/writerChanged", lambda p: p["role"] == "follower", timeout=10)
    epochs = {e["epoch"]: e for e in fleet.epochs()}
    assert epochs[1]["pid"] == a.proc.pid and epochs[2]["pid"] == b.proc.pid
    assert epochs[1]["last_commit_ns"] < epochs[2]["claimed_ns"]  # nothing committed in epoch 1 after
    with sqlite3.connect(fleet.store / "lore.db") as c:
        assert c.execute("SELECT epoch FROM applied_ops").fetchall() == [(2,)]
    ids = stored_ids(fleet.store)
    assert all(ids.count(("s4", m)) == 1 for m in ("a-before", "b-during", "a-after"))
    # Control: the fence is per epoch, not a blanket refusal — the new writer commits fine.
    assert record(b, "s4", ["b-later"], "still writing")["applied"] is True


@pytest.mark.parametrize("trial", range(3))
def test_two_sidecars_started_in_the_same_millisecond_both_come_up(tmp_path, workspace, trial):
    store = tmp_path / "store"
    opts = {"storeDir": str(store)}
    clients = [StdioClient(sidecar_command()), StdioClient(sidecar_command())]
    try:
        results: list = [None, None]

        def init(i: int) -> None:
            try:
                clients[i].initialize(workspace, options=opts)
                results[i] = clients[i].request("lore/status")
            except Exception as exc:  # surfaced by the assertion below
                results[i] = exc

        threads = [threading.Thread(target=init, args=(i,)) for i in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        assert all(isinstance(r, dict) for r in results), results
        assert sorted(r["role"] for r in results) == ["follower", "writer"]
        assert {r["epoch"] for r in results} == {1}
        assert not any("Traceback" in line or "ERROR" in line for c in clients for line in c.stderr_lines)
    finally:
        for c in clients:
            c.close()


def test_a_damaged_spooled_operation_is_quarantined_and_never_blocks_the_others(fleet):
    writer = fleet.spawn()
    fleet.options["applyWaitMs"] = 100
    follower = fleet.spawn()
    spool = fleet.store / "spool"
    fleet.kill(writer, signal.SIGSTOP)  # hold the writer so all three wait in the spool together
    (spool / "00000000000000000001-1-aaaa.op.json").write_text('{"opId": "x", "kind": "recordMe')
    (spool / "00000000000000000002-1-bbbb.op.json").write_text('{"opId": "y", "kind": "dropTables"}')
    r = record(follower, "s5", ["good"], "the good operation")
    assert r["applied"] is False and len(list(spool.glob("*.op.json"))) == 3
    fleet.kill(writer)  # the follower takes over and drains
    follower.wait_notification("lore/writerChanged", timeout=10)
    drained(follower)
    assert stored_ids(fleet.store) == [("s5", "good")]
    assert sorted(p.name for p in (spool / "bad").iterdir()) == [
        "00000000000000000001-1-aaaa.op.json",
        "00000000000000000002-1-bbbb.op.json",
    ]
    assert follower.request("lore/recall", {"query": "good operation", "sources": ["messages"]})["hits"]
    assert follower.request("lore/status")["election"]["spoolQuarantined"] == 2  # counted where people look


def test_facts_over_the_protocol_from_writer_and_follower(fleet):
    writer = fleet.spawn()
    follower = fleet.spawn()
    a = writer.request("lore/assertFact", {"subject": "payments", "predicate": "uses", "object": "Stripe", "validFrom": "2024-01-01"})
    assert a["journal"]["line"] >= 2 and a["applied"] is True
    # Through a follower: spooled, applied by the writer, journaled there.
    b = follower.request("lore/assertFact", {"subject": "Payments", "predicate": "uses", "object": "Adyen", "validFrom": "2025-03-01"})
    assert b["applied"] is True and b["journal"]["path"].endswith(".md") and "opId" in b
    now = follower.request("lore/queryFacts", {"subject": "payments"})
    assert [f["object"] for f in now["facts"]] == ["Adyen"]
    then = writer.request("lore/queryFacts", {"subject": "payments", "asOf": "2024-06-01"})
    assert [(f["object"], f["supersededBy"]) for f in then["facts"]] == [("Stripe", b["factId"])]
    closed = follower.request("lore/invalidateFact", {"subject": "payments", "predicate": "uses", "validUntil": "2025-06-01"})
    assert closed["closed"] == [b["factId"]]
    assert writer.request("lore/queryFacts", {"subject": "payments"})["facts"] == []
    events = writer.request("lore/timeline", {"subject": "payments"})["events"]
    assert [e["event"] for e in events] == ["asserted", "asserted", "closed"]
    agg = writer.request("lore/aggregateFacts", {"by": "object", "asOf": "2025-04-01"})
    assert agg["groups"] == [{"key": "Adyen", "count": 1}] and agg["total"] == 1
    # A refusal through the follower is refused before anything is spooled, with its kind.
    err = follower.request_full("lore/invalidateFact", {"subject": "payments", "predicate": "uses", "validUntil": "2023-01-01"})
    assert err["error"]["code"] == -32803 and err["error"]["data"]["kind"] in ("closeBeforeStart", "notFound")
    err = follower.request_full("lore/assertFact", {"subject": "!!", "predicate": "uses", "object": "x"})
    assert err["error"]["data"]["kind"] == "invalidKey"
    assert follower.request("lore/status")["election"]["spoolPending"] == 0
    # Facts feed recall (only those in force at asOf) and getNode.
    hits = writer.request("lore/recall", {"query": "payments stripe", "sources": ["facts"], "asOf": "2024-06-01"})["hits"]
    assert [h["uri"] for h in hits] == [f"fact://{a['factId']}"]
    assert writer.request("lore/recall", {"query": "payments stripe", "sources": ["facts"]})["hits"] == []
    node = follower.request("lore/getNode", {"uri": f"fact://{a['factId']}"})
    assert node["source"] == "facts" and node["metadata"]["validUntil"] == "2025-03-01T00:00:00Z"
    # The executeCommand twin answers the same.
    twin = writer.request("workspace/executeCommand", {"command": "lore.queryFacts", "arguments": [{"subject": "payments", "history": True}]})
    assert twin["total"] == 2
    # Bad params are -32602 with the field named.
    bad = writer.request_full("lore/queryFacts", {"limit": 0})
    assert bad["error"]["code"] == -32602 and "limit" in str(bad["error"]["data"])


def test_a_spooled_fact_whose_line_was_journaled_before_a_crash_is_applied_once(fleet):
    """The writer appended the journal line and died before its commit: the next writer's
    replay makes the row from the line, and the spooled operation must not add a second."""
    import json

    from lore_sidecar.engine.facts.rules import fact_line

    first = fleet.spawn()
    first.request("lore/assertFact", {"subject": "CI", "predicate": "runs on", "object": "Buildkite"})
    fleet.kill(first)
    [journal] = (fleet.store / "journal").rglob("*.md")
    fid, recorded = "fcrashtest0001", "2026-11-30T12:00:00.000001Z"
    with open(journal, "a") as fh:  # the half-done write: line appended, no row, no ack
        fh.write(fact_line("payments", "uses", "Stripe", {"valid_from": recorded, "recorded_at": recorded, "source": "stated", "id": fid}) + "\n")
    op = {"opId": "00000000000000000009-1-cccc", "kind": "assertFact", "project": str(fleet.workspace.resolve()),
          "args": {"subject": "payments", "predicate": "uses", "object": "Stripe", "valid_from": None, "valid_until": None,
                   "source": None, "confidence": None, "fact_id": fid, "recorded_at": recorded}}
    (fleet.store / "spool" / f"{op['opId']}.op.json").write_text(json.dumps(op))
    second = fleet.spawn()
    drained(second)
    facts = second.request("lore/queryFacts", {"subject": "payments", "history": True})["facts"]
    assert [f["factId"] for f in facts] == [fid]
    assert "".join(p.read_text() for p in (fleet.store / "journal").rglob("*.md")).count(fid) == 1
    with sqlite3.connect(fleet.store / "lore.db") as c:
        assert c.execute("SELECT COUNT(*) FROM applied_ops WHERE op_id=?", (op["opId"],)).fetchone()[0] == 1
    # Control: a fresh spooled fact (no line yet) is journaled and applied normally.
    follower = fleet.spawn()
    r = follower.request("lore/assertFact", {"subject": "payments", "predicate": "owner", "object": "alice"})
    assert r["applied"] is True and r["journal"]["line"] > 0


def test_prompt_submit_brings_leads_from_an_earlier_session_over_the_protocol(fleet):
    fleet.spawn()  # the writer
    follower = fleet.spawn()
    record(follower, "earlier", ["e1"], "the flamingo deploy needs the staging bucket policy")  # read-your-writes
    out = follower.request("lore/promptSubmit", {"sessionId": "now", "prompt": "how do we deploy flamingo?"})
    assert out["context"].startswith('<recall session_id="now"') and "session://earlier/e1" in out["context"]
    assert out["leads"] >= 1
    # Its own session's messages are not leads (the agent has them already).
    same = follower.request("lore/promptSubmit", {"sessionId": "earlier", "prompt": "how do we deploy flamingo?"})
    assert "session://earlier/" not in same["context"]
    # Control: nothing relevant, nothing injected.
    assert follower.request("lore/promptSubmit", {"sessionId": "now", "prompt": "qwxzzv plorfk"})["context"] == ""
    start = follower.request("lore/sessionStart", {"sessionId": "now", "cwd": str(fleet.workspace)})
    assert "not instructions" in start["context"]
