"""A team's memory on a real PostgreSQL: six sidecars with six stores ("six machines") on one
shared record — replication, one winner per version, the priority budget under a race, and
an outage during which every acknowledged write survives, is pushed exactly once, and recall
keeps answering."""

from __future__ import annotations

import json
import threading
import time
import uuid
from pathlib import Path

import psycopg
import pytest

from lore_sidecar.client import StdioClient, sidecar_command
from tests.support.postgres import Cluster

MACHINES = 6


def machines(tmp: Path, url: str, team: str, n: int = MACHINES, distiller: str = "off") -> list[StdioClient]:
    # Every process first, then each initialize: their interpreters start side by side
    # (each machine has its own store, so nothing they open is shared but the record).
    out = [StdioClient(sidecar_command()) for _ in range(n)]
    for i, c in enumerate(out):
        ws = tmp / f"m{i}" / "shop"  # a different path on each machine; the same project
        (ws / ".git").mkdir(parents=True)
        c.initialize(ws, options={"storeDir": str(tmp / f"m{i}" / "store"), "watch": False, "indexWorkspace": False,
                                  "distiller": distiller, "distillIdleMs": 3_600_000, "sharedUrl": url, "sharedTeam": team})
    return out


def uris(c: StdioClient) -> set[str]:
    return {n["uri"] for n in c.request("lore/listNodes", {})["nodes"]}


def converge(cs: list[StdioClient], want: set[str], timeout: float = 60) -> list[set[str]]:
    deadline = time.monotonic() + timeout
    while True:
        seen = [uris(c) for c in cs]
        if all(want <= s for s in seen) or time.monotonic() > deadline:
            return seen
        time.sleep(0.2)


def close(cs: list[StdioClient]) -> None:
    for c in cs:
        c.close()


def test_six_machines_see_every_node_and_one_version_wins(tmp_path, pg_cluster):
    cs = machines(tmp_path, pg_cluster.url, f"t-{uuid.uuid4().hex[:8]}")
    try:
        made = set()
        for k in range(30):
            uri = f"project://shop/pattern/p{k}"
            cs[k % MACHINES].request("lore/createNode", {"uri": uri, "category": "pattern", "content": f"Pattern {k}: cobalt"})
            made.add(uri)
        seen = converge(cs, made)
        hits = cs[5].request("lore/recall", {"query": "pattern 7 cobalt", "sources": ["knowledge"]})["hits"]
        # Two people update one node from the same version: one wins, one is told of the conflict.
        target = "project://shop/pattern/p0"
        results: list[dict] = []
        barrier = threading.Barrier(2)

        def update(c: StdioClient, text: str) -> None:
            barrier.wait()
            results.append(c.request_full("lore/updateNode", {"uri": target, "content": text, "expectedVersion": 1}))

        threads = [threading.Thread(target=update, args=(cs[1], "from machine 1")),
                   threading.Thread(target=update, args=(cs[2], "from machine 2"))]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        winner = next(r["result"] for r in results if "result" in r)
        loser = next(r["error"] for r in results if "error" in r)
        converge(cs, made)
        time.sleep(1.0)
        contents = {c.request("lore/getNode", {"uri": target})["content"] for c in cs}
    finally:
        close(cs)
    assert all(s == made for s in seen)
    assert any(h["uri"] == "project://shop/pattern/p7" for h in hits)
    assert winner["version"] == 2 and loser["data"]["kind"] == "versionConflict" and loser["data"]["version"] == 2
    assert len(contents) == 1  # every machine holds the same winner


