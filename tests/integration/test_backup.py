"""Backups taken while sidecars write (and the writer dies), restores that verify before they
replace anything, keep-N rotation, and a corrupted backup refused — real processes."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

from lore_sidecar.client import RpcError, StdioClient, sidecar_command


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "lore_sidecar", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=180)


def spawn(ws: Path, store: Path) -> StdioClient:
    c = StdioClient(sidecar_command())
    c.initialize(ws, options={"storeDir": str(store), "watch": False, "indexWorkspace": False, "distiller": "off"})
    return c


def test_a_backup_while_two_sidecars_write_and_the_writer_is_killed_restores_every_acknowledged_message(tmp_path):
    ws, store, out = tmp_path / "ws", tmp_path / "store", tmp_path / "backups"
    (ws / ".git").mkdir(parents=True)
    a = spawn(ws, store)
    b = spawn(ws, store)
    assert a.request("lore/status")["role"] == "writer" and b.request("lore/status")["role"] == "follower"
    acked: list[tuple[float, str]] = []
    stop = threading.Event()

    def write(client: StdioClient, name: str) -> None:
        n = 0
        while not stop.is_set():
            ids = [f"{name}-{n + i}" for i in range(5)]
            try:
                client.request("lore/recordMessages", {"sessionId": f"sess-{name}", "messages": [
                    {"role": "user", "id": i, "content": f"note {i} about the harbour crane schedule"} for i in ids]},
                    timeout=30)
            except (RpcError, TimeoutError):
                return  # its process was killed: nothing after this was acknowledged
            acked.extend((time.monotonic(), i) for i in ids)
            n += 5

    threads = [threading.Thread(target=write, args=(a, "a")), threading.Thread(target=write, args=(b, "b"))]
    for t in threads:
        t.start()
    time.sleep(1.5)
    started = time.monotonic()
    proc = subprocess.Popen([sys.executable, "-m", "lore_sidecar", "backup", "--store-dir", str(store), "--out", str(out),
                             "--json"], cwd=ws, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    os.kill(a.proc.pid, signal.SIGKILL)  # the writer dies while the backup runs; b takes over
    stdout, stderr = proc.communicate(timeout=180)
    time.sleep(0.5)
    stop.set()
    for t in threads:
        t.join(timeout=60)
    b.close()
    assert proc.returncode == 0, stderr
    made = json.loads(stdout)
    before = {i for at, i in acked if at < started}
    assert any(i.startswith("a-") for i in before) and any(i.startswith("b-") for i in before)
    fresh = tmp_path / "restored"
    r = cli("restore", made["path"], "--store-dir", str(fresh), "--json", cwd=ws)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["sampleRecalled"] >= 1
    db = sqlite3.connect(fresh / "lore.db")
    assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    have = {row[0] for row in db.execute("SELECT msg_id FROM messages")}
    db.close()
    # b's acknowledged writes may still have been in its spool: the restore's writer applies them
    c = spawn(ws, fresh)
    try:
        deadline = time.monotonic() + 30
        while not before <= have and time.monotonic() < deadline:
            time.sleep(0.2)
            have = {row[0] for row in sqlite3.connect(fresh / "lore.db").execute("SELECT msg_id FROM messages")}
    finally:
        c.close()
    assert sorted(before - have) == []


def test_keep_rotates_and_a_corrupted_backup_is_refused_before_anything_is_replaced(tmp_path):
    ws, store, out = tmp_path / "ws", tmp_path / "store", tmp_path / "backups"
    (ws / ".git").mkdir(parents=True)
    c = spawn(ws, store)
    try:
        c.request("lore/recordMessages", {"sessionId": "s", "messages": [
            {"role": "user", "content": f"the lighthouse keeper logs entry {i}"} for i in range(20)]})
        c.request("lore/createNode", {"uri": "project://ws/decision/lamp", "content": "Lamps are LED", "category": "decision"})
    finally:
        c.close()
    made = []
    for _ in range(4):
        r = cli("backup", "--store-dir", str(store), "--out", str(out), "--json", cwd=ws)
        assert r.returncode == 0, r.stderr
        made.append(json.loads(r.stdout)["path"])
    kept = sorted(p.name for p in out.iterdir())
    assert len(kept) == 4  # the default keeps 7
    r = cli("backup", "--store-dir", str(store), "--out", str(out), "--json", cwd=ws)
    env_keep = subprocess.run([sys.executable, "-m", "lore_sidecar", "backup", "--store-dir", str(store), "--out", str(out)],
                              cwd=ws, capture_output=True, text=True, env={**os.environ, "LORE_BACKUP_KEEP": "2"})
    assert env_keep.returncode == 0, env_keep.stderr
    assert len(list(out.iterdir())) == 2 and Path(made[0]).name not in {p.name for p in out.iterdir()}
    newest = sorted(out.iterdir())[-1]
    assert (newest / "exports").is_dir() and "Lamps are LED" in next((newest / "exports").iterdir()).read_text()

    # the control: this backup restores
    target = tmp_path / "target"
    ok = cli("restore", str(newest), "--store-dir", str(target), cwd=ws)
    assert ok.returncode == 0, ok.stderr
    marker = (target / "lore.db").read_bytes()
    # now one flipped byte in the database: refused, and the store it would replace is untouched
    broken = tmp_path / "broken"
    subprocess.run(["cp", "-r", str(newest), str(broken)], check=True)
    data = bytearray((broken / "lore.db").read_bytes())
    data[len(data) // 2] ^= 0xFF
    (broken / "lore.db").write_bytes(bytes(data))
    bad = cli("restore", str(broken), "--store-dir", str(target), cwd=ws)
    assert bad.returncode == 2 and "backupCorrupt" in bad.stderr and "changed since the backup was written" in bad.stderr
    assert (target / "lore.db").read_bytes() == marker
    (broken / "manifest.json").write_text("{not json")
    worse = cli("restore", str(broken), "--store-dir", str(target), cwd=ws)
    assert worse.returncode == 2 and "is not a lore backup" in worse.stderr


def test_rotation_keeps_the_newest_seven(tmp_path):
    from lore_sidecar.store import backup as files

    names = [f"{files.PREFIX}20261201T0000{i:02d}.000000Z-aaaaaa" for i in range(10)]
    for n in names:
        (tmp_path / n).mkdir()
    (tmp_path / "notes").mkdir()  # not a backup: never touched
    removed = files.rotate(tmp_path, 7)
    assert removed == names[:3] and sorted(p.name for p in tmp_path.iterdir()) == sorted([*names[3:], "notes"])


def test_the_writer_backs_up_and_dreams_on_its_schedule(tmp_path):
    ws, store = tmp_path / "ws", tmp_path / "store"
    (ws / ".git").mkdir(parents=True)
    c = StdioClient(sidecar_command())
    c.initialize(ws, options={"storeDir": str(store), "watch": False, "indexWorkspace": False, "distiller": "off",
                              "backupIntervalMs": 1000, "backupKeep": 2, "dreamIntervalMs": 1500})
    try:
        for n in ("a", "b"):  # duplicates: the scheduled dream merges them
            c.request("lore/createNode", {"uri": f"project://ws/pattern/{n}", "category": "pattern", "priority": 3,
                                          "content": "Retries use exponential backoff with jitter"})
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            made = sorted((store / "backups").glob("lore-backup-*")) if (store / "backups").exists() else []
            listed = {n["uri"] for n in c.request("lore/listNodes", {})["nodes"]}
            if len(made) >= 2 and len(listed) == 1:
                break
            time.sleep(0.3)
    finally:
        c.close()
    assert len(made) == 2  # more were made; two are kept
    assert listed == {"project://ws/pattern/a"}
    state = json.loads((store / "maintenance.json").read_text())
    assert state["lastBackup"] > 0 and state["lastDream"] > 0


def test_a_backups_exports_hold_the_live_knowledge_and_not_a_forgotten_node(tmp_path):
    ws, store = tmp_path / "ws", tmp_path / "store"
    (ws / ".git").mkdir(parents=True)
    c = spawn(ws, store)
    try:
        c.request("lore/createNode", {"uri": "project://ws/decision/mast", "content": "Masts are carbon fibre",
                                      "category": "decision"})
        c.request("lore/createNode", {"uri": "project://ws/decision/sail", "content": "Sails are hemp canvas",
                                      "category": "decision"})
        c.request("lore/deleteNode", {"uri": "project://ws/decision/sail"})
    finally:
        c.close()
    r = cli("backup", "--store-dir", str(store), "--out", str(tmp_path / "backups"), "--json", cwd=ws)
    assert r.returncode == 0, r.stderr
    exported = "".join(p.read_text() for p in (Path(json.loads(r.stdout)["path"]) / "exports").iterdir())
    assert "Masts are carbon fibre" in exported  # the control: live knowledge is exported
    assert "Sails are hemp canvas" not in exported and "decision/sail" not in exported


def _backed_up_database(outbox_trimmed: int) -> sqlite3.Connection:
    """A backup's database as the migrations make it: index epoch 3, outbox rows 1..12."""
    from lore_sidecar.store.db import _statements
    from lore_sidecar.store.migrations import MIGRATIONS

    db = sqlite3.connect(":memory:", isolation_level=None)
    for _, sql in MIGRATIONS:
        for stmt in _statements(sql):
            db.execute(stmt)
    db.executemany("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)",
                   [("index_epoch", "3"), ("outbox_trimmed", str(outbox_trimmed))])
    db.executemany("INSERT INTO index_outbox(seq, op, kind, key, project_id) VALUES (?, 'upsert', 'message', ?, 1)",
                   [(seq, seq) for seq in range(1, 13)])
    return db


