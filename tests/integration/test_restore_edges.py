"""Restore at its edges, through the real CLI: a manifest without the optional counts, a second
restore in the same second as the first, and the mode of the store a restore puts in place."""

from __future__ import annotations

import json
import os
import sqlite3
import stat
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

from lore_sidecar.client import StdioClient, sidecar_command


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(["sh", "-c", 'umask 022 && exec "$@"', "sh", sys.executable, "-m", "lore_sidecar", *args],
                          cwd=cwd, capture_output=True, text=True, timeout=300)


def a_backup(tmp_path: Path) -> tuple[Path, Path, Path]:
    """(workspace, store, backup folder) of a store holding two messages."""
    ws, store = tmp_path / "ws", tmp_path / "store"
    (ws / ".git").mkdir(parents=True)
    c = StdioClient(sidecar_command())
    try:
        c.initialize(ws, options={"storeDir": str(store), "watch": False, "indexWorkspace": False, "distiller": "off"})
        c.request("lore/recordMessages", {"sessionId": "s1", "messages": [
            {"role": "user", "id": "m1", "content": "the harbour crane schedule moved to Thursdays"},
            {"role": "assistant", "id": "m2", "content": "noted: crane maintenance on Thursdays"}]})
    finally:
        c.close()
    made = cli("backup", "--store-dir", str(store), "--out", str(tmp_path / "backups"), "--json", cwd=ws)
    assert made.returncode == 0, made.stderr
    return ws, store, Path(json.loads(made.stdout)["path"])


def messages_in(store: Path) -> int:
    db = sqlite3.connect(store / "lore.db")
    try:
        return db.execute("SELECT COUNT(*) FROM messages").fetchone()[0]
    finally:
        db.close()


def test_a_manifest_without_counts_restores_and_reports_what_the_store_holds(tmp_path):
    ws, _, backup = a_backup(tmp_path)
    control = cli("restore", str(backup), "--store-dir", str(tmp_path / "first"), "--json", cwd=ws)
    assert control.returncode == 0, control.stderr
    assert json.loads(control.stdout)["counts"]["messages"] == 2  # control: with the counts
    manifest = json.loads((backup / "manifest.json").read_text())
    del manifest["counts"]  # optional: nothing checks them then, and the restore goes on
    (backup / "manifest.json").write_text(json.dumps(manifest))
    target = tmp_path / "second"
    r = cli("restore", str(backup), "--store-dir", str(target), "--json", cwd=ws)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["counts"]["messages"] == 2 == messages_in(target)


def test_two_restores_in_one_second_keep_both_stores_they_replaced(tmp_path):
    ws, store, backup = a_backup(tmp_path)
    # Every name the next few seconds could give the aside is already taken by an earlier one.
    now = datetime.now(UTC)
    taken = [store.parent / f"{store.name}.before-restore-{(now + timedelta(seconds=s)).strftime('%Y%m%dT%H%M%SZ')}"
             for s in range(-1, 30)]
    for folder in taken:
        folder.mkdir()
        (folder / "lore.db").write_text("an earlier store")
    r = cli("restore", str(backup), "--store-dir", str(store), "--json", cwd=ws)
    assert r.returncode == 0, r.stderr
    previous = Path(json.loads(r.stdout)["previous"])
    assert previous not in taken and previous.name.startswith(f"{store.name}.before-restore-")
    assert messages_in(previous) == 2 and messages_in(store) == 2
    assert all((folder / "lore.db").read_text() == "an earlier store" for folder in taken)


def test_the_store_a_restore_puts_in_place_is_its_owners_alone(tmp_path):
    ws, _, backup = a_backup(tmp_path)
    target = tmp_path / "restored"
    r = cli("restore", str(backup), "--store-dir", str(target), cwd=ws)  # under a 022 umask
    assert r.returncode == 0, r.stderr
    assert messages_in(target) == 2
    assert stat.S_IMODE(os.stat(target).st_mode) == 0o700


# -- independent review, fresh round 5 (tools/rounds/2026-12-07-fresh5.py): a product bug ------------

