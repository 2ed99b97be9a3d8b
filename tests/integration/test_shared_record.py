"""The team's shared record (lore_sidecar/shared/record.py) driven directly on a real
PostgreSQL: what arbitration lets through and refuses for each node method, what a pull and
the head return. Each test is its own team on the session's cluster."""

from __future__ import annotations

import uuid
from itertools import count

import psycopg
import pytest

from lore_sidecar.errors import LoreError
from lore_sidecar.shared.record import SharedRecord


class Team:
    """One team's record and an operation maker (each op a fresh id)."""

    def __init__(self, url: str):
        self.name = f"r-{uuid.uuid4().hex[:10]}"
        self.url = url
        self.rec = SharedRecord(url, self.name, "m-test")
        self._n = count()

    def op(self, method: str, project: str = "shop", kind: str = "nodeOp", **args) -> int:
        return self.rec.append({"opId": f"{self.name}-{next(self._n)}", "kind": kind, "method": method,
                                "project": f"/x/{project}", "args": args}, project)

    def live(self) -> dict[str, tuple[int, int, str, str]]:
        """uri -> (version, priority, scope, project) of the team's live nodes in the record."""
        with psycopg.connect(self.url) as conn:
            rows = conn.execute("SELECT uri, version, priority, scope, project FROM lore_nodes WHERE team=%s",
                                (self.name,)).fetchall()
        return {u: (v, p, s, pr) for u, v, p, s, pr in rows}

    def logged(self) -> list[str]:
        with psycopg.connect(self.url) as conn:
            return [r[0] for r in conn.execute("SELECT op->>'method' FROM lore_ops WHERE team=%s ORDER BY seq",
                                               (self.name,)).fetchall()]


@pytest.fixture
def team(pg_cluster):
    t = Team(pg_cluster.url)
    yield t
    t.rec.close()


def test_retain_creates_a_node_the_record_lacks_and_updates_one_it_holds(team):
    """`retain` is an upsert (docs/protocol.md): on a new URI it takes the address (at the
    default priority, 2, when none is given), on a held one it is an update (the version
    moves, and no `nodeExists`); the control: `createNode` on the held URI is refused."""
    uri = "project://shop/gotcha/retained"
    team.op("retain", uri=uri, content="first", category="gotcha")
    assert team.live()[uri] == (1, 2, "project", "shop")
    team.op("retain", uri=uri, content="second", category="gotcha", priority=3)
    assert team.live()[uri] == (2, 3, "project", "shop")
    with pytest.raises(LoreError) as taken:
        team.op("createNode", uri=uri, content="third", category="gotcha")
    assert taken.value.kind == "nodeExists"
    assert team.logged() == ["retain", "retain"]


def test_usage_operations_are_appended_without_arbitration_and_node_edits_of_unknown_uris_are_refused(team):
    """countUse and logRecall change no node: they are logged even for a URI the record has
    not seen (another machine's node, a node forgotten since). The controls: an update, a
    delete and a move of that URI are refused as notFound and append nothing."""
    ghost = "project://shop/pattern/never-created"
    team.op("countUse", uri=ghost)
    team.op("logRecall", uri=ghost, queryId="q1")
    for method, extra in (("updateNode", {"changes": {"content": "x"}}), ("deleteNode", {}),
                          ("moveNode", {"new_uri": "project://shop/pattern/elsewhere"})):
        with pytest.raises(LoreError) as refused:
            team.op(method, uri=ghost, **extra)
        assert refused.value.kind == "notFound", method
    assert team.logged() == ["countUse", "logRecall"]
    assert team.live() == {}


def test_delete_takes_the_node_out_of_the_record_and_a_move_carries_it_with_a_new_version(team):
    a, b, moved = "project://shop/pattern/a", "project://shop/pattern/b", "project://shop/pattern/b2"
    team.op("createNode", uri=a, content="a", category="pattern")
    team.op("createNode", uri=b, content="b", category="pattern")
    team.op("deleteNode", uri=a)
    team.op("moveNode", uri=b, new_uri=moved)
    assert team.live() == {moved: (2, 2, "project", "shop")}


def test_a_global_nodes_budget_is_the_teams_across_projects_and_a_project_nodes_is_its_projects(team):
    """docs/team.md: the priority budget holds per scope — one global scope for the team,
    one per project. Five priority-0 global nodes written from project `shop` fill the
    global budget for a write from project `web` too; the control: `web`'s own project
    scope still has its five priority-0 slots (though `shop`'s are taken)."""
    for k in range(5):
        team.op("createNode", "shop", uri=f"preferences://user/g{k}", content="g", category="preference", priority=0)
        team.op("createNode", "shop", uri=f"project://shop/decision/p{k}", content="p", category="decision", priority=0)
    with pytest.raises(LoreError) as full:
        team.op("createNode", "web", uri="preferences://user/g5", content="g", category="preference", priority=0)
    assert full.value.kind == "priorityBudget"
    for k in range(5):
        team.op("createNode", "web", uri=f"project://web/decision/p{k}", content="p", category="decision", priority=0)
    live = team.live()
    assert live["preferences://user/g0"] == (1, 0, "global", "")
    assert live["project://web/decision/p4"] == (1, 0, "project", "web")
    # priority 2 has no budget: a sixth global node at priority 2 goes in
    team.op("createNode", "web", uri="preferences://user/g-free", content="g", category="preference", priority=2)
    assert live.keys() < team.live().keys()