def test_a_backups_outbox_is_kept_after_the_leg_that_is_furthest_behind(tmp_path):
    from lore_sidecar.store import backup_index

    (tmp_path / "index" / "e3" / "text").mkdir(parents=True)
    # The words index holds up to 10, the vectors up to 6: both must catch up from 6.
    db = _backed_up_database(outbox_trimmed=4)
    taken = {"epoch": 3, "dir": "index/e3", "textSeq": 10, "vectorSeq": 6}
    assert backup_index.settle(db, tmp_path, dict(taken)) == taken
    assert [r[0] for r in db.execute("SELECT seq FROM index_outbox ORDER BY seq")] == list(range(7, 13))
    assert db.execute("SELECT value FROM meta WHERE key='outbox_trimmed'").fetchone()[0] == "6"
    assert (tmp_path / "index" / "e3" / "text").is_dir()
    # control: no vectors leg, the words index alone says where to resume
    db = _backed_up_database(outbox_trimmed=4)
    assert backup_index.settle(db, tmp_path, {**taken, "vectorSeq": None}) is not None
    assert [r[0] for r in db.execute("SELECT seq FROM index_outbox ORDER BY seq")] == [11, 12]


def test_backed_up_indexes_the_outbox_was_trimmed_past_are_dropped_and_the_restore_rebuilds(tmp_path):
    from lore_sidecar.store import backup_index

    taken = {"epoch": 3, "dir": "index/e3", "textSeq": 10, "vectorSeq": 6}
    # control: trimmed exactly to where the vectors are, the copy is still provably current
    (tmp_path / "index" / "e3" / "text").mkdir(parents=True)
    assert backup_index.settle(_backed_up_database(outbox_trimmed=6), tmp_path, dict(taken)) == taken
    # trimmed past it (the writer absorbed 7 and 8 into a newer index meanwhile): rows 7, 8
    # are in neither the copy nor the outbox, so the copy is dropped with the whole outbox
    db = _backed_up_database(outbox_trimmed=8)
    assert backup_index.settle(db, tmp_path, dict(taken)) is None
    assert db.execute("SELECT COUNT(*) FROM index_outbox").fetchone()[0] == 0
    assert not (tmp_path / "index").exists()
    # another epoch published between the copy and the snapshot: dropped as well
    (tmp_path / "index" / "e3" / "text").mkdir(parents=True)
    assert backup_index.settle(_backed_up_database(outbox_trimmed=0), tmp_path, {**taken, "epoch": 2}) is None