def restore_sessions_opening_alike(tmp_path: Path, sessions: int) -> tuple[dict, Path]:
    """A store of `sessions` sessions that all open with the same words, backed up and
    restored into a new store: (restore's JSON answer, the restored store)."""
    ws, store = tmp_path / "ws", tmp_path / "store"
    (ws / ".git").mkdir(parents=True)
    c = StdioClient(sidecar_command())
    try:
        c.initialize(ws, options={"storeDir": str(store), "watch": False, "indexWorkspace": False, "distiller": "off"})
        for i in range(sessions):
            c.request("lore/recordMessages", {"sessionId": f"s{i:03d}", "messages": [
                {"role": "user", "id": f"m{i}", "content": "please continue with the next step of the plan"}]})
    finally:
        c.close()
    made = cli("backup", "--store-dir", str(store), "--out", str(tmp_path / "backups"), "--json", cwd=ws)
    assert made.returncode == 0, made.stderr
    target = tmp_path / "target"
    r = cli("restore", json.loads(made.stdout)["path"], "--store-dir", str(target), "--json", cwd=ws)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout), target


def test_a_healthy_backup_of_many_sessions_that_open_alike_restores(tmp_path):
    """A restore's proof by use recalls each sampled message's opening words and looks for
    its session among the hits. Harnesses open many sessions with the same words ("please
    continue with the next step"): with more such sessions than one page of hits, the sampled
    one ranked past the first page and a healthy backup was refused as backupCorrupt. The
    sample is looked for through the pages, so it restores; the control: the store restored
    holds every session's message."""
    restored, target = restore_sessions_opening_alike(tmp_path, 30)
    assert restored["sampleRecalled"] >= 1
    assert messages_in(target) == 30


def test_a_sampled_message_past_the_first_page_of_hits_is_found_on_a_later_page(tmp_path):
    """The same, with more sessions opening alike than one page holds (the proof by use asks
    50 hits a page): of three samples spread over 120 such sessions, at least one ranks past
    the first page whichever way the ties fall, and it is found on a later page. Reviewer
    round 2026-12-07-gateway-recall, gr-restore-sample-first-page-only (the 30 sessions above
    all fit one page). The control: the store restored holds every session's message."""
    restored, target = restore_sessions_opening_alike(tmp_path, 120)
    assert restored["sampleRecalled"] == 3
    assert messages_in(target) == 120


def test_a_backup_from_an_older_schema_restores_and_is_brought_up_to_date(tmp_path):
    """A backup written by an older lore-sidecar (schema version one below this one's) is
    compared with what the migrations made up to *its* version, restored, and the restored
    store is migrated to this version. The control: the same store's schema compared with
    today's migrations is not what they make (so the older one is really older)."""
    from lore_sidecar.store import backup as files
    from lore_sidecar.store import backup_intake as intake
    from lore_sidecar.store.db import SCHEMA_VERSION, _statements
    from lore_sidecar.store.migrations import MIGRATIONS

    old = SCHEMA_VERSION - 1
    store = tmp_path / "old-store"
    store.mkdir()
    db = sqlite3.connect(store / "lore.db", isolation_level=None)
    db.execute("CREATE TABLE IF NOT EXISTS schema_migrations(name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)")
    for name, sql in MIGRATIONS[:old]:
        for stmt in _statements(sql):
            db.execute(stmt)
        db.execute("INSERT INTO schema_migrations(name, applied_at) VALUES (?, ?)", (name, "2026-01-01T00:00:00Z"))
    db.execute(f"PRAGMA user_version={old}")
    have = intake._schema(db)
    db.close()
    assert have != intake.expected_schema(SCHEMA_VERSION) and have == intake.expected_schema(old) - {
        x for x in intake.expected_schema(old) if x[1] in intake.OPTIONAL}  # the control
    backup = Path(files.create(store, tmp_path / "backups")["path"])
    ws = tmp_path / "ws"
    (ws / ".git").mkdir(parents=True)
    target = tmp_path / "restored"
    r = cli("restore", str(backup), "--store-dir", str(target), "--json", cwd=ws)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["counts"]["messages"] == 0
    db = sqlite3.connect(target / "lore.db")
    try:
        assert db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    finally:
        db.close()