def test_an_update_that_raises_a_priority_into_a_full_budget_is_refused_and_a_lower_one_is_recorded(team):
    for k in range(5):
        team.op("createNode", uri=f"project://shop/decision/p{k}", content="p", category="decision", priority=0)
    uri = "project://shop/decision/rising"
    team.op("createNode", uri=uri, content="r", category="decision", priority=3)
    with pytest.raises(LoreError) as full:
        team.op("updateNode", uri=uri, changes={"priority": 0})
    assert full.value.kind == "priorityBudget"
    assert team.live()[uri] == (1, 3, "project", "shop")  # the refusal changed nothing
    team.op("updateNode", uri=uri, changes={"priority": 1})  # the control: priority 1 has room
    team.op("updateNode", uri=uri, changes={"content": "no priority given keeps it"})
    assert team.live()[uri] == (3, 1, "project", "shop")


def test_a_pull_returns_one_projects_operations_after_a_sequence_in_order_and_at_most_limit(team):
    """What a replica asks for: the operations of its project with a sequence number above
    the last it applied, oldest first, a page at a time. The head is the latest sequence
    number and its age; a project with no operations has head 0."""
    assert team.rec.head("shop") == (0, None)
    seqs = [team.op("createNode", uri=f"project://shop/pattern/n{k}", content="n", category="pattern") for k in range(4)]
    team.op("createNode", "web", uri="project://web/pattern/other", content="o", category="pattern")
    assert seqs == sorted(seqs)
    after = team.rec.pull("shop", seqs[0])
    assert [s for s, _ in after] == seqs[1:]
    assert [op["args"]["uri"] for _, op in after] == [f"project://shop/pattern/n{k}" for k in (1, 2, 3)]
    assert [s for s, _ in team.rec.pull("shop", 0, limit=2)] == seqs[:2]
    assert team.rec.pull("shop", seqs[-1]) == []
    head, age = team.rec.head("shop")
    assert head == seqs[-1] and age is not None and age >= 0
    assert team.rec.head("web")[0] > seqs[-1]


# -- independent review, fresh round 5 (tools/rounds/2026-12-07-fresh5.py) --------------------------

def test_an_append_waits_for_the_teams_lock_while_another_machine_holds_it(team):
    """Arbitration is serialised by one advisory lock per team (record.py): while another
    machine's appending transaction holds it, this machine's append waits for it (PostgreSQL
    lists it as an ungranted advisory lock of this connection) and does not arbitrate
    meanwhile; released, it goes through (the control). Waiting is seen as an event in
    pg_locks, not measured; the deadline only bounds a broken run."""
    import threading
    import time

    pid = team.rec._run(lambda conn: conn.info.backend_pid)  # this machine's connection
    holder = psycopg.connect(team.url)  # another machine, mid-append
    holder.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (f"lore:{team.name}",))
    done: dict = {}

    def append() -> None:
        try:
            done["seq"] = team.op("createNode", uri="project://shop/gotcha/locked", content="x", category="gotcha")
        except Exception as exc:  # noqa: BLE001 (reported below)
            done["error"] = exc

    worker = threading.Thread(target=append)
    worker.start()
    waited = False
    deadline = time.monotonic() + 60
    with psycopg.connect(team.url, autocommit=True) as watch:
        while worker.is_alive() and time.monotonic() < deadline:
            if watch.execute("SELECT count(*) FROM pg_locks WHERE locktype='advisory' AND NOT granted AND pid=%s",
                             (pid,)).fetchone()[0]:
                waited = True
                break
            time.sleep(0.05)
    went_through_while_held = not worker.is_alive()
    holder.rollback()
    holder.close()
    worker.join(60)
    assert waited and not went_through_while_held, done
    assert "seq" in done, done  # the control: released, the append is arbitrated and recorded
    assert team.live()["project://shop/gotcha/locked"][0] == 1


# -- hunt round 7b (tools/rounds/2026-12-07-hunt7b.py) ------------------------------------------------

def test_an_append_wakes_the_teams_listeners_with_the_teams_name(team):
    """An append NOTIFYs the channel other machines listen on, naming the team, so they pull at
    once instead of at their next poll. The listener is another machine's connection; it is
    woken by the append (the wait ends at the first notification, well before the timeout)."""
    other = SharedRecord(team.url, team.name, "m-other")
    listener = other.listener()
    try:
        team.op("createNode", uri="project://shop/decision/wake", content="w", category="decision")
        # Another team's append on the session's cluster may wake it too: wait for ours.
        woken = False
        for note in listener.notifies(timeout=60):
            if note.payload == team.name:
                woken = True
                break
        assert woken
    finally:
        listener.close()
        other.close()


def test_status_lag_is_the_age_of_ops_not_yet_applied_and_zero_once_caught_up(team, tmp_path):
    """docs/team.md `lore/status.shared.lagMs`: how far behind the team's log this machine is.
    The control: another machine's append leaves this one behind (a lag is reported, the
    cursor is short of the head); after a sync the lag is 0 (not the age of the last op)."""
    from lore_sidecar.shared.replica import Replica
    from lore_sidecar.store.spool import Spool

    applied = []
    here = SharedRecord(team.url, team.name, "m-here")
    r = Replica(here, store=tmp_path, outbox=Spool(tmp_path / "shared-outbox"), op_result=lambda op_id: None,
                settle=lambda *a: None, roots=lambda: ["/x/shop"])
    r.apply = applied.append
    try:
        r.submit({"opId": f"{team.name}-mine", "kind": "nodeOp", "method": "createNode", "project": "/x/shop",
                  "args": {"uri": "project://shop/decision/mine", "content": "m", "category": "decision"}})
        assert r.status()["connected"] and r.status()["lagMs"] == 0
        team.op("createNode", uri="project://shop/decision/theirs", content="t", category="decision")
        behind = r.status()
        assert behind["lagMs"] is not None and behind["cursor"]["shop"] < here.head("shop")[0]
        assert r.sync("shop", "/x/shop") == 1 and len(applied) == 2
        assert r.status()["lagMs"] == 0
    finally:
        here.close()