def test_recall_events_are_left_out_of_a_backup_unless_backup_recall_events_is_on(tmp_path):
    """docs: what was searched and what was opened (recall_log, recall_usage, recall_shown)
    stays out of a backup by default; the control: with backupRecallEvents on, the same
    backup of the same store holds them."""
    ws, store = tmp_path / "ws", tmp_path / "store"
    (ws / ".git").mkdir(parents=True)
    c = spawn(ws, store)
    try:
        c.request("lore/createNode", {"uri": "project://ws/pattern/tide", "content": "Tide tables refresh at dawn",
                                      "category": "pattern"})
        r = c.request("lore/recall", {"query": "tide tables dawn", "sources": ["knowledge"], "sessionId": "s1"})
        c.request("lore/getNode", {"uri": r["hits"][0]["uri"], "queryId": r["queryId"], "sessionId": "s1"})
    finally:
        c.close()
    tables = ("recall_log", "recall_usage", "recall_shown")

    def rows(db_path: Path) -> dict[str, int]:
        db = sqlite3.connect(f"file:{db_path}?mode=ro", uri=True)
        try:
            return {t: db.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0] for t in tables}
        finally:
            db.close()

    assert all(rows(store / "lore.db").values()), rows(store / "lore.db")  # the events happened

    def backup(out: Path, env: dict) -> Path:
        r = subprocess.run([sys.executable, "-m", "lore_sidecar", "backup", "--store-dir", str(store), "--out", str(out),
                            "--json"], cwd=ws, capture_output=True, text=True, timeout=180, env={**os.environ, **env})
        assert r.returncode == 0, r.stderr
        return Path(json.loads(r.stdout)["path"])

    plain = backup(tmp_path / "plain", {})
    kept = backup(tmp_path / "kept", {"LORE_BACKUP_RECALL_EVENTS": "true"})
    assert rows(plain / "lore.db") == dict.fromkeys(tables, 0)
    assert rows(kept / "lore.db") == rows(store / "lore.db")
    assert json.loads((plain / "manifest.json").read_text())["counts"]["nodes"] == 1  # the rest is there