def test_six_concurrent_creates_for_the_last_priority_0_slot_one_succeeds(tmp_path, pg_cluster):
    team = f"t-{uuid.uuid4().hex[:8]}"
    cs = machines(tmp_path, pg_cluster.url, team)
    try:
        for k in range(4):  # the budget is 5: one slot left
            cs[0].request("lore/createNode", {"uri": f"project://shop/decision/d{k}", "content": f"Rule {k}",
                                              "category": "decision", "priority": 0})
        converge(cs, {f"project://shop/decision/d{k}" for k in range(4)})
        results: list[dict] = []
        barrier = threading.Barrier(MACHINES)

        def race(i: int) -> None:
            barrier.wait()
            results.append(cs[i].request_full("lore/createNode", {"uri": f"project://shop/decision/race{i}",
                                                                 "content": f"Race {i}", "category": "decision",
                                                                 "priority": 0}))

        threads = [threading.Thread(target=race, args=(i,)) for i in range(MACHINES)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        close(cs)
    won = [r for r in results if "result" in r]
    refused = [r["error"]["data"]["kind"] for r in results if "error" in r]
    assert len(won) == 1 and refused == ["priorityBudget"] * (MACHINES - 1)
    # refused in the record itself, before anything was appended: the log holds the one winner
    with psycopg.connect(pg_cluster.url) as conn:
        raced = conn.execute("SELECT COUNT(*) FROM lore_ops WHERE team=%s AND op->'args'->>'uri' LIKE %s",
                             (team, "project://shop/decision/race%")).fetchone()[0]
    assert raced == 1


@pytest.mark.slow
def test_a_10_s_outage_loses_no_acknowledged_write_and_recall_keeps_answering(tmp_path):
    team = "outage"
    with Cluster() as pg:
        cs = machines(tmp_path, pg.url, team)
        try:
            cs[0].request("lore/createNode", {"uri": "project://shop/pattern/before", "content": "Written before: cobalt",
                                              "category": "pattern"})
            converge(cs, {"project://shop/pattern/before"})
            pg.stop()
            stopped = time.monotonic()
            acked: dict[str, str] = {}
            answered = 0
            # Ten seconds: each writer retries the record every second (replica.WAIT_S) and
            # nothing in it changes with the outage's length (no growing backoff), so this
            # spans several failed pushes and reconnects, with rounds of writes from
            # every machine acknowledged offline; 30 s only repeated them.
            while time.monotonic() - stopped < 10:
                for i, c in enumerate(cs):
                    uri = f"project://shop/pattern/m{i}-{len(acked)}"
                    r = c.request("lore/createNode", {"uri": uri, "content": f"Written offline by {i}", "category": "pattern"})
                    assert r["durable"] is True
                    acked[uri] = r["opId"]
                    hits = c.request("lore/recall", {"query": "written before cobalt", "sources": ["knowledge"]})["hits"]
                    answered += bool(hits)
                time.sleep(2)
            status = cs[0].request("lore/status")["shared"]
            pg.start()
            seen = converge(cs, {*acked, "project://shop/pattern/before"}, timeout=90)
        finally:
            close(cs)
        with psycopg.connect(pg.url) as conn:
            rows = conn.execute("SELECT op_id, COUNT(*) FROM lore_ops WHERE team=%s GROUP BY op_id", (team,)).fetchall()
    counts = dict(rows)
    assert status["connected"] is False and status["pending"] > 0
    assert answered == len(acked)  # recall answered after every offline write
    assert all(counts.get(op) == 1 for op in acked.values())  # each acknowledged write, exactly once
    assert all({*acked, "project://shop/pattern/before"} <= s for s in seen)


def test_shared_status_and_a_newer_schema_is_refused(tmp_path, pg_cluster):
    import subprocess
    import sys

    ws = tmp_path / "ws"
    (ws / ".git").mkdir(parents=True)
    env_args = ["--store-dir", str(tmp_path / "store")]
    cmd = [sys.executable, "-m", "lore_sidecar", "shared"]
    env = {**__import__("os").environ, "LORE_SHARED_URL": pg_cluster.url, "LORE_SHARED_TEAM": "cli"}
    init = subprocess.run([*cmd, "init", *env_args], cwd=ws, env=env, capture_output=True, text=True, timeout=60)
    assert init.returncode == 0 and '"schemaVersion": 1' in init.stdout, init.stderr
    ok = subprocess.run([*cmd, "status", *env_args], cwd=ws, env=env, capture_output=True, text=True, timeout=60)
    assert ok.returncode == 0 and '"schemaVersion": 1' in ok.stdout and '"team": "cli"' in ok.stdout, ok.stderr
    newer = Cluster()
    with newer:
        with psycopg.connect(newer.url, autocommit=True) as conn:
            conn.execute("CREATE TABLE lore_schema(version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TIMESTAMPTZ)")
            conn.execute("INSERT INTO lore_schema(version, name) VALUES (99, 'future')")
        bad = subprocess.run([*cmd, "migrate", *env_args], cwd=ws, env={**env, "LORE_SHARED_URL": newer.url},
                             capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and "schema 99" in bad.stderr and "storeTooNew" in bad.stderr
    no_url = subprocess.run([*cmd, "status", *env_args], cwd=ws, env={k: v for k, v in env.items() if k != "LORE_SHARED_URL"},
                            capture_output=True, text=True, timeout=60)
    assert no_url.returncode == 2 and "sharedUrl" in no_url.stderr


def test_a_read_only_role_replays_the_record_and_is_refused_writes(tmp_path, pg_cluster):
    team = f"t-{uuid.uuid4().hex[:8]}"
    writer = machines(tmp_path / "w", pg_cluster.url, team, 1)[0]
    try:
        writer.request("lore/createNode", {"uri": "project://shop/pattern/seen", "content": "Readers see this",
                                           "category": "pattern"})
    finally:
        writer.close()
    roles = (Path(__file__).resolve().parents[2] / "docs" / "team-roles.sql").read_text()
    with psycopg.connect(pg_cluster.url, autocommit=True) as conn:
        conn.execute(roles.replace("DATABASE lore ", "DATABASE postgres "))
    reader = machines(tmp_path / "r", pg_cluster.url.replace("postgres@", "lore_reader@"), team, 1)[0]
    try:
        seen = converge([reader], {"project://shop/pattern/seen"}, timeout=20)
        refused = reader.request_full("lore/createNode", {"uri": "project://shop/pattern/mine", "content": "No",
                                                          "category": "pattern"})
    finally:
        reader.close()
    assert seen == [{"project://shop/pattern/seen"}]  # the control: the reader replays the record
    assert refused["error"]["data"]["kind"] == "sharedReadOnly"
    with psycopg.connect(pg_cluster.url) as conn:
        assert conn.execute("SELECT COUNT(*) FROM lore_ops WHERE team=%s", (team,)).fetchone()[0] == 1


def test_conversations_travel_only_for_projects_named_in_share_messages(tmp_path, pg_cluster):
    def run(team: str, share: list[str]) -> tuple[list[str], list[str]]:
        cs = []
        for i in range(2):
            ws = tmp_path / team / f"m{i}" / "shop"
            (ws / ".git").mkdir(parents=True)
            c = StdioClient(sidecar_command())
            c.initialize(ws, options={"storeDir": str(tmp_path / team / f"m{i}" / "store"), "watch": False,
                                      "indexWorkspace": False, "distiller": "off", "sharedUrl": pg_cluster.url,
                                      "sharedTeam": team, "shareMessages": share})
            cs.append(c)
        try:
            cs[0].request("lore/recordMessages", {"sessionId": "s1", "messages": [
                {"role": "user", "content": "the harbour crane schedule moved to Thursdays"}]})
            cs[0].request("lore/createNode", {"uri": "project://shop/pattern/marker", "content": "marker",
                                              "category": "pattern"})
            converge(cs[1:], {"project://shop/pattern/marker"}, timeout=20)  # the record has replayed
            query = {"query": "harbour crane schedule", "sources": ["messages"]}
            return ([h["snippet"] for h in cs[0].request("lore/recall", query)["hits"]],
                    [h["snippet"] for h in cs[1].request("lore/recall", query)["hits"]])
        finally:
            close(cs)

    here, there = run(f"t-{uuid.uuid4().hex[:8]}", ["shop"])
    private_here, private_there = run(f"t-{uuid.uuid4().hex[:8]}", [])
    assert here and there and "Thursdays" in there[0]
    assert private_here and private_there == []  # the default: conversations stay on the machine


def test_a_distillation_and_its_entities_reach_the_other_machine_but_the_conversation_does_not(tmp_path, pg_cluster):
    cs = machines(tmp_path, pg_cluster.url, f"t-{uuid.uuid4().hex[:8]}", 2, distiller="extractive")
    try:
        talk = ["We moved the order events from RabbitMQ to Kafka last sprint.",
                "The consumer in services/orders/consume.py commits offsets after the write.",
                "Run `make replay-orders` to rebuild the projections from Kafka.",
                "Kafka retention for order events is seven days.",
                "Decision: the orders projection lives in PostgreSQL, not Redis.",
                "OK, documented the replay procedure in docs/orders.md."]
        cs[0].request("lore/recordMessages", {"sessionId": "s-kafka", "messages": [
            {"role": "user" if i % 2 == 0 else "assistant", "content": t} for i, t in enumerate(talk)]})
        made = cs[0].request("lore/distill", {"sessionId": "s-kafka"})["created"]
        a = cs[0].request("lore/status")["counts"]
        deadline = time.monotonic() + 20
        while cs[1].request("lore/status")["counts"]["distillations"] < a["distillations"] and time.monotonic() < deadline:
            time.sleep(0.2)
        b = cs[1].request("lore/status")["counts"]
        hits = cs[1].request("lore/recall", {"query": "kafka order events retention", "sources": ["distillations"]})["hits"]
        opened = cs[1].request("lore/getNode", {"uri": made[0]}) if made else None
    finally:
        close(cs)
    assert made and a["distillations"] >= 1 and a["entities"] >= 1
    assert b["distillations"] == a["distillations"] and b["entities"] == a["entities"]
    assert any(h["uri"] == made[0] for h in hits) and opened["content"]
    assert a["messages"] == 6 and b["messages"] == 0  # the conversation itself stayed on its machine


def test_usage_events_reach_the_other_machines(tmp_path, pg_cluster):
    cs = machines(tmp_path, pg_cluster.url, f"t-{uuid.uuid4().hex[:8]}", 2)
    try:
        cs[0].request("lore/createNode", {"uri": "project://shop/pattern/used", "content": "Retries use jittered backoff",
                                          "category": "pattern"})
        r = cs[0].request("lore/recall", {"query": "jittered backoff", "sources": ["knowledge"], "sessionId": "s1",
                                          "harness": "pi"})
        cs[0].request("lore/getNode", {"uri": r["hits"][0]["uri"], "queryId": r["queryId"], "sessionId": "s1"})
        here = cs[0].request("lore/status")["usage"]
        deadline = time.monotonic() + 20
        while cs[1].request("lore/status")["usage"] != here and time.monotonic() < deadline:
            time.sleep(0.2)
        there = cs[1].request("lore/status")["usage"]
        uses = cs[1].request("lore/getNode", {"uri": "project://shop/pattern/used"})["metadata"]["uses"]
    finally:
        close(cs)
    assert here["recalled"] and here["used"]  # the control: the events happened
    assert there == here and uses == 1


def _database(url: str, name: str) -> str:
    """A database of its own on the session's cluster, so one test can take it away (an
    outage) without stopping the cluster the other tests share."""
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    return url.rsplit("/", 1)[0] + f"/{name}"


def _allow(url: str, name: str, allowed: bool) -> None:
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f'ALTER DATABASE "{name}" ALLOW_CONNECTIONS {str(allowed).lower()}')
        if not allowed:  # the sidecars' open connections drop too, as in a real outage
            conn.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname=%s", (name,))


def _wait(check, timeout: float = 30.0):
    deadline = time.monotonic() + timeout
    while not (got := check()) and time.monotonic() < deadline:
        time.sleep(0.2)
    return got


def test_an_outbox_is_pushed_oldest_first_so_the_last_acknowledged_edit_wins_everywhere(tmp_path, pg_cluster):
    """Edits acknowledged while the record is away reach it in the order they were made: the
    reference is one machine without a team, where the last edit is what every read shows.
    Pushed newest-first, the earlier edit would land last and revert the later one on every
    machine (and an update would reach the record before the create it edits)."""
    name = f"outbox_{uuid.uuid4().hex[:8]}"
    url = _database(pg_cluster.url, name)
    cs = machines(tmp_path, url, "t", 2)
    edited, made = "project://shop/pattern/edited", "project://shop/pattern/made-offline"
    try:
        cs[0].request("lore/createNode", {"uri": edited, "content": "first draft", "category": "pattern"})
        assert converge(cs, {edited}, timeout=20)[1] == {edited}
        _allow(pg_cluster.url, name, False)
        acked = []
        for text in ("second draft", "third draft", "final wording"):
            acked.append(cs[0].request("lore/updateNode", {"uri": edited, "content": text}))
        acked.append(cs[0].request("lore/createNode", {"uri": made, "content": "made offline", "category": "pattern"}))
        acked.append(cs[0].request("lore/updateNode", {"uri": made, "content": "made offline, then edited"}))
        offline = cs[0].request("lore/status")["shared"]
        _allow(pg_cluster.url, name, True)
        pushed = _wait(lambda: cs[0].request("lore/status")["shared"]["pending"] == 0)
        converge(cs, {edited, made}, timeout=30)
        there = _wait(lambda: [c.request("lore/getNode", {"uri": u})["content"] for c in cs for u in (edited, made)]
                      == ["final wording", "made offline, then edited"] * 2, timeout=10)
        contents = {(i, u): c.request("lore/getNode", {"uri": u})["content"] for i, c in enumerate(cs) for u in (edited, made)}
        versions = {c.request("lore/getNode", {"uri": edited})["metadata"].get("version") for c in cs}
    finally:
        close(cs)
    with psycopg.connect(url) as conn:
        logged = [r[0] for r in conn.execute("SELECT op_id FROM lore_ops ORDER BY seq").fetchall()]
    assert all(a["durable"] is True and a["applied"] is False for a in acked)  # the outage happened
    assert offline["connected"] is False and offline["pending"] == len(acked)
    assert pushed and there, contents
    assert all(contents[(i, edited)] == "final wording" and contents[(i, made)] == "made offline, then edited"
               for i in range(2)), contents
    assert len(versions) == 1  # both machines hold the same history
    ids = [a["opId"] for a in acked]
    assert [op for op in logged if op in ids] == ids  # the record holds them in the order acknowledged, once each


def test_a_re_pushed_operation_id_is_arbitrated_once(pg_cluster):
    """A push retried after its answer was lost carries the same operation id: the record
    answers with the first sequence number and judges nothing again (a create is not refused
    as `nodeExists` by its own first copy; an update does not bump the version twice). The
    controls: a new operation id for the same create is refused, and the version is exactly
    what one update makes it."""
    from lore_sidecar.errors import LoreError
    from lore_sidecar.shared.record import SharedRecord

    team = f"t-{uuid.uuid4().hex[:8]}"
    rec = SharedRecord(pg_cluster.url, team, "machine-a")
    uri = "project://shop/pattern/retried"
    create = {"opId": f"{team}-c", "kind": "nodeOp", "method": "createNode", "project": "/m/shop",
              "args": {"uri": uri, "content": "x", "category": "pattern", "priority": 0}}
    update = {"opId": f"{team}-u", "kind": "nodeOp", "method": "updateNode", "project": "/m/shop",
              "args": {"uri": uri, "changes": {"content": "y"}, "expected_version": 1}}
    try:
        first, again = rec.append(create, "shop"), rec.append(create, "shop")
        up, up_again = rec.append(update, "shop"), rec.append(update, "shop")
        with pytest.raises(LoreError) as twin:
            rec.append({**create, "opId": f"{team}-c2"}, "shop")
        with pytest.raises(LoreError) as stale:
            rec.append({**update, "opId": f"{team}-u2"}, "shop")
        rec.append({**update, "opId": f"{team}-u3", "args": {**update["args"], "expected_version": 2}}, "shop")
    finally:
        rec.close()
    with psycopg.connect(pg_cluster.url) as conn:
        logged = [r[0] for r in conn.execute("SELECT op_id FROM lore_ops WHERE team=%s ORDER BY seq", (team,)).fetchall()]
        version = conn.execute("SELECT version FROM lore_nodes WHERE team=%s AND uri=%s", (team, uri)).fetchone()[0]
    assert again == first and up_again == up and up > first
    assert twin.value.kind == "nodeExists" and stale.value.kind == "versionConflict"
    assert logged == [f"{team}-c", f"{team}-u", f"{team}-u3"] and version == 3


def test_teams_on_one_database_never_see_or_block_each_others_operations(pg_cluster):
    """docs/team.md: scope is per team. Team B pulls nothing of team A's log for the same
    project name, may take a URI team A holds, and has its own priority budget; the control:
    team A's own second copy of the URI is refused and its pull returns its operation."""
    from lore_sidecar.errors import LoreError
    from lore_sidecar.shared.record import SharedRecord

    tag = uuid.uuid4().hex[:8]
    a, b = SharedRecord(pg_cluster.url, f"a-{tag}", "m-a"), SharedRecord(pg_cluster.url, f"b-{tag}", "m-b")

    def create(rec: SharedRecord, op_id: str, uri: str, priority: int = 2) -> int:
        return rec.append({"opId": op_id, "kind": "nodeOp", "method": "createNode", "project": "/x/shop",
                           "args": {"uri": uri, "content": "c", "category": "decision", "priority": priority}}, "shop")

    try:
        create(a, f"{tag}-a1", "project://shop/decision/same")
        for k in range(5):  # team A fills its priority-0 budget
            create(a, f"{tag}-a0-{k}", f"project://shop/decision/p0-{k}", priority=0)
        with pytest.raises(LoreError) as full:
            create(a, f"{tag}-a0-6", "project://shop/decision/p0-6", priority=0)
        with pytest.raises(LoreError) as taken:
            create(a, f"{tag}-a2", "project://shop/decision/same")
        create(b, f"{tag}-b1", "project://shop/decision/same")  # not refused: another team's URI
        create(b, f"{tag}-b0", "project://shop/decision/p0-0", priority=0)  # B's own budget
        seen_a, seen_b = a.pull("shop", 0), b.pull("shop", 0)
    finally:
        a.close()
        b.close()
    assert full.value.kind == "priorityBudget" and taken.value.kind == "nodeExists"  # the controls
    assert [op["opId"] for _, op in seen_b] == [f"{tag}-b1", f"{tag}-b0"]
    assert [op["opId"] for _, op in seen_a][:1] == [f"{tag}-a1"] and len(seen_a) == 6


def test_a_secret_in_a_write_is_redacted_before_it_reaches_the_shared_record(tmp_path, pg_cluster):
    """docs/team.md: "Secrets are redacted before a write leaves the machine". The record's own
    rows (what every colleague's machine replays) hold the redacted text; the control: the
    rest of the content travels as written."""
    from tests.support.secrets import PLANTED

    team = f"t-{uuid.uuid4().hex[:8]}"
    planted = [p for p in PLANTED if p[0] in ("aws-access-key", "github-token", "anthropic-key", "private-key")]
    c = machines(tmp_path, pg_cluster.url, team, 1)[0]
    try:
        c.request("lore/createNode", {"uri": "project://shop/gotcha/keys", "category": "gotcha",
                                      "content": "Deploy notes (cobalt-marker): " + " / ".join(t for _, t, _ in planted)})
        c.request("lore/assertFact", {"subject": "deploy-bot", "predicate": "uses_token", "object": planted[1][1]})
        # An update carries its text in `changes`: redacted there too.
        c.request("lore/updateNode", {"uri": "project://shop/gotcha/keys",
                                      "content": "Rotated (umber-marker): " + " / ".join(t for _, t, _ in planted)})
    finally:
        c.close()
    with psycopg.connect(pg_cluster.url) as conn:
        rows = [json.dumps(r[0]) for r in conn.execute("SELECT op FROM lore_ops WHERE team=%s", (team,)).fetchall()]
    text = "\n".join(rows)
    assert len(rows) == 3 and "cobalt-marker" in text and "deploy-bot" in text  # the control: they travelled
    assert "umber-marker" in text
    assert [secret for _, _, secret in planted if secret in text or json.dumps(secret)[1:-1] in text] == []


def test_a_forgotten_node_frees_its_uri_and_its_budget_slot_and_a_scope_move_is_budgeted(pg_cluster):
    """The record's live nodes are what arbitration counts: `forget` (like deleteNode) takes a
    node out, so its URI can be created again and its priority slot is free; an update that
    moves a node into a scope whose priority-0 budget is full is refused there, as on one
    machine. The controls: the URI is taken before the forget, and the same update without
    the scope move passes."""
    from lore_sidecar.errors import LoreError
    from lore_sidecar.shared.record import SharedRecord

    tag = uuid.uuid4().hex[:8]
    rec = SharedRecord(pg_cluster.url, f"f-{tag}", "m")
    n = iter(range(1000))

    def op(method: str, **args) -> int:
        return rec.append({"opId": f"{tag}-{next(n)}", "kind": "nodeOp", "method": method, "project": "/x/shop",
                           "args": args}, "shop")

    uri = "project://shop/decision/kept"
    try:
        op("createNode", uri=uri, content="c", category="decision", priority=0)
        with pytest.raises(LoreError) as taken:
            op("createNode", uri=uri, content="c", category="decision", priority=0)
        op("forget", uri=uri)
        op("createNode", uri=uri, content="again", category="decision", priority=0)  # free again
        for k in range(5):  # the global scope's priority-0 budget, full
            op("createNode", uri=f"preferences://user/g{k}", content="g", category="preference", priority=0)
        with pytest.raises(LoreError) as moved:
            op("updateNode", uri=uri, changes={"scope": "global"})
        op("updateNode", uri=uri, changes={"content": "still project"})  # control: no move, no refusal
    finally:
        rec.close()
    assert taken.value.kind == "nodeExists"
    assert moved.value.kind == "priorityBudget"


def test_a_move_onto_a_uri_the_team_holds_is_refused_in_the_record_and_appends_nothing(pg_cluster):
    """A machine that has not replayed a colleague's node yet passes its own check for a
    moveNode onto that node's URI: the record must refuse it (`nodeExists`) and log nothing,
    or every machine replays two nodes at one address. The control: the same move to a free
    URI is appended and the record's live node follows it."""
    from lore_sidecar.errors import LoreError
    from lore_sidecar.shared.record import SharedRecord

    tag = uuid.uuid4().hex[:8]
    team = f"mv-{tag}"
    rec = SharedRecord(pg_cluster.url, team, "m")
    n = iter(range(1000))

    def op(method: str, **args) -> int:
        return rec.append({"opId": f"{tag}-{next(n)}", "kind": "nodeOp", "method": method, "project": "/x/shop",
                           "args": args}, "shop")

    held, mine, free = ("project://shop/pattern/held", "project://shop/pattern/mine", "project://shop/pattern/free")
    try:
        op("createNode", uri=held, content="a colleague's", category="pattern")
        op("createNode", uri=mine, content="mine", category="pattern")
        with pytest.raises(LoreError) as taken:
            op("moveNode", uri=mine, new_uri=held)
        op("moveNode", uri=mine, new_uri=free)  # the control
    finally:
        rec.close()
    with psycopg.connect(pg_cluster.url) as conn:
        moves = [r[0] for r in conn.execute("SELECT op->'args'->>'new_uri' FROM lore_ops WHERE team=%s AND"
                                            " op->>'method'='moveNode' ORDER BY seq", (team,)).fetchall()]
        live = {r[0] for r in conn.execute("SELECT uri FROM lore_nodes WHERE team=%s", (team,)).fetchall()}
    assert taken.value.kind == "nodeExists"
    assert moves == [free] and live == {held, free}


def test_a_store_that_changes_team_replays_the_new_teams_log_from_its_start(tmp_path, pg_cluster):
    """The cursor in `<store>/shared.json` belongs to one team: sequence numbers are shared by
    every team on the database, so another team's cursor would skip the new team's first
    operations. A store moved from team A to team B (sharedTeam changed) replays all of B's
    log; the control: a fresh store on team B sees the same node."""
    tag = uuid.uuid4().hex[:8]
    team_a, team_b = f"a-{tag}", f"b-{tag}"
    early = "project://shop/pattern/b-early"
    b = machines(tmp_path / "b", pg_cluster.url, team_b, 1)[0]  # B writes first: low sequence numbers
    try:
        b.request("lore/createNode", {"uri": early, "content": "Team B wrote this first", "category": "pattern"})
    finally:
        b.close()
    a = machines(tmp_path / "a", pg_cluster.url, team_a, 1)[0]
    try:
        a.request("lore/createNode", {"uri": "project://shop/pattern/a-later", "content": "Team A", "category": "pattern"})
    finally:
        a.close()
    assert json.loads((tmp_path / "a" / "m0" / "store" / "shared.json").read_text())["team"] == team_a

    def on_team_b(ws: Path, store: Path) -> set[str]:
        c = StdioClient(sidecar_command())
        c.initialize(ws, options={"storeDir": str(store), "watch": False, "indexWorkspace": False, "distiller": "off",
                                  "sharedUrl": pg_cluster.url, "sharedTeam": team_b})
        try:
            return converge([c], {early}, timeout=30)[0]
        finally:
            c.close()

    fresh_ws = tmp_path / "fresh" / "shop"
    (fresh_ws / ".git").mkdir(parents=True)
    assert early in on_team_b(fresh_ws, tmp_path / "fresh" / "store")  # the control
    assert early in on_team_b(tmp_path / "a" / "m0" / "shop", tmp_path / "a" / "m0" / "store")