def test_a_restore_is_refused_while_a_writer_uses_the_store_and_changes_nothing(tmp_path):
    ws, store = tmp_path / "ws", tmp_path / "store"
    (ws / ".git").mkdir(parents=True)
    c = spawn(ws, store)
    try:
        c.request("lore/createNode", {"uri": "project://ws/decision/keel", "content": "Keels are steel", "category": "decision"})
        made = cli("backup", "--store-dir", str(store), "--out", str(tmp_path / "backups"), "--json", cwd=ws)
        assert made.returncode == 0, made.stderr
        path = json.loads(made.stdout)["path"]
        busy = cli("restore", path, "--store-dir", str(store), cwd=ws)
        alive = c.request("lore/status")["role"]
    finally:
        c.close()
    assert busy.returncode == 2 and "storeBusy" in busy.stderr, busy.stderr
    assert alive == "writer" and sorted(p.name for p in tmp_path.iterdir()) == ["backups", "store", "ws"]
    # the control: with the sidecar gone, the same restore goes ahead (the old store kept aside)
    ok = cli("restore", path, "--store-dir", str(store), "--json", cwd=ws)
    assert ok.returncode == 0, ok.stderr
    assert json.loads(ok.stdout)["previous"] is not None


def test_a_restore_recalls_a_sample_spread_over_the_store_even_when_most_messages_are_short(tmp_path):
    """The restore proves the staged store by recalling a few of its own messages, picked
    across the messages that have words to search for. Where most messages are short ("ok",
    "yes"), the picks were spread over every message and then looked up among the long ones
    only: past their end, so one message was tried instead of three. The control: a store of
    long messages alone gets its three."""
    def restored_sample(name: str, short: int) -> int:
        ws, store = tmp_path / name / "ws", tmp_path / name / "store"
        (ws / ".git").mkdir(parents=True)
        c = spawn(ws, store)
        try:
            c.request("lore/recordMessages", {"sessionId": f"{name}-long", "messages": [
                {"role": "user", "content": f"the {w} ferry timetable changes every spring for berth {i}"}
                for i, w in enumerate(("amber", "cobalt", "umber"))]})
            if short:
                c.request("lore/recordMessages", {"sessionId": f"{name}-short", "messages": [
                    {"role": "user", "content": f"ok {i}"} for i in range(short)]})
        finally:
            c.close()
        made = cli("backup", "--store-dir", str(store), "--out", str(tmp_path / name / "backups"), "--json", cwd=ws)
        assert made.returncode == 0, made.stderr
        r = cli("restore", json.loads(made.stdout)["path"], "--store-dir", str(tmp_path / name / "restored"), "--json",
                cwd=ws)
        assert r.returncode == 0, r.stderr
        return json.loads(r.stdout)["sampleRecalled"]

    assert restored_sample("long-only", 0) == 3  # the control
    assert restored_sample("mostly-short", 30) == 3
